//! Prefill: the prompt goes through the model in chunks of up to `PREFILL_CHUNK` tokens, every
//! layer taking the whole chunk at once: row norms, tensor-core GEMMs for the projections (with
//! the residual add in the output projections), the mixers' prefill kernels writing the same KV
//! cache, conv ring and recurrent state that decode continues from, and the MoE as grouped GEMMs.
//! Only the last token's logits are computed; its greedy pick becomes the next input exactly as
//! at the end of a decode step, so decode graphs replay straight after.
//! Launches are eager: a chunk is a few hundred large kernels, where launch gaps do not matter.

use std::sync::Arc;

use crate::backend::{CudaBackend, CudaSequence};
use crate::dims::Dims;
use crate::driver::Gpu;
use crate::error::{CudaError, Result};
use crate::kernels::attention::AttnPrefillArgs;
use crate::kernels::gdn::{GdnPrefillArgs, GdnPrefillScratch};
use crate::kernels::moe::{MoePrefillArgs, MoeScratch};
use crate::tensor::{DType, Tensor};
use crate::weights::Mixer;

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
    }
}

impl CudaBackend {
    /// Runs `tokens` through the model from the sequence's position and leaves the pick under
    /// the sequence's rule after the last one as the next input; nothing waits for the GPU.
    pub fn prefill_tokens(&self, seq: &mut CudaSequence, tokens: &[u32]) -> Result<()> {
        if tokens.is_empty() {
            return Err(CudaError::Invalid(
                "prefill needs at least one token".into(),
            ));
        }
        if tokens.len() == 1 {
            // One token is exactly a decode step, and the captured step is far cheaper than a
            // chunk's few hundred launches over every touched expert.
            self.queue_prompt(seq, tokens)?;
            return self.run_steps(seq, 1);
        }
        self.queue_prompt(seq, tokens)?;
        let scratch = self.prefill_scratch()?;
        let _no_pdl = self.gpu.pause_pdl();
        let mut start = seq.position;
        for chunk in tokens.chunks(scratch.max_tokens) {
            self.prefill_chunk(seq, scratch, start, chunk.len())?;
            start += chunk.len();
        }
        // The chunks updated the recurrent state in place, in the half of the first position;
        // the next decode step reads the half of its own (gdn.cu).
        if start % 2 != seq.position % 2 {
            for l in 0..self.dims.gdn_layers() {
                let pair = seq.gdn_state.at(l);
                let (from, to) = (pair.at(seq.position % 2), pair.at(start % 2));
                self.gpu.copy_dtod(to.ptr, from.ptr, from.bytes())?;
            }
        }
        let k = &self.kernels;
        // The last chunk's last row of the residual stream.
        let last = scratch.x.at((tokens.len() - 1) % scratch.max_tokens);
        k.lm_head_pick(
            &self.weights.lm_head.view(),
            &self.weights.final_norm.view(),
            &last,
            &seq.logits.view(),
            &seq.rule.view(),
            &seq.pick_scratch.view(),
            &seq.best.view(),
            seq.path,
        )?;
        // finish_step advances from the last prompt token's position.
        self.gpu.memset_u32(seq.pos.ptr(), (start - 1) as u32, 1)?;
        k.sampling.finish_step(
            &seq.best.view(),
            &seq.ids.view(),
            &seq.pos.view(),
            &seq.prompt_end.view(),
            &seq.picked,
            &seq.rule.view(),
        )?;
        CudaBackend::rule_advanced(seq, 1);
        seq.position = start;
        Ok(())
    }

    fn prefill_scratch(&self) -> Result<&PrefillScratch> {
        if let Some(s) = self.prefill.get() {
            return Ok(s);
        }
        let needed = PrefillScratch::bytes(&self.dims, PREFILL_CHUNK);
        let (free, _) = self.gpu.free_memory()?;
        if needed > free {
            return Err(CudaError::Invalid(format!(
                "prefill needs {} MiB of GPU memory for its {PREFILL_CHUNK}-token chunk buffers \
                 but only {} MiB are free",
                needed >> 20,
                free >> 20
            )));
        }
        let s = PrefillScratch::new(&self.gpu, &self.dims, PREFILL_CHUNK)?;
        Ok(self.prefill.get_or_init(|| s))
    }

    /// One chunk of `t` tokens at positions `start..start + t` through every layer; the
    /// residual stream of the chunk is left in `scratch.x`.
    fn prefill_chunk(
        &self,
        seq: &CudaSequence,
        s: &PrefillScratch,
        start: usize,
        t: usize,
    ) -> Result<()> {
        let (k, w, d) = (&self.kernels, &self.weights, &self.dims);
        let x = s.x.view().rows(t);
        let xn = s.xn.view().rows(t);
        k.embed_norm
            .embed_rows(&w.embed.view(), &seq.ids.view().range(start, t), &x, t)?;
        let (mut gdn_i, mut attn_i) = (0, 0);
        for l in &w.layers {
            k.embed_norm.rmsnorm(&x, &l.input_norm.view(), &xn, t)?;
            match &l.mixer {
                Mixer::Gdn(g) => {
                    let proj = s.proj.view().shaped(&[t, d.gdn_in_rows()]);
                    let out = s.mixed.view().shaped(&[t, d.gdn_out()]);
                    k.gemm.run(&xn, &g.in_proj.view(), &proj, false)?;
                    k.gdn.prefill(&GdnPrefillArgs {
                        proj: &proj,
                        conv_w: &g.conv_w.view(),
                        conv_ring: &seq.conv_ring.at(gdn_i),
                        a_log: &g.a_log.view(),
                        dt_bias: &g.dt_bias.view(),
                        norm: &g.norm.view(),
                        // The half of the prefill's first position (backend.rs moves it on).
                        state: &seq.gdn_state.at(gdn_i).at(seq.position % 2),
                        out: &out,
                        scratch: &s.gdn,
                        start,
                        tokens: t,
                    })?;
                    k.gemm.run(&out, &g.out_proj.view(), &x, true)?;
                    gdn_i += 1;
                }
                Mixer::Attn(a) => {
                    let proj = s.proj.view().shaped(&[t, d.attn_in_rows()]);
                    let out = s.mixed.view().shaped(&[t, d.attn_out()]);
                    k.gemm.run(&xn, &a.qkv.view(), &proj, false)?;
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
                    k.gemm.run(&out, &a.o_proj.view(), &x, true)?;
                    attn_i += 1;
                }
            }
            k.embed_norm.rmsnorm(&x, &l.post_norm.view(), &xn, t)?;
            k.moe.prefill(
                &k.gemm,
                &MoePrefillArgs {
                    xn: &xn,
                    router: &l.router.view(),
                    gate_up: &l.gate_up.view(),
                    down: &l.down.view(),
                    shared_gate_up: &l.shared_gate_up.view(),
                    shared_down: &l.shared_down.view(),
                    x: &x,
                    tokens: t,
                },
                &s.moe,
            )?;
        }
        Ok(())
    }
}
