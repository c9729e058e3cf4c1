//! Rotary position embedding as the model applies it: rotate-half on the first `rotary_dim`
//! dims of each head, the rest passed through.
//!
//! The model's config describes interleaved multimodal RoPE (mRoPE, sections t/h/w); for text
//! all three position rows are the same token index, so every frequency sees the same position
//! and mRoPE is exactly this 1-D RoPE.

/// `inv_freq[i] = 1 / theta^(2i / rotary_dim)` for `i < rotary_dim / 2`, computed like
/// transformers (the exponent in f32, the power in f32).
pub fn inverse_frequencies(rotary_dim: usize, theta: f64) -> Vec<f32> {
    let base = theta as f32;
    (0..rotary_dim / 2)
        .map(|i| 1.0 / base.powf((2 * i) as f32 / rotary_dim as f32))
        .collect()
}

/// Rotates one head `x` in place for token `position`:
/// for `i < r/2`: `x[i], x[i + r/2] = x[i] cos - x[i + r/2] sin, x[i + r/2] cos + x[i] sin`
/// with angle `position * inv_freq[i]` (f32, as transformers computes it) and `r = 2 * inv_freq.len()`.
pub fn apply_rope(x: &mut [f32], position: usize, inv_freq: &[f32]) {
    let half = inv_freq.len();
    for (i, &f) in inv_freq.iter().enumerate() {
        let angle = position as f32 * f;
        let (sin, cos) = angle.sin_cos();
        let (a, b) = (x[i], x[i + half]);
        x[i] = a * cos - b * sin;
        x[i + half] = b * cos + a * sin;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rotates_pairs_of_the_rotary_dims_only() {
        let inv = inverse_frequencies(4, 10000.0);
        assert_eq!(inv, vec![1.0, 0.01]);
        let original = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0];
        let mut x = original;
        apply_rope(&mut x, 0, &inv);
        assert_eq!(x, original, "position 0 is the identity");
        apply_rope(&mut x, 3, &inv);
        // Pair (x0, x2) turns by 3 rad, pair (x1, x3) by 0.03 rad; dims 4.. pass through.
        let (s, c) = 3.0f32.sin_cos();
        assert!((x[0] - (c - 3.0 * s)).abs() < 1e-6 && (x[2] - (3.0 * c + s)).abs() < 1e-6);
        let (s, c) = 0.03f32.sin_cos();
        assert!(
            (x[1] - (2.0 * c - 4.0 * s)).abs() < 1e-6 && (x[3] - (4.0 * c + 2.0 * s)).abs() < 1e-6
        );
        assert_eq!(&x[4..], &original[4..]);
    }
}
