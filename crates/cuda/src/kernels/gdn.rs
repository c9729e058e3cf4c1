//! Launchers for gdn.cu: Gated DeltaNet decode (conv + gating + recurrence fused) and the gated norm.

use std::sync::Arc;

use crate::dims::Dims;
use crate::driver::{Function, Gpu, KernelArgs, Module};
use crate::error::Result;
use crate::tensor::{DType, View};

pub struct Gdn {
    gpu: Arc<Gpu>,
    _module: Module,
    decode: Function,
    gated_norm: Function,
    dims: Dims,
}

/// The per-layer tensors the decode kernel reads and writes.
pub struct GdnDecodeArgs<'a> {
    /// F32 [gdn_in_rows]: the concatenated projection's output, qkv | z | b | a.
    pub proj: &'a View<'a>,
    /// BF16 [conv channels, conv kernel].
    pub conv_w: &'a View<'a>,
    /// F32 [conv kernel, conv channels]: ring of raw inputs, slot = position % kernel.
    pub conv_ring: &'a View<'a>,
    /// F32 [value heads] each.
    pub a_log: &'a View<'a>,
    pub dt_bias: &'a View<'a>,
    /// F32 [value heads, key dim, value dim].
    pub state: &'a View<'a>,
    /// F32 [value heads * value dim]: read-out before the gated norm.
    pub out: &'a View<'a>,
    /// I32 [1]: the position of the token being decoded.
    pub pos: &'a View<'a>,
}

impl Gdn {
    pub fn load(gpu: &Arc<Gpu>, dims: &Dims) -> Result<Self> {
        let module = super::load(gpu, "gdn.cu", include_str!("gdn.cu"), dims)?;
        Ok(Gdn {
            gpu: gpu.clone(),
            decode: module.function("gdn_decode")?,
            gated_norm: module.function("gdn_gated_norm")?,
            _module: module,
            dims: dims.clone(),
        })
    }

    fn columns_per_block(&self) -> usize {
        self.dims.gdn_value_dim.min(32)
    }

    pub fn decode(&self, a: &GdnDecodeArgs) -> Result<()> {
        let d = &self.dims;
        let v = d.gdn_value_heads;
        let proj = a.proj.expect(DType::F32, &[d.gdn_in_rows()])?;
        let conv_w = a
            .conv_w
            .expect(DType::BF16, &[d.gdn_conv_channels(), d.conv_kernel])?;
        let ring = a
            .conv_ring
            .expect(DType::F32, &[d.conv_kernel, d.gdn_conv_channels()])?;
        let a_log = a.a_log.expect(DType::F32, &[v])?;
        let dt_bias = a.dt_bias.expect(DType::F32, &[v])?;
        let state = a
            .state
            .expect(DType::F32, &[v, d.gdn_key_dim, d.gdn_value_dim])?;
        let out = a.out.expect(DType::F32, &[d.gdn_out()])?;
        let pos = a.pos.expect(DType::I32, &[1])?;
        let cpb = self.columns_per_block();
        let mut args = KernelArgs::new()
            .ptr(proj)
            .ptr(conv_w)
            .ptr(ring)
            .ptr(a_log)
            .ptr(dt_bias)
            .ptr(state)
            .ptr(out)
            .ptr(pos)
            .f32(d.eps);
        self.gpu.launch(
            &self.decode,
            (v as u32, (d.gdn_value_dim / cpb) as u32, 1),
            (cpb * 8) as u32,
            0,
            &mut args,
        )
    }

    /// out = bf16(w * rmsnorm(o) * silu(z)) per value head, z taken from `proj`.
    pub fn gated_norm(&self, o: &View, proj: &View, w: &View, out: &View) -> Result<()> {
        let d = &self.dims;
        let o = o.expect(DType::F32, &[d.gdn_out()])?;
        let proj = proj.expect(DType::F32, &[d.gdn_in_rows()])?;
        let w = w.expect(DType::BF16, &[d.gdn_value_dim])?;
        let out = out.expect(DType::BF16, &[d.gdn_out()])?;
        let mut args = KernelArgs::new()
            .ptr(o)
            .ptr(proj)
            .ptr(w)
            .ptr(out)
            .f32(d.eps);
        let threads = d.gdn_value_dim.clamp(32, 256) as u32;
        self.gpu.launch(
            &self.gated_norm,
            (d.gdn_value_heads as u32, 1, 1),
            threads,
            0,
            &mut args,
        )
    }
}
