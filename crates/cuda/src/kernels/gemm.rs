//! Launchers for gemm.cu: the tensor-core products of prefill, dense (projections) and grouped
//! over experts (the MoE's sorted (token, expert) pairs).

use std::sync::Arc;

use crate::dims::Dims;
use crate::runtime::driver::{DevicePtr, Function, Gpu, KernelArgs, Module, TensorMapShape};
use crate::error::{CudaError, Result};
use crate::runtime::tensor::{DType, MatrixView, View};
use super::Out;

/// A block's output tile (GEMM_BM x GEMM_BN in gemm.cu), the same for the dense and the
/// grouped kernels: two warpgroups of 128 threads.
pub const TILE_ROWS: usize = 128;
const TILE_COLS: usize = 256;
/// The dense product's narrow tile (gemm_bf16_n128) for products of few tiles.
const NARROW_TILE_COLS: usize = 128;
/// GEMM_BK in gemm.cu: the K step, one 128-byte swizzled row of a stage.
const K_STEP: usize = 64;
const THREADS: u32 = 256;
/// K is read in 16-byte chunks.
const K_MULTIPLE: usize = 8;
/// GEMM_SMEM in gemm.cu: 4 stages of a 128 x 64 A tile and a 256 x 64 B tile (bf16), plus
/// 1 KB to align the swizzle atoms.
const SHARED_BYTES: u32 = (4 * (TILE_ROWS + TILE_COLS) * K_STEP * 2 + 1024) as u32;

/// A GEMM operand's TMA geometry: `matrices` matrices of `rows` x `cols`, read in boxes of one
/// K step of `box_rows` consecutive rows (an A tile's 128 rows, a B tile's 256; gemm.cu:
/// tma_load_b, and A's box at (k0, row0, 0, 0, 0)).
fn rows_map(matrices: usize, rows: usize, cols: usize, box_rows: usize) -> TensorMapShape {
    let (row, matrix) = (2 * cols as u64, 2 * (rows * cols) as u64);
    let all = matrix * matrices as u64;
    TensorMapShape {
        dims: [cols as u64, rows as u64, matrices as u64, 1, 1],
        strides: [row, matrix, all, all],
        boxes: [K_STEP as u32, box_rows as u32, 1, 1, 1],
    }
}

/// `matrices` SwiGLU weights of 2 `units` rows (gate rows then up rows) x `cols`, read in boxes
/// of a B tile's K step: 128 units' gate rows interleaved by 8 with their up rows, the column
/// order gemm.cu's epilogue pairs (units a multiple of 8: Dims checks it).
fn swiglu_map(matrices: usize, units: usize, cols: usize) -> TensorMapShape {
    let (row, units) = (2 * cols as u64, units as u64);
    TensorMapShape {
        dims: [cols as u64, 8, 2, units / 8, matrices as u64],
        strides: [row, units * row, 8 * row, 2 * units * row],
        boxes: [K_STEP as u32, 8, 2, TILE_COLS as u32 / 16, 1],
    }
}

pub struct Gemm {
    gpu: Arc<Gpu>,
    _module: Module,
    dense: Function,
    dense_narrow: Function,
    gate_up: Function,
    down: Function,
    dequant: Function,
    dims: Dims,
}

/// The sorted pairs of one MoE layer, as moe.rs's planning kernels leave them.
pub struct ExpertTiles<'a> {
    /// I32 [max_tiles, 4]: (expert, first row, end row, unused) per block; I32 [1]: how many.
    pub tiles: &'a View<'a>,
    pub count: &'a View<'a>,
}

/// Upper bound of the tile table for `pairs` sorted rows: every expert (and the shared one) may
/// end in a partial tile.
pub fn max_tiles(pairs: usize, experts: usize) -> usize {
    pairs.div_ceil(TILE_ROWS) + experts + 1
}

/// The dense product's tile width: 128 columns where tiles of 256 would leave more than half
/// of the `sms` multiprocessors idle (the narrow tiles, at most twice as many, then still run
/// in one wave, each half the work), else 256. At 1,024 rows: out_proj (N 2,048) and the
/// router (N 257) narrow, q|k|v and in_proj not; at 8K rows none.
fn dense_tile_cols(m: usize, n: usize, sms: usize) -> usize {
    if 2 * m.div_ceil(TILE_ROWS) * n.div_ceil(TILE_COLS) <= sms {
        NARROW_TILE_COLS
    } else {
        TILE_COLS
    }
}

