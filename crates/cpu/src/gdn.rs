//! Gated DeltaNet, the linear-attention mixer of 3 layers in 4: a causal depthwise conv over
//! q|k|v, then the gated delta rule over a per-head recurrent state.
//!
//! Layouts (row-major, token-major): `q`, `k` [T, Hk, Dk]; `v`, `out` [T, Hv, Dv];
//! `g`, `beta` [T, Hv]; recurrent `state` [Hv, Dk, Dv] (f32: rounding would compound across
//! tokens); conv `state` [C, K-1] holding each channel's last K-1 inputs, oldest first.
//! Value head h reads key head h / (Hv / Hk).

use crate::activation::{sigmoid, silu, softplus};
use crate::norm::l2_normalize;

/// L2-norm epsilon of q and k (transformers' `l2norm`, matching the FLA kernels).
pub const QK_L2_EPS: f32 = 1e-6;

/// Chunk length of the chunked prefill form (transformers and FLA use 64).
pub const CHUNK: usize = 64;

/// Depthwise causal conv1d over `x` [T, C] with kernel `weight` [C, K] (no bias), continuing
/// from `state` [C, K-1] and leaving it holding the last K-1 inputs; SiLU applied to `out` [T, C].
pub fn causal_conv1d_silu(x: &[f32], weight: &[f32], state: &mut [f32], out: &mut [f32]) {
    // weight holds C*K values and state C*(K-1), so their difference is C.
    let channels = weight.len() - state.len();
    let k = weight.len() / channels;
    let t_len = x.len() / channels;
    let history = k - 1;
    for c in 0..channels {
        let w = &weight[c * k..(c + 1) * k];
        let st = &mut state[c * history..(c + 1) * history];
        // Input j of the extended sequence [state (K-1) | x (T)].
        let input = |j: usize, st: &[f32]| {
            if j < history {
                st[j]
            } else {
                x[(j - history) * channels + c]
            }
        };
        for t in 0..t_len {
            let acc: f32 = (0..k).map(|i| w[i] * input(t + i, st)).sum();
            out[t * channels + c] = silu(acc);
        }
        // New state: the last K-1 entries of [state | x].
        let new: Vec<f32> = (t_len..t_len + history).map(|j| input(j, st)).collect();
        st.copy_from_slice(&new);
    }
}

/// Per-token decay and write strength from the projections `a`, `b` [T, Hv]:
/// `g = -exp(A_log) * softplus(a + dt_bias)` (log-space decay, <= 0) and `beta = sigmoid(b)`.
pub fn decay_and_beta(
    a: &[f32],
    b: &[f32],
    a_log: &[f32],
    dt_bias: &[f32],
    g: &mut [f32],
    beta: &mut [f32],
) {
    let hv = a_log.len();
    for i in 0..a.len() {
        let h = i % hv;
        g[i] = -a_log[h].exp() * softplus(a[i] + dt_bias[h]);
        beta[i] = sigmoid(b[i]);
    }
}

/// Head shapes of one GDN layer.
#[derive(Debug, Clone, Copy)]
pub struct GdnShape {
    pub num_key_heads: usize,
    pub num_value_heads: usize,
    pub key_dim: usize,
    pub value_dim: usize,
}

/// One call's per-token inputs (layouts in the module docs): q, k as they leave the conv
/// (normalisation happens inside the delta-rule functions), v, and g, beta from `decay_and_beta`.
#[derive(Debug, Clone, Copy)]
pub struct GdnInputs<'a> {
    pub q: &'a [f32],
    pub k: &'a [f32],
    pub v: &'a [f32],
    pub g: &'a [f32],
    pub beta: &'a [f32],
}

