//! The model's weights in GPU memory, laid out for the decode kernels: matrices that read the
//! same input are concatenated at load time (GDN qkv|z|b|a, attention q|k|v, router +
//! shared-expert gate), and the routed experts are stacked [E, ...] so a kernel can pick them by id.
//! Filled either from a checkpoint (copied once, with progress) or with seeded synthetic values
//! generated on the GPU (the benchmark's full-size model needs no file).

use std::sync::Arc;
use std::time::Instant;

use lily_model::weights::{ExpertWeights, MixerWeights};
use lily_model::Weights;

use crate::dims::Dims;
use crate::runtime::driver::Gpu;
use crate::error::{CudaError, Result};
use crate::kernels::Kernels;
use crate::runtime::tensor::{DType, Tensor};

pub struct GdnWeights {
    /// [gdn_in_rows, hidden]: in_proj_qkv | in_proj_z | in_proj_b | in_proj_a.
    pub in_proj: Tensor,
    /// [conv channels, conv kernel]
    pub conv_w: Tensor,
    /// F32 [value heads] each.
    pub a_log: Tensor,
    pub dt_bias: Tensor,
    /// [value dim]
    pub norm: Tensor,
    /// [hidden, value heads * value dim]
    pub out_proj: Tensor,
}

pub struct AttnWeights {
    /// [attn_in_rows, hidden]: q_proj | k_proj | v_proj.
    pub qkv: Tensor,
    pub q_norm: Tensor,
    pub k_norm: Tensor,
    /// [hidden, heads * head dim]
    pub o_proj: Tensor,
}

pub enum Mixer {
    Gdn(GdnWeights),
    Attn(AttnWeights),
}

pub struct LayerWeights {
    pub input_norm: Tensor,
    pub post_norm: Tensor,
    pub mixer: Mixer,
    /// [experts + 1, hidden]: the router, then shared_expert_gate.
    pub router: Tensor,
    /// [experts, 2 * inter, hidden] (gate rows, then up rows, per expert) and [experts, hidden, inter].
    pub gate_up: Tensor,
    pub down: Tensor,
    pub shared_gate_up: Tensor,
    pub shared_down: Tensor,
}

pub struct DeviceWeights {
    pub embed: Tensor,
    pub final_norm: Tensor,
    pub lm_head: Tensor,
    pub layers: Vec<LayerWeights>,
}

fn bf16(gpu: &Arc<Gpu>, name: String, shape: &[usize]) -> Result<Tensor> {
    Tensor::new(gpu, name, DType::BF16, shape)
}

impl DeviceWeights {
    /// Allocates every tensor (contents undefined) after checking that they fit.
    pub fn allocate(gpu: &Arc<Gpu>, d: &Dims) -> Result<DeviceWeights> {
        let needed = d.parameter_count() * 2;
        let (free, _) = gpu.free_memory()?;
        if needed > free {
            return Err(CudaError::Weights(format!(
                "the weights need {} MiB of GPU memory but only {} MiB are free",
                needed >> 20,
                free >> 20
            )));
        }
        let h = d.hidden;
        let mut layers = Vec::with_capacity(d.layers());
        for (i, &is_attn) in d.attention_layers.iter().enumerate() {
            let n = |s: &str| format!("layer {i} {s}");
            let mixer = if is_attn {
                Mixer::Attn(AttnWeights {
                    qkv: bf16(gpu, n("q|k|v proj"), &[d.attn_in_rows(), h])?,
                    q_norm: bf16(gpu, n("q_norm"), &[d.attn_head_dim])?,
                    k_norm: bf16(gpu, n("k_norm"), &[d.attn_head_dim])?,
                    o_proj: bf16(gpu, n("o_proj"), &[h, d.attn_out()])?,
                })
            } else {
                Mixer::Gdn(GdnWeights {
                    in_proj: bf16(gpu, n("in_proj qkv|z|b|a"), &[d.gdn_in_rows(), h])?,
                    conv_w: bf16(gpu, n("conv1d"), &[d.gdn_conv_channels(), d.conv_kernel])?,
                    a_log: Tensor::new(gpu, n("A_log"), DType::F32, &[d.gdn_value_heads])?,
                    dt_bias: Tensor::new(gpu, n("dt_bias"), DType::F32, &[d.gdn_value_heads])?,
                    norm: bf16(gpu, n("gated norm"), &[d.gdn_value_dim])?,
                    out_proj: bf16(gpu, n("out_proj"), &[h, d.gdn_out()])?,
                })
            };
            layers.push(LayerWeights {
                input_norm: bf16(gpu, n("input_layernorm"), &[h])?,
                post_norm: bf16(gpu, n("post_attention_layernorm"), &[h])?,
                mixer,
                router: bf16(gpu, n("router|shared_expert_gate"), &[d.experts + 1, h])?,
                gate_up: bf16(gpu, n("experts gate|up"), &[d.experts, 2 * d.moe_inter, h])?,
                down: bf16(gpu, n("experts down"), &[d.experts, h, d.moe_inter])?,
                shared_gate_up: bf16(gpu, n("shared expert gate|up"), &[2 * d.shared_inter, h])?,
                shared_down: bf16(gpu, n("shared expert down"), &[h, d.shared_inter])?,
            });
        }
        Ok(DeviceWeights {
            embed: bf16(gpu, "embed_tokens".into(), &[d.vocab, h])?,
            final_norm: bf16(gpu, "norm".into(), &[h])?,
            lm_head: bf16(gpu, "lm_head".into(), &[d.vocab, h])?,
            layers,
        })
    }

