//! Launchers for gemv.cu: y (+)= W x for the decode path.

use std::sync::Arc;

use crate::dims::{Dims, WeightFormat};
use crate::runtime::driver::{DevicePtr, Function, Gpu, KernelArgs, Module};
use crate::error::{CudaError, Result};
use crate::shapes::{self, Shapes};
use super::Out;
use crate::runtime::tensor::{DType, MatrixView, View};

/// Rows a block of `warps` warps takes at `cols` columns (W_ROWS in gemv.cuh per warp): as many
/// whole bf16 rows per warp as keep each lane's `gemv_loads` 16-byte loads in flight, at least
/// one; an FP8 row of the same width gets the same count (half the loads).
fn rows_per_block(shapes: &Shapes, warps: usize, cols: usize) -> usize {
    let per_lane = (cols / 8).div_ceil(32);
    warps * (shapes.gemv_loads / per_lane).max(1)
}

/// Shared memory a block may use on Hopper (227 KB).
pub(crate) const SHARED_PER_BLOCK: usize = 232_448;

/// The streamed normed product's rings (GEMV_NORMED_STAGES rows of `hidden` weights per warp,
/// and for FP8 each lane's block scales of each row), or an error naming the shapes when they
/// do not fit a block beside its static x staging and the norm's scratch.
fn stream_ring_bytes(shapes: &Shapes, dims: &Dims) -> Result<usize> {
    let row = match dims.weights {
        WeightFormat::Bf16 => dims.hidden * 2,
        WeightFormat::Fp8 { .. } => dims.hidden + 4 * 32 * (dims.hidden / 16).div_ceil(32),
    };
    let ring = shapes.gemv_normed_warps * shapes.gemv_normed_stages * row;
    let limit = SHARED_PER_BLOCK - dims.hidden * 2 - 128;
    if ring > limit {
        return Err(CudaError::Invalid(format!(
            "gemv_normed_warps x gemv_normed_stages = {} x {} rows of {} bytes need {ring} \
             bytes of shared memory; a block has {limit}",
            shapes.gemv_normed_warps,
            shapes.gemv_normed_stages,
            row
        )));
    }
    Ok(ring)
}

/// A compiled entry point: its row width and warps per block.
struct Entry {
    cols: usize,
    warps: usize,
    f: Function,
}

pub struct Gemv {
    gpu: Arc<Gpu>,
    _module: Module,
    by_cols: Vec<Entry>,
    normed: Function,
    embed_normed: Function,
    lm_head: Function,
    ring_bytes: u32,
    dims: Dims,
    shapes: Shapes,
}

impl Gemv {
    pub fn load(gpu: &Arc<Gpu>, dims: &Dims) -> Result<Self> {
        let shapes = shapes::current()?;
        let module = super::load(gpu, "gemv.cu", dims)?;
        let entry = |cols, warps, name| -> Result<Entry> {
            Ok(Entry {
                cols,
                warps,
                f: module.function(name)?,
            })
        };
        let by_cols = vec![
            entry(dims.gdn_out(), shapes.gemv_out_warps, "gemv_gdn_out")?,
            entry(dims.attn_out(), shapes.gemv_out_warps, "gemv_attn_out")?,
        ];
        let normed = module.function("gemv_hidden_normed")?;
        let lm_head = module.function("lm_head_normed")?;
        let embed_normed = module.function("gemv_embed_normed")?;
        let ring_bytes = stream_ring_bytes(&shapes, dims)? as u32;
        module.allow_shared(&normed, ring_bytes)?;
        module.allow_shared(&embed_normed, ring_bytes)?;
        Ok(Gemv {
            gpu: gpu.clone(),
            _module: module,
            by_cols,
            normed,
            embed_normed,
            lm_head,
            ring_bytes,
            dims: dims.clone(),
            shapes,
        })
    }