/// q and k of value head `h`, L2-normalised, q also scaled by `Dk^-0.5`, for all T tokens:
/// ([T, Dk], [T, Dk]).
fn normalised_qk(s: GdnShape, q: &[f32], k: &[f32], h: usize) -> (Vec<f32>, Vec<f32>) {
    let (dk, kh) = (s.key_dim, h / (s.num_value_heads / s.num_key_heads));
    let t_len = q.len() / (s.num_key_heads * dk);
    let scale = 1.0 / (dk as f32).sqrt();
    let mut qh = vec![0.0; t_len * dk];
    let mut kh_out = vec![0.0; t_len * dk];
    for t in 0..t_len {
        let src = (t * s.num_key_heads + kh) * dk;
        let qd = &mut qh[t * dk..(t + 1) * dk];
        qd.copy_from_slice(&q[src..src + dk]);
        l2_normalize(qd, QK_L2_EPS);
        qd.iter_mut().for_each(|x| *x *= scale);
        let kd = &mut kh_out[t * dk..(t + 1) * dk];
        kd.copy_from_slice(&k[src..src + dk]);
        l2_normalize(kd, QK_L2_EPS);
    }
    (qh, kh_out)
}

/// The gated delta rule one token at a time (the decode form). For each token and value head,
/// with S = state[h] [Dk, Dv] and q, k normalised as above:
/// `S *= exp(g); d = beta * (v - S^T k); S += k d^T; out = S^T q`.
/// q and k are the raw (post-conv) values; normalisation happens here, as in transformers'
/// `use_qk_l2norm_in_kernel=True`.
pub fn gated_delta_rule_recurrent(
    s: GdnShape,
    input: &GdnInputs,
    state: &mut [f32],
    out: &mut [f32],
) {
    let GdnInputs { q, k, v, g, beta } = *input;
    let (hv, dk, dv) = (s.num_value_heads, s.key_dim, s.value_dim);
    let t_len = g.len() / hv;
    let mut kv_mem = vec![0.0f32; dv];
    for h in 0..hv {
        let (qh, kh) = normalised_qk(s, q, k, h);
        let st = &mut state[h * dk * dv..(h + 1) * dk * dv];
        for t in 0..t_len {
            let decay = g[t * hv + h].exp();
            st.iter_mut().for_each(|x| *x *= decay);
            let kt = &kh[t * dk..(t + 1) * dk];
            let qt = &qh[t * dk..(t + 1) * dk];
            let vt = &v[(t * hv + h) * dv..(t * hv + h + 1) * dv];
            kv_mem.fill(0.0);
            for i in 0..dk {
                for j in 0..dv {
                    kv_mem[j] += st[i * dv + j] * kt[i];
                }
            }
            let b = beta[t * hv + h];
            for j in 0..dv {
                kv_mem[j] = (vt[j] - kv_mem[j]) * b; // now the delta
            }
            for i in 0..dk {
                for j in 0..dv {
                    st[i * dv + j] += kt[i] * kv_mem[j];
                }
            }
            let o = &mut out[(t * hv + h) * dv..(t * hv + h + 1) * dv];
            o.fill(0.0);
            for i in 0..dk {
                for j in 0..dv {
                    o[j] += st[i * dv + j] * qt[i];
                }
            }
        }
    }
}

