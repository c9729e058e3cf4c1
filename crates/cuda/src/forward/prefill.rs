//! Prefill: the prompt goes through the model in chunks of up to `PREFILL_CHUNK` tokens, every
//! layer taking the whole chunk at once: row norms, tensor-core GEMMs for the projections (with
//! the residual add in the output projections), the mixers' prefill kernels writing the same KV
//! cache, conv ring and recurrent state that decode continues from, and the MoE as grouped GEMMs.
//! Only the last token's logits are computed; its pick becomes the next input exactly as
//! at the end of a decode step, so decode graphs replay straight after.
//! Launches are eager: a chunk is a few hundred large kernels, where launch gaps do not matter.

use std::sync::Arc;

use crate::dims::Dims;
use crate::error::Result;
use crate::forward::pick;
use crate::kernels::attention::AttnPrefillArgs;
use crate::kernels::gdn::{GdnPrefillArgs, GdnPrefillScratch};
use crate::kernels::moe::{MoePrefillArgs, MoeScratch};
use crate::kernels::Out;
use crate::model::Model;
use crate::runtime::driver::Gpu;
use crate::dims::WeightFormat;
use crate::runtime::tensor::{DType, Matrix, Tensor, View};
use crate::sequence::CudaSequence;
use crate::weights::{LayerWeights, Mixer};

/// Most tokens one chunk holds: an 8K prompt is one chunk; longer prompts reuse the buffers.
pub const PREFILL_CHUNK: usize = 8192;

/// The activations of one chunk, allocated once per backend at the first prefill.
pub struct PrefillScratch {
    max_tokens: usize,
    x: Tensor,
    xn: Tensor,
    proj: Tensor,
    mixed: Tensor,
    attn_q: Tensor,
    gdn: GdnPrefillScratch,
    moe: MoeScratch,
    /// FP8 models: one layer's products in bf16 (layer_products).
    dequant: Option<Tensor>,
}

impl PrefillScratch {
    pub fn new(gpu: &Arc<Gpu>, d: &Dims, max_tokens: usize) -> Result<PrefillScratch> {
        let proj_cols = d.gdn_in_rows().max(d.attn_in_rows());
        let mixed_cols = d.gdn_out().max(d.attn_out());
        Ok(PrefillScratch {
            max_tokens,
            x: Tensor::new(gpu, "prefill x", DType::F32, &[max_tokens, d.hidden])?,
            xn: Tensor::new(gpu, "prefill xn", DType::BF16, &[max_tokens, d.hidden])?,
            proj: Tensor::new(gpu, "prefill proj", DType::F32, &[max_tokens * proj_cols])?,
            mixed: Tensor::new(
                gpu,
                "prefill mixer out",
                DType::BF16,
                &[max_tokens * mixed_cols],
            )?,
            attn_q: Tensor::new(gpu, "prefill q", DType::BF16, &[max_tokens * d.attn_out()])?,
            gdn: GdnPrefillScratch::new(gpu, d, max_tokens)?,
            moe: MoeScratch::new(gpu, d, max_tokens)?,
            dequant: match d.weights {
                WeightFormat::Bf16 => None,
                WeightFormat::Fp8 { .. } => Some(Tensor::new(
                    gpu,
                    "prefill dequantised layer",
                    DType::BF16,
                    &[layer_product_values(d)],
                )?),
            },
        })
    }

    /// GPU bytes the scratch of `max_tokens` takes (checked before allocating).
    pub fn bytes(d: &Dims, max_tokens: usize) -> usize {
        max_tokens
            * (4 * d.hidden
                + 2 * d.hidden
                + 4 * d.gdn_in_rows().max(d.attn_in_rows())
                + 2 * d.gdn_out().max(d.attn_out())
                + 2 * d.attn_out())
            + GdnPrefillScratch::bytes(d, max_tokens)
            + MoeScratch::bytes(d, max_tokens)
            + match d.weights {
                WeightFormat::Bf16 => 0,
                WeightFormat::Fp8 { .. } => 2 * layer_product_values(d),
            }
    }
}

