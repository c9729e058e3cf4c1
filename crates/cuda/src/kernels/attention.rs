//! Launchers for attention.cu: q/k norm + partial RoPE + cache write, split-KV decode on the
//! tensor cores, combine;
//! and the chunked prefill (norm + RoPE + cache write for every token, causal flash attention on
//! the tensor cores).

use std::sync::Arc;

use crate::dims::{Dims, ATTN_SPLITS};
use crate::runtime::driver::{Function, Gpu, KernelArgs, Module, TensorMapShape};
use crate::error::{CudaError, Result};
use crate::runtime::tensor::{DType, View};

pub struct Attention {
    gpu: Arc<Gpu>,
    _module: Module,
    prepare: Function,
    partial: Function,
    combine: Function,
    prefill_prepare: Function,
    prefill_flash: Function,
    dims: Dims,
}

/// The prefill flash block (attention.cu): on the warpgroup MMA for head dim 256 (FW_ROWS
/// queries, FW_THREADS threads: a loader warpgroup and two that multiply, FW_KEYS keys per K/V
/// tile, 1 KB to align the swizzle atoms; its operands by TMA), else on mma.sync (PF_ROWS, a
/// warp per 16 rows, PF_KEYS; its operands by pointer).
struct FlashBlock {
    wgmma: bool,
    rows: usize,
    keys: usize,
    threads: u32,
    shared: u32,
}

impl FlashBlock {
    fn of(d: &Dims) -> Self {
        let hd = d.attn_head_dim;
        let wgmma = hd == 256;
        let (rows, keys, threads, align) = if wgmma { (128, 64, 384, 1024) } else { (64, 32, 128, 0) };
        FlashBlock {
            wgmma,
            rows,
            keys,
            threads,
            shared: ((rows + 4 * keys) * hd * 2 + align) as u32,
        }
    }
}

/// The wgmma flash kernel's query tiles: q [tokens][heads][head dim] as (dims, heads, tokens),
/// a box one head's `rows` tokens, 64 dims wide (a 128-byte swizzled line; the kernel asks for
/// box (64 b, head, q0) for each column block b).
fn flash_query_map(d: &Dims, tokens: usize, rows: usize) -> TensorMapShape {
    let (h, hd) = (d.attn_heads as u64, d.attn_head_dim as u64);
    let end = 2 * tokens as u64 * h * hd;
    TensorMapShape {
        dims: [hd, h, tokens as u64, 1, 1],
        strides: [2 * hd, 2 * h * hd, end, end],
        boxes: [64, 1, rows as u32, 1, 1],
    }
}

/// Its K or V tiles: a cache [kv heads][max_seq][head dim] as (dims, positions, kv heads), the
/// positions ending at `kv_len` (the chunk's end), so that a key past it reads as zero, as the
/// masked scores need (0 times a stale row, NaN included, must not reach the output); a box is
/// `keys` positions of one kv head, 64 dims wide (box (64 b, k0, kv head)).
fn flash_cache_map(d: &Dims, max_seq: usize, kv_len: usize, keys: usize) -> TensorMapShape {
    let (kvh, hd) = (d.attn_kv_heads as u64, d.attn_head_dim as u64);
    let end = 2 * kvh * max_seq as u64 * hd;
    TensorMapShape {
        dims: [hd, kv_len as u64, kvh, 1, 1],
        strides: [2 * hd, 2 * max_seq as u64 * hd, end, end],
        boxes: [64, keys as u32, 1, 1, 1],
    }
}

/// The split-KV decode block (DEC_WARPS, DEC_STAGES, DEC_KEYS in attention.cu): warps, tiles in
/// each warp's cp.async ring, keys per tile.
const DECODE_WARPS: usize = 4;
const DECODE_STAGES: usize = 2;
const DECODE_KEYS: usize = 16;

