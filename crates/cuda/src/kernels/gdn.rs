//! Launchers for gdn.cu: Gated DeltaNet decode (conv + gating + recurrence fused), the gated
//! norm, and the prefill of a chunk of tokens (conv + activations, ring update, the delta rule
//! in chunks of 64 tokens, gated norm).

use std::sync::Arc;

use crate::dims::Dims;
use crate::runtime::driver::{Function, Gpu, KernelArgs, Module};
use crate::error::{CudaError, Result};
use crate::runtime::tensor::{DType, Tensor, View};

/// L2-norm epsilon of q and k in the prefill (transformers' `l2norm`, the CPU reference's
/// `QK_L2_EPS`; the decode kernel takes the model's rms eps, equal for Qwen3.6).
const QK_L2_EPS: f32 = 1e-6;
/// Tokens per block of gdn_prefill_prep (GDN_PREP_TOKENS in gdn.cu).
const PREP_TOKENS: usize = 8;
/// Tokens per chunk of the chunked delta rule (GDN_CH in gdn.cu).
const CHUNK: usize = 64;
/// Threads of gdn_chunk_solve and gdn_chunk_scan (GDN_CHUNK_THREADS).
const CHUNK_THREADS: u32 = 256;
/// Value columns per block of gdn_chunk_scan (GDN_SC).
const SCAN_COLUMNS: usize = 32;

/// The key dim rounded up to the tensor-core tiles' k step (GDN_KDP); the padding is zero.
fn padded_key_dim(d: &Dims) -> usize {
    d.gdn_key_dim.div_ceil(16) * 16
}

/// Row stride (floats) of the k, q and W rows gdn_chunk_scan stages (GDN_KP).
fn key_row_stride(d: &Dims) -> usize {
    padded_key_dim(d) + 4
}

/// Dynamic shared memory of gdn_chunk_solve (GDN_SOLVE_FLOATS): the chunk's k rows as two bf16
/// planes (rows of the padded key dim + 8 halves), its q rows likewise (later T's two bf16
/// planes, rows of CHUNK + 8 halves, and T in f32 as it is built, CHUNK x CHUNK, whichever is
/// larger), A, beta, the running log decay and beta Gam per token, and v's columns past the
/// warps' first n-tiles (GDN_VS, row stride + 8).
fn solve_shared_bytes(d: &Dims) -> u32 {
    let key_planes = CHUNK * (padded_key_dim(d) + 8);
    let q_or_t = key_planes.max(CHUNK * (CHUNK + 8 + CHUNK));
    let first_tiles = 8 * CHUNK_THREADS as usize / 32;
    let v_staged = (d.gdn_value_dim.div_ceil(8) * 8).saturating_sub(first_tiles);
    let v_stride = if v_staged > 0 { v_staged + 8 } else { 0 };
    (4 * (key_planes + q_or_t + CHUNK * (CHUNK + 4) + 3 * CHUNK + CHUNK * v_stride)) as u32
}

/// Dynamic shared memory of gdn_chunk_scan (GDN_SCAN_FLOATS): the block's columns of S (rows
/// padded to 16, row stride SCAN_COLUMNS + 8) and its two bf16 halves transposed (a row per
/// column, the padded key dim + 8), the chunk's W, q and k rows, P, then U, D, the
/// decay-weighted D's two bf16 halves transposed (a row per column, CHUNK + 8) and Gam q S0, and
/// two decay factors per token.
fn scan_shared_bytes(d: &Dims) -> u32 {
    let columns = SCAN_COLUMNS + 8;
    let key_rows = padded_key_dim(d);
    (4 * (key_rows * columns
        + SCAN_COLUMNS * (key_rows + 8)
        + 3 * CHUNK * key_row_stride(d)
        + CHUNK * (CHUNK + 4)
        + 3 * CHUNK * columns
        + SCAN_COLUMNS * (CHUNK + 8)
        + 2 * CHUNK)) as u32
}

pub struct Gdn {
    gpu: Arc<Gpu>,
    _module: Module,
    decode: Function,
    gated_rmsnorm: Function,
    gated_rmsnorm_decode: Function,
    prefill_prep: Function,
    prefill_ring: Function,
    chunk_solve: Function,
    chunk_scan: Function,
    dims: Dims,
}

