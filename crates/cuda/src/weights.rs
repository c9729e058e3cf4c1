//! The model's weights in GPU memory, laid out for the decode kernels: matrices that read the
//! same input are concatenated at load time (GDN qkv|z|b|a, attention q|k|v, router +
//! shared-expert gate), and the routed experts are stacked [E, ...] so a kernel can pick them by id.
//! Filled either from a checkpoint (copied once, with progress) or with seeded synthetic values
//! generated on the GPU (the benchmark's full-size model needs no file).

use std::sync::Arc;
use std::time::Instant;

use lily_model::weights::{ExpertWeights, MixerWeights};
use lily_model::Weights;

use crate::dims::{Dims, WeightFormat};
use crate::error::{CudaError, Result};
use crate::kernels::Kernels;
use crate::runtime::driver::Gpu;
use crate::runtime::tensor::{DType, Matrix, Tensor};

pub struct GdnWeights {
    /// [gdn_in_rows, hidden]: in_proj_qkv | in_proj_z | in_proj_b | in_proj_a; with FP8 weights
    /// qkv | z only, and b | a in `in_proj_tail`.
    pub in_proj: Matrix,
    /// FP8 models: bf16 [2 * value heads, hidden], in_proj_b | in_proj_a, which FP8 checkpoints
    /// keep in bf16 (the decay and the write strength, read through a sigmoid and an exp).
    pub in_proj_tail: Option<Tensor>,
    /// [conv channels, conv kernel]
    pub conv_w: Tensor,
    /// F32 [value heads] each.
    pub a_log: Tensor,
    pub dt_bias: Tensor,
    /// [value dim]
    pub norm: Tensor,
    /// [hidden, value heads * value dim]
    pub out_proj: Matrix,
}

pub struct AttnWeights {
    /// [attn_in_rows, hidden]: q_proj | k_proj | v_proj.
    pub qkv: Matrix,
    pub q_norm: Tensor,
    pub k_norm: Tensor,
    /// [hidden, heads * head dim]
    pub o_proj: Matrix,
}

pub enum Mixer {
    Gdn(GdnWeights),
    Attn(AttnWeights),
}