pub struct AttnDecodeArgs<'a> {
    /// F32 [attn_in_rows]: q (query | gate per head) | k | v.
    pub proj: &'a View<'a>,
    /// BF16 [head dim] each.
    pub q_norm: &'a View<'a>,
    pub k_norm: &'a View<'a>,
    /// BF16 [kv heads, max_seq, head dim] each.
    pub k_cache: &'a View<'a>,
    pub v_cache: &'a View<'a>,
    /// F32 [heads * head dim]: normed, rotated query.
    pub q: &'a View<'a>,
    /// F32 [heads, ATTN_SPLITS, head dim] and [heads, ATTN_SPLITS, 2]: per-split partials.
    pub part_acc: &'a View<'a>,
    pub part_ml: &'a View<'a>,
    /// BF16 [heads * head dim]: gated output, the input of o_proj.
    pub out: &'a View<'a>,
    pub pos: &'a View<'a>,
    pub max_seq: usize,
}

pub struct AttnPrefillArgs<'a> {
    /// F32 [tokens, attn_in_rows]: per token the decode layout, q (query | gate per head) | k | v.
    pub proj: &'a View<'a>,
    /// BF16 [head dim] each.
    pub q_norm: &'a View<'a>,
    pub k_norm: &'a View<'a>,
    /// BF16 [kv heads, max_seq, head dim] each; positions start .. start + tokens are written.
    pub k_cache: &'a View<'a>,
    pub v_cache: &'a View<'a>,
    /// Scratch BF16 [tokens, heads * head dim]: normed, rotated queries.
    pub q: &'a View<'a>,
    /// BF16 [tokens, heads * head dim]: gated output, the input of o_proj.
    pub out: &'a View<'a>,
    /// Position of the chunk's first token; positions before it are already in the caches.
    pub start: usize,
    pub tokens: usize,
    pub max_seq: usize,
}

impl Attention {
    pub fn load(gpu: &Arc<Gpu>, dims: &Dims) -> Result<Self> {
        let module = super::load(gpu, "attention.cu", dims)?;
        let prefill_flash = module.function("attn_prefill_flash")?;
        module.allow_shared(&prefill_flash, FlashBlock::of(dims).shared)?;
        let partial = module.function("attn_decode_partial")?;
        module.allow_shared(&partial, Self::decode_shared(dims))?;
        Ok(Attention {
            gpu: gpu.clone(),
            prepare: module.function("attn_prepare")?,
            partial,
            combine: module.function("attn_decode_combine")?,
            prefill_prepare: module.function("attn_prefill_prepare")?,
            prefill_flash,
            _module: module,
            dims: dims.clone(),
        })
    }

    /// The whole attention mixer of one decode step after the q|k|v projection.
    pub fn decode(&self, a: &AttnDecodeArgs) -> Result<()> {
        let d = &self.dims;
        let (h, kvh, hd) = (d.attn_heads, d.attn_kv_heads, d.attn_head_dim);
        let proj = a.proj.expect(DType::F32, &[d.attn_in_rows()])?;
        let q_norm = a.q_norm.expect(DType::BF16, &[hd])?;
        let k_norm = a.k_norm.expect(DType::BF16, &[hd])?;
        let k_cache = a.k_cache.expect(DType::BF16, &[kvh, a.max_seq, hd])?;
        let v_cache = a.v_cache.expect(DType::BF16, &[kvh, a.max_seq, hd])?;
        let q = a.q.expect(DType::F32, &[h * hd])?;
        let part_acc = a.part_acc.expect(DType::F32, &[h, ATTN_SPLITS, hd])?;
        let part_ml = a.part_ml.expect(DType::F32, &[h, ATTN_SPLITS, 2])?;
        let out = a.out.expect(DType::BF16, &[h * hd])?;
        let pos = a.pos.expect(DType::I32, &[1])?;
        let mut args = KernelArgs::new()
            .ptr(proj)
            .ptr(q_norm)
            .ptr(k_norm)
            .ptr(pos)
            .ptr(q)
            .ptr(k_cache)
            .ptr(v_cache)
            .i32(a.max_seq as i32)
            .f32(d.rope_theta)
            .f32(d.eps);
        self.gpu.launch(
            &self.prepare,
            ((h + kvh) as u32, 1, 1),
            hd as u32,
            0,
            &mut args,
        )?;
        let mut args = KernelArgs::new()
            .ptr(q)
            .ptr(k_cache)
            .ptr(v_cache)
            .ptr(pos)
            .ptr(part_acc)
            .ptr(part_ml)
            .i32(a.max_seq as i32);
        self.gpu.launch(
            &self.partial,
            (kvh as u32, ATTN_SPLITS as u32, 1),
            (DECODE_WARPS * 32) as u32,
            Self::decode_shared(d),
            &mut args,
        )?;
        let mut args = KernelArgs::new()
            .ptr(part_acc)
            .ptr(part_ml)
            .ptr(proj)
            .ptr(pos)
            .ptr(out);
        self.gpu
            .launch(&self.combine, (h as u32, 1, 1), hd as u32, 0, &mut args)
    }

