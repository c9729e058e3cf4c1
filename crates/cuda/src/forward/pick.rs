//! The end of both forward passes: the next token from the last row of the residual stream.
//! `logits = lm_head(final_norm(x))`, whose epilogue leaves their argmax key in `best` (a
//! greedy rule's pick, a draw's max); a drawn rule then replaces it with the drawn token
//! (sampling.cu); finish_step writes the pick after the position, into the ids the next step
//! reads and the host slot `steps.rs` waits on, and moves the position and a drawn rule on.

use crate::error::Result;
use crate::kernels::sampling::PickPath;
use crate::model::Model;
use crate::runtime::tensor::View;
use crate::sequence::CudaSequence;

/// Picks the token after `x` (F32 [hidden]), the residual row of the token at `pos`. `path`
/// must be the sequence's rule's (`PickPath::of`): under a greedy rule the draw writes
/// nothing, and a cut whose passes are left out is not made. `best` must hold 0, as
/// finish_step leaves it.
pub(crate) fn next_token(
    m: &Model,
    s: &CudaSequence,
    x: &View,
    pos: &View,
    path: PickPath,
) -> Result<()> {
    let (k, w) = (&m.kernels, &m.weights);
    let (logits, best) = (s.logits.view(), s.best.view());
    // logits = lm_head(final_norm(x)), the norm in the product's prologue; best = their argmax.
    k.gemv
        .run_lm_head(&w.lm_head.view(), x, &w.final_norm.view(), &logits, &best)?;
    if let PickPath::Draw { top_k, top_p } = path {
        // best = the token drawn under the sequence's rule.
        k.sampling.draw(
            &logits,
            &s.rule.view(),
            &s.pick_scratch.view(),
            &best,
            top_k,
            top_p,
        )?;
    }
    k.sampling.finish_step(
        &best,
        &s.ids.view(),
        pos,
        &s.prompt_end.view(),
        &s.picked,
        &s.rule.view(),
    )
}
