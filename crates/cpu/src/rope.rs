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
    (0..rotary_dim / 2).map(|i| 1.0 / base.powf((2 * i) as f32 / rotary_dim as f32)).collect()
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