/// The gated delta rule in chunks of `CHUNK` tokens (the prefill form), same inputs, outputs and
/// state update as `gated_delta_rule_recurrent` up to rounding. Per chunk of length c, with
/// cumulative log-decay `G[i] = g[0] + ... + g[i]`:
/// - `A[i][j] = beta_i (k_i . k_j) exp(G_i - G_j)` for j < i; solve the unit-lower-triangular
///   `(I + A) U = beta * v` and `(I + A) W = beta * k * exp(G)`;
/// - `v_new = U - W S`, `out = (q * exp(G)) S + P v_new` with
///   `P[i][j] = (q_i . k_j) exp(G_i - G_j)` for j <= i;
/// - `S = exp(G_last) S + (k * exp(G_last - G))^T v_new`.
pub fn gated_delta_rule_chunked(
    s: GdnShape,
    input: &GdnInputs,
    state: &mut [f32],
    out: &mut [f32],
) {
    let GdnInputs { q, k, v, g, beta } = *input;
    let (hv, dk, dv) = (s.num_value_heads, s.key_dim, s.value_dim);
    let t_len = g.len() / hv;
    for h in 0..hv {
        let (qh, kh) = normalised_qk(s, q, k, h);
        let st = &mut state[h * dk * dv..(h + 1) * dk * dv];
        let mut start = 0;
        while start < t_len {
            let c = CHUNK.min(t_len - start);
            let tok = |i: usize| start + i;
            let mut cum = vec![0.0f32; c];
            let mut acc = 0.0f32;
            for i in 0..c {
                acc += g[tok(i) * hv + h];
                cum[i] = acc;
            }
            let kr = |i: usize| &kh[tok(i) * dk..(tok(i) + 1) * dk];
            let qr = |i: usize| &qh[tok(i) * dk..(tok(i) + 1) * dk];
            let vr = |i: usize| &v[(tok(i) * hv + h) * dv..(tok(i) * hv + h + 1) * dv];
            let bt = |i: usize| beta[tok(i) * hv + h];

            // Strictly lower A and the two right-hand sides, solved by forward substitution.
            let mut a = vec![0.0f32; c * c];
            for i in 0..c {
                for j in 0..i {
                    a[i * c + j] =
                        bt(i) * crate::products::dot(kr(i), kr(j)) * (cum[i] - cum[j]).exp();
                }
            }
            let mut u = vec![0.0f32; c * dv];
            let mut w = vec![0.0f32; c * dk];
            for i in 0..c {
                for d in 0..dv {
                    u[i * dv + d] = vr(i)[d] * bt(i);
                }
                let e = cum[i].exp();
                for d in 0..dk {
                    w[i * dk + d] = kr(i)[d] * bt(i) * e;
                }
                for j in 0..i {
                    let aij = a[i * c + j];
                    for d in 0..dv {
                        u[i * dv + d] -= aij * u[j * dv + d];
                    }
                    for d in 0..dk {
                        w[i * dk + d] -= aij * w[j * dk + d];
                    }
                }
            }

            // v_new = U - W S
            let mut v_new = u;
            for i in 0..c {
                for d in 0..dk {
                    let wd = w[i * dk + d];
                    for j in 0..dv {
                        v_new[i * dv + j] -= wd * st[d * dv + j];
                    }
                }
            }
            // out = (q exp(G)) S + P v_new
            for i in 0..c {
                let o = &mut out[(tok(i) * hv + h) * dv..(tok(i) * hv + h + 1) * dv];
                o.fill(0.0);
                let e = cum[i].exp();
                for d in 0..dk {
                    let qd = qr(i)[d] * e;
                    for j in 0..dv {
                        o[j] += qd * st[d * dv + j];
                    }
                }
                for jt in 0..=i {
                    let p = crate::products::dot(qr(i), kr(jt)) * (cum[i] - cum[jt]).exp();
                    for j in 0..dv {
                        o[j] += p * v_new[jt * dv + j];
                    }
                }
            }
            // S = exp(G_last) S + (k exp(G_last - G))^T v_new
            let last = cum[c - 1];
            let chunk_decay = last.exp();
            st.iter_mut().for_each(|x| *x *= chunk_decay);
            for i in 0..c {
                let e = (last - cum[i]).exp();
                for d in 0..dk {
                    let kd = kr(i)[d] * e;
                    for j in 0..dv {
                        st[d * dv + j] += kd * v_new[i * dv + j];
                    }
                }
            }
            start += c;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pseudo_random(n: usize, seed: u32) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(1664525).wrapping_add(1013904223);
                (s >> 8) as f32 / (1u32 << 24) as f32 * 2.0 - 1.0
            })
            .collect()
    }

    fn max_rel(a: &[f32], b: &[f32]) -> f32 {
        let scale = b.iter().fold(0.0f32, |m, x| m.max(x.abs()));
        a.iter()
            .zip(b)
            .fold(0.0f32, |m, (x, y)| m.max((x - y).abs()))
            / scale
    }

    /// The chunked prefill form and the token-by-token decode form agree on outputs and final
    /// state, across several chunks, a partial last chunk, a nonzero initial state, and when
    /// a prefix is run chunked and the rest one token at a time.
    #[test]
    fn chunked_and_recurrent_forms_agree() {
        let s = GdnShape {
            num_key_heads: 2,
            num_value_heads: 4,
            key_dim: 8,
            value_dim: 6,
        };
        let t = 150;
        let q = pseudo_random(t * 2 * 8, 1);
        let k = pseudo_random(t * 2 * 8, 2);
        let v = pseudo_random(t * 4 * 6, 3);
        let g: Vec<f32> = pseudo_random(t * 4, 4)
            .iter()
            .map(|x| -0.3 * (x + 1.0))
            .collect();
        let beta: Vec<f32> = pseudo_random(t * 4, 5)
            .iter()
            .map(|x| sigmoid(2.0 * x))
            .collect();
        let init = pseudo_random(4 * 8 * 6, 6);

        let mut state_r = init.clone();
        let mut out_r = vec![0.0; t * 4 * 6];
        gated_delta_rule_recurrent(
            s,
            &GdnInputs {
                q: &q,
                k: &k,
                v: &v,
                g: &g,
                beta: &beta,
            },
            &mut state_r,
            &mut out_r,
        );
        let mut state_c = init.clone();
        let mut out_c = vec![0.0; t * 4 * 6];
        gated_delta_rule_chunked(
            s,
            &GdnInputs {
                q: &q,
                k: &k,
                v: &v,
                g: &g,
                beta: &beta,
            },
            &mut state_c,
            &mut out_c,
        );
        assert!(
            max_rel(&out_c, &out_r) < 1e-5,
            "outputs {}",
            max_rel(&out_c, &out_r)
        );
        assert!(
            max_rel(&state_c, &state_r) < 1e-5,
            "states {}",
            max_rel(&state_c, &state_r)
        );

        // Chunked prefix of 100, then 50 recurrent steps, equals the all-recurrent run.
        let split = 100;
        let mut state_m = init;
        let mut out_m = vec![0.0; t * 4 * 6];
        let (qk_split, v_split, g_split) = (split * 2 * 8, split * 4 * 6, split * 4);
        let prefix = GdnInputs {
            q: &q[..qk_split],
            k: &k[..qk_split],
            v: &v[..v_split],
            g: &g[..g_split],
            beta: &beta[..g_split],
        };
        gated_delta_rule_chunked(s, &prefix, &mut state_m, &mut out_m[..v_split]);
        for step in split..t {
            let (a, b) = (step * 2 * 8, (step + 1) * 2 * 8);
            let (va, vb) = (step * 4 * 6, (step + 1) * 4 * 6);
            let (ga, gb) = (step * 4, step * 4 + 4);
            let one = GdnInputs {
                q: &q[a..b],
                k: &k[a..b],
                v: &v[va..vb],
                g: &g[ga..gb],
                beta: &beta[ga..gb],
            };
            gated_delta_rule_recurrent(s, &one, &mut state_m, &mut out_m[va..vb]);
        }
        assert!(
            max_rel(&out_m, &out_r) < 1e-5,
            "mixed outputs {}",
            max_rel(&out_m, &out_r)
        );
    }

    #[test]
    fn conv_continues_from_its_state() {
        let (c, k, t) = (3, 4, 7);
        let x = pseudo_random(t * c, 7);
        let w = pseudo_random(c * k, 8);
        let mut whole_state = vec![0.0; c * (k - 1)];
        let mut whole = vec![0.0; t * c];
        causal_conv1d_silu(&x, &w, &mut whole_state, &mut whole);
        let mut state = vec![0.0; c * (k - 1)];
        let mut parts = vec![0.0; t * c];
        for (a, b) in [(0, 2), (2, 3), (3, 7)] {
            causal_conv1d_silu(&x[a * c..b * c], &w, &mut state, &mut parts[a * c..b * c]);
        }
        assert_eq!(whole, parts);
        assert_eq!(whole_state, state);
        // First output of channel 0 only sees x[0] through the last tap.
        assert_eq!(whole[0], silu(w[k - 1] * x[0]));
    }
}
