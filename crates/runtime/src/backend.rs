//! Which implementation of the `Backend` seam runs the model. `Auto` takes the H200 backend
//! where a CUDA driver and GPU are present and the kernels support the checkpoint's shapes,
//! and the CPU reference everywhere else.

use std::sync::Arc;

use lily_cuda::runtime::driver::Gpu;
use lily_cuda::{CudaError, Dims};
use lily_model::Config;

use crate::Error;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum BackendKind {
    /// CUDA where it can run this checkpoint, else the CPU reference.
    Auto,
    /// The CPU reference (f32 accumulation; slow, exact).
    Cpu,
    /// The H200 backend; an error where it cannot run.
    Cuda,
}

/// Where the model runs once `Auto` is decided; the GPU opened to decide it is kept for the
/// backend, so the process opens it once.
pub enum RunOn {
    Cpu,
    Cuda(Arc<Gpu>),
}

/// The backend that will run `config`'s model, decided before any weights are loaded.
pub fn resolve(kind: BackendKind, config: &Config) -> Result<RunOn, Error> {
    let cuda_fit = || -> Result<Arc<Gpu>, String> {
        Dims::from_config(config)
            .validate()
            .map_err(|e| format!("the CUDA kernels cannot run this checkpoint: {e}"))?;
        Gpu::open().map_err(|e| match e {
            CudaError::LibraryNotFound { .. } => format!("no CUDA driver here ({e})"),
            e => format!("no usable GPU: {e}"),
        })
    };
    match kind {
        BackendKind::Cpu => Ok(RunOn::Cpu),
        BackendKind::Cuda => cuda_fit().map(RunOn::Cuda).map_err(Error::NoCuda),
        BackendKind::Auto => match cuda_fit() {
            Ok(gpu) => {
                tracing::info!("backend: CUDA");
                Ok(RunOn::Cuda(gpu))
            }
            Err(why) => {
                tracing::info!("backend: CPU reference ({why})");
                Ok(RunOn::Cpu)
            }
        },
    }
}