    /// y = W x, or y += W x with `Out::Add`. W: [rows, cols] in the model's weight format with
    /// cols one of the compiled widths (GDN value width, attention width); x: BF16 [cols];
    /// y: F32 [rows].
    pub fn run(&self, w: &MatrixView, x: &View, y: &View, out: Out) -> Result<()> {
        let scale = self.expect_format(w)?;
        let (rows, cols) = match w.w.shape[..] {
            [r, c] => (r, c),
            _ => {
                return Err(CudaError::Shape {
                    tensor: w.w.to_string(),
                    expected: "[rows, cols]".into(),
                    actual: format!("{:?} {:?}", w.w.dtype, w.w.shape),
                })
            }
        };
        let entry = self
            .by_cols
            .iter()
            .find(|e| e.cols == cols)
            .ok_or_else(|| CudaError::Shape {
                tensor: w.w.to_string(),
                expected: format!(
                    "columns in {:?}",
                    self.by_cols.iter().map(|e| e.cols).collect::<Vec<_>>()
                ),
                actual: format!("{cols}"),
            })?;
        let x = x.expect(DType::BF16, &[cols])?;
        let y = y.expect(DType::F32, &[rows])?;
        let mut args = KernelArgs::new()
            .ptr(w.w.ptr)
            .ptr(scale)
            .ptr(x)
            .ptr(y)
            .i32(rows as i32)
            .i32((out == Out::Add) as i32);
        let per_block = rows_per_block(&self.shapes, entry.warps, cols);
        self.gpu.launch(
            &entry.f,
            (rows.div_ceil(per_block) as u32, 1, 1),
            (entry.warps * 32) as u32,
            0,
            &mut args,
        )
    }

    /// The scales' address of a product's matrix in the model's weight format (0 for bf16), or
    /// an error naming a matrix of the other format.
    fn expect_format(&self, w: &MatrixView) -> Result<DevicePtr> {
        let want = match self.dims.weights {
            WeightFormat::Bf16 => DType::BF16,
            WeightFormat::Fp8 { .. } => DType::F8E4M3,
        };
        if w.w.dtype != want {
            return Err(CudaError::Shape {
                tensor: w.w.to_string(),
                expected: format!("{want:?} (the model's weight format)"),
                actual: format!("{:?}", w.w.dtype),
            });
        }
        w.scale_ptr()
    }

    /// y = W bf16(rmsnorm(resid) * (1 + norm_w)): the layer norm fused into the product's
    /// prologue. W: [rows, hidden] in the model's weight format, then with FP8 weights `tail`
    /// (BF16 [tail rows, hidden], into y's last rows: GDN's b | a); resid: F32 [hidden];
    /// norm_w: BF16 [hidden]; `xn_out` (BF16 [hidden]) receives the normed vector when given.
    pub fn run_normed(
        &self,
        w: &MatrixView,
        tail: Option<&View>,
        resid: &View,
        norm_w: &View,
        xn_out: Option<&View>,
        y: &View,
    ) -> Result<()> {
        let xn = match xn_out {
            Some(v) => v.expect(DType::BF16, &[self.dims.hidden])?,
            None => 0,
        };
        let h = self.dims.hidden;
        let (head, rows) = self.input_product(w, tail)?;
        let args = head
            .ptr(resid.expect(DType::F32, &[h])?)
            .ptr(norm_w.expect(DType::BF16, &[h])?)
            .ptr(xn)
            .f32(self.dims.eps)
            .ptr(y.expect(DType::F32, &[rows])?)
            .i32(w.w.shape[0] as i32);
        self.launch_streamed(&self.normed, args)
    }

    /// run_normed for the first layer of a decode step, whose input is the step's token's
    /// embedding: x = table[ids[pos]] (BF16 [vocab, hidden], I32 [n], I32 [1], read on the
    /// GPU), written to `resid_out` (F32 [hidden]) as the residual stream; NaN for an id outside
    /// the table.
    #[allow(clippy::too_many_arguments)]
    pub fn run_embed_normed(
        &self,
        w: &MatrixView,
        tail: Option<&View>,
        table: &View,
        ids: &View,
        pos: &View,
        resid_out: &View,
        norm_w: &View,
        y: &View,
    ) -> Result<()> {
        let d = &self.dims;
        let (head, rows) = self.input_product(w, tail)?;
        let table = table.expect(DType::BF16, &[d.vocab, d.hidden])?;
        if ids.dtype != DType::I32 || ids.shape.len() != 1 {
            return Err(CudaError::Shape {
                tensor: ids.to_string(),
                expected: "I32 [n]".into(),
                actual: format!("{:?} {:?}", ids.dtype, ids.shape),
            });
        }
        let pos = pos.expect(DType::I32, &[1])?;
        let resid_out = resid_out.expect(DType::F32, &[d.hidden])?;
        let norm_w = norm_w.expect(DType::BF16, &[d.hidden])?;
        let y = y.expect(DType::F32, &[rows])?;
        let args = head
            .ptr(table)
            .ptr(ids.ptr)
            .ptr(pos)
            .i32(d.vocab as i32)
            .ptr(resid_out)
            .ptr(norm_w)
            .f32(d.eps)
            .ptr(y)
            .i32(w.w.shape[0] as i32);
        self.launch_streamed(&self.embed_normed, args)
    }

