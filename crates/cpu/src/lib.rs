//! The CPU reference forward pass: plain Rust, f32 accumulation, weights read in their stored
//! dtype (f32, bf16, f16) from the memory-mapped checkpoint. It is the oracle that the CUDA
//! backend and every model path are checked against, and it matches transformers'
//! `Qwen3_5MoeForCausalLM` to ~1e-6 relative on the golden fixtures.
//!
//! Ops, one module per family, each a plain function over f32 slices (layouts in the module docs):
//! - [`products`]: [`products::matvec`], [`products::matmul`] against a weight [`lily_model::Tensor`]
//!   (`out = W x`, W [rows, cols] in f32/bf16/f16, widened per row), [`products::dot`].
//! - [`norm`]: [`norm::rms_norm_zero_centred`] `x * rsqrt(mean(x^2)+eps) * (1+w)` (layer, final,
//!   q/k norms), [`norm::rms_norm_zero_centred_rows`] (per head, in place),
//!   [`norm::gated_rms_norm`] `w * rmsnorm(o) * silu(z)` (GDN output), [`norm::l2_normalize`].
//! - [`activation`]: `sigmoid`, `silu`, `softplus`.
//! - [`rope`]: [`rope::inverse_frequencies`], [`rope::apply_rope`] (rotate-half on the first
//!   `rotary_dim` dims of a head).
//! - [`gdn`]: [`gdn::causal_conv1d_silu`] (depthwise conv with state), [`gdn::decay_and_beta`]
//!   (`g`, `beta` from `a`, `b`), [`gdn::gated_delta_rule_recurrent`] (decode form) and
//!   [`gdn::gated_delta_rule_chunked`] (prefill form, chunks of 64); both L2-normalise q, k
//!   and scale q inside.
//! - [`attention`]: [`attention::causal_attention`] (GQA softmax attention over a KV cache).
//! - [`moe`]: [`moe::route`] (top-k logits, softmax over them), [`moe::expert_mlp`] (SwiGLU),
//!   [`moe::moe_block`] (routed experts + gated shared expert).
//!
//! [`CpuModel`] strings them into the model and implements [`lily_model::Backend`].

pub mod activation;
pub mod attention;
pub mod error;
pub mod gdn;
pub mod products;
pub mod model;
pub mod moe;
pub mod norm;
pub mod rope;

pub use error::CpuError;
pub use model::{CpuModel, CpuSequence, ForwardOutput, Outputs};
