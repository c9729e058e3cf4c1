//! Causal softmax attention over a KV cache with grouped KV heads (GQA).
//!
//! Layouts: `q`, `out` [T, Hq, D]; caches [S, Hkv, D] for all positions so far (the T new ones
//! included, last). Query head h reads KV head h / (Hq / Hkv).

#[derive(Debug, Clone, Copy)]
pub struct AttentionShape {
    pub num_heads: usize,
    pub num_kv_heads: usize,
    pub head_dim: usize,
}

/// Causal attention for T new tokens at positions `S - T .. S`: token t attends to cache
/// positions `0 ..= S - T + t`, scores scaled by `scale`, softmax in f32.
pub fn causal_attention(
    shape: AttentionShape,
    q: &[f32],
    k_cache: &[f32],
    v_cache: &[f32],
    scale: f32,
    out: &mut [f32],
) {
    let AttentionShape {
        num_heads,
        num_kv_heads,
        head_dim: d,
    } = shape;
    let t_len = q.len() / (num_heads * d);
    let s_len = k_cache.len() / (num_kv_heads * d);
    let group = num_heads / num_kv_heads;
    let mut scores = vec![0.0f32; s_len];
    for t in 0..t_len {
        let visible = s_len - t_len + t + 1;
        for h in 0..num_heads {
            let kv = h / group;
            let qh = &q[(t * num_heads + h) * d..(t * num_heads + h + 1) * d];
            for (p, score) in scores[..visible].iter_mut().enumerate() {
                let kh = &k_cache[(p * num_kv_heads + kv) * d..(p * num_kv_heads + kv + 1) * d];
                *score = crate::products::dot(qh, kh) * scale;
            }
            let max = scores[..visible]
                .iter()
                .fold(f32::NEG_INFINITY, |m, &x| m.max(x));
            let mut sum = 0.0f32;
            for score in &mut scores[..visible] {
                *score = (*score - max).exp();
                sum += *score;
            }
            let o = &mut out[(t * num_heads + h) * d..(t * num_heads + h + 1) * d];
            o.fill(0.0);
            for (p, &weight) in scores[..visible].iter().enumerate() {
                let vh = &v_cache[(p * num_kv_heads + kv) * d..(p * num_kv_heads + kv + 1) * d];
                let weight = weight / sum;
                for (oi, &vi) in o.iter_mut().zip(vh) {
                    *oi += weight * vi;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Prefilling T tokens at once gives each token the same output as attending one at a time.
    #[test]
    fn batched_prefill_equals_token_by_token() {
        let (hq, hkv, d, s) = (4, 2, 3, 5);
        let q: Vec<f32> = (0..s * hq * d)
            .map(|i| ((i * 7 % 11) as f32 - 5.0) / 5.0)
            .collect();
        let k: Vec<f32> = (0..s * hkv * d)
            .map(|i| ((i * 5 % 13) as f32 - 6.0) / 6.0)
            .collect();
        let v: Vec<f32> = (0..s * hkv * d)
            .map(|i| ((i * 3 % 7) as f32 - 3.0) / 3.0)
            .collect();
        let mut all = vec![0.0; s * hq * d];
        let shape = AttentionShape {
            num_heads: hq,
            num_kv_heads: hkv,
            head_dim: d,
        };
        causal_attention(shape, &q, &k, &v, 0.5, &mut all);
        for t in 0..s {
            let mut one = vec![0.0; hq * d];
            let cache = (t + 1) * hkv * d;
            causal_attention(
                shape,
                &q[t * hq * d..(t + 1) * hq * d],
                &k[..cache],
                &v[..cache],
                0.5,
                &mut one,
            );
            for (a, b) in one.iter().zip(&all[t * hq * d..(t + 1) * hq * d]) {
                assert!((a - b).abs() < 1e-6);
            }
        }
        // The first token sees only itself: its output is its own value vector.
        assert_eq!(&all[..d], &v[..d]);
    }
}