    /// A layer-input product's first arguments (W, its scales, the bf16 tail and its rows),
    /// checked, and the rows of y: W's and the tail's. The tail is an FP8 model's only.
    fn input_product(&self, w: &MatrixView, tail: Option<&View>) -> Result<(KernelArgs, usize)> {
        let h = self.dims.hidden;
        let scale = self.expect_format(w)?;
        let (w_ptr, rows) = w.w.expect_rows(w.w.dtype, h)?;
        let (tail_ptr, tail_rows) = match (tail, self.dims.weights) {
            (None, _) => (0, 0),
            (Some(t), WeightFormat::Fp8 { .. }) => t.expect_rows(DType::BF16, h)?,
            (Some(t), WeightFormat::Bf16) => {
                return Err(CudaError::Shape {
                    tensor: t.to_string(),
                    expected: "no bf16 tail (a bf16 model's input products are whole)".into(),
                    actual: format!("{:?} {:?}", t.dtype, t.shape),
                })
            }
        };
        let args = KernelArgs::new()
            .ptr(w_ptr)
            .ptr(scale)
            .ptr(tail_ptr)
            .i32(tail_rows as i32);
        Ok((args, rows + tail_rows))
    }

    /// The logits: W bf16(rmsnorm(resid) * (1 + norm_w)) with the final norm, in short blocks
    /// (gemv.cu: lm_head_normed), and into `best` (U64 [1], holding 0 as finish_step leaves it)
    /// their argmax key (the largest logit, the lowest id of a tie, NaN left out): a greedy
    /// rule's pick, a draw's max.
    pub fn run_lm_head(
        &self,
        w: &View,
        resid: &View,
        norm_w: &View,
        logits: &View,
        best: &View,
    ) -> Result<()> {
        let best = best.expect(DType::U64, &[1])?;
        let (mut args, rows) = self.normed_args(w, resid, norm_w, best, logits)?;
        let warps = self.shapes.lm_head_warps;
        self.gpu.launch(
            &self.lm_head,
            (
                rows.div_ceil(rows_per_block(&self.shapes, warps, self.dims.hidden)) as u32,
                1,
                1,
            ),
            (warps * 32) as u32,
            0,
            &mut args,
        )
    }

    /// lm_head's arguments, checked, and its row count: W (BF16 [rows, hidden]), the
    /// residual, the norm weight, `extra` (its entry point's fourth pointer: the normed vector's
    /// destination, or the argmax's) and y.
    fn normed_args(
        &self,
        w: &View,
        resid: &View,
        norm_w: &View,
        extra: DevicePtr,
        y: &View,
    ) -> Result<(KernelArgs, usize)> {
        let h = self.dims.hidden;
        let (w_ptr, rows) = w.expect_rows(DType::BF16, h)?;
        let resid = resid.expect(DType::F32, &[h])?;
        let norm_w = norm_w.expect(DType::BF16, &[h])?;
        let y = y.expect(DType::F32, &[rows])?;
        let args = KernelArgs::new()
            .ptr(w_ptr)
            .ptr(resid)
            .ptr(norm_w)
            .ptr(extra)
            .f32(self.dims.eps)
            .ptr(y)
            .i32(rows as i32);
        Ok((args, rows))
    }

    fn launch_streamed(&self, f: &Function, mut args: KernelArgs) -> Result<()> {
        // A fixed number of blocks per SM: their warps loop over the rows (gemv.cuh: stream_normed).
        let blocks = self.gpu.multiprocessors.max(1) * self.shapes.gemv_normed_blocks as u32;
        self.gpu.launch(
            f,
            (blocks, 1, 1),
            (self.shapes.gemv_normed_warps * 32) as u32,
            self.ring_bytes,
            &mut args,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_streamed_rings_fit_a_block_or_the_error_names_the_shapes() {
        let dims = Dims::qwen36_35b_a3b();
        // 16 warps x 2 rows of 4 KB.
        assert_eq!(
            stream_ring_bytes(&Shapes::default(), &dims).unwrap(),
            16 * 2 * 4096
        );
        let big = Shapes::parse("gemv_normed_warps=16,gemv_normed_stages=4").unwrap();
        let e = stream_ring_bytes(&big, &dims).unwrap_err().to_string();
        assert!(
            e.contains("gemv_normed_warps x gemv_normed_stages = 16 x 4"),
            "{e}"
        );
    }
}