/// The per-layer tensors one prefill chunk reads and writes.
pub struct GdnPrefillArgs<'a> {
    /// F32 [tokens, gdn_in_rows]: per token the decode layout q | k | v | z | b | a, raw.
    pub proj: &'a View<'a>,
    /// BF16 [conv channels, conv kernel].
    pub conv_w: &'a View<'a>,
    /// F32 [conv kernel, conv channels]: the decode ring (slot = position % kernel); read for
    /// positions before `start`, left holding the chunk's last inputs for the next decode step.
    pub conv_ring: &'a View<'a>,
    /// F32 [value heads] each.
    pub a_log: &'a View<'a>,
    pub dt_bias: &'a View<'a>,
    /// BF16 [value dim]: the gated norm weight (plain w).
    pub norm: &'a View<'a>,
    /// F32 [value heads, key dim, value dim]: the state before `start`, left as the state after
    /// the chunk's last token.
    pub state: &'a View<'a>,
    /// BF16 [tokens, value heads * value dim]: w * rmsnorm(o) * silu(z), the out_proj input.
    pub out: &'a View<'a>,
    pub scratch: &'a GdnPrefillScratch,
    /// Position of the chunk's first token.
    pub start: usize,
    pub tokens: usize,
}

/// Per-token intermediates of a prefill chunk, allocated once for the largest chunk (all f32):
/// q and k normalised [max_tokens, key heads, key dim]; v [max_tokens, value heads, value dim];
/// beta and the log decay [max_tokens, value heads]; per 64-token chunk of the delta rule, each
/// token's rows of W [max_tokens, value heads, key dim], U [.., value dim], P [.., 64] and its
/// running log decay G [max_tokens, value heads]; and the read-out o before the gated norm
/// [max_tokens, value heads, value dim].
pub struct GdnPrefillScratch {
    max_tokens: usize,
    q: Tensor,
    k: Tensor,
    v: Tensor,
    beta: Tensor,
    log_decay: Tensor,
    w: Tensor,
    u: Tensor,
    p: Tensor,
    g: Tensor,
    o: Tensor,
}

impl GdnPrefillScratch {
    pub fn new(gpu: &Arc<Gpu>, dims: &Dims, max_tokens: usize) -> Result<Self> {
        let (kh, vh) = (dims.gdn_key_heads, dims.gdn_value_heads);
        let f32t = |name: &str, shape: &[usize]| Tensor::new(gpu, name, DType::F32, shape);
        Ok(GdnPrefillScratch {
            max_tokens,
            q: f32t("gdn prefill q", &[max_tokens, kh, dims.gdn_key_dim])?,
            k: f32t("gdn prefill k", &[max_tokens, kh, dims.gdn_key_dim])?,
            v: f32t("gdn prefill v", &[max_tokens, vh, dims.gdn_value_dim])?,
            beta: f32t("gdn prefill beta", &[max_tokens, vh])?,
            log_decay: f32t("gdn prefill log decay", &[max_tokens, vh])?,
            w: f32t("gdn prefill W", &[max_tokens, vh, dims.gdn_key_dim])?,
            u: f32t("gdn prefill U", &[max_tokens, vh, dims.gdn_value_dim])?,
            p: f32t("gdn prefill P", &[max_tokens, vh, CHUNK])?,
            g: f32t("gdn prefill G", &[max_tokens, vh])?,
            o: f32t("gdn prefill o", &[max_tokens, vh, dims.gdn_value_dim])?,
        })
    }

    pub fn max_tokens(&self) -> usize {
        self.max_tokens
    }

    /// GPU bytes `new` allocates for `max_tokens`.
    pub fn bytes(dims: &Dims, max_tokens: usize) -> usize {
        let (kh, vh) = (dims.gdn_key_heads, dims.gdn_value_heads);
        let (kd, vd) = (dims.gdn_key_dim, dims.gdn_value_dim);
        // q, k; v, o, U; W; P; beta, log decay, G.
        4 * max_tokens * (2 * kh * kd + 3 * vh * vd + vh * kd + vh * CHUNK + 3 * vh)
    }
}

/// The per-layer tensors the decode kernel reads and writes.
pub struct GdnDecodeArgs<'a> {
    /// F32 [gdn_in_rows]: the concatenated projection's output, qkv | z | b | a.
    pub proj: &'a View<'a>,
    /// BF16 [conv channels, conv kernel].
    pub conv_w: &'a View<'a>,
    /// F32 [conv kernel, conv channels]: ring of raw inputs, slot = position % kernel.
    pub conv_ring: &'a View<'a>,
    /// F32 [value heads] each.
    pub a_log: &'a View<'a>,
    pub dt_bias: &'a View<'a>,
    /// F32 [2, value heads, key dim, value dim]: the step at position p reads state p % 2 and
    /// writes state (p + 1) % 2 (gdn.cu), so a step run ahead is undone by the position alone.
    pub state: &'a View<'a>,
    /// F32 [value heads * value dim]: read-out before the gated norm.
    pub out: &'a View<'a>,
    /// I32 [1]: the position of the token being decoded.
    pub pos: &'a View<'a>,
    /// What the position read before the PDL wait (to ask for the state and the conv history
    /// early) lags the step's by: 1 where the previous step is likely still running, else 0.
    /// A guess: the position read after the wait decides, a wrong guess costs a reload.
    pub pos_lag: i32,
}

