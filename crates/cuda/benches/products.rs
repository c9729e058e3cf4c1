//! Micro-benchmark (not a test): the products: decode's streamed normed product (GDN in_proj),
//! the prefill's dense GEMM. Runs on a GPU with `cargo bench -p lily-cuda --bench products
//! [NAME...]` or the staged binary with `--bench`; prints SKIPPED where there is no driver.

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use lily_cuda::dims::Dims;
use lily_cuda::kernels::Out;
use lily_cuda::kernels::gemm::Gemm;
use lily_cuda::kernels::gemv::Gemv;
use lily_cuda::runtime::tensor::DType;
use lily_cuda::WeightFormat;

fn main() {
    common::run_benches(&[
        ("bench_gemv_normed_in_proj", bench_gemv_normed_in_proj),
        ("bench_gemm_8k", bench_gemm_8k),
        ("bench_gemm_1k", bench_gemm_1k),
    ]);
}

/// GDN in_proj alone (the streamed layer-input product with its norm): microseconds per launch
/// and the rate over its weights, each launch reading another of four copies (202 MB, four
/// times L2) so that the weights come from DRAM as in a step. For ncu on the H200 (inside the
/// step in_proj takes longer than its bytes at the read rate, so its stalls are worth reading):
/// scripts/profile/ncu_kernels.sh OUT gemv_hidden_normed .gpu/benches/products --bench bench_gemv_normed_in_proj
fn bench_gemv_normed_in_proj() {
    let Some(gpu) = gpu("bench_gemv_normed_in_proj") else {
        return;
    };
    let fp8 = WeightFormat::Fp8 {
        block_rows: 128,
        block_cols: 128,
    };
    for format in [WeightFormat::Bf16, fp8] {
        let dims = Dims {
            weights: format,
            ..Dims::qwen36_35b_a3b()
        };
        let gemv = Gemv::load(&gpu, &dims).unwrap();
        let mut rng = Rng::new("bench_gemv_normed_in_proj");
        // An FP8 model's b | a rows are a bf16 tail.
        let tail_rows = if format == WeightFormat::Bf16 { 0 } else { dims.gdn_ba_rows() };
        let (rows, h) = (dims.gdn_in_rows() - tail_rows, dims.hidden);
        let w = rng.vec_bf16(rows * h, 1.0 / (h as f32).sqrt());
        let copies: Vec<_> = (0..4)
            .map(|_| product_matrix(&gpu, "w", format, &[rows, h], &w).1)
            .collect();
        let tail = (tail_rows > 0).then(|| {
            upload(&gpu, "tail", DType::BF16, &[tail_rows, h], &rng.vec_bf16(tail_rows * h, 0.02))
        });
        let resid = upload(&gpu, "resid", DType::F32, &[h], &rng.vec(h, 4.0));
        let norm_w = upload(&gpu, "norm_w", DType::BF16, &[h], &rng.vec_bf16(h, 0.1));
        let y = poisoned(&gpu, "y", DType::F32, &[rows + tail_rows]);
        let mut k = 0;
        let ms = time(&gpu, 40, || {
            gemv.run_normed(
                &copies[k % 4].view(),
                tail.as_ref().map(|t| t.view()).as_ref(),
                &resid.view(),
                &norm_w.view(),
                None,
                &y.view(),
            )
            .unwrap();
            k += 1;
        })
        .ms;
        let bytes = (rows * h * format.bytes() + tail_rows * h * 2) as f64;
        eprintln!(
            "bench_gemv_normed_in_proj {format:?}: {rows} + {tail_rows} x {h}: {:.2} us per launch, {:.2} TB/s",
            ms * 1e3,
            bytes / (ms as f64 * 1e-3) / 1e12
        );
        assert!(
            download(&gpu, &y).iter().all(|x| x.is_finite()),
            "the benchmark's output holds NaN or inf"
        );
    }
}

/// Times the dense GEMM at the prefill's shapes for an 8K chunk and prints TFLOP/s.
fn bench_gemm_8k() {
    bench_gemm(8192);
}

/// The same for a 1K prompt, where out_proj and the router take the narrow tiles.
fn bench_gemm_1k() {
    bench_gemm(1024);
}

fn bench_gemm(m: usize) {
    let Some(gpu) = gpu("bench_gemm") else { return };
    let dims = Dims::qwen36_35b_a3b();
    let gemm = Gemm::load(&gpu, &dims).unwrap();
    for (name, n, k) in [
        ("gdn in_proj", dims.gdn_in_rows(), 2048),
        ("attn qkv", dims.attn_in_rows(), 2048),
        ("out_proj", 2048, dims.gdn_out()),
        ("router", 257, 2048),
    ] {
        let x = lily_cuda::runtime::tensor::Tensor::new(&gpu, "x", DType::BF16, &[m, k]).unwrap();
        let w = lily_cuda::runtime::tensor::Tensor::new(&gpu, "w", DType::BF16, &[n, k]).unwrap();
        gpu.memset_u32(x.ptr(), 0x3f80_3f80, x.bytes() / 4).unwrap();
        gpu.memset_u32(w.ptr(), 0x3c00_3c00, w.bytes() / 4).unwrap();
        let y = lily_cuda::runtime::tensor::Tensor::new(&gpu, "y", DType::F32, &[m, n]).unwrap();
        let s = time(&gpu, 10, || gemm.run(&w.view(), &x.view(), &y.view(), Out::Write).unwrap()).ms
            as f64
            / 1e3;
        let tflops = 2.0 * (m * n * k) as f64 / s / 1e12;
        eprintln!(
            "gemm {name} {m}x{n}x{k}: {:.3} ms, {tflops:.1} TFLOP/s",
            s * 1e3
        );
    }
}
