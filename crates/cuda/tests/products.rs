//! The products y = W x on the GPU against the CPU reference (lily-cpu: products): decode's
//! row products (gemv) and the prefill's tensor-core GEMMs at the model's projection shapes,
//! each writing and adding to its output, and the launchers' shape checks.
//! Fresh random inputs, outputs poisoned (NaN) before the run; bounds on max|gpu - cpu| /
//! max|cpu|: 1e-4 for f32 outputs from identical bf16 inputs (only the summation order differs);
//! 2e-3 for FP8 weights, whose products sum each 16-value chunk in f16 pairs (11-bit
//! significands) against the reference's f32 over the same dequantised values.
//!
//! Needs a CUDA GPU and NVRTC; prints SKIPPED and passes where there is no driver.

mod common;

use common::*;
use lily_cpu::products;
use lily_cuda::dims::Dims;
use lily_cuda::kernels::Out;
use lily_cuda::kernels::gemm::Gemm;
use lily_cuda::kernels::gemv::Gemv;
use lily_cuda::runtime::tensor::{DType, Matrix};
use lily_cuda::WeightFormat;

const FP8: WeightFormat = WeightFormat::Fp8 {
    block_rows: 128,
    block_cols: 128,
};

#[test]
fn gemv_matches_cpu_matvec_at_model_shapes() {
    gemv_matches_cpu_matvec("gemv", WeightFormat::Bf16, 1e-4);
}

#[test]
fn fp8_gemv_matches_cpu_matvec_of_the_dequantised_weights() {
    gemv_matches_cpu_matvec("gemv_fp8", FP8, 2e-3);
}

fn gemv_matches_cpu_matvec(test: &str, format: WeightFormat, bound: f32) {
    let Some(gpu) = gpu(test) else { return };
    let dims = Dims {
        weights: format,
        ..Dims::qwen36_35b_a3b()
    };
    let gemv = Gemv::load(&gpu, &dims).unwrap();
    let mut rng = Rng::new(test);
    // GDN out_proj and attention o_proj, and row counts that leave a block partly empty (and,
    // for FP8, a ragged last row block).
    for (rows, cols) in [
        (2048, dims.gdn_out()),
        (2048, dims.attn_out()),
        (257, dims.gdn_out()),
        (1031, dims.attn_out()),
    ] {
        let w = rng.vec_bf16(rows * cols, 1.0 / (cols as f32).sqrt());
        let x = rng.vec_bf16(cols, 1.0);
        let (host, wd) = product_matrix(&gpu, "w", format, &[rows, cols], &w);
        let mut expected = vec![0.0; rows];
        products::matvec(&host, &x, &mut expected);
        let xd = upload(&gpu, "x", DType::BF16, &[cols], &x);
        let y = poisoned(&gpu, "y", DType::F32, &[rows]);
        gemv.run(&wd.view(), &xd.view(), &y.view(), Out::Write).unwrap();
        check(
            &format!("{test} {rows}x{cols}"),
            &download(&gpu, &y),
            &expected,
            bound,
        );
        // Accumulate: the residual add of the output projections.
        let r = rng.vec(rows, 1.0);
        let y = upload(&gpu, "y", DType::F32, &[rows], &r);
        gemv.run(&wd.view(), &xd.view(), &y.view(), Out::Add).unwrap();
        let sum: Vec<f32> = expected.iter().zip(&r).map(|(a, b)| a + b).collect();
        check(
            &format!("{test} {rows}x{cols} accumulate"),
            &download(&gpu, &y),
            &sum,
            bound,
        );
    }
}

/// Prefill reads an FP8 model's weights dequantised to bf16: the values the CPU reference
/// computes, rounded once to bf16.
#[test]
fn fp8_weights_dequantise_to_the_cpu_values_rounded_to_bf16() {
    let Some(gpu) = gpu("dequant") else { return };
    let dims = Dims {
        weights: FP8,
        ..Dims::qwen36_35b_a3b()
    };
    let gemm = Gemm::load(&gpu, &dims).unwrap();
    let mut rng = Rng::new("dequant");
    // Stacked experts, and a matrix with ragged last blocks both ways.
    for shape in [vec![3, 1024, 2048], vec![200, 144]] {
        let n: usize = shape.iter().product();
        let w = rng.vec_bf16(n, 0.05);
        let (host, wd) = product_matrix(&gpu, "w", FP8, &shape, &w);
        let out = poisoned(&gpu, "out", DType::BF16, &shape);
        gemm.dequantize(&wd.view(), &out.view()).unwrap();
        let expected: Vec<f32> = host.to_f32_vec().into_iter().map(round_bf16).collect();
        assert_eq!(download(&gpu, &out), expected, "dequantised {shape:?}");
    }
}

