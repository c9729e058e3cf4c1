//! RMSNorm on the GPU against the CPU reference (lily-cpu: norm): the prefill's row norm
//! (norm.cu: rmsnorm), and decode's, which runs in the prologue of the product that reads it
//! (gemv.cuh: stage_rmsnorm), the first layer's with the token's embedding lookup.
//! Fresh random inputs, outputs poisoned (NaN) before the run; bounds on max|gpu - cpu| /
//! max|cpu|: 1e-4 for f32 outputs from identical bf16 inputs (only the summation order
//! differs), 1e-2 for bf16 outputs (one bf16 rounding is 2^-9 relative).
//!
//! Needs a CUDA GPU and NVRTC; prints SKIPPED and passes where there is no driver.

mod common;

use std::sync::Arc;
use common::*;
use lily_cpu::{norm, products};
use lily_cuda::dims::Dims;
use lily_cuda::kernels::gemv::Gemv;
use lily_cuda::kernels::norm::Norm;
use lily_cuda::runtime::driver::Gpu;
use lily_cuda::runtime::tensor::DType;
use lily_cuda::WeightFormat;

#[test]
fn gemv_with_fused_rmsnorm_matches_cpu_norm_then_matvec() {
    gemv_with_fused_rmsnorm("gemv_normed", WeightFormat::Bf16, 1e-3);
}

/// An FP8 model's GDN input product: q|k|v|z in e4m3 with block scales, then b|a in bf16 (the
/// tail), as an FP8 checkpoint stores them.
#[test]
fn fp8_gemv_with_fused_rmsnorm_and_bf16_tail_matches_cpu() {
    let fp8 = WeightFormat::Fp8 {
        block_rows: 128,
        block_cols: 128,
    };
    gemv_with_fused_rmsnorm("gemv_normed_fp8", fp8, 2e-3);
}

fn gemv_with_fused_rmsnorm(test: &str, format: WeightFormat, bound: f32) {
    let Some(gpu) = gpu(test) else {
        return;
    };
    let dims = Dims {
        weights: format,
        ..Dims::qwen36_35b_a3b()
    };
    let gemv = Gemv::load(&gpu, &dims).unwrap();
    let mut rng = Rng::new(test);
    let (rows, h) = (dims.gdn_in_rows(), dims.hidden);
    let tail_rows = if format == WeightFormat::Bf16 { 0 } else { dims.gdn_ba_rows() };
    let head_rows = rows - tail_rows;
    let w = rng.vec_bf16(rows * h, 1.0 / (h as f32).sqrt());
    let resid = rng.vec(h, 4.0);
    let norm_w = rng.vec_bf16(h, 0.1);
    let xn = normed_bf16(&resid, &norm_w, dims.eps);
    let (head_host, head) = product_matrix(&gpu, "w", format, &[head_rows, h], &w[..head_rows * h]);
    let mut expected = vec![0.0; rows];
    products::matvec(&head_host, &xn, &mut expected[..head_rows]);
    let tail = (tail_rows > 0).then(|| {
        let t = &w[head_rows * h..];
        products::matvec(&host_bf16("tail", vec![tail_rows, h], t), &xn, &mut expected[head_rows..]);
        upload(&gpu, "tail", DType::BF16, &[tail_rows, h], t)
    });
    let y = poisoned(&gpu, "y", DType::F32, &[rows]);
    let xn_out = poisoned(&gpu, "xn", DType::BF16, &[h]);
    gemv.run_normed(
        &head.view(),
        tail.as_ref().map(|t| t.view()).as_ref(),
        &upload(&gpu, "resid", DType::F32, &[h], &resid).view(),
        &upload(&gpu, "norm_w", DType::BF16, &[h], &norm_w).view(),
        Some(&xn_out.view()),
        &y.view(),
    )
    .unwrap();
    check(
        &format!("{test}: normed input"),
        &download(&gpu, &xn_out),
        &xn,
        1e-2,
    );
    // A bf16 rounding of the normed input may land on the other side: one ulp on a few inputs.
    let got = download(&gpu, &y);
    check(test, &got, &expected, bound);
    if tail_rows > 0 {
        check(&format!("{test}: bf16 tail"), &got[head_rows..], &expected[head_rows..], 1e-3);
    }
}

