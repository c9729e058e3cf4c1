//! Micro-benchmark (not a test): the MoE prefill over an 8K chunk. Runs on a GPU with `cargo
//! bench -p lily-cuda --bench moe [NAME...]` or the staged binary with `--bench`; prints SKIPPED
//! where there is no driver.

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use lily_cuda::dims::Dims;
use lily_cuda::kernels::gemm::{self, Gemm};
use lily_cuda::kernels::moe::{Moe, MoePrefillArgs, MoeScratch};
use lily_cuda::runtime::tensor::DType;

fn main() {
    common::run_benches(&[
        ("bench_moe_prefill_8k", bench_moe_prefill_8k),
    ]);
}

/// The MoE block of one layer at the model's dims for an 8K chunk (seeded uniform weights and
/// inputs, so the routing spreads over all experts): total and per kernel, with the grouped
/// GEMMs' rate counted over the real (token, expert) rows, not the padded tiles.
fn bench_moe_prefill_8k() {
    let Some(gpu) = gpu("bench_moe_prefill_8k") else {
        return;
    };
    let d = Dims::qwen36_35b_a3b();
    let tokens = 8192;
    let (e, hid, inter) = (d.experts, d.hidden, d.moe_inter);
    let gemm = Gemm::load(&gpu, &d).unwrap();
    let k = Moe::load(&gpu, &d).unwrap();
    let fill = lily_cuda::kernels::fill::Fill::load(&gpu, &d).unwrap();
    let tensor = |name: &str, dtype: DType, shape: &[usize], seed: u32, scale: f32| {
        let t = lily_cuda::runtime::tensor::Tensor::new(&gpu, name, dtype, shape).unwrap();
        fill.uniform(&t.view(), seed, 0.0, scale).unwrap();
        t
    };
    let s = 1.0 / (hid as f32).sqrt();
    let router = tensor("router", DType::BF16, &[e + 1, hid], 1, s);
    let gate_up = tensor("gate_up", DType::BF16, &[e, 2 * inter, hid], 2, s);
    let down = tensor(
        "down",
        DType::BF16,
        &[e, hid, inter],
        3,
        1.0 / (inter as f32).sqrt(),
    );
    let shared_gate_up = tensor("shared_gate_up", DType::BF16, &[2 * inter, hid], 4, s);
    let shared_down = tensor(
        "shared_down",
        DType::BF16,
        &[hid, inter],
        5,
        1.0 / (inter as f32).sqrt(),
    );
    let xn = tensor("xn", DType::BF16, &[tokens, hid], 6, 1.0);
    let x = tensor("x", DType::F32, &[tokens, hid], 7, 1.0);
    let scratch = MoeScratch::new(&gpu, &d, tokens).unwrap();
    let run = || {
        k.prefill(
            &gemm,
            &MoePrefillArgs {
                xn: &xn.view(),
                router: &router.view(),
                gate_up: &gate_up.view(),
                down: &down.view(),
                shared_gate_up: &shared_gate_up.view(),
                shared_down: &shared_down.view(),
                x: &x.view(),
                tokens,
            },
            &scratch,
        )
        .unwrap()
    };
    let t = time(&gpu, 10, run);
    let ms = t.ms;
    assert!(
        download(&gpu, &x).iter().all(|v| v.is_finite()),
        "the benchmark's output has NaN or infinity"
    );
    eprintln!(
        "moe prefill, {tokens} tokens, {}: {ms:.3} ms per layer",
        gpu.name
    );
    let times = t.last_call();
    for (label, ms) in times {
        eprintln!("  {label}: {ms:.3} ms");
    }
    let pairs = (tokens * (d.top_k + 1)) as f64;
    // Each expert's last tile is partial: the padded rows cost weight traffic and K steps too.
    let row_tiles = download(&gpu, scratch.row_tiles())[0] as f64;
    let padded = row_tiles * gemm::TILE_ROWS as f64;
    eprintln!(
        "  {row_tiles} row tiles of {} for {pairs} rows ({:.0} tiles' worth, {:.1}% padding)",
        gemm::TILE_ROWS,
        pairs / gemm::TILE_ROWS as f64,
        100.0 * (1.0 - pairs / padded)
    );
    for (kernel, per_row) in [
        ("gemm_moe_gate_up", 2.0 * (2 * inter * hid) as f64),
        ("gemm_moe_down", 2.0 * (hid * inter) as f64),
    ] {
        let s = t.kernel_ms(kernel) as f64 / 1e3;
        eprintln!(
            "  {kernel}: {:.1} TFLOP/s over the real rows, {:.1} over the padded tiles",
            pairs * per_row / s / 1e12,
            padded * per_row / s / 1e12
        );
    }
}