#[test]
fn gemm_matches_cpu_products_at_projection_shapes() {
    let Some(gpu) = gpu("gemm") else { return };
    let dims = Dims::qwen36_35b_a3b();
    let gemm = Gemm::load(&gpu, &dims).unwrap();
    let mut rng = Rng::new("gemm");
    // GDN in_proj (a partial last column tile), router (257 columns), out_proj (K 4096), row
    // counts around the 128-row tile, and a K that is not a whole K step.
    for (m, n, k) in [
        (67, dims.gdn_in_rows(), 2048),
        (1, 257, 2048),
        (129, 2048, dims.gdn_out()),
        (300, 1024, 2048),
        // K shorter than one 64-wide step (the tiny fixtures' expert intermediate).
        (50, 64, 32),
        // More tiles (9 x 17) than an H200 has multiprocessors: blocks take several in turn.
        (1100, 4100, 520),
    ] {
        let w = rng.vec_bf16(n * k, 1.0 / (k as f32).sqrt());
        let x = rng.vec_bf16(m * k, 1.0);
        let wt = host_bf16("w", vec![n, k], &w);
        let mut expected = vec![0.0; m * n];
        for r in 0..m {
            products::matvec(
                &wt,
                &x[r * k..(r + 1) * k],
                &mut expected[r * n..(r + 1) * n],
            );
        }
        let wd = upload(&gpu, "w", DType::BF16, &[n, k], &w);
        let xd = upload(&gpu, "x", DType::BF16, &[m, k], &x);
        let y = poisoned(&gpu, "y", DType::F32, &[m, n]);
        gemm.run(&wd.view(), &xd.view(), &y.view(), Out::Write).unwrap();
        check(
            &format!("gemm {m}x{n}x{k}"),
            &download(&gpu, &y),
            &expected,
            1e-4,
        );
        let r = rng.vec(m * n, 1.0);
        let y = upload(&gpu, "y", DType::F32, &[m, n], &r);
        gemm.run(&wd.view(), &xd.view(), &y.view(), Out::Add).unwrap();
        let sum: Vec<f32> = expected.iter().zip(&r).map(|(a, b)| a + b).collect();
        check(
            &format!("gemm {m}x{n}x{k} accumulate"),
            &download(&gpu, &y),
            &sum,
            1e-4,
        );
    }
}

#[test]
fn launchers_name_the_tensor_with_the_wrong_shape() {
    let Some(gpu) = gpu("shapes") else { return };
    let dims = Dims::qwen36_35b_a3b();
    let gemv = Gemv::load(&gpu, &dims).unwrap();
    let w = Matrix {
        w: poisoned(&gpu, "layer 0 out_proj", DType::BF16, &[2048, 4096]),
        scale: None,
    };
    let x = poisoned(&gpu, "gdn_normed", DType::BF16, &[2048]);
    let y = poisoned(&gpu, "x", DType::F32, &[2048]);
    let err = gemv
        .run(&w.view(), &x.view(), &y.view(), Out::Add)
        .unwrap_err()
        .to_string();
    assert!(err.contains("gdn_normed") && err.contains("4096"), "{err}");
    // A bf16 model refuses an FP8 matrix, naming it.
    let fp8 = Matrix {
        w: poisoned(&gpu, "layer 1 out_proj", DType::F8E4M3, &[2048, 4096]),
        scale: Some(poisoned(&gpu, "layer 1 out_proj scales", DType::F32, &[16, 32])),
    };
    let x = poisoned(&gpu, "gdn_normed", DType::BF16, &[4096]);
    let err = gemv
        .run(&fp8.view(), &x.view(), &y.view(), Out::Add)
        .unwrap_err()
        .to_string();
    assert!(err.contains("layer 1 out_proj") && err.contains("BF16"), "{err}");
}
