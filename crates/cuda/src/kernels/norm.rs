//! Launchers for norm.cu: embedding lookup and zero-centred RMSNorm.

use std::sync::Arc;

use crate::dims::Dims;
use crate::runtime::driver::{Function, Gpu, KernelArgs, Module};
use crate::error::{CudaError, Result};
use crate::runtime::tensor::{DType, View};

/// Rows per rmsnorm block, one warp each (NORM_WARPS in norm.cu).
const NORM_WARPS: usize = 8;

pub struct Norm {
    gpu: Arc<Gpu>,
    _module: Module,
    embed_rows: Function,
    rmsnorm: Function,
    dims: Dims,
}

impl Norm {
    pub fn load(gpu: &Arc<Gpu>, dims: &Dims) -> Result<Self> {
        let module = super::load(gpu, "norm.cu", dims)?;
        Ok(Norm {
            gpu: gpu.clone(),
            embed_rows: module.function("embed_rows")?,
            rmsnorm: module.function("rmsnorm")?,
            _module: module,
            dims: dims.clone(),
        })
    }

    /// x[t] = table[ids[t]] for each of the `tokens` ids (a prefill chunk, ids already checked
    /// against the vocabulary).
    pub fn embed_rows(&self, table: &View, ids: &View, x: &View, tokens: usize) -> Result<()> {
        let d = &self.dims;
        let table = table.expect(DType::BF16, &[d.vocab, d.hidden])?;
        let ids = ids.expect(DType::I32, &[tokens])?;
        let x = x.expect(DType::F32, &[tokens, d.hidden])?;
        let mut args = KernelArgs::new().ptr(table).ptr(ids).ptr(x);
        self.gpu
            .launch(&self.embed_rows, (tokens as u32, 1, 1), 256, 0, &mut args)
    }

    /// out[r] = bf16(x[r] * rsqrt(mean(x[r]^2) + eps) * (1 + w)) for each of `rows` rows.
    pub fn rmsnorm(&self, x: &View, w: &View, out: &View, rows: usize) -> Result<()> {
        let d = &self.dims;
        // One row may come as a vector (decode) or as a one-row matrix (a one-token chunk).
        let shape: Vec<usize> = if x.shape.len() == 1 {
            vec![d.hidden]
        } else {
            vec![rows, d.hidden]
        };
        let x = x.expect(DType::F32, &shape)?;
        let w = w.expect(DType::BF16, &[d.hidden])?;
        let out = out.expect(DType::BF16, &shape)?;
        // The kernel reads x as float4 and w, writes out as four bf16 at once.
        if d.hidden % 4 != 0 || x % 16 != 0 || w % 8 != 0 || out % 8 != 0 {
            return Err(CudaError::Invalid(format!(
                "rmsnorm needs a hidden size divisible by 4 (got {}), x 16-byte aligned and w, \
                 out 8-byte aligned (got {x:#x}, {w:#x}, {out:#x})",
                d.hidden
            )));
        }
        let rows_i32 = i32::try_from(rows).map_err(|_| {
            CudaError::Invalid(format!("rmsnorm of {rows} rows: at most {} rows", i32::MAX))
        })?;
        let mut args = KernelArgs::new()
            .ptr(x)
            .ptr(w)
            .ptr(out)
            .i32(rows_i32)
            .f32(d.eps);
        self.gpu.launch(
            &self.rmsnorm,
            (rows.div_ceil(NORM_WARPS) as u32, 1, 1),
            (NORM_WARPS * 32) as u32,
            0,
            &mut args,
        )
    }
}