/// Values of the largest layer's products: a mixer's input and output products, the experts'
/// and the shared expert's.
fn layer_product_values(d: &Dims) -> usize {
    let h = d.hidden;
    (d.gdn_in_rows().max(d.attn_in_rows()) + d.gdn_out().max(d.attn_out())) * h
        + 3 * (d.experts * d.moe_inter + d.shared_inter) * h
}

/// One layer's product matrices as the GEMMs read them (bf16).
struct LayerProducts<'a> {
    mixer_in: View<'a>,
    mixer_out: View<'a>,
    gate_up: View<'a>,
    down: View<'a>,
    shared_gate_up: View<'a>,
    shared_down: View<'a>,
}

/// A layer's products: the weights themselves in a bf16 model; in an FP8 model the weights
/// dequantised into `s.dequant` (GDN's bf16 b | a rows copied after its q|k|v|z), before the
/// chunk's products read them. Prefill's tensor-core GEMMs take bf16 tiles; dequantising a
/// layer costs writing its bf16 bytes once per chunk (docs/PERFORMANCE.md, FP8 prefill).
fn layer_products<'a>(m: &Model, l: &'a LayerWeights, s: &'a PrefillScratch) -> Result<LayerProducts<'a>> {
    let (mixer_in, tail, mixer_out) = match &l.mixer {
        Mixer::Gdn(g) => (&g.in_proj, g.in_proj_tail.as_ref(), &g.out_proj),
        Mixer::Attn(a) => (&a.qkv, None, &a.o_proj),
    };
    let Some(scratch) = &s.dequant else {
        return Ok(LayerProducts {
            mixer_in: mixer_in.w.view(),
            mixer_out: mixer_out.w.view(),
            gate_up: l.gate_up.w.view(),
            down: l.down.w.view(),
            shared_gate_up: l.shared_gate_up.w.view(),
            shared_down: l.shared_down.w.view(),
        });
    };
    let mut at = 0;
    let mut next = |mat: &Matrix, extra_rows: usize| -> Result<View<'a>> {
        let mut shape = mat.w.shape.clone();
        let cols = *shape.last().unwrap();
        let n = mat.w.numel();
        let out = scratch.view().range(at, n + extra_rows * cols);
        m.kernels.gemm.dequantize(&mat.view(), &out.range(0, n).shaped(&shape))?;
        at += n + extra_rows * cols;
        shape[0] += extra_rows;
        Ok(out.shaped(&shape))
    };
    let rows_after = tail.map_or(0, |t| t.shape[0]);
    let mixer_in_view = next(mixer_in, rows_after)?;
    if let Some(t) = tail {
        let dst = mixer_in_view.ptr + (mixer_in.w.numel() * 2) as u64;
        m.gpu.copy_dtod(dst, t.ptr(), t.bytes())?;
    }
    Ok(LayerProducts {
        mixer_in: mixer_in_view,
        mixer_out: next(mixer_out, 0)?,
        gate_up: next(&l.gate_up, 0)?,
        down: next(&l.down, 0)?,
        shared_gate_up: next(&l.shared_gate_up, 0)?,
        shared_down: next(&l.shared_down, 0)?,
    })
}

/// Runs the `n` tokens queued at the sequence's position (its ids) through the model, chunk
/// after chunk, and picks the token after the last one under the sequence's rule, as a decode
/// step would; nothing waits for the GPU. The host's record of the sequence (its position, the
/// rule's draw) is the caller's to move on.
pub(crate) fn prompt(m: &Model, seq: &CudaSequence, s: &PrefillScratch, n: usize) -> Result<()> {
    let _no_pdl = m.gpu.pause_pdl();
    let mut start = seq.position;
    while start < seq.position + n {
        let t = (seq.position + n - start).min(s.max_tokens);
        chunk(m, seq, s, start, t)?;
        start += t;
    }
    // The chunks updated the recurrent state in place, in the half of the first position;
    // the next decode step reads the half of its own (gdn.cu).
    if start % 2 != seq.position % 2 {
        for l in 0..m.dims.gdn_layers() {
            let pair = seq.gdn_state.at(l);
            let (from, to) = (pair.at(seq.position % 2), pair.at(start % 2));
            m.gpu.copy_dtod(to.ptr, from.ptr, from.bytes())?;
        }
    }
    // finish_step advances from the last prompt token's position.
    m.gpu.memset_u32(seq.pos.ptr(), (start - 1) as u32, 1)?;
    // The last chunk's last row of the residual stream.
    let last = s.x.at((n - 1) % s.max_tokens);
    pick::next_token(m, seq, &last, &seq.pos.view(), seq.path)
}

