//! The H200 backend: hand-written CUDA kernels, each beside its Rust launcher.
//! CUDA libraries (the driver, NVRTC) are loaded at run time so this crate builds and its host
//! code is tested where CUDA is absent.

pub mod backend;
pub mod dims;
pub mod driver;
pub mod error;
pub mod kernels;
pub mod nvrtc;
pub mod tensor;
pub mod weights;

pub use backend::{CudaBackend, CudaSequence};
pub use dims::Dims;
pub use error::{CudaError, Result};
