//! The FP8 weight format of the official Qwen3.5/3.6 FP8 releases, as written by
//! `lily quantize --fp8`: which tensors are stored in e4m3, and how a matrix becomes e4m3 bytes
//! plus one scale per block.
//!
//! Converted: the 2-D weights of the large projections (GDN `in_proj_qkv`, `in_proj_z`,
//! `out_proj`; attention `q/k/v/o_proj`; every expert's and the shared expert's
//! `gate/up/down_proj`), in the text model and the MTP head, with experts stored one tensor per
//! expert as the release does. Everything else stays as it was (BF16): embeddings, `lm_head`,
//! norms, the router `mlp.gate`, `shared_expert_gate`, GDN's `in_proj_a`, `in_proj_b`, `conv1d`,
//! `A_log`, `dt_bias`, MTP's `fc`, and the vision tower. These are small (a few MB per layer) or
//! read by one row per token (embeddings), so FP8 would save little bandwidth, while they
//! steer everything downstream (the router picks experts; `a`/`b` set the GDN decay and write
//! strength, where an error compounds over the whole sequence).

use crate::tensor::{f32_to_e4m3, E4M3_MAX};

/// Leaf module names whose weights the release stores in FP8.
const CONVERTED: [&str; 10] = [
    "in_proj_qkv",
    "in_proj_z",
    "out_proj",
    "q_proj",
    "k_proj",
    "v_proj",
    "o_proj",
    "gate_proj",
    "up_proj",
    "down_proj",
];

/// Whether the release stores tensor `name` of `shape` in FP8 (per-expert names; a fused
/// expert tensor is split into them first).
pub fn converted_in_release(name: &str, shape: &[usize]) -> bool {
    shape.len() == 2
        && !name.starts_with("model.visual.")
        && name
            .strip_suffix(".weight")
            .and_then(|module| module.rsplit('.').next())
            .is_some_and(|leaf| CONVERTED.contains(&leaf))
}

/// A matrix [rows, cols] (row-major f32) in e4m3 with one scale per block of `block`, the
/// convention of the reference quantisers: per block `scale_inv = amax / 448` (f32) and
/// `q = e4m3(clamp(w / scale_inv, -448, 448))`, rounding to nearest even, so that
/// `q * scale_inv` approximates `w` and the block's largest magnitude maps to 448. A block of
/// zeros (where amax / 448 is 0) gets scale 1: its values are 0 whatever the scale, and 1 keeps
/// the dequantisation free of 0 * inf. Returns (e4m3 bytes, scales [ceil(rows / bn),
/// ceil(cols / bk)]), or the index of the first element that is not finite.
pub fn quantize_blocks(
    values: &[f32],
    rows: usize,
    cols: usize,
    block: [usize; 2],
) -> Result<(Vec<u8>, Vec<f32>), usize> {
    assert_eq!(
        values.len(),
        rows * cols,
        "values do not match {rows} x {cols}"
    );
    if let Some(bad) = values.iter().position(|v| !v.is_finite()) {
        return Err(bad);
    }
    let [bn, bk] = block;
    let scale_cols = cols.div_ceil(bk);
    let mut quantized = vec![0u8; rows * cols];
    let mut scales = vec![0.0f32; rows.div_ceil(bn) * scale_cols];
    // Each band of `bn` rows has its own scales: the bands are independent, so a large matrix
    // is spread over the cores (a 35B checkpoint is minutes of work on one).
    let mut bands: Vec<_> = values
        .chunks(bn * cols)
        .zip(quantized.chunks_mut(bn * cols))
        .zip(scales.chunks_mut(scale_cols))
        .map(|((w, q), s)| (w, q, s))
        .collect();
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if values.len() < PARALLEL_MIN_ELEMENTS || threads == 1 {
        for (w, q, s) in &mut bands {
            quantize_band(w, q, s, cols, bk);
        }
    } else {
        let per_thread = bands.len().div_ceil(threads);
        std::thread::scope(|scope| {
            for group in bands.chunks_mut(per_thread) {
                scope.spawn(move || {
                    for (w, q, s) in group {
                        quantize_band(w, q, s, cols, bk);
                    }
                });
            }
        });
    }
    Ok((quantized, scales))
}

/// Below this many weights a matrix is quantised on the calling thread.
const PARALLEL_MIN_ELEMENTS: usize = 1 << 20;

