//! One decode step: the token at the sequence's device position through every layer, then the
//! pick of the next token written after it. The step reads its token and position from GPU
//! memory, so the same launches serve every position and are captured once as a CUDA graph
//! (steps.rs).

use crate::error::Result;
use crate::forward::pick;
use crate::kernels::attention::AttnDecodeArgs;
use crate::kernels::gdn::GdnDecodeArgs;
use crate::kernels::moe::MoeArgs;
use crate::kernels::sampling::PickPath;
use crate::kernels::Out;
use crate::model::Model;
use crate::runtime::tensor::{MatrixView, View};
use crate::sequence::CudaSequence;
use crate::weights::Mixer;

/// Records one decode step's launches on the stream (run directly, or under capture).
/// `path` must be the sequence's rule's (pick.rs). `linked`: the step follows another in the
/// same graph, so its first kernels start while that one ends.
pub(crate) fn step(m: &Model, s: &CudaSequence, path: PickPath, linked: bool) -> Result<()> {
    let (k, w, d) = (&m.kernels, &m.weights, &m.dims);
    let (pos, x, xn) = (s.pos.view(), s.x.view(), s.xn.view());
    // xn = input_norm(x); y = W_in xn, the norm in the product's prologue. The first layer's x
    // is the step's token's embedding, which the same launch looks up and writes to x.
    let input_norm_product = |i: usize, w_in: &MatrixView, tail: Option<&View>, norm: &View, y: &View| {
        if i == 0 {
            k.gemv.run_embed_normed(
                w_in,
                tail,
                &w.embed.view(),
                &s.ids.view(),
                &pos,
                &x,
                norm,
                y,
            )
        } else {
            k.gemv.run_normed(w_in, tail, &x, norm, None, y)
        }
    };
    let (mut gdn_i, mut attn_i) = (0, 0);
    for (i, l) in w.layers.iter().enumerate() {
        match &l.mixer {
            Mixer::Gdn(g) => {
                let proj = s.gdn_proj.view();
                // proj = in_proj(input_norm(x)): q|k|v|z|b|a.
                let tail = g.in_proj_tail.as_ref().map(|t| t.view());
                input_norm_product(i, &g.in_proj.view(), tail.as_ref(), &l.input_norm.view(), &proj)?;
                // o = the recurrence over conv(q|k|v), its state advanced one token.
                k.gdn.decode(&GdnDecodeArgs {
                    proj: &proj,
                    conv_w: &g.conv_w.view(),
                    conv_ring: &s.conv_ring.at(gdn_i),
                    a_log: &g.a_log.view(),
                    dt_bias: &g.dt_bias.view(),
                    state: &s.gdn_state.at(gdn_i),
                    out: &s.gdn_o.view(),
                    pos: &pos,
                    pos_lag: (linked && gdn_i == 0) as i32,
                })?;
                // normed = norm(o) * silu(z).
                k.gdn.gated_rmsnorm(
                    &s.gdn_o.view(),
                    &proj,
                    &g.norm.view(),
                    &s.gdn_normed.view(),
                )?;
                // x += out_proj normed: the residual add in the product's epilogue.
                k.gemv
                    .run(&g.out_proj.view(), &s.gdn_normed.view(), &x, Out::Add)?;
                gdn_i += 1;
            }
            Mixer::Attn(a) => {
                let proj = s.attn_proj.view();
                // proj = qkv(input_norm(x)).
                input_norm_product(i, &a.qkv.view(), None, &l.input_norm.view(), &proj)?;
                // out = gated attention over the cache, q/k norms, RoPE and the cache write
                // of this token's key and value included.
                k.attention.decode(&AttnDecodeArgs {
                    proj: &proj,
                    q_norm: &a.q_norm.view(),
                    k_norm: &a.k_norm.view(),
                    k_cache: &s.k_cache.at(attn_i),
                    v_cache: &s.v_cache.at(attn_i),
                    q: &s.q.view(),
                    part_acc: &s.part_acc.view(),
                    part_ml: &s.part_ml.view(),
                    out: &s.attn_out.view(),
                    pos: &pos,
                    max_seq: s.max_seq,
                })?;
                // x += o_proj out: the residual add in the product's epilogue.
                k.gemv
                    .run(&a.o_proj.view(), &s.attn_out.view(), &x, Out::Add)?;
                attn_i += 1;
            }
        }
        // The last layer's router asks for the next step's first product, whose weights
        // cannot stream before the step's graph starts: its ahead rows (evict_last) wait
        // in L2 through lm_head's stream, which reads with evict_first.
        let ahead = match &w.layers[(i + 1) % w.layers.len()].mixer {
            Mixer::Gdn(g) => g.in_proj.w.view(),
            Mixer::Attn(a) => a.qkv.w.view(),
        };
        // xn = post_attention_norm(x) (in the router's prologue); x += moe(xn), the residual
        // add in the down products' epilogue.
        k.moe.run(&MoeArgs {
            router: &l.router.view(),
            norm: &l.post_norm.view(),
            logits: &s.router_logits.view(),
            done: &s.router_done.view(),
            gate_up: &l.gate_up.view(),
            down: &l.down.view(),
            shared_gate_up: &l.shared_gate_up.view(),
            shared_down: &l.shared_down.view(),
            x: &xn,
            ids: &s.expert_ids.view(),
            weights: &s.expert_weights.view(),
            h: &s.expert_h.view(),
            shared_out: &s.shared_expert_out.view(),
            residual: &x,
            ahead: Some(&ahead),
        })?;
    }
    debug_assert_eq!((gdn_i, attn_i), (d.gdn_layers(), d.attn_layers()));
    // The next token: lm_head(final_norm(x)), picked under the sequence's rule, written after
    // this one.
    pick::next_token(m, s, &x, &pos, path)
}
