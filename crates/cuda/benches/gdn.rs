//! Micro-benchmark (not a test): the Gated DeltaNet prefill over an 8K chunk. Runs on a GPU with
//! `cargo bench -p lily-cuda --bench gdn [NAME...]` or the staged binary with `--bench`; prints
//! SKIPPED where there is no driver.

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use common::gdn::*;
use lily_cuda::dims::Dims;
use lily_cuda::kernels::gdn::{Gdn, GdnPrefillArgs, GdnPrefillScratch};
use lily_cuda::runtime::tensor::DType;

fn main() {
    common::run_benches(&[
        ("bench_gdn_prefill_8k", bench_gdn_prefill_8k),
    ]);
}

/// The prefill of one layer at the model's dims for an 8K chunk: total and per kernel.
fn bench_gdn_prefill_8k() {
    let Some(gpu) = gpu("bench_gdn_prefill_8k") else {
        return;
    };
    let d = Dims::qwen36_35b_a3b();
    let tokens = 8192;
    let kernels = Gdn::load(&gpu, &d).unwrap();
    let mut rng = Rng::new("bench_gdn_prefill_8k");
    let (l, _) = layer(&gpu, &d, &mut rng);
    let (rows, out_w) = (d.gdn_in_rows(), d.gdn_out());
    let scratch = GdnPrefillScratch::new(&gpu, &d, tokens).unwrap();
    let proj = upload(
        &gpu,
        "proj",
        DType::F32,
        &[tokens, rows],
        &rng.vec(tokens * rows, 1.0),
    );
    let out = poisoned(&gpu, "out", DType::BF16, &[tokens, out_w]);
    let run = || {
        kernels
            .prefill(&GdnPrefillArgs {
                proj: &proj.view(),
                conv_w: &l.conv_w.view(),
                conv_ring: &l.ring.view(),
                a_log: &l.a_log.view(),
                dt_bias: &l.dt_bias.view(),
                norm: &l.norm.view(),
                state: &l.state.at(0),
                out: &out.view(),
                scratch: &scratch,
                start: 0,
                tokens,
            })
            .unwrap()
    };
    let t = time(&gpu, 10, run);
    let ms = t.ms;
    assert!(
        download(&gpu, &out).iter().all(|x| x.is_finite()),
        "the benchmark's output has NaN or infinity"
    );
    let (v, kd, vd, kh) = (
        d.gdn_value_heads,
        d.gdn_key_dim,
        d.gdn_value_dim,
        d.gdn_key_heads,
    );
    // The chunked delta rule's FMAs per (chunk of c = 64 tokens, value head): in gdn_chunk_solve
    // k k^T and q k^T over the lower triangle and the forward substitution for U and W; in
    // gdn_chunk_scan W S0, q S0 and the state update (c kd vd each) and P D (lower triangle).
    let c = 64;
    let solve = c * c * kd + c * c / 2 * (kd + vd);
    let scan = 3 * c * kd * vd + c * c / 2 * vd;
    let flops = (2 * tokens.div_ceil(c) * v * (solve + scan)) as f64;
    // Global traffic at the least: proj in, the f32 intermediates written and read once, out.
    let bytes = (tokens * rows * 4
        + 2 * tokens * (2 * kh * kd + 2 * v * vd) * 4
        + tokens * out_w * 2) as f64;
    eprintln!(
        "gdn prefill, {tokens} tokens, {}: {ms:.3} ms per layer ({:.0} tok/s per layer), \
         delta rule {:.1} TFLOP/s, {:.0} GB/s of minimal traffic",
        gpu.name,
        tokens as f64 / (ms as f64 / 1e3),
        flops / (ms as f64 / 1e3) / 1e12,
        bytes / (ms as f64 / 1e3) / 1e9,
    );
    for (label, ms) in t.last_call() {
        eprintln!("  {label}: {ms:.3} ms");
    }
}
