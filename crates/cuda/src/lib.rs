//! The H200 backend: hand-written CUDA kernels, each beside its Rust launcher, behind the same
//! `Backend` seam as the CPU reference.
//!
//! - [`runtime`]: what knows nothing of the model: the CUDA driver API loaded at run time, NVRTC
//!   (kernels compiled at run time for sm_90a with `-D` constants) and its on-disk cubin cache,
//!   device tensors, launch traces.
//! - [`dims`], [`shapes`]: the model's dimensions and the decode kernels' launch shapes, the
//!   constants every kernel is compiled with.
//! - [`kernels`]: one op family per `.cu` file with its launcher (`norm`, `gemv` and `gemm` (the
//!   products: decode, and prefill on the tensor cores), `gdn`, `attention` (RoPE included),
//!   `moe`, `sampling`, `fill`); shared device code in `.cuh` headers; launchers check every
//!   tensor's dtype and shape and name the tensor when one is wrong.
//! - [`weights`]: the weights on the GPU, concatenated at load (GDN qkv|z|b|a, attention q|k|v,
//!   router|shared_expert_gate); [`model`]: the kernels and weights of one model on one GPU.
//! - [`forward`]: the forward passes, top to bottom: a decode step, a prompt's prefill in
//!   chunks, and the pick of the next token that ends both.
//! - [`sequence`]: one sequence's state (KV cache, GDN state, ids, the step's scratch) and its
//!   snapshots; [`steps`]: the host side of the steps (queueing, captured step graphs, running
//!   one step ahead, reading picks back); [`backend`]: [`CudaBackend`], the `Backend` seam.
//!
//! Nothing links against CUDA, so the crate builds and its host tests run anywhere. Tests, one
//! file per op family (`tests/norm.rs`, `products.rs`, `gdn.rs`, `attention.rs`, `moe.rs`,
//! `sampling.rs`), each covering decode and prefill against lily-cpu, and `tests/backend.rs`
//! (end to end on the tiny fixture), run on a GPU and print SKIPPED elsewhere;
//! `tests/compile_kernels.rs` compiles every kernel for sm_90a when NVRTC is found (CI:
//! `pip install nvidia-cuda-nvrtc==13.0.*` and put its `nvidia/cu13/lib` on `LD_LIBRARY_PATH`)
//! and `tests/pdl_order.rs` checks the compiled code's PDL waits. Micro-benchmarks are in
//! `benches/`. `scripts/gpu/gpu_check.sh` runs them, `lily bench` and the agreement with
//! transformers on the H200; docs/PERFORMANCE.md has the figures.

pub mod backend;
pub mod dims;
pub mod error;
pub mod forward;
pub mod kernels;
pub mod model;
pub mod runtime;
pub mod sequence;
pub mod shapes;
mod steps;
pub mod weights;

pub use backend::CudaBackend;
pub use dims::{Dims, WeightFormat};
pub use error::{CudaError, Result};
pub use sequence::{CudaSequence, CudaSnapshot};
