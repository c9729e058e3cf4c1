//! The sparse MoE block: a softmax router picks the top-k experts per token, their SwiGLU
//! outputs are mixed with renormalised router weights, and a gated shared expert is added.

use lily_model::weights::{ExpertWeights, MoeWeights};

use crate::activation::{sigmoid, silu};
use crate::products::{dot, matvec};

/// Top-`k` experts from router logits: the `k` largest logits (ties to the lower index), weighted
/// by their softmax renormalised over the `k`, i.e. `exp(l_e - l_max) / sum_k exp(l_k - l_max)`:
/// the softmax's total over all experts cancels in the renormalisation, so only the chosen
/// experts need an exponential, and the exponential's order is the logits' order. Returns
/// (expert, weight) in descending weight order.
pub fn route(logits: &[f32], k: usize) -> Vec<(usize, f32)> {
    let mut order: Vec<usize> = (0..logits.len()).collect();
    order.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]).then(a.cmp(&b)));
    order.truncate(k);
    let Some(&first) = order.first() else {
        return Vec::new();
    };
    let exps: Vec<f32> = order
        .iter()
        .map(|&e| (logits[e] - logits[first]).exp())
        .collect();
    let sum: f32 = exps.iter().sum();
    order
        .into_iter()
        .zip(exps)
        .map(|(e, p)| (e, p / sum))
        .collect()
}

/// One SwiGLU expert: `out = down(silu(gate x) * up x)`.
pub fn expert_mlp(w: &ExpertWeights, x: &[f32], out: &mut [f32]) {
    let inter = w.gate_proj.rows();
    let mut gate = vec![0.0f32; inter];
    let mut up = vec![0.0f32; inter];
    matvec(&w.gate_proj, x, &mut gate);
    matvec(&w.up_proj, x, &mut up);
    for (g, u) in gate.iter_mut().zip(&up) {
        *g = silu(*g) * u;
    }
    matvec(&w.down_proj, &gate, out);
}

/// The whole block for one token `x` [H]:
/// `out = sum_e w_e expert_e(x) + sigmoid(shared_gate . x) * shared(x)`.
pub fn moe_block(w: &MoeWeights, experts_per_token: usize, x: &[f32], out: &mut [f32]) {
    let mut logits = vec![0.0f32; w.router.rows()];
    matvec(&w.router, x, &mut logits);
    out.fill(0.0);
    let mut expert_out = vec![0.0f32; out.len()];
    for (e, weight) in route(&logits, experts_per_token) {
        expert_mlp(&w.experts[e], x, &mut expert_out);
        for (o, y) in out.iter_mut().zip(&expert_out) {
            *o += weight * y;
        }
    }
    expert_mlp(&w.shared_expert, x, &mut expert_out);
    let mut gate_row = vec![0.0f32; x.len()];
    w.shared_expert_gate.read_f32(0, &mut gate_row);
    let gate = sigmoid(dot(&gate_row, x));
    for (o, y) in out.iter_mut().zip(&expert_out) {
        *o += gate * y;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn route_renormalises_the_top_k() {
        let r = route(&[0.0, 2.0, 1.0, 2.0], 2);
        assert_eq!(r.iter().map(|&(e, _)| e).collect::<Vec<_>>(), vec![1, 3]);
        assert!((r[0].1 - 0.5).abs() < 1e-7 && (r[1].1 - 0.5).abs() < 1e-7);
        let r = route(&[1.0, 0.0, 3.0], 2);
        let (p2, p0) = (3.0f32.exp(), 1.0f32.exp());
        assert_eq!(r[0].0, 2);
        assert!((r[0].1 - p2 / (p2 + p0)).abs() < 1e-6);
    }
}
