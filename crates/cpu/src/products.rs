//! Matrix-vector and matrix-matrix products against checkpoint weights. Weights stay in their
//! stored dtype (f32, bf16, f16) and are widened to f32 one row at a time, so a bf16 checkpoint
//! is read straight from the memory map; all accumulation is f32.

use lily_model::Tensor;
use rayon::prelude::*;

/// Below this many multiply-adds a product runs on the calling thread: for the tiny test models
/// thread hand-off costs more than the work. A 35B-size product (e.g. lm_head, 0.5 G MACs)
/// is split over rows on all cores, which is what makes a real checkpoint usable on CPU at all.
/// Rows are independent, so the result does not depend on the thread count.
const PARALLEL_MIN_MACS: usize = 1 << 18;

/// Rows per parallel task: enough work per task to amortise scheduling.
const ROWS_PER_TASK: usize = 16;

/// `sum(a[i] * b[i])` with eight independent f32 accumulators (vectorises; the order differs
/// from a sequential sum by rounding only).
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    debug_assert_eq!(a.len(), b.len());
    let mut acc = [0.0f32; 8];
    let (a8, a_rest) = a.split_at(a.len() / 8 * 8);
    let (b8, b_rest) = b.split_at(a8.len());
    for (x, y) in a8.chunks_exact(8).zip(b8.chunks_exact(8)) {
        for l in 0..8 {
            acc[l] += x[l] * y[l];
        }
    }
    let mut sum = ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]));
    for (x, y) in a_rest.iter().zip(b_rest) {
        sum += x * y;
    }
    sum
}

/// `out = w x` for a weight `w` [rows, cols] (PyTorch `nn.Linear` layout) and `x` [cols].
/// Panics if the lengths do not match `w`'s shape.
pub fn matvec(w: &Tensor, x: &[f32], out: &mut [f32]) {
    matmul(w, x, out)
}

/// `out[t] = w x[t]` for each of the `n` rows of `x` [n, cols], giving `out` [n, rows].
/// Each weight row is widened once and used for all `n` inputs.
/// Panics if the lengths do not match `w`'s shape.
pub fn matmul(w: &Tensor, x: &[f32], out: &mut [f32]) {
    let (rows, cols) = (w.rows(), w.cols());
    assert!(
        cols > 0 && x.len() % cols == 0,
        "{}: input length {} is not a multiple of {cols}",
        w.name(),
        x.len()
    );
    let n = x.len() / cols;
    assert_eq!(out.len(), n * rows, "{}: output length", w.name());

    // Computes rows [first, first + count) into `block` laid out [count, n].
    let run_block = |first: usize, count: usize, block: &mut [f32]| {
        let mut row = vec![0.0f32; cols];
        for r in 0..count {
            w.read_f32((first + r) * cols, &mut row);
            for t in 0..n {
                block[r * n + t] = dot(&row, &x[t * cols..(t + 1) * cols]);
            }
        }
    };

    if rows * cols * n < PARALLEL_MIN_MACS {
        if n == 1 {
            run_block(0, rows, out);
        } else {
            let mut block = vec![0.0f32; rows * n];
            run_block(0, rows, &mut block);
            transpose_into(&block, rows, n, out);
        }
        return;
    }
    if n == 1 {
        out.par_chunks_mut(ROWS_PER_TASK)
            .enumerate()
            .for_each(|(i, chunk)| run_block(i * ROWS_PER_TASK, chunk.len(), chunk));
    } else {
        let mut block = vec![0.0f32; rows * n];
        block
            .par_chunks_mut(ROWS_PER_TASK * n)
            .enumerate()
            .for_each(|(i, chunk)| run_block(i * ROWS_PER_TASK, chunk.len() / n, chunk));
        transpose_into(&block, rows, n, out);
    }
}

/// `out` [n, rows] from `block` [rows, n].
fn transpose_into(block: &[f32], rows: usize, n: usize, out: &mut [f32]) {
    for r in 0..rows {
        for t in 0..n {
            out[t * rows + r] = block[r * n + t];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(w: &[f32], rows: usize, cols: usize, x: &[f32]) -> Vec<f32> {
        let n = x.len() / cols;
        let mut out = vec![0.0; n * rows];
        for t in 0..n {
            for r in 0..rows {
                out[t * rows + r] = (0..cols)
                    .map(|c| w[r * cols + c] as f64 * x[t * cols + c] as f64)
                    .sum::<f64>() as f32;
            }
        }
        out
    }

    fn pseudo_random(n: usize, seed: u32) -> Vec<f32> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(1664525).wrapping_add(1013904223);
                (s >> 8) as f32 / (1u32 << 24) as f32 - 0.5
            })
            .collect()
    }

    #[test]
    fn matmul_matches_a_naive_product_serial_and_parallel() {
        for (rows, cols, n) in [(5, 13, 1), (7, 9, 3), (300, 1030, 1), (257, 515, 4)] {
            let w = pseudo_random(rows * cols, 1);
            let x = pseudo_random(n * cols, 2);
            let mut out = vec![f32::NAN; n * rows];
            matmul(&Tensor::from_f32("w", vec![rows, cols], &w), &x, &mut out);
            let want = naive(&w, rows, cols, &x);
            for (a, b) in out.iter().zip(&want) {
                assert!(
                    (a - b).abs() <= 1e-5 * (1.0 + b.abs()),
                    "{rows}x{cols}x{n}: {a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn bf16_weights_are_widened_exactly() {
        let bits: Vec<u16> = pseudo_random(6 * 8, 3)
            .iter()
            .map(|x| (x.to_bits() >> 16) as u16)
            .collect();
        let widened: Vec<f32> = bits
            .iter()
            .map(|&b| f32::from_bits((b as u32) << 16))
            .collect();
        let x = pseudo_random(8, 4);
        let mut out = vec![0.0; 6];
        matvec(
            &Tensor::from_bf16_bits("w", vec![6, 8], &bits),
            &x,
            &mut out,
        );
        assert_eq!(
            out,
            (0..6)
                .map(|r| dot(&widened[r * 8..(r + 1) * 8], &x))
                .collect::<Vec<_>>()
        );
    }
}