    /// Seeded uniform values scaled like a trained model's (matrices ~ 1/sqrt(fan-in), norm
    /// weights near their identity), so activations stay finite through all layers.
    pub fn fill_synthetic(&self, k: &Kernels, seed: u32) -> Result<()> {
        let mut n = seed;
        let mut fill = |t: &Tensor, offset: f32, scale: f32| {
            n = n.wrapping_add(0x9E37_79B9);
            k.fill.uniform(&t.view(), n, offset, scale)
        };
        let matrix = |t: &Tensor| 1.0 / (*t.shape.last().unwrap() as f32).sqrt();
        fill(&self.embed, 0.0, 1.0)?;
        fill(&self.final_norm, 0.0, 0.1)?;
        fill(&self.lm_head, 0.0, matrix(&self.lm_head))?;
        for l in &self.layers {
            fill(&l.input_norm, 0.0, 0.1)?;
            fill(&l.post_norm, 0.0, 0.1)?;
            match &l.mixer {
                Mixer::Gdn(g) => {
                    fill(&g.in_proj, 0.0, matrix(&g.in_proj))?;
                    fill(&g.conv_w, 0.0, 0.5)?;
                    fill(&g.a_log, 0.0, 1.0)?;
                    fill(&g.dt_bias, 0.0, 1.0)?;
                    fill(&g.norm, 1.0, 0.1)?;
                    fill(&g.out_proj, 0.0, matrix(&g.out_proj))?;
                }
                Mixer::Attn(a) => {
                    fill(&a.qkv, 0.0, matrix(&a.qkv))?;
                    fill(&a.q_norm, 0.0, 0.1)?;
                    fill(&a.k_norm, 0.0, 0.1)?;
                    fill(&a.o_proj, 0.0, matrix(&a.o_proj))?;
                }
            }
            fill(&l.router, 0.0, matrix(&l.router))?;
            fill(&l.gate_up, 0.0, matrix(&l.gate_up))?;
            fill(&l.down, 0.0, matrix(&l.down))?;
            fill(&l.shared_gate_up, 0.0, matrix(&l.shared_gate_up))?;
            fill(&l.shared_down, 0.0, matrix(&l.shared_down))?;
        }
        Ok(())
    }

