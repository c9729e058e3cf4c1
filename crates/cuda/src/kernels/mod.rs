//! Kernel families: each `.cu` source sits beside the Rust launcher that compiles it (NVRTC, for
//! the model's dimensions) and checks every argument before dispatch.

pub mod attention;
pub mod embed_norm;
pub mod fill;
pub mod gdn;
pub mod gemm;
pub mod gemv;
pub mod moe;
pub mod sampling;

use std::sync::Arc;

use crate::cubin_cache::CubinCache;
use crate::dims::Dims;
use crate::driver::{Gpu, Module};
use crate::error::Result;
use crate::nvrtc::{Nvrtc, TARGET_ARCH};
use crate::tensor::View;
use sampling::PickPath;

/// Every kernel source, by file name (the CI compile test walks this list).
pub const SOURCES: &[(&str, &str)] = &[
    ("embed_norm.cu", include_str!("embed_norm.cu")),
    ("gemv.cu", include_str!("gemv.cu")),
    ("gemm.cu", include_str!("gemm.cu")),
    ("gdn.cu", include_str!("gdn.cu")),
    ("attention.cu", include_str!("attention.cu")),
    ("moe.cu", moe::SOURCE),
    ("sampling.cu", include_str!("sampling.cu")),
    ("fill.cu", include_str!("fill.cu")),
];

/// Compiles one family for `dims` (or takes the cubin a previous run cached) and loads it on
/// `gpu`. A cached cubin the driver refuses is recompiled and replaced.
pub(crate) fn load(gpu: &Arc<Gpu>, name: &str, source: &str, dims: &Dims) -> Result<Module> {
    let started = std::time::Instant::now();
    let nvrtc = Nvrtc::get()?;
    let mut defines = dims.defines();
    defines.extend(crate::trace::define());
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

/// All kernel families, compiled for one model.
pub struct Kernels {
    pub embed_norm: embed_norm::EmbedNorm,
    pub gemv: gemv::Gemv,
    pub gemm: gemm::Gemm,
    pub gdn: gdn::Gdn,
    pub attention: attention::Attention,
    pub moe: moe::Moe,
    pub sampling: sampling::Sampling,
    pub fill: fill::Fill,
}

impl Kernels {
    /// The logits of the residual row `x` (F32 [hidden]): lm_head over its final norm, then the
    /// pick under the rule in `rule` into `best` (an argmax key; it must hold 0, as finish_step
    /// leaves it). lm_head's epilogue leaves the argmax there: a greedy rule's pick, a draw's
    /// max, which sampling's kernels replace with the drawn token. `path` must be the rule's
    /// (`PickPath::of`): under a greedy rule the draw writes nothing, and a cut whose passes are
    /// left out is not made.
    #[allow(clippy::too_many_arguments)]
    pub fn lm_head_pick(
        &self,
        lm_head: &View,
        final_norm: &View,
        x: &View,
        logits: &View,
        rule: &View,
        scratch: &View,
        best: &View,
        path: PickPath,
    ) -> Result<()> {
        self.gemv
            .run_lm_head(lm_head, x, final_norm, logits, best)?;
        match path {
            PickPath::Greedy => Ok(()),
            PickPath::Draw { top_k, top_p } => self
                .sampling
                .draw(logits, rule, scratch, best, top_k, top_p),
        }
    }

    pub fn load(gpu: &Arc<Gpu>, dims: &Dims) -> Result<Kernels> {
        dims.validate().map_err(crate::error::CudaError::Invalid)?;
        Ok(Kernels {
            embed_norm: embed_norm::EmbedNorm::load(gpu, dims)?,
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