/// One band of whole rows `w` (at most one block high) into `q`, with its scales `s` (one per
/// block column).
fn quantize_band(w: &[f32], q: &mut [u8], s: &mut [f32], cols: usize, bk: usize) {
    for row in w.chunks(cols) {
        for (amax, chunk) in s.iter_mut().zip(row.chunks(bk)) {
            *amax = chunk.iter().fold(*amax, |m, v| m.max(v.abs()));
        }
    }
    for scale in s.iter_mut() {
        *scale /= E4M3_MAX;
        if *scale == 0.0 {
            *scale = 1.0;
        }
    }
    for (row, q_row) in w.chunks(cols).zip(q.chunks_mut(cols)) {
        for ((chunk, q_chunk), &scale) in row.chunks(bk).zip(q_row.chunks_mut(bk)).zip(s.iter()) {
            for (v, out) in chunk.iter().zip(q_chunk) {
                *out = f32_to_e4m3((v / scale).clamp(-E4M3_MAX, E4M3_MAX));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tensor::e4m3_to_f32;

    #[test]
    fn the_release_converts_the_large_projections_only() {
        for name in [
            "model.language_model.layers.0.linear_attn.in_proj_qkv.weight",
            "model.layers.3.self_attn.o_proj.weight",
            "model.layers.1.mlp.experts.7.down_proj.weight",
            "model.layers.1.mlp.shared_expert.gate_proj.weight",
            "mtp.layers.0.mlp.experts.0.up_proj.weight",
        ] {
            assert!(converted_in_release(name, &[8, 8]), "{name}");
        }
        for name in [
            "model.embed_tokens.weight",
            "lm_head.weight",
            "model.layers.0.mlp.gate.weight",
            "model.layers.0.mlp.shared_expert_gate.weight",
            "model.layers.0.linear_attn.in_proj_a.weight",
            "model.layers.0.linear_attn.in_proj_b.weight",
            "mtp.fc.weight",
            "model.visual.blocks.0.attn.proj.weight",
            "model.layers.0.linear_attn.out_proj.bias",
        ] {
            assert!(!converted_in_release(name, &[8, 8]), "{name}");
        }
        assert!(!converted_in_release(
            "model.layers.0.linear_attn.conv1d.weight",
            &[8, 1, 4]
        ));
        assert!(!converted_in_release(
            "model.layers.0.mlp.experts.gate_up_proj",
            &[2, 8, 8]
        ));
    }

    /// Ragged 3 x 5 matrix in 2 x 2 blocks: each block's largest magnitude becomes 448, the
    /// rest round to nearest even, a zero block gets scale 1, and NaN is refused by index.
    #[test]
    fn blocks_scale_to_448_and_round_to_nearest_even() {
        #[rustfmt::skip]
        let w = [
            1.0, -2.0,   0.0, 0.0,   3.0,
            0.5,  0.25,  0.0, 0.0,  -6.0,
            7.0,  1.0,   0.0, 0.0,   0.1,
        ];
        let (q, s) = quantize_blocks(&w, 3, 5, [2, 2]).unwrap();
        assert_eq!(
            s,
            vec![2.0 / 448.0, 1.0, 6.0 / 448.0, 7.0 / 448.0, 1.0, 0.1 / 448.0]
        );
        assert_eq!(e4m3_to_f32(q[1]), -448.0);
        assert_eq!(e4m3_to_f32(q[9]), -448.0);
        assert_eq!(e4m3_to_f32(q[10]), 448.0);
        assert_eq!(e4m3_to_f32(q[14]), 448.0);
        assert_eq!(q[2], 0);
        // 1.0 / (2 / 448) = 224 exactly; 0.25 / (2/448) = 56; 3 / (6/448) = 224.
        assert_eq!(e4m3_to_f32(q[0]), 224.0);
        assert_eq!(e4m3_to_f32(q[6]), 56.0);
        assert_eq!(e4m3_to_f32(q[4]), 224.0);
        // 1.0 / (7 / 448) = 64.
        assert_eq!(e4m3_to_f32(q[11]), 64.0);
        let mut bad = w;
        bad[7] = f32::NAN;
        assert_eq!(quantize_blocks(&bad, 3, 5, [2, 2]), Err(7));
    }

    /// A matrix large enough for the threaded path, with ragged blocks, gives what a plain
    /// element-by-element pass over the same rule gives.
    #[test]
    fn the_banded_parallel_pass_equals_the_plain_rule() {
        let (rows, cols, [bn, bk]) = (1100, 1030, [128, 96]);
        let mut seed = 7u32;
        let w: Vec<f32> = (0..rows * cols)
            .map(|i| {
                seed = seed.wrapping_mul(1664525).wrapping_add(1013904223);
                let x = (seed >> 8) as f32 / (1u32 << 24) as f32 - 0.5;
                // Rows 300..428 are zero: a band of zero blocks.
                if (300..428).contains(&(i / cols)) {
                    0.0
                } else {
                    x * (1 + i % 7) as f32
                }
            })
            .collect();
        let (q, s) = quantize_blocks(&w, rows, cols, [bn, bk]).unwrap();
        let sc = cols.div_ceil(bk);
        let mut amax = vec![0.0f32; rows.div_ceil(bn) * sc];
        for (i, v) in w.iter().enumerate() {
            let b = (i / cols / bn) * sc + (i % cols) / bk;
            amax[b] = amax[b].max(v.abs());
        }
        let want_s: Vec<f32> = amax
            .iter()
            .map(|a| if *a == 0.0 { 1.0 } else { a / E4M3_MAX })
            .collect();
        assert_eq!(s, want_s);
        for (i, v) in w.iter().enumerate() {
            let scale = want_s[(i / cols / bn) * sc + (i % cols) / bk];
            assert_eq!(
                q[i],
                f32_to_e4m3((v / scale).clamp(-E4M3_MAX, E4M3_MAX)),
                "element {i}"
            );
        }
    }
}