impl Gdn {
    pub fn load(gpu: &Arc<Gpu>, dims: &Dims) -> Result<Self> {
        let module = super::load(gpu, "gdn.cu", dims)?;
        let chunk_solve = module.function("gdn_chunk_solve")?;
        module.allow_shared(&chunk_solve, solve_shared_bytes(dims))?;
        let chunk_scan = module.function("gdn_chunk_scan")?;
        module.allow_shared(&chunk_scan, scan_shared_bytes(dims))?;
        Ok(Gdn {
            gpu: gpu.clone(),
            decode: module.function("gdn_decode")?,
            gated_rmsnorm: module.function("gdn_gated_norm")?,
            gated_rmsnorm_decode: module.function("gdn_gated_norm_decode")?,
            prefill_prep: module.function("gdn_prefill_prep")?,
            prefill_ring: module.function("gdn_prefill_ring")?,
            chunk_solve,
            chunk_scan,
            _module: module,
            dims: dims.clone(),
        })
    }

    fn columns_per_block(&self) -> usize {
        self.dims.gdn_value_dim.min(32)
    }

    pub fn decode(&self, a: &GdnDecodeArgs) -> Result<()> {
        let d = &self.dims;
        let v = d.gdn_value_heads;
        let proj = a.proj.expect(DType::F32, &[d.gdn_in_rows()])?;
        let conv_w = a
            .conv_w
            .expect(DType::BF16, &[d.gdn_conv_channels(), d.conv_kernel])?;
        let ring = a
            .conv_ring
            .expect(DType::F32, &[d.conv_kernel, d.gdn_conv_channels()])?;
        let a_log = a.a_log.expect(DType::F32, &[v])?;
        let dt_bias = a.dt_bias.expect(DType::F32, &[v])?;
        let state = a
            .state
            .expect(DType::F32, &[2, v, d.gdn_key_dim, d.gdn_value_dim])?;
        let out = a.out.expect(DType::F32, &[d.gdn_out()])?;
        let pos = a.pos.expect(DType::I32, &[1])?;
        let cpb = self.columns_per_block();
        let mut args = KernelArgs::new()
            .ptr(proj)
            .ptr(conv_w)
            .ptr(ring)
            .ptr(a_log)
            .ptr(dt_bias)
            .ptr(state)
            .ptr(out)
            .ptr(pos)
            .i32(a.pos_lag)
            .f32(d.eps);
        self.gpu.launch(
            &self.decode,
            (v as u32, (d.gdn_value_dim / cpb) as u32, 1),
            (cpb * 8) as u32,
            0,
            &mut args,
        )
    }

    /// out = bf16(w * rmsnorm(o) * silu(z)) per value head, z taken from `proj`.
    pub fn gated_rmsnorm(&self, o: &View, proj: &View, w: &View, out: &View) -> Result<()> {
        let d = &self.dims;
        let o = o.expect(DType::F32, &[d.gdn_out()])?;
        let proj = proj.expect(DType::F32, &[d.gdn_in_rows()])?;
        let w = w.expect(DType::BF16, &[d.gdn_value_dim])?;
        let out = out.expect(DType::BF16, &[d.gdn_out()])?;
        self.launch_gated_rmsnorm(&self.gated_rmsnorm_decode, o, proj, w, out, d.gdn_value_heads)
    }

    /// The gated norm over `rows` (token, head) rows by `f` (the decode step's or the
    /// prefill's entry point); GDN_NORM_WARPS rows per block.
    fn launch_gated_rmsnorm(&self, f: &Function, o: u64, proj: u64, w: u64, out: u64, rows: usize) -> Result<()> {
        const ROWS_PER_BLOCK: usize = 8;
        let mut args = KernelArgs::new()
            .ptr(o)
            .ptr(proj)
            .ptr(w)
            .ptr(out)
            .f32(self.dims.eps)
            .i32(rows as i32);
        self.gpu.launch(
            f,
            (rows.div_ceil(ROWS_PER_BLOCK) as u32, 1, 1),
            (ROWS_PER_BLOCK * 32) as u32,
            0,
            &mut args,
        )
    }

