//! The sparse MoE block: a softmax router picks the top-k experts per token, their SwiGLU
//! outputs are mixed with renormalised router weights, and a gated shared expert is added.

use lily_model::weights::{ExpertWeights, MoeWeights};

use crate::activation::{sigmoid, silu};
use crate::linalg::{dot, matvec};

/// Top-`k` experts from router logits: softmax in f32 over all experts, the `k` largest
/// probabilities (ties to the lower index), renormalised to sum to 1. Returns (expert, weight)
/// in descending weight order.
pub fn route(logits: &[f32], k: usize) -> Vec<(usize, f32)> {
    let max = logits.iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x));
    let exps: Vec<f32> = logits.iter().map(|&x| (x - max).exp()).collect();
    let total: f32 = exps.iter().sum();
    let mut order: Vec<usize> = (0..logits.len()).collect();
    order.sort_by(|&a, &b| exps[b].total_cmp(&exps[a]).then(a.cmp(&b)));
    order.truncate(k);
    let picked: Vec<(usize, f32)> = order.iter().map(|&e| (e, exps[e] / total)).collect();
    let sum: f32 = picked.iter().map(|&(_, p)| p).sum();
    picked.into_iter().map(|(e, p)| (e, p / sum)).collect()
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