    /// Dynamic shared memory of attn_decode_partial: each warp's ring of K and V tiles (bf16).
    fn decode_shared(d: &Dims) -> u32 {
        (DECODE_WARPS * DECODE_STAGES * 2 * DECODE_KEYS * d.attn_head_dim * 2) as u32
    }

    /// Warps of an attn_prefill_prepare block (PP_WARPS in attention.cu): two heads each.
    fn prefill_prepare_warps(d: &Dims) -> usize {
        (d.attn_heads + d.attn_kv_heads).div_ceil(2)
    }

    /// The whole attention mixer of one prefill chunk after the q|k|v projection: `tokens`
    /// queries at positions `start ..`, each attending causally to the cache up to itself.
    pub fn prefill(&self, a: &AttnPrefillArgs) -> Result<()> {
        let d = &self.dims;
        let (h, kvh, hd) = (d.attn_heads, d.attn_kv_heads, d.attn_head_dim);
        let (start, tokens) = (a.start, a.tokens);
        let flash = FlashBlock::of(d);
        // The flash grid has one row of blocks per flash.rows queries (at most 65535 rows).
        if tokens == 0 || tokens > 65535 * flash.rows {
            return Err(CudaError::Invalid(format!(
                "attention prefill takes 1 to {} tokens per chunk, got {tokens}",
                65535 * flash.rows
            )));
        }
        if start + tokens > a.max_seq || a.max_seq > i32::MAX as usize {
            return Err(CudaError::Invalid(format!(
                "attention prefill of {tokens} tokens from position {start} does not fit a \
                 cache of {} positions",
                a.max_seq
            )));
        }
        let proj = a.proj.expect(DType::F32, &[tokens, d.attn_in_rows()])?;
        let q_norm = a.q_norm.expect(DType::BF16, &[hd])?;
        let k_norm = a.k_norm.expect(DType::BF16, &[hd])?;
        let k_cache = a.k_cache.expect(DType::BF16, &[kvh, a.max_seq, hd])?;
        let v_cache = a.v_cache.expect(DType::BF16, &[kvh, a.max_seq, hd])?;
        let q = a.q.expect(DType::BF16, &[tokens, h * hd])?;
        let out = a.out.expect(DType::BF16, &[tokens, h * hd])?;
        // attn_prefill_prepare reads proj as float4 and writes q and the caches four bf16 at once.
        if proj % 16 != 0 || q % 8 != 0 || k_cache % 8 != 0 || v_cache % 8 != 0 {
            return Err(CudaError::Invalid(format!(
                "attention prefill needs proj 16-byte and q, k_cache, v_cache 8-byte aligned \
                 (got {proj:#x}, {q:#x}, {k_cache:#x}, {v_cache:#x})"
            )));
        }
        let mut args = KernelArgs::new()
            .ptr(proj)
            .ptr(q_norm)
            .ptr(k_norm)
            .ptr(q)
            .ptr(k_cache)
            .ptr(v_cache)
            .i32(start as i32)
            .i32(a.max_seq as i32)
            .f32(d.rope_theta)
            .f32(d.eps);
        self.gpu.launch(
            &self.prefill_prepare,
            (tokens as u32, 1, 1),
            (Self::prefill_prepare_warps(d) * 32) as u32,
            0,
            &mut args,
        )?;
        let mut args = if flash.wgmma {
            let (q_map, cache_map) = (
                flash_query_map(d, tokens, flash.rows),
                flash_cache_map(d, a.max_seq, start + tokens, flash.keys),
            );
            KernelArgs::new()
                .tensor_map(&self.gpu.tensor_map_bf16(q, &q_map)?)
                .tensor_map(&self.gpu.tensor_map_bf16(k_cache, &cache_map)?)
                .tensor_map(&self.gpu.tensor_map_bf16(v_cache, &cache_map)?)
                .ptr(proj)
                .ptr(out)
                .i32(start as i32)
                .i32(tokens as i32)
        } else {
            KernelArgs::new()
                .ptr(q)
                .ptr(k_cache)
                .ptr(v_cache)
                .ptr(proj)
                .ptr(out)
                .i32(start as i32)
                .i32(tokens as i32)
                .i32(a.max_seq as i32)
        };
        self.gpu.launch(
            &self.prefill_flash,
            (h as u32, tokens.div_ceil(flash.rows) as u32, 1),
            flash.threads,
            flash.shared,
            &mut args,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hopper gives a block at most 227 KB of dynamic shared memory and an SM 228 KB, 1 KB of it
    /// reserved per resident block. The warpgroup-MMA flash block (model dims) runs one block per
    /// SM; the mma.sync one (the tiny fixture's head dim) promises two in its launch bound.
    #[test]
    fn flash_blocks_fit_hopper_shared_memory() {
        let (block_max, sm, reserved) = (227 * 1024, 228 * 1024, 1024);
        let model = FlashBlock::of(&Dims::qwen36_35b_a3b());
        assert_eq!((model.rows, model.threads), (128, 384));
        assert!(model.shared <= block_max, "attn_prefill_flash needs {} bytes", model.shared);
        let tiny = FlashBlock::of(&Dims {
            attn_head_dim: 32,
            ..Dims::qwen36_35b_a3b()
        });
        assert_eq!((tiny.rows, tiny.threads), (64, 128));
        assert!(2 * (tiny.shared + reserved) <= sm);
    }

    /// A query box is one head's tokens q0 .. q0 + rows, dims 64 b .. 64 b + 63, each row one
    /// 128-byte line; tokens past the chunk read zeros.
    #[test]
    fn a_query_box_is_one_heads_rows() {
        let d = Dims::qwen36_35b_a3b();
        let (h, hd, tokens) = (d.attn_heads, d.attn_head_dim, 200);
        let map = flash_query_map(&d, tokens, 128);
        for (b, head, q0) in [(0, 0, 0), (3, 15, 128), (1, 7, 128)] {
            let got = map.box_elements([64 * b as i64, head as i64, q0 as i64, 0, 0]);
            assert_eq!(got.len(), 128 * 64);
            for r in 0..128 {
                for c in 0..64 {
                    let t = q0 + r;
                    let want = (t < tokens).then(|| ((t * h + head) * hd + 64 * b + c) as u64);
                    assert_eq!(got[r * 64 + c], want, "block {b}, head {head}, row {r}, dim {c}");
                }
            }
        }
    }

    /// A K/V box is one kv head's positions k0 .. k0 + keys of the cache; positions at or past
    /// the chunk's end read zeros even where the cache goes on.
    #[test]
    fn a_cache_box_ends_at_the_chunks_last_key() {
        let d = Dims::qwen36_35b_a3b();
        let (kvh, hd, max_seq, kv_len) = (d.attn_kv_heads, d.attn_head_dim, 4096, 197);
        let map = flash_cache_map(&d, max_seq, kv_len, 64);
        for (b, head, k0) in [(0, 0, 0), (2, kvh - 1, 192), (3, 1, 128)] {
            let got = map.box_elements([64 * b as i64, k0 as i64, head as i64, 0, 0]);
            for r in 0..64 {
                for c in 0..64 {
                    let key = k0 + r;
                    let want = (key < kv_len).then(|| ((head * max_seq + key) * hd + 64 * b + c) as u64);
                    assert_eq!(got[r * 64 + c], want, "block {b}, kv head {head}, key {key}, dim {c}");
                }
            }
        }
    }
}
