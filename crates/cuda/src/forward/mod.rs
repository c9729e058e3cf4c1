//! The model's forward passes, top to bottom over the kernels, the weights ([`Model`]) and a
//! sequence's state ([`CudaSequence`]): [`decode`] one token as the step the backend captures,
//! [`prefill`] a prompt in chunks; both end in [`pick`], the next token's pick on the GPU.
//! Every layer is `x += mixer(input_norm(x)); x += moe(post_attention_norm(x))`; where a kernel
//! fuses a norm or a residual add, the pass still names it as a step.
//!
//! [`Model`]: crate::model::Model
//! [`CudaSequence`]: crate::sequence::CudaSequence

pub mod decode;
pub mod pick;
pub mod prefill;