/// The expert products' bf16 epilogue stores whole 16-byte chunks of a row (gemm.cu:
/// gemm_store_bf16): the output's columns a multiple of 8, its rows 16-byte aligned.
fn chunked_rows(tensor: &str, ptr: DevicePtr, cols: usize) -> Result<()> {
    if cols % 8 != 0 || ptr % 16 != 0 {
        return Err(CudaError::Invalid(format!(
            "{tensor}: the expert outputs are stored in 16-byte chunks of a row, which needs a \
             multiple of 8 columns ({cols}) and a 16-byte aligned start ({ptr:#x})"
        )));
    }
    Ok(())
}

fn matrix(v: &View, dtype: DType) -> Result<(usize, usize)> {
    match v.shape[..] {
        [r, c] if v.dtype == dtype => Ok((r, c)),
        _ => Err(CudaError::Shape {
            tensor: v.to_string(),
            expected: format!("{dtype:?} [rows, cols]"),
            actual: format!("{:?} {:?}", v.dtype, v.shape),
        }),
    }
}

impl Gemm {
    pub fn load(gpu: &Arc<Gpu>, dims: &Dims) -> Result<Self> {
        let module = super::load(gpu, "gemm.cu", dims)?;
        let dense = module.function("gemm_bf16")?;
        let dense_narrow = module.function("gemm_bf16_n128")?;
        let gate_up = module.function("gemm_moe_gate_up")?;
        let down = module.function("gemm_moe_down")?;
        let dequant = module.function("dequant_e4m3")?;
        for f in [&dense, &dense_narrow, &gate_up, &down] {
            module.allow_shared(f, SHARED_BYTES)?;
        }
        Ok(Gemm {
            gpu: gpu.clone(),
            _module: module,
            dense,
            dense_narrow,
            gate_up,
            down,
            dequant,
            dims: dims.clone(),
        })
    }

    /// `out` (BF16, the shape of `w`) = the FP8 matrix `w` dequantised with its block scales:
    /// what the GEMMs read of an FP8 model's products (gemm.cu: dequant_e4m3).
    pub fn dequantize(&self, w: &MatrixView, out: &View) -> Result<()> {
        let scale = w.scale_ptr()?;
        let cols = *w.w.shape.last().unwrap_or(&0);
        if w.w.dtype != DType::F8E4M3 || cols % 16 != 0 {
            return Err(CudaError::Shape {
                tensor: w.w.to_string(),
                expected: "F8E4M3 [.., cols] with cols a multiple of 16".into(),
                actual: format!("{:?} {:?}", w.w.dtype, w.w.shape),
            });
        }
        let out = out.expect(DType::BF16, &w.w.shape)?;
        let chunks = w.w.bytes() / 16;
        let mut args = KernelArgs::new()
            .ptr(w.w.ptr)
            .ptr(scale)
            .ptr(out)
            .u64(chunks as u64)
            .i32(cols as i32);
        let blocks = chunks.div_ceil(256).clamp(1, self.gpu.multiprocessors.max(1) as usize * 8);
        self.gpu.launch(&self.dequant, (blocks as u32, 1, 1), 256, 0, &mut args)
    }

    /// The persistent grid for up to `jobs` tiles: one block per multiprocessor (a block's
    /// shared memory fills one), fewer when there are fewer tiles.
    fn blocks(&self, jobs: usize) -> u32 {
        jobs.clamp(1, self.gpu.multiprocessors.max(1) as usize) as u32
    }

    /// y = x w^T (each row of x times W, as gemv's y = W x), or y += x w^T with `Out::Add`.
    /// w: BF16 [n, k] (a weight as stored); x: BF16 [m, k]; y: F32 [m, n]; k a multiple of 8.
    pub fn run(&self, w: &View, x: &View, y: &View, out: Out) -> Result<()> {
        let (m, k) = matrix(x, DType::BF16)?;
        let (n, wk) = matrix(w, DType::BF16)?;
        if wk != k || k == 0 || k % K_MULTIPLE != 0 {
            return Err(CudaError::Shape {
                tensor: w.to_string(),
                expected: format!("BF16 [n, {k}] with {k} a non-zero multiple of {K_MULTIPLE}"),
                actual: format!("{:?}", w.shape),
            });
        }
        let y = y.expect(DType::F32, &[m, n])?;
        // Nothing to compute, and a tensor map cannot describe an empty matrix.
        if m == 0 || n == 0 {
            return Ok(());
        }
        let cols = dense_tile_cols(m, n, self.gpu.multiprocessors as usize);
        let (x_map, w_map) = (
            self.gpu.tensor_map_bf16(x.ptr, &rows_map(1, m, k, TILE_ROWS))?,
            self.gpu.tensor_map_bf16(w.ptr, &rows_map(1, n, k, cols))?,
        );
        let mut args = KernelArgs::new()
            .tensor_map(&x_map)
            .tensor_map(&w_map)
            .ptr(y)
            .i32(m as i32)
            .i32(n as i32)
            .i32(k as i32)
            .i32((out == Out::Add) as i32);
        self.gpu.launch(
            if cols == TILE_COLS { &self.dense } else { &self.dense_narrow },
            (self.blocks(m.div_ceil(TILE_ROWS) * n.div_ceil(cols)), 1, 1),
            THREADS,
            SHARED_BYTES,
            &mut args,
        )
    }