/// A decode step's first product takes the token at ids[pos] from the embedding table as its
/// input and writes it out as the residual stream; an id outside the table gives NaN.
#[test]
fn first_product_takes_the_token_embedding_as_its_input() {
    let Some(gpu) = gpu("embed_normed") else {
        return;
    };
    let dims = Dims {
        vocab: 100,
        ..Dims::qwen36_35b_a3b()
    };
    let gemv = Gemv::load(&gpu, &dims).unwrap();
    let mut rng = Rng::new("embed_normed");
    let (rows, h) = (1031, dims.hidden);
    let table = rng.vec_bf16(dims.vocab * h, 1.0);
    let w = rng.vec_bf16(rows * h, 1.0 / (h as f32).sqrt());
    let norm_w = rng.vec_bf16(h, 0.1);
    let table_d = upload(&gpu, "table", DType::BF16, &[dims.vocab, h], &table);
    let w_d = product_matrix(&gpu, "w", WeightFormat::Bf16, &[rows, h], &w).1;
    let norm_d = upload(&gpu, "norm_w", DType::BF16, &[h], &norm_w);
    let ids = upload(&gpu, "ids", DType::I32, &[4], &[3.0, 57.0, 100.0, -1.0]);
    for (p, token) in [(1, Some(57)), (0, Some(3)), (2, None), (3, None)] {
        let pos = upload(&gpu, "pos", DType::I32, &[1], &[p as f32]);
        let x = poisoned(&gpu, "x", DType::F32, &[h]);
        let y = poisoned(&gpu, "y", DType::F32, &[rows]);
        gemv.run_embed_normed(
            &w_d.view(),
            None,
            &table_d.view(),
            &ids.view(),
            &pos.view(),
            &x.view(),
            &norm_d.view(),
            &y.view(),
        )
        .unwrap();
        let (got_x, got_y) = (download(&gpu, &x), download(&gpu, &y));
        let Some(t) = token else {
            assert!(got_x.iter().all(|v| v.is_nan()), "position {p}: x is NaN");
            assert!(got_y.iter().all(|v| v.is_nan()), "position {p}: y is NaN");
            continue;
        };
        let row = &table[t * h..(t + 1) * h];
        assert_eq!(got_x, row, "position {p}: x is token {t}'s embedding");
        let xn = normed_bf16(row, &norm_w, dims.eps);
        let mut expected = vec![0.0; rows];
        products::matvec(&host_bf16("w", vec![rows, h], &w), &xn, &mut expected);
        check(
            &format!("embedded product at position {p}"),
            &got_y,
            &expected,
            1e-3,
        );
    }
}

/// `rows` rows of `d.hidden` through the GPU rmsnorm against the CPU one; a single row goes as a
/// vector.
fn rmsnorm_matches_cpu_rows(gpu: &Arc<Gpu>, d: &Dims, rows: usize, rng: &mut Rng) {
    let k = Norm::load(gpu, d).unwrap();
    let n = d.hidden;
    // Rows of different scales: a norm taken over the wrong row shows up.
    let x: Vec<f32> = (0..rows)
        .flat_map(|r| rng.vec(n, 0.5 + r as f32 % 7.0))
        .collect();
    let w = rng.vec_bf16(n, 0.1);
    let mut expected = vec![0.0; rows * n];
    for (row, out) in x.chunks(n).zip(expected.chunks_mut(n)) {
        norm::rms_norm_zero_centred(row, &w, d.eps, out);
    }
    let shape = if rows == 1 { vec![n] } else { vec![rows, n] };
    let out = poisoned(gpu, "out", DType::BF16, &shape);
    k.rmsnorm(
        &upload(gpu, "x", DType::F32, &shape, &x).view(),
        &upload(gpu, "w", DType::BF16, &[n], &w).view(),
        &out.view(),
        rows,
    )
    .unwrap();
    check(
        &format!("rmsnorm: {rows} rows of {n}"),
        &download(gpu, &out),
        &expected,
        1e-2,
    );
}

#[test]
fn rmsnorm_matches_cpu() {
    let Some(gpu) = gpu("rmsnorm") else { return };
    let mut rng = Rng::new("rmsnorm");
    // One warp per row, 8 rows per block: row counts that leave a block partly empty.
    let model = Dims::qwen36_35b_a3b();
    for rows in [1, 3, 8, 67] {
        rmsnorm_matches_cpu_rows(&gpu, &model, rows, &mut rng);
    }
    // A hidden size of 64: only 16 lanes of each warp hold a float4.
    let tiny = Dims {
        hidden: 64,
        ..model
    };
    for rows in [1, 13] {
        rmsnorm_matches_cpu_rows(&gpu, &tiny, rows, &mut rng);
    }
}
