//! The gdn tests' fixtures, shared with their micro-benchmarks.

use std::sync::Arc;
use super::*;
use lily_cpu::{gdn, norm};
use lily_cuda::dims::Dims;
use lily_cuda::runtime::driver::Gpu;
use lily_cuda::runtime::tensor::{DType, Tensor};

/// One layer's GDN mixer on the CPU (no projections), continuing across calls the way
/// crates/cpu/src/model.rs runs it: chunked delta rule for several tokens, recurrent for one.
pub struct CpuGdn {
    pub d: Dims,
    pub conv_w: Vec<f32>,
    pub a_log: Vec<f32>,
    pub dt_bias: Vec<f32>,
    pub norm_w: Vec<f32>,
    pub conv_state: Vec<f32>,
    pub state: Vec<f32>,
}

impl CpuGdn {
    /// Runs `proj` [T, gdn_in_rows]; returns the read-out before the gated norm and after it,
    /// both [T, V * VD].
    pub fn run(&mut self, proj: &[f32]) -> (Vec<f32>, Vec<f32>) {
        let d = &self.d;
        let (c, rows, v, vd) = (
            d.gdn_conv_channels(),
            d.gdn_in_rows(),
            d.gdn_value_heads,
            d.gdn_value_dim,
        );
        let kd = d.gdn_key_heads * d.gdn_key_dim;
        let t_len = proj.len() / rows;
        let x: Vec<f32> = proj.chunks(rows).flat_map(|r| r[..c].to_vec()).collect();
        let mut conv = vec![0.0; t_len * c];
        gdn::causal_conv1d_silu(&x, &self.conv_w, &mut self.conv_state, &mut conv);
        let q: Vec<f32> = conv.chunks(c).flat_map(|r| r[..kd].to_vec()).collect();
        let k: Vec<f32> = conv
            .chunks(c)
            .flat_map(|r| r[kd..2 * kd].to_vec())
            .collect();
        let vv: Vec<f32> = conv.chunks(c).flat_map(|r| r[2 * kd..].to_vec()).collect();
        let b_at = c + d.gdn_out();
        let b: Vec<f32> = proj
            .chunks(rows)
            .flat_map(|r| r[b_at..b_at + v].to_vec())
            .collect();
        let a: Vec<f32> = proj
            .chunks(rows)
            .flat_map(|r| r[b_at + v..b_at + 2 * v].to_vec())
            .collect();
        let (mut g, mut beta) = (vec![0.0; t_len * v], vec![0.0; t_len * v]);
        gdn::decay_and_beta(&a, &b, &self.a_log, &self.dt_bias, &mut g, &mut beta);
        let shape = gdn::GdnShape {
            num_key_heads: d.gdn_key_heads,
            num_value_heads: v,
            key_dim: d.gdn_key_dim,
            value_dim: vd,
        };
        let input = gdn::GdnInputs {
            q: &q,
            k: &k,
            v: &vv,
            g: &g,
            beta: &beta,
        };
        let mut o = vec![0.0; t_len * v * vd];
        if t_len == 1 {
            gdn::gated_delta_rule_recurrent(shape, &input, &mut self.state, &mut o);
        } else {
            gdn::gated_delta_rule_chunked(shape, &input, &mut self.state, &mut o);
        }
        let mut gated = vec![0.0; t_len * v * vd];
        for (t, row) in proj.chunks(rows).enumerate() {
            for h in 0..v {
                let at = (t * v + h) * vd;
                norm::gated_rms_norm(
                    &o[at..at + vd],
                    &row[c + h * vd..c + (h + 1) * vd],
                    &self.norm_w,
                    d.eps,
                    &mut gated[at..at + vd],
                );
            }
        }
        (o, gated)
    }
}

/// One layer's parameters and recurrent tensors on the GPU.
pub struct Layer {
    pub conv_w: Tensor,
    pub ring: Tensor,
    pub a_log: Tensor,
    pub dt_bias: Tensor,
    pub norm: Tensor,
    pub state: Tensor,
}

/// Random parameters and initial state, the same on both sides; the ring starts poisoned.
pub fn layer(gpu: &Arc<Gpu>, d: &Dims, rng: &mut Rng) -> (Layer, CpuGdn) {
    let (c, kk, v, vd) = (
        d.gdn_conv_channels(),
        d.conv_kernel,
        d.gdn_value_heads,
        d.gdn_value_dim,
    );
    let cpu = CpuGdn {
        d: d.clone(),
        conv_w: rng.vec_bf16(c * kk, 0.5),
        a_log: rng.vec(v, 1.0),
        dt_bias: rng.vec(v, 1.0),
        norm_w: rng.vec_bf16(vd, 1.0),
        conv_state: vec![0.0; c * (kk - 1)],
        state: rng.vec(v * d.gdn_key_dim * vd, 0.5),
    };
    let gpu_layer = Layer {
        conv_w: upload(gpu, "conv_w", DType::BF16, &[c, kk], &cpu.conv_w),
        ring: poisoned(gpu, "conv_ring", DType::F32, &[kk, c]),
        a_log: upload(gpu, "a_log", DType::F32, &[v], &cpu.a_log),
        dt_bias: upload(gpu, "dt_bias", DType::F32, &[v], &cpu.dt_bias),
        norm: upload(gpu, "norm", DType::BF16, &[vd], &cpu.norm_w),
        // The pair decode reads and writes by position parity (gdn.cu); the prefills below
        // work in place on the first half, as the backend's do from an even position.
        state: upload(
            gpu,
            "state",
            DType::F32,
            &[2, v, d.gdn_key_dim, vd],
            &[cpu.state.clone(), cpu.state.clone()].concat(),
        ),
    };
    (gpu_layer, cpu)
}