    /// h[p] = silu(gate_e x[token p]) * (up_e x[token p]) for each of the `pairs` sorted rows p.
    /// x: BF16 [tokens, hidden]; sorted_token: I32 [pairs]; gate_up: BF16 [experts, 2 inter,
    /// hidden]; shared_gate_up: BF16 [2 inter, hidden]; h: BF16 [pairs, inter] (inter a
    /// multiple of 8).
    pub fn moe_gate_up(
        &self,
        x: &View,
        sorted_token: &View,
        gate_up: &View,
        shared_gate_up: &View,
        tiles: &ExpertTiles,
        h: &View,
    ) -> Result<()> {
        let d = &self.dims;
        let (hid, inter, e) = (d.hidden, d.moe_inter, d.experts);
        let (tokens, _) = matrix(x, DType::BF16)?;
        x.expect(DType::BF16, &[tokens, hid])?;
        let pairs = sorted_token.shape.first().copied().unwrap_or(0);
        let sorted = sorted_token.expect(DType::I32, &[pairs])?;
        let gate_up = gate_up.expect(DType::BF16, &[e, 2 * inter, hid])?;
        let shared = shared_gate_up.expect(DType::BF16, &[2 * inter, hid])?;
        let n_tiles = max_tiles(pairs, e);
        let table = tiles.tiles.expect(DType::I32, &[n_tiles, 4])?;
        let count = tiles.count.expect(DType::I32, &[1])?;
        let h_ptr = h.expect(DType::BF16, &[pairs, inter])?;
        chunked_rows(&h.to_string(), h_ptr, inter)?;
        let (experts_map, shared_map) = (
            self.gpu.tensor_map_bf16(gate_up, &swiglu_map(e, inter, hid))?,
            self.gpu.tensor_map_bf16(shared, &swiglu_map(1, inter, hid))?,
        );
        let mut args = KernelArgs::new()
            .ptr(x.ptr)
            .ptr(sorted)
            .tensor_map(&experts_map)
            .tensor_map(&shared_map)
            .ptr(table)
            .ptr(count)
            .ptr(h_ptr)
            .i32(inter as i32)
            .i32(hid as i32);
        self.gpu.launch(
            &self.gate_up,
            (self.blocks(n_tiles * (2 * inter).div_ceil(TILE_COLS)), 1, 1),
            THREADS,
            SHARED_BYTES,
            &mut args,
        )
    }