/// One chunk of `t` tokens at positions `start..start + t` through every layer; the residual
/// stream of the chunk is left in `s.x`.
fn chunk(m: &Model, seq: &CudaSequence, s: &PrefillScratch, start: usize, t: usize) -> Result<()> {
    let (k, w, d) = (&m.kernels, &m.weights, &m.dims);
    let x = s.x.view().rows(t);
    let xn = s.xn.view().rows(t);
    // x = embed(ids).
    k.norm
        .embed_rows(&w.embed.view(), &seq.ids.view().range(start, t), &x, t)?;
    let (mut gdn_i, mut attn_i) = (0, 0);
    for l in &w.layers {
        let p = layer_products(m, l, s)?;
        // xn = input_norm(x).
        k.norm.rmsnorm(&x, &l.input_norm.view(), &xn, t)?;
        match &l.mixer {
            Mixer::Gdn(g) => {
                let proj = s.proj.view().shaped(&[t, d.gdn_in_rows()]);
                let out = s.mixed.view().shaped(&[t, d.gdn_out()]);
                // proj = in_proj xn: q|k|v|z|b|a.
                k.gemm.run(&p.mixer_in, &xn, &proj, Out::Write)?;
                // out = norm(the chunked recurrence over conv(q|k|v)) * silu(z), the state
                // and conv ring left where the next token continues.
                k.gdn.prefill(&GdnPrefillArgs {
                    proj: &proj,
                    conv_w: &g.conv_w.view(),
                    conv_ring: &seq.conv_ring.at(gdn_i),
                    a_log: &g.a_log.view(),
                    dt_bias: &g.dt_bias.view(),
                    norm: &g.norm.view(),
                    // The half of the prefill's first position (`prompt` moves it on).
                    state: &seq.gdn_state.at(gdn_i).at(seq.position % 2),
                    out: &out,
                    scratch: &s.gdn,
                    start,
                    tokens: t,
                })?;
                // x += out_proj out: the residual add in the product's epilogue.
                k.gemm.run(&p.mixer_out, &out, &x, Out::Add)?;
                gdn_i += 1;
            }
            Mixer::Attn(a) => {
                let proj = s.proj.view().shaped(&[t, d.attn_in_rows()]);
                let out = s.mixed.view().shaped(&[t, d.attn_out()]);
                // proj = qkv xn.
                k.gemm.run(&p.mixer_in, &xn, &proj, Out::Write)?;
                // out = causal gated attention over the cache and the chunk, q/k norms, RoPE
                // and the chunk's cache writes included.
                k.attention.prefill(&AttnPrefillArgs {
                    proj: &proj,
                    q_norm: &a.q_norm.view(),
                    k_norm: &a.k_norm.view(),
                    k_cache: &seq.k_cache.at(attn_i),
                    v_cache: &seq.v_cache.at(attn_i),
                    q: &s.attn_q.view().shaped(&[t, d.attn_out()]),
                    out: &out,
                    start,
                    tokens: t,
                    max_seq: seq.max_seq,
                })?;
                // x += o_proj out: the residual add in the product's epilogue.
                k.gemm.run(&p.mixer_out, &out, &x, Out::Add)?;
                attn_i += 1;
            }
        }
        // xn = post_attention_norm(x).
        k.norm.rmsnorm(&x, &l.post_norm.view(), &xn, t)?;
        // x += moe(xn), the residual add in the down products' epilogue.
        k.moe.prefill(
            &k.gemm,
            &MoePrefillArgs {
                xn: &xn,
                router: &l.router.view(),
                gate_up: &p.gate_up,
                down: &p.down,
                shared_gate_up: &p.shared_gate_up,
                shared_down: &p.shared_down,
                x: &x,
                tokens: t,
            },
            &s.moe,
        )?;
    }
    Ok(())
}
