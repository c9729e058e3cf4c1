//! The products y = W x on the GPU against the CPU reference (lily-cpu: products): decode's
//! row products (gemv) and the prefill's tensor-core GEMMs at the model's projection shapes,
//! each writing and adding to its output, and the launchers' shape checks.
//! Fresh random inputs, outputs poisoned (NaN) before the run; bounds on max|gpu - cpu| /
//! max|cpu|: 1e-4 for f32 outputs from identical bf16 inputs (only the summation order differs).
//!
//! Needs a CUDA GPU and NVRTC; prints SKIPPED and passes where there is no driver.

mod common;

use common::*;
use lily_cpu::products;
use lily_cuda::dims::Dims;
use lily_cuda::kernels::Out;
use lily_cuda::kernels::gemm::Gemm;
use lily_cuda::kernels::gemv::Gemv;
use lily_cuda::runtime::tensor::DType;

#[test]
fn gemv_matches_cpu_matvec_at_model_shapes() {
    let Some(gpu) = gpu("gemv") else { return };
    let dims = Dims::qwen36_35b_a3b();
    let gemv = Gemv::load(&gpu, &dims).unwrap();
    let mut rng = Rng::new("gemv");
    // GDN out_proj and attention o_proj, and row counts that leave a block partly empty.
    for (rows, cols) in [
        (2048, dims.gdn_out()),
        (2048, dims.attn_out()),
        (257, dims.gdn_out()),
        (1031, dims.attn_out()),
    ] {
        let w = rng.vec_bf16(rows * cols, 1.0 / (cols as f32).sqrt());
        let x = rng.vec_bf16(cols, 1.0);
        let mut expected = vec![0.0; rows];
        products::matvec(&host_bf16("w", vec![rows, cols], &w), &x, &mut expected);
        let wd = upload(&gpu, "w", DType::BF16, &[rows, cols], &w);
        let xd = upload(&gpu, "x", DType::BF16, &[cols], &x);
        let y = poisoned(&gpu, "y", DType::F32, &[rows]);
        gemv.run(&wd.view(), &xd.view(), &y.view(), Out::Write).unwrap();
        check(
            &format!("gemv {rows}x{cols}"),
            &download(&gpu, &y),
            &expected,
            1e-4,
        );
        // Accumulate: the residual add of the output projections.
        let r = rng.vec(rows, 1.0);
        let y = upload(&gpu, "y", DType::F32, &[rows], &r);
        gemv.run(&wd.view(), &xd.view(), &y.view(), Out::Add).unwrap();
        let sum: Vec<f32> = expected.iter().zip(&r).map(|(a, b)| a + b).collect();
        check(
            &format!("gemv {rows}x{cols} accumulate"),
            &download(&gpu, &y),
            &sum,
            1e-4,
        );
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
    let w = poisoned(&gpu, "layer 0 out_proj", DType::BF16, &[2048, 4096]);
    let x = poisoned(&gpu, "gdn_normed", DType::BF16, &[2048]);
    let y = poisoned(&gpu, "x", DType::F32, &[2048]);
    let err = gemv
        .run(&w.view(), &x.view(), &y.view(), Out::Add)
        .unwrap_err()
        .to_string();
    assert!(err.contains("gdn_normed") && err.contains("4096"), "{err}");
}
