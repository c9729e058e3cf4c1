//! The model's three normalisations, all computed in f32.

use crate::activation::silu;

/// `1 / sqrt(mean(x^2) + eps)`.
fn inverse_rms(x: &[f32], eps: f32) -> f32 {
    let mean_square = x.iter().map(|v| v * v).sum::<f32>() / x.len() as f32;
    1.0 / (mean_square + eps).sqrt()
}

/// Zero-centred RMSNorm, used for the layer norms, the final norm and attention's q/k norms:
/// `out = x * rsqrt(mean(x^2) + eps) * (1 + w)`. `x`, `w` and `out` have the same length.
pub fn rms_norm_zero_centred(x: &[f32], w: &[f32], eps: f32, out: &mut [f32]) {
    let inv = inverse_rms(x, eps);
    for ((o, &v), &wi) in out.iter_mut().zip(x).zip(w) {
        *o = v * inv * (1.0 + wi);
    }
}

/// In-place zero-centred RMSNorm over each `w.len()`-sized chunk of `x` (per head, per token).
pub fn rms_norm_zero_centred_rows(x: &mut [f32], w: &[f32], eps: f32) {
    for row in x.chunks_exact_mut(w.len()) {
        let inv = inverse_rms(row, eps);
        for (v, &wi) in row.iter_mut().zip(w) {
            *v = *v * inv * (1.0 + wi);
        }
    }
}

/// The Gated DeltaNet output norm (plain weight, not zero-centred), per value head:
/// `out = w * (o * rsqrt(mean(o^2) + eps)) * silu(z)`. `o`, `z`, `w`, `out` have one head's length.
pub fn gated_rms_norm(o: &[f32], z: &[f32], w: &[f32], eps: f32, out: &mut [f32]) {
    let inv = inverse_rms(o, eps);
    for (((r, &v), &zi), &wi) in out.iter_mut().zip(o).zip(z).zip(w) {
        *r = wi * (v * inv) * silu(zi);
    }
}

/// In-place L2 normalisation `x * rsqrt(sum(x^2) + eps)` (GDN q and k, eps 1e-6).
pub fn l2_normalize(x: &mut [f32], eps: f32) {
    let inv = 1.0 / (x.iter().map(|v| v * v).sum::<f32>() + eps).sqrt();
    for v in x {
        *v *= inv;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_centred_weight_scales_by_one_plus_w_and_gated_norm_by_w() {
        // rms([3, 4]) = sqrt(12.5)
        let x = [3.0f32, 4.0];
        let inv = 1.0 / 12.5f32.sqrt();
        let mut out = [0.0; 2];
        rms_norm_zero_centred(&x, &[0.0, 1.0], 0.0, &mut out);
        assert_eq!(out, [3.0 * inv, 8.0 * inv]);
        gated_rms_norm(&x, &[0.0, 10.0], &[2.0, 1.0], 0.0, &mut out);
        assert_eq!(out[0], 0.0, "silu(0) gates the first element off");
        assert!((out[1] - 4.0 * inv * silu(10.0)).abs() < 1e-6);
        let mut v = [3.0f32, 4.0];
        l2_normalize(&mut v, 0.0);
        assert_eq!(v, [0.6, 0.8]);
    }
}
