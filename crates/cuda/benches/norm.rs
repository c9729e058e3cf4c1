//! Micro-benchmark (not a test): the prefill's row RMSNorm. Runs on a GPU with `cargo bench -p
//! lily-cuda --bench norm [NAME...]` or the staged binary with `--bench`; prints SKIPPED where
//! there is no driver.

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use lily_cuda::dims::Dims;
use lily_cuda::kernels::norm::Norm;
use lily_cuda::runtime::tensor::DType;

fn main() {
    common::run_benches(&[
        ("bench_rmsnorm_8k", bench_rmsnorm_8k),
    ]);
}

/// The rmsnorm of an 8192-token prefill chunk at the model dims: microseconds per launch and the
/// achieved rate over its traffic (f32 rows read, bf16 rows written).
fn bench_rmsnorm_8k() {
    let Some(gpu) = gpu("bench_rmsnorm_8k") else {
        return;
    };
    let d = Dims::qwen36_35b_a3b();
    let k = Norm::load(&gpu, &d).unwrap();
    let mut rng = Rng::new("bench_rmsnorm_8k");
    let (rows, n) = (8192, d.hidden);
    let x = upload(&gpu, "x", DType::F32, &[rows, n], &rng.vec(rows * n, 1.0));
    let w = upload(&gpu, "w", DType::BF16, &[n], &rng.vec_bf16(n, 0.1));
    let out = poisoned(&gpu, "out", DType::BF16, &[rows, n]);
    let (xv, wv, ov) = (x.view(), w.view(), out.view());
    let ms = time(&gpu, 10, || k.rmsnorm(&xv, &wv, &ov, rows).unwrap()).kernel_ms("rmsnorm");
    let bytes = (rows * n * (4 + 2)) as f64;
    eprintln!(
        "bench_rmsnorm_8k: {rows} rows of {n}: {:.1} us per launch, {:.0} GB/s",
        ms * 1e3,
        bytes / (ms as f64 * 1e-3) / 1e9
    );
    assert!(
        download(&gpu, &out).iter().all(|x| x.is_finite()),
        "the benchmark's output holds NaN or inf"
    );
}