    /// out[p] = weight[p] * (down_e h[p]) for each sorted row p. h: BF16 [pairs, inter];
    /// down: BF16 [experts, hidden, inter]; shared_down: BF16 [hidden, inter]; weight: F32
    /// [pairs]; out: BF16 [pairs, hidden] (hidden a multiple of 8).
    pub fn moe_down(
        &self,
        h: &View,
        down: &View,
        shared_down: &View,
        tiles: &ExpertTiles,
        weight: &View,
        out: &View,
    ) -> Result<()> {
        let d = &self.dims;
        let (hid, inter, e) = (d.hidden, d.moe_inter, d.experts);
        let pairs = h.shape.first().copied().unwrap_or(0);
        let hp = h.expect(DType::BF16, &[pairs, inter])?;
        let down = down.expect(DType::BF16, &[e, hid, inter])?;
        let shared = shared_down.expect(DType::BF16, &[hid, inter])?;
        let n_tiles = max_tiles(pairs, e);
        let table = tiles.tiles.expect(DType::I32, &[n_tiles, 4])?;
        let count = tiles.count.expect(DType::I32, &[1])?;
        let weight = weight.expect(DType::F32, &[pairs])?;
        let out_ptr = out.expect(DType::BF16, &[pairs, hid])?;
        chunked_rows(&out.to_string(), out_ptr, hid)?;
        // No pairs, nothing to compute (and a tensor map cannot describe an empty matrix).
        if pairs == 0 {
            return Ok(());
        }
        let (h_map, experts_map, shared_map) = (
            self.gpu.tensor_map_bf16(hp, &rows_map(1, pairs, inter, TILE_ROWS))?,
            self.gpu.tensor_map_bf16(down, &rows_map(e, hid, inter, TILE_COLS))?,
            self.gpu.tensor_map_bf16(shared, &rows_map(1, hid, inter, TILE_COLS))?,
        );
        let mut args = KernelArgs::new()
            .tensor_map(&h_map)
            .tensor_map(&experts_map)
            .tensor_map(&shared_map)
            .ptr(table)
            .ptr(count)
            .ptr(weight)
            .ptr(out_ptr)
            .i32(hid as i32)
            .i32(inter as i32);
        self.gpu.launch(
            &self.down,
            (self.blocks(n_tiles * hid.div_ceil(TILE_COLS)), 1, 1),
            THREADS,
            SHARED_BYTES,
            &mut args,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Narrow tiles only where wide ones leave more than half of an H200's 132 SMs idle.
    #[test]
    fn dense_products_of_few_tiles_take_narrow_ones() {
        for (m, n, cols) in [
            (1024, 2048, NARROW_TILE_COLS), // out_proj at 1K: 64 wide tiles
            (1024, 257, NARROW_TILE_COLS),  // the router: 16
            (2048, 257, NARROW_TILE_COLS),  // 32
            (1024, 9216, TILE_COLS),        // q|k|v: 288
            (2048, 2048, TILE_COLS),        // 128 wide tiles: one wave already
            (8192, 257, TILE_COLS),         // 128
            (1, 1, NARROW_TILE_COLS),
        ] {
            assert_eq!(dense_tile_cols(m, n, 132), cols, "{m} x {n}");
        }
    }

    /// The bf16 epilogue's 16-byte row chunks: whole (columns a multiple of 8) and aligned.
    #[test]
    fn expert_outputs_must_be_whole_aligned_16_byte_chunks() {
        assert!(chunked_rows("h", 0x1000, 512).is_ok());
        assert!(chunked_rows("h", 0x1010, 32).is_ok());
        for (ptr, cols) in [(0x1000, 36), (0x1000, 2), (0x1008, 512)] {
            let err = chunked_rows("h", ptr, cols).unwrap_err().to_string();
            assert!(err.contains("h: ") && err.contains("16-byte"), "{err}");
        }
    }

    /// A SwiGLU tile's box holds, in its row c, the weight row the epilogue pairs at column c:
    /// unit n0 / 2 + 8 (c / 16) + c % 8, its gate row for c % 16 < 8 and its up row after.
    /// Units past the weights read zeros.
    #[test]
    fn a_swiglu_box_lands_gate_and_up_rows_in_the_epilogues_pairs() {
        let (experts, units, cols) = (3, 200, 2 * K_STEP);
        let map = swiglu_map(experts, units, cols);
        for (e, n0, k0) in [(0, 0, 0), (2, 256, K_STEP), (1, 256, 0)] {
            // The kernel's coordinates (gemm.cu: tma_load_b).
            let got = map.box_elements([k0 as i64, 0, 0, n0 as i64 / 16, e as i64]);
            assert_eq!(got.len(), TILE_COLS * K_STEP);
            for c in 0..TILE_COLS {
                let unit = n0 / 2 + (c / 16) * 8 + c % 8;
                let row = if c % 16 < 8 { unit } else { units + unit };
                for k in 0..K_STEP {
                    let want = (unit < units).then(|| ((e * 2 * units + row) * cols + k0 + k) as u64);
                    assert_eq!(got[c * K_STEP + k], want, "expert {e}, n0 {n0}, column {c}, k {k}");
                }
            }
        }
    }

    /// A plain box is the tile's consecutive rows of one matrix; rows past the matrix and
    /// columns past K read zeros (a K of 40 is a tail the step reaches past).
    #[test]
    fn a_rows_box_is_consecutive_rows_of_one_matrix() {
        let (matrices, rows, cols) = (4, 300, 40);
        let map = rows_map(matrices, rows, cols, TILE_COLS);
        for (e, r0) in [(0, 0), (3, 256), (2, 100)] {
            let got = map.box_elements([0, r0 as i64, e as i64, 0, 0]);
            for r in 0..TILE_COLS {
                for k in 0..K_STEP {
                    let inside = r0 + r < rows && k < cols;
                    let want = inside.then(|| ((e * rows + r0 + r) * cols + k) as u64);
                    assert_eq!(got[r * K_STEP + k], want, "matrix {e}, row {r0} + {r}, k {k}");
                }
            }
        }
        let a = rows_map(1, 8192, 2048, TILE_ROWS);
        assert_eq!(a.boxes, [64, 128, 1, 1, 1]);
        assert_eq!(a.strides[0], 4096);
    }
}
