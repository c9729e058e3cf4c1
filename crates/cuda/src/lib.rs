//! The H200 backend: hand-written CUDA kernels, each beside its Rust launcher, behind the same
//! `Backend` seam as the CPU reference.
//!
//! - [`driver`]: the CUDA driver API loaded at run time (`libcuda.so.1`), one stream, graphs,
//!   events, programmatic dependent launch; [`nvrtc`]: kernels compiled at run time for sm_90a
//!   with the model's dimensions and the decode kernels' launch shapes as `-D` constants
//!   ([`dims`], [`shapes`]), cached on disk between runs ([`cubin_cache`]).
//! - [`kernels`]: one family per `.cu` file with its launcher (`embed_norm`, `gemv`, `gemm`
//!   (tensor-core, prefill), `gdn`, `attention` (RoPE included), `moe`, `sampling`, `fill`);
//!   launchers check every tensor's
//!   dtype and shape and name the tensor when one is wrong ([`tensor`]).
//! - [`weights`]: the weights on the GPU, concatenated at load (GDN qkv|z|b|a, attention q|k|v,
//!   router|shared_expert_gate); [`backend`]: [`CudaBackend`], sequences with preallocated KV
//!   cache and GDN state, the decode step captured as a CUDA graph; [`prefill`]: the prompt in
//!   chunks through batched kernels (GEMMs, chunk-wide mixers, grouped-GEMM experts).
//!
//! Nothing links against CUDA, so the crate builds and its host tests run anywhere. Tests:
//! `tests/compile_kernels.rs` compiles every kernel for sm_90a when NVRTC is found (CI:
//! `pip install nvidia-cuda-nvrtc==13.0.*` and put its `nvidia/cu13/lib` on `LD_LIBRARY_PATH`);
//! `tests/gpu_kernels.rs` (each decode family against lily-cpu), `tests/gpu_prefill_*.rs` (the
//! prefill GEMMs and MoE, GDN and attention chunk kernels against lily-cpu, and decode
//! continuing after them) and `tests/gpu_backend.rs` (end to end on the tiny fixture) run on a
//! GPU and print SKIPPED elsewhere. `scripts/gpu_check.sh` runs them, `lily bench` and the
//! agreement with transformers on the H200; docs/PERFORMANCE.md has the figures.

pub mod backend;
pub mod cubin_cache;
pub mod dims;
pub mod driver;
pub mod error;
pub mod kernels;
pub mod nvrtc;
pub mod prefill;
pub mod shapes;
pub mod tensor;
pub mod trace;
pub mod weights;

pub use backend::{CudaBackend, CudaSequence};
pub use dims::Dims;
pub use error::{CudaError, Result};
