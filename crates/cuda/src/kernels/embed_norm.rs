//! Launchers for embed_norm.cu: embedding lookup and zero-centred RMSNorm.

use std::sync::Arc;

use crate::dims::Dims;
use crate::driver::{Function, Gpu, KernelArgs, Module};
use crate::error::{CudaError, Result};
use crate::tensor::{DType, View};

pub struct EmbedNorm {
    gpu: Arc<Gpu>,
    _module: Module,
    embed_token: Function,
    embed_rows: Function,
    rmsnorm: Function,
    dims: Dims,
}

impl EmbedNorm {
    pub fn load(gpu: &Arc<Gpu>, dims: &Dims) -> Result<Self> {
        let module = super::load(gpu, "embed_norm.cu", include_str!("embed_norm.cu"), dims)?;
        Ok(EmbedNorm {
            gpu: gpu.clone(),
            embed_token: module.function("embed_token")?,
            embed_rows: module.function("embed_rows")?,
            rmsnorm: module.function("rmsnorm")?,
            _module: module,
            dims: dims.clone(),
        })
    }

    /// x = table[ids[pos]] with the position read on the GPU.
    pub fn embed_token(&self, table: &View, ids: &View, pos: &View, x: &View) -> Result<()> {
        let d = &self.dims;
        let table = table.expect(DType::BF16, &[d.vocab, d.hidden])?;
        if ids.dtype != DType::I32 || ids.shape.len() != 1 {
            return Err(CudaError::Shape {
                tensor: ids.to_string(),
                expected: "I32 [n]".into(),
                actual: format!("{:?} {:?}", ids.dtype, ids.shape),
            });
        }
        let pos = pos.expect(DType::I32, &[1])?;
        let x = x.expect(DType::F32, &[d.hidden])?;
        let mut args = KernelArgs::new().ptr(table).ptr(ids.ptr).ptr(pos).ptr(x);
        self.gpu
            .launch(&self.embed_token, (1, 1, 1), 256, 0, &mut args)
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
        let mut args = KernelArgs::new().ptr(x).ptr(w).ptr(out).f32(d.eps);
        self.gpu
            .launch(&self.rmsnorm, (rows as u32, 1, 1), 256, 0, &mut args)
    }
}