    /// Copies a checkpoint's tensors into place, converting dtypes where they differ, with a
    /// progress line per layer.
    pub fn upload(&self, gpu: &Gpu, w: &Weights) -> Result<()> {
        let started = Instant::now();
        let bytes = std::cell::Cell::new(0usize);
        let put = |dst: &Tensor, offset_elems: usize, src: &lily_model::Tensor| -> Result<()> {
            let data = convert(src, dst.dtype);
            let end = offset_elems * dst.dtype.size() + data.len();
            if end > dst.bytes() {
                return Err(CudaError::Weights(format!(
                    "{} ({:?}) does not fit in {} at element {offset_elems}",
                    src.name(),
                    src.shape(),
                    dst.name
                )));
            }
            bytes.set(bytes.get() + data.len());
            gpu.upload(dst.ptr() + (offset_elems * dst.dtype.size()) as u64, &data)
        };
        put(&self.embed, 0, &w.embed_tokens)?;
        put(&self.final_norm, 0, &w.norm)?;
        put(&self.lm_head, 0, &w.lm_head)?;
        let layers = self.layers.len();
        for (i, (dl, l)) in self.layers.iter().zip(&w.layers).enumerate() {
            put(&dl.input_norm, 0, &l.input_layernorm)?;
            put(&dl.post_norm, 0, &l.post_attention_layernorm)?;
            match (&dl.mixer, &l.mixer) {
                (Mixer::Gdn(d), MixerWeights::LinearAttention(s)) => {
                    let mut at = 0;
                    for part in [&s.in_proj_qkv, &s.in_proj_z, &s.in_proj_b, &s.in_proj_a] {
                        put(&d.in_proj, at, part)?;
                        at += part.numel();
                    }
                    put(&d.conv_w, 0, &s.conv1d)?;
                    put(&d.a_log, 0, &s.a_log)?;
                    put(&d.dt_bias, 0, &s.dt_bias)?;
                    put(&d.norm, 0, &s.norm)?;
                    put(&d.out_proj, 0, &s.out_proj)?;
                }
                (Mixer::Attn(d), MixerWeights::FullAttention(s)) => {
                    let mut at = 0;
                    for part in [&s.q_proj, &s.k_proj, &s.v_proj] {
                        put(&d.qkv, at, part)?;
                        at += part.numel();
                    }
                    put(&d.q_norm, 0, &s.q_norm)?;
                    put(&d.k_norm, 0, &s.k_norm)?;
                    put(&d.o_proj, 0, &s.o_proj)?;
                }
                _ => {
                    return Err(CudaError::Weights(format!(
                        "layer {i}: mixer kind differs from the config"
                    )))
                }
            }
            put(&dl.router, 0, &l.moe.router)?;
            put(&dl.router, l.moe.router.numel(), &l.moe.shared_expert_gate)?;
            let expert_gate_up = |e: &ExpertWeights| [e.gate_proj.clone(), e.up_proj.clone()];
            for (e, ex) in l.moe.experts.iter().enumerate() {
                let base = e * dl.gate_up.shape[1] * dl.gate_up.shape[2];
                let [g, u] = expert_gate_up(ex);
                put(&dl.gate_up, base, &g)?;
                put(&dl.gate_up, base + g.numel(), &u)?;
                put(
                    &dl.down,
                    e * dl.down.shape[1] * dl.down.shape[2],
                    &ex.down_proj,
                )?;
            }
            let [g, u] = expert_gate_up(&l.moe.shared_expert);
            put(&dl.shared_gate_up, 0, &g)?;
            put(&dl.shared_gate_up, g.numel(), &u)?;
            put(&dl.shared_down, 0, &l.moe.shared_expert.down_proj)?;
            tracing::info!(
                target: lily_model::PROGRESS,
                stage = "weights",
                done = i + 1,
                total = layers,
                "weights: layer {}/{layers} on the GPU ({:.1} GB, {:.1} s)",
                i + 1,
                bytes.get() as f64 / 1e9,
                started.elapsed().as_secs_f64()
            );
        }
        Ok(())
    }
}

/// The tensor's bytes as `dtype` (borrowed as is when the dtypes match).
fn convert(src: &lily_model::Tensor, dtype: DType) -> std::borrow::Cow<'_, [u8]> {
    use lily_model::DType as M;
    match (src.dtype(), dtype) {
        (M::BF16, DType::BF16) | (M::F32, DType::F32) => src.bytes().into(),
        (_, DType::F32) => src
            .to_f32_vec()
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect::<Vec<u8>>()
            .into(),
        _ => src
            .to_f32_vec()
            .iter()
            .flat_map(|x| f32_to_bf16(*x).to_le_bytes())
            .collect::<Vec<u8>>()
            .into(),
    }
}

/// Round to nearest even, as the kernels' `f2bf` does.
pub fn f32_to_bf16(x: f32) -> u16 {
    let u = x.to_bits();
    if (u & 0x7fff_ffff) > 0x7f80_0000 {
        return 0x7fc0;
    }
    ((u + 0x7fff + ((u >> 16) & 1)) >> 16) as u16
}

#[cfg(test)]
mod tests {
    use super::f32_to_bf16;

    #[test]
    fn bf16_rounding_is_to_nearest_even_and_keeps_nan() {
        assert_eq!(f32_to_bf16(1.0), 0x3f80);
        // 1 + 2^-8 is halfway between two bf16 values: ties go to the even one (1.0).
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8000)), 0x3f80);
        // 1 + 3 * 2^-8 is halfway too: rounds up to the even 0x3f82.
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f81_8000)), 0x3f82);
        assert_eq!(f32_to_bf16(f32::from_bits(0x3f80_8001)), 0x3f81);
        assert_eq!(f32_to_bf16(-2.0), 0xc000);
        assert_eq!(f32_to_bf16(f32::INFINITY), 0x7f80);
        assert_eq!(f32_to_bf16(f32::NAN) & 0x7fc0, 0x7fc0);
    }
}