    /// Gated DeltaNet over a chunk of `tokens` tokens at positions `start..start + tokens`,
    /// continuing from the state and conv ring that decode (or an earlier chunk) left.
    pub fn prefill(&self, a: &GdnPrefillArgs) -> Result<()> {
        let d = &self.dims;
        let (t, kh, v) = (a.tokens, d.gdn_key_heads, d.gdn_value_heads);
        let sc = a.scratch;
        if t == 0 {
            return Ok(());
        }
        if t > sc.max_tokens || a.start + t > i32::MAX as usize {
            return Err(CudaError::Invalid(format!(
                "gdn prefill of {t} tokens at {}: the scratch holds {} tokens",
                a.start, sc.max_tokens
            )));
        }
        let prep_threads = d.gdn_key_dim.max(d.gdn_value_dim).div_ceil(32) * 32;
        if prep_threads > 1024
            || d.gdn_key_dim % 4 != 0
            || d.gdn_value_dim % 4 != 0
            || d.conv_kernel < 2
        {
            return Err(CudaError::Invalid(format!(
                "gdn prefill needs head dims <= 1024 and multiples of 4 (the chunked delta rule \
                 moves rows as float4) and a conv kernel of at least 2 ({d:?})"
            )));
        }
        let proj = a.proj.expect(DType::F32, &[t, d.gdn_in_rows()])?;
        let conv_w = a
            .conv_w
            .expect(DType::BF16, &[d.gdn_conv_channels(), d.conv_kernel])?;
        let ring = a
            .conv_ring
            .expect(DType::F32, &[d.conv_kernel, d.gdn_conv_channels()])?;
        let a_log = a.a_log.expect(DType::F32, &[v])?;
        let dt_bias = a.dt_bias.expect(DType::F32, &[v])?;
        let norm = a.norm.expect(DType::BF16, &[d.gdn_value_dim])?;
        let state = a
            .state
            .expect(DType::F32, &[v, d.gdn_key_dim, d.gdn_value_dim])?;
        let out = a.out.expect(DType::BF16, &[t, d.gdn_out()])?;
        let (start, tokens) = (a.start as i32, t as i32);

        let mut args = KernelArgs::new()
            .ptr(proj)
            .ptr(conv_w)
            .ptr(ring)
            .ptr(a_log)
            .ptr(dt_bias)
            .ptr(sc.q.ptr())
            .ptr(sc.k.ptr())
            .ptr(sc.v.ptr())
            .ptr(sc.beta.ptr())
            .ptr(sc.log_decay.ptr())
            .i32(start)
            .i32(tokens)
            .f32(QK_L2_EPS);
        self.gpu.launch(
            &self.prefill_prep,
            (t.div_ceil(PREP_TOKENS) as u32, (kh + v) as u32, 1),
            prep_threads as u32,
            0,
            &mut args,
        )?;

        let mut args = KernelArgs::new().ptr(proj).ptr(ring).i32(start).i32(tokens);
        self.gpu.launch(
            &self.prefill_ring,
            (d.gdn_conv_channels().div_ceil(256) as u32, 1, 1),
            256,
            0,
            &mut args,
        )?;

        let mut args = KernelArgs::new()
            .ptr(sc.q.ptr())
            .ptr(sc.k.ptr())
            .ptr(sc.v.ptr())
            .ptr(sc.beta.ptr())
            .ptr(sc.log_decay.ptr())
            .ptr(sc.w.ptr())
            .ptr(sc.u.ptr())
            .ptr(sc.p.ptr())
            .ptr(sc.g.ptr())
            .i32(tokens);
        self.gpu.launch(
            &self.chunk_solve,
            (t.div_ceil(CHUNK) as u32, v as u32, 1),
            CHUNK_THREADS,
            solve_shared_bytes(d),
            &mut args,
        )?;

        let mut args = KernelArgs::new()
            .ptr(sc.q.ptr())
            .ptr(sc.k.ptr())
            .ptr(sc.w.ptr())
            .ptr(sc.u.ptr())
            .ptr(sc.p.ptr())
            .ptr(sc.g.ptr())
            .ptr(state)
            .ptr(sc.o.ptr())
            .i32(tokens);
        self.gpu.launch(
            &self.chunk_scan,
            (v as u32, d.gdn_value_dim.div_ceil(SCAN_COLUMNS) as u32, 1),
            CHUNK_THREADS,
            scan_shared_bytes(d),
            &mut args,
        )?;

        self.launch_gated_rmsnorm(&self.gated_rmsnorm, sc.o.ptr(), proj, norm, out, t * v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hopper gives a block at most 227 KB of dynamic shared memory and an SM 228 KB, 1 KB of
    /// it reserved per resident block. At the model's dims the scan runs one block per SM
    /// with 34.5 KB to spare, and the solve's launch bound promises two blocks per SM: a
    /// layout change that breaks either fails here, not at the first launch on the GPU.
    #[test]
    fn chunk_kernels_fit_hopper_shared_memory_at_model_dims() {
        let d = Dims::qwen36_35b_a3b();
        let (block_max, sm, reserved) = (227 * 1024, 228 * 1024, 1024);
        let scan = scan_shared_bytes(&d);
        assert!(scan <= block_max, "gdn_chunk_scan needs {scan} bytes");
        let solve = solve_shared_bytes(&d);
        assert!(
            2 * (solve + reserved) <= sm,
            "two gdn_chunk_solve blocks need {} bytes",
            2 * (solve + reserved)
        );
    }
}
