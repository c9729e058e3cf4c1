//! Kernel families: each `.cu` source sits beside the Rust launcher that compiles it (NVRTC, for
//! the model's dimensions) and checks every argument before dispatch.

pub mod attention;
pub mod fill;
pub mod gdn;
pub mod gemm;
pub mod gemv;
pub mod moe;
pub mod norm;
pub mod sampling;

use std::sync::Arc;

use crate::runtime::cubin_cache::CubinCache;
use crate::dims::Dims;
use crate::runtime::driver::{Gpu, Module};
use crate::error::Result;
use crate::runtime::nvrtc::{Nvrtc, TARGET_ARCH};

/// A family's source as the compiler sees it: the headers it includes, then its own file, each
/// under a `#line` naming it so that the compiler's messages point into the right file.
macro_rules! family {
    ($($file:literal),+) => {
        concat!($("#line 1 \"", $file, "\"\n", include_str!($file), "\n"),+)
    };
}

/// Every kernel family's source, by file name (the CI compile test walks this list). Each
/// includes common.cuh (bf16 as raw bits, so NVRTC from a bare wheel needs no CUDA headers;
/// warp and block reductions, PDL); moe.cu's router is gemv.cuh's row product.
pub const SOURCES: &[(&str, &str)] = &[
    ("norm.cu", family!("common.cuh", "norm.cu")),
    ("gemv.cu", family!("common.cuh", "gemv.cuh", "gemv.cu")),
    ("gemm.cu", family!("common.cuh", "gemm.cu")),
    ("gdn.cu", family!("common.cuh", "gdn.cu")),
    ("attention.cu", family!("common.cuh", "attention.cu")),
    ("moe.cu", family!("common.cuh", "gemv.cuh", "moe.cu")),
    ("sampling.cu", family!("common.cuh", "sampling.cu")),
    ("fill.cu", family!("common.cuh", "fill.cu")),
];

/// Compiles one family for `dims` (or takes the cubin a previous run cached) and loads it on
/// `gpu`. A cached cubin the driver refuses is recompiled and replaced.
pub(crate) fn load(gpu: &Arc<Gpu>, name: &str, dims: &Dims) -> Result<Module> {
    let index = SOURCES
        .iter()
        .position(|(n, _)| *n == name)
        .ok_or_else(|| crate::error::CudaError::Invalid(format!("no kernel family {name}")))?;
    let source = SOURCES[index].1;
    let started = std::time::Instant::now();
    let nvrtc = Nvrtc::get()?;
    let mut defines = dims.defines();
    defines.extend(crate::runtime::trace::define());
    let compile = || nvrtc.compile(name, source, TARGET_ARCH, &defines);
    let cache = CubinCache::from_env();
    let key = nvrtc.cache_key(name, source, TARGET_ARCH, &defines);
    let (cubin, cached) = cache.get_or_compile(&key, compile)?;
    tracing::debug!(
        kernel = name,
        cached,
        ms = started.elapsed().as_millis() as u64,
        "compiled"
    );
    // Kernels::load takes the families in SOURCES' order.
    tracing::info!(
        target: lily_model::PROGRESS,
        stage = "kernels",
        done = index + 1,
        total = SOURCES.len(),
        "kernels: {name} {} ({}/{})",
        if cached { "from the cache" } else { "compiled" },
        index + 1,
        SOURCES.len()
    );
    match gpu.load_module(&cubin) {
        Err(e) if cached => {
            tracing::warn!(kernel = name, "cached cubin refused ({e}); recompiling");
            let cubin = compile()?;
            cache.put(&key, &cubin);
            gpu.load_module(&cubin)
        }
        loaded => loaded,
    }
}

/// What a product does with its output y: overwrite it, or add to it (the residual add of the
/// products that end a mixer or an MoE block, in their epilogue).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Out {
    Write,
    Add,
}

/// All kernel families, compiled for one model.
pub struct Kernels {
    pub norm: norm::Norm,
    pub gemv: gemv::Gemv,
    pub gemm: gemm::Gemm,
    pub gdn: gdn::Gdn,
    pub attention: attention::Attention,
    pub moe: moe::Moe,
    pub sampling: sampling::Sampling,
    pub fill: fill::Fill,
}

impl Kernels {
    pub fn load(gpu: &Arc<Gpu>, dims: &Dims) -> Result<Kernels> {
        dims.validate().map_err(crate::error::CudaError::Invalid)?;
        Ok(Kernels {
            norm: norm::Norm::load(gpu, dims)?,
            gemv: gemv::Gemv::load(gpu, dims)?,
            gemm: gemm::Gemm::load(gpu, dims)?,
            gdn: gdn::Gdn::load(gpu, dims)?,
            attention: attention::Attention::load(gpu, dims)?,
            moe: moe::Moe::load(gpu, dims)?,
            sampling: sampling::Sampling::load(gpu, dims)?,
            fill: fill::Fill::load(gpu, dims)?,
        })
    }
}