pub struct LayerWeights {
    pub input_norm: Tensor,
    pub post_norm: Tensor,
    pub mixer: Mixer,
    /// [experts + 1, hidden]: the router, then shared_expert_gate (bf16 in every model).
    pub router: Tensor,
    /// [experts, 2 * inter, hidden] (gate rows, then up rows, per expert) and [experts, hidden, inter].
    pub gate_up: Matrix,
    pub down: Matrix,
    pub shared_gate_up: Matrix,
    pub shared_down: Matrix,
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

/// A product's matrix [.., rows, cols] in the model's weight format.
fn matrix(gpu: &Arc<Gpu>, d: &Dims, name: String, shape: &[usize]) -> Result<Matrix> {
    match d.weights {
        WeightFormat::Bf16 => Ok(Matrix {
            w: bf16(gpu, name, shape)?,
            scale: None,
        }),
        WeightFormat::Fp8 {
            block_rows,
            block_cols,
        } => {
            let mut scale_shape = shape.to_vec();
            let n = scale_shape.len();
            scale_shape[n - 2] = shape[n - 2].div_ceil(block_rows);
            scale_shape[n - 1] = shape[n - 1].div_ceil(block_cols);
            Ok(Matrix {
                scale: Some(Tensor::new(
                    gpu,
                    format!("{name} scales"),
                    DType::F32,
                    &scale_shape,
                )?),
                w: Tensor::new(gpu, name, DType::F8E4M3, shape)?,
            })
        }
    }
}

impl DeviceWeights {
    /// Allocates every tensor (contents undefined) after checking that they fit.
    pub fn allocate(gpu: &Arc<Gpu>, d: &Dims) -> Result<DeviceWeights> {
        let needed = d.weight_bytes();
        let (free, _) = gpu.free_memory()?;
        if needed > free {
            return Err(CudaError::Weights(format!(
                "the weights need {} MiB of GPU memory but only {} MiB are free",
                needed >> 20,
                free >> 20
            )));
        }
        let h = d.hidden;
        let fp8 = d.weights != WeightFormat::Bf16;
        let mut layers = Vec::with_capacity(d.layers());
        for (i, &is_attn) in d.attention_layers.iter().enumerate() {
            let n = |s: &str| format!("layer {i} {s}");
            let mixer = if is_attn {
                Mixer::Attn(AttnWeights {
                    qkv: matrix(gpu, d, n("q|k|v proj"), &[d.attn_in_rows(), h])?,
                    q_norm: bf16(gpu, n("q_norm"), &[d.attn_head_dim])?,
                    k_norm: bf16(gpu, n("k_norm"), &[d.attn_head_dim])?,
                    o_proj: matrix(gpu, d, n("o_proj"), &[h, d.attn_out()])?,
                })
            } else {
                let tail = d.gdn_ba_rows();
                Mixer::Gdn(GdnWeights {
                    in_proj: if fp8 {
                        matrix(gpu, d, n("in_proj qkv|z"), &[d.gdn_in_rows() - tail, h])?
                    } else {
                        matrix(gpu, d, n("in_proj qkv|z|b|a"), &[d.gdn_in_rows(), h])?
                    },
                    in_proj_tail: if fp8 {
                        Some(bf16(gpu, n("in_proj b|a"), &[tail, h])?)
                    } else {
                        None
                    },
                    conv_w: bf16(gpu, n("conv1d"), &[d.gdn_conv_channels(), d.conv_kernel])?,
                    a_log: Tensor::new(gpu, n("A_log"), DType::F32, &[d.gdn_value_heads])?,
                    dt_bias: Tensor::new(gpu, n("dt_bias"), DType::F32, &[d.gdn_value_heads])?,
                    norm: bf16(gpu, n("gated norm"), &[d.gdn_value_dim])?,
                    out_proj: matrix(gpu, d, n("out_proj"), &[h, d.gdn_out()])?,
                })
            };
            layers.push(LayerWeights {
                input_norm: bf16(gpu, n("input_layernorm"), &[h])?,
                post_norm: bf16(gpu, n("post_attention_layernorm"), &[h])?,
                mixer,
                router: bf16(gpu, n("router|shared_expert_gate"), &[d.experts + 1, h])?,
                gate_up: matrix(gpu, d, n("experts gate|up"), &[d.experts, 2 * d.moe_inter, h])?,
                down: matrix(gpu, d, n("experts down"), &[d.experts, h, d.moe_inter])?,
                shared_gate_up: matrix(gpu, d, n("shared expert gate|up"), &[2 * d.shared_inter, h])?,
                shared_down: matrix(gpu, d, n("shared expert down"), &[h, d.shared_inter])?,
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
    /// weights near their identity), so activations stay finite through all layers. An FP8
    /// matrix gets e4m3 values over the format's range and block scales of amplitude / 448
    /// within +-25% (blocks of a trained checkpoint differ in their largest value).
    pub fn fill_synthetic(&self, k: &Kernels, seed: u32) -> Result<()> {
        // Each fill takes the next seed: the same order of fills gives the same model.
        let seeds = std::cell::Cell::new(seed);
        let next = || {
            seeds.set(seeds.get().wrapping_add(0x9E37_79B9));
            seeds.get()
        };
        let amplitude = |t: &Tensor| 1.0 / (*t.shape.last().unwrap() as f32).sqrt();
        let fill = |t: &Tensor, offset: f32, scale: f32| k.fill.uniform(&t.view(), next(), offset, scale);
        let fill_matrix = |m: &Matrix| match &m.scale {
            None => fill(&m.w, 0.0, amplitude(&m.w)),
            Some(scale) => {
                let s = amplitude(&m.w) / lily_model::tensor::E4M3_MAX;
                k.fill.e4m3(&m.w.view(), next())?;
                fill(scale, s, 0.25 * s)
            }
        };
        fill(&self.embed, 0.0, 1.0)?;
        fill(&self.final_norm, 0.0, 0.1)?;
        fill(&self.lm_head, 0.0, amplitude(&self.lm_head))?;
        for l in &self.layers {
            fill(&l.input_norm, 0.0, 0.1)?;
            fill(&l.post_norm, 0.0, 0.1)?;
            match &l.mixer {
                Mixer::Gdn(g) => {
                    fill_matrix(&g.in_proj)?;
                    if let Some(t) = &g.in_proj_tail {
                        fill(t, 0.0, amplitude(t))?;
                    }
                    fill(&g.conv_w, 0.0, 0.5)?;
                    fill(&g.a_log, 0.0, 1.0)?;
                    fill(&g.dt_bias, 0.0, 1.0)?;
                    fill(&g.norm, 1.0, 0.1)?;
                    fill_matrix(&g.out_proj)?;
                }
                Mixer::Attn(a) => {
                    fill_matrix(&a.qkv)?;
                    fill(&a.q_norm, 0.0, 0.1)?;
                    fill(&a.k_norm, 0.0, 0.1)?;
                    fill_matrix(&a.o_proj)?;
                }
            }
            fill(&l.router, 0.0, amplitude(&l.router))?;
            fill_matrix(&l.gate_up)?;
            fill_matrix(&l.down)?;
            fill_matrix(&l.shared_gate_up)?;
            fill_matrix(&l.shared_down)?;
        }
        Ok(())
    }

    /// Copies a checkpoint's tensors into place, converting dtypes where they differ, with a
    /// progress line per layer. FP8 matrices are copied as they are, with their scales laid
    /// out per device block (weight_format chose blocks that fit the checkpoint's); a product
    /// stored in another dtype in an FP8 model is quantised here, in blocks, with a warning.
    pub fn upload(&self, gpu: &Gpu, d: &Dims, w: &Weights) -> Result<()> {
        let started = Instant::now();
        let bytes = std::cell::Cell::new(0usize);
        let upload = |dst: &Tensor, offset_bytes: usize, data: &[u8], what: &str| -> Result<()> {
            if offset_bytes + data.len() > dst.bytes() {
                return Err(CudaError::Weights(format!(
                    "{what} does not fit in {} at byte {offset_bytes}",
                    dst.name
                )));
            }
            bytes.set(bytes.get() + data.len());
            gpu.upload(dst.ptr() + offset_bytes as u64, data)
        };
        let put = |dst: &Tensor, offset_elems: usize, src: &lily_model::Tensor| -> Result<()> {
            let data = convert(src, dst.dtype);
            upload(dst, offset_elems * dst.dtype.size(), &data, &format!("{} ({:?})", src.name(), src.shape()))
        };
        // Rows `row0..` of a product's matrix (flattened to [rows, cols]) from `src`.
        let put_rows = |dst: &Matrix, row0: usize, src: &lily_model::Tensor| -> Result<()> {
            let cols = *dst.w.shape.last().unwrap();
            match (&dst.scale, d.weights) {
                (Some(scale), WeightFormat::Fp8 { block_rows, block_cols }) => {
                    let rows = fp8_rows(src, row0, cols, [block_rows, block_cols])?;
                    upload(&dst.w, row0 * cols, &rows.values, src.name())?;
                    let scale_bytes: Vec<u8> = rows.scales.iter().flat_map(|x| x.to_le_bytes()).collect();
                    let per_row = cols.div_ceil(block_cols);
                    upload(scale, row0 / block_rows * per_row * 4, &scale_bytes, src.name())
                }
                _ => put(&dst.w, row0 * cols, src),
            }
        };
        put(&self.embed, 0, &w.embed_tokens)?;
        put(&self.final_norm, 0, &w.norm)?;
        put(&self.lm_head, 0, &w.lm_head)?;
        let layers = self.layers.len();
        for (i, (dl, l)) in self.layers.iter().zip(&w.layers).enumerate() {
            put(&dl.input_norm, 0, &l.input_layernorm)?;
            put(&dl.post_norm, 0, &l.post_attention_layernorm)?;
            match (&dl.mixer, &l.mixer) {
                (Mixer::Gdn(g), MixerWeights::LinearAttention(s)) => {
                    let mut at = 0;
                    for part in [&s.in_proj_qkv, &s.in_proj_z] {
                        put_rows(&g.in_proj, at, part)?;
                        at += part.rows();
                    }
                    for part in [&s.in_proj_b, &s.in_proj_a] {
                        match &g.in_proj_tail {
                            Some(tail) => put(tail, (at - g.in_proj.w.shape[0]) * d.hidden, part)?,
                            None => put_rows(&g.in_proj, at, part)?,
                        }
                        at += part.rows();
                    }
                    put(&g.conv_w, 0, &s.conv1d)?;
                    put(&g.a_log, 0, &s.a_log)?;
                    put(&g.dt_bias, 0, &s.dt_bias)?;
                    put(&g.norm, 0, &s.norm)?;
                    put_rows(&g.out_proj, 0, &s.out_proj)?;
                }
                (Mixer::Attn(a), MixerWeights::FullAttention(s)) => {
                    let mut at = 0;
                    for part in [&s.q_proj, &s.k_proj, &s.v_proj] {
                        put_rows(&a.qkv, at, part)?;
                        at += part.rows();
                    }
                    put(&a.q_norm, 0, &s.q_norm)?;
                    put(&a.k_norm, 0, &s.k_norm)?;
                    put_rows(&a.o_proj, 0, &s.o_proj)?;
                }
                _ => {
                    return Err(CudaError::Weights(format!(
                        "layer {i}: mixer kind differs from the config"
                    )))
                }
            }
            put(&dl.router, 0, &l.moe.router)?;
            put(&dl.router, l.moe.router.numel(), &l.moe.shared_expert_gate)?;
            let put_expert = |gate_up: &Matrix, down: &Matrix, e: usize, ex: &ExpertWeights| -> Result<()> {
                let rows = 2 * ex.gate_proj.rows();
                put_rows(gate_up, e * rows, &ex.gate_proj)?;
                put_rows(gate_up, e * rows + ex.gate_proj.rows(), &ex.up_proj)?;
                put_rows(down, e * ex.down_proj.rows(), &ex.down_proj)
            };
            for (e, ex) in l.moe.experts.iter().enumerate() {
                put_expert(&dl.gate_up, &dl.down, e, ex)?;
            }
            put_expert(&dl.shared_gate_up, &dl.shared_down, 0, &l.moe.shared_expert)?;
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

/// The weight format the GPU keeps a checkpoint's products in: bf16 unless some product is
/// FP8; then e4m3 with the checkpoint's block columns, and its block rows where every matrix
/// the kernels read as one (GDN's q|k|v|z, attention's q|k|v, an expert's gate|up) joins its
/// parts on block boundaries, else blocks of one row (the scales repeated per row: a small
/// test model whose parts are not block-aligned).
pub fn weight_format(w: &Weights, d: &Dims) -> Result<WeightFormat> {
    let mut block: Option<([usize; 2], String)> = None;
    for t in product_tensors(w) {
        if let Some(s) = t.block_scale() {
            match &block {
                None => block = Some((s.block, t.name().to_string())),
                Some((b, first)) if *b != s.block => {
                    return Err(CudaError::Weights(format!(
                        "{} has FP8 blocks of {:?} but {first} has {b:?}: one block shape per \
                         checkpoint",
                        t.name(),
                        s.block
                    )))
                }
                _ => {}
            }
        }
    }
    let Some(([rows, cols], _)) = block else {
        return Ok(WeightFormat::Bf16);
    };
    let joins = [
        d.gdn_conv_channels(),
        2 * d.attn_out(),
        2 * d.attn_out() + d.attn_kv_heads * d.attn_head_dim,
        d.moe_inter,
        d.hidden,
    ];
    let aligned = joins.iter().all(|j| j % rows == 0);
    Ok(WeightFormat::Fp8 {
        block_rows: if aligned { rows } else { 1 },
        block_cols: cols,
    })
}

/// Every matrix a product reads, whatever its dtype.
fn product_tensors(w: &Weights) -> Vec<&lily_model::Tensor> {
    let mut out = Vec::new();
    for l in &w.layers {
        match &l.mixer {
            MixerWeights::LinearAttention(s) => {
                out.extend([&s.in_proj_qkv, &s.in_proj_z, &s.out_proj]);
            }
            MixerWeights::FullAttention(s) => {
                out.extend([&s.q_proj, &s.k_proj, &s.v_proj, &s.o_proj]);
            }
        }
        for ex in l.moe.experts.iter().chain([&l.moe.shared_expert]) {
            out.extend([&ex.gate_proj, &ex.up_proj, &ex.down_proj]);
        }
    }
    out
}

/// One part of an FP8 device matrix: its e4m3 values and one f32 scale per device block row
/// and block column, row-major.
struct Fp8Rows<'a> {
    values: std::borrow::Cow<'a, [u8]>,
    scales: Vec<f32>,
}

/// `src` as rows `row0..` of an FP8 matrix of `cols` columns in blocks of `block`: an FP8
/// tensor whose blocks hold whole device blocks is taken as it is (each device block row takes
/// the scale of the checkpoint block it lies in); anything else is quantised here, each block
/// to its largest magnitude / 448 (a checkpoint's bf16 product, which an FP8 model's kernels
/// cannot read as bf16).
fn fp8_rows<'a>(src: &'a lily_model::Tensor, row0: usize, cols: usize, block: [usize; 2]) -> Result<Fp8Rows<'a>> {
    let [br, bc] = block;
    let rows = src.rows();
    if src.cols() != cols || row0 % br != 0 {
        return Err(CudaError::Weights(format!(
            "{} ({:?}) does not fit an FP8 matrix of {cols} columns at row {row0} (blocks of {br} x {bc})",
            src.name(),
            src.shape()
        )));
    }
    let per_row = cols.div_ceil(bc);
    let device_rows = rows.div_ceil(br);
    if let Some(s) = src.block_scale() {
        let [sr, sc] = s.block;
        if sc == bc && sr % br == 0 {
            let theirs = s.scale_inv.to_f32_vec();
            let mut scales = Vec::with_capacity(device_rows * per_row);
            for j in 0..device_rows {
                let at = (j * br / sr) * per_row;
                scales.extend_from_slice(&theirs[at..at + per_row]);
            }
            return Ok(Fp8Rows {
                values: src.bytes().into(),
                scales,
            });
        }
    }
    tracing::warn!(
        tensor = src.name(),
        dtype = %src.dtype(),
        "a product of an FP8 model not in its FP8 blocks: quantised to e4m3 in blocks of {br} x {bc} at load"
    );
    let (values, scales) = lily_model::fp8::quantize_blocks(&src.to_f32_vec(), rows, cols, block)
        .map_err(|at| {
            CudaError::Weights(format!("{}: element {at} is not finite", src.name()))
        })?;
    Ok(Fp8Rows {
        values: values.into(),
        scales,
    })
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
