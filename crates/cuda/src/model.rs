//! The model on one GPU: its kernels compiled for its dimensions and its weights, which is
//! everything a forward pass reads besides a sequence's state.

use std::path::Path;
use std::sync::Arc;

use lily_model::{Config, Weights};

use crate::dims::Dims;
use crate::error::{CudaError, Result};
use crate::kernels::Kernels;
use crate::runtime::driver::Gpu;
use crate::weights::DeviceWeights;

pub struct Model {
    pub gpu: Arc<Gpu>,
    pub dims: Dims,
    pub kernels: Kernels,
    pub weights: DeviceWeights,
}

impl Model {
    /// Compiles the kernels for `dims` and allocates the weights (contents undefined) on `gpu`
    /// (opened by the caller, who may have probed it first).
    fn allocate(gpu: Arc<Gpu>, dims: Dims) -> Result<Model> {
        // The GPU may have been opened on another thread (the server probes it on the main
        // thread and builds the backend on its engine thread, which then does all the work).
        gpu.bind()?;
        tracing::info!(gpu = %gpu.name, arch = %gpu.arch(), sms = gpu.multiprocessors, driver = gpu.driver_version, "CUDA device");
        let kernels = Kernels::load(&gpu, &dims)?;
        let weights = DeviceWeights::allocate(&gpu, &dims)?;
        Ok(Model {
            gpu,
            dims,
            kernels,
            weights,
        })
    }

    /// The model of `dims` with seeded synthetic weights generated on the GPU.
    pub fn synthetic(gpu: Arc<Gpu>, dims: Dims, seed: u32) -> Result<Model> {
        let m = Self::allocate(gpu, dims)?;
        m.weights.fill_synthetic(&m.kernels, seed)?;
        m.gpu.synchronize()?;
        Ok(m)
    }

    /// Loads the checkpoint in `dir` (memory-mapped) and copies it to the GPU once.
    pub fn load(gpu: Arc<Gpu>, dir: &Path) -> Result<Model> {
        let config = Config::load(dir).map_err(|e| CudaError::Weights(e.to_string()))?;
        let weights = Weights::load(dir, &config).map_err(|e| CudaError::Weights(e.to_string()))?;
        Self::from_weights(gpu, &config, &weights)
    }

    /// The checkpoint's weights on `gpu`, in bf16 or, where its products are FP8, in FP8
    /// (weights.rs: weight_format).
    pub fn from_weights(gpu: Arc<Gpu>, config: &Config, weights: &Weights) -> Result<Model> {
        let mut dims = Dims::from_config(config);
        dims.weights = crate::weights::weight_format(weights, &dims)?;
        let m = Self::allocate(gpu, dims)?;
        m.weights.upload(&m.gpu, &m.dims, weights)?;
        Ok(m)
    }
}
