//! Micro-benchmark (not a test): Attention: decode at a 128K context, the prefill over an 8K
//! chunk. Runs on a GPU with `cargo bench -p lily-cuda --bench attention [NAME...]` or the staged
//! binary with `--bench`; prints SKIPPED where there is no driver.

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use lily_cuda::dims::{ATTN_SPLITS, Dims};
use lily_cuda::kernels::attention::{Attention, AttnDecodeArgs, AttnPrefillArgs};
use lily_cuda::runtime::tensor::{DType, Tensor};

fn main() {
    common::run_benches(&[
        ("bench_attention_decode_128k", bench_attention_decode_128k),
        ("bench_attention_prefill_8k", bench_attention_prefill_8k),
    ]);
}

/// One decode step's attention at the model dims over a 131072-position cache (and shorter
/// contexts for comparison): microseconds per layer of each kernel and the K/V read rate of the
/// split partials.
fn bench_attention_decode_128k() {
    let Some(gpu) = gpu("bench_attention_decode_128k") else {
        return;
    };
    let d = Dims::qwen36_35b_a3b();
    let k = Attention::load(&gpu, &d).unwrap();
    let mut rng = Rng::new("bench_attention_decode_128k");
    let (h, kvh, hd) = (d.attn_heads, d.attn_kv_heads, d.attn_head_dim);
    let max_seq = 131072;
    // Any finite cache will do for timing: every bf16 pair 0.0078 (0x3c00).
    let cache = |name: &str| {
        let t = Tensor::new(&gpu, name, DType::BF16, &[kvh, max_seq, hd]).unwrap();
        gpu.memset_u32(t.ptr(), 0x3c00_3c00, t.bytes() / 4).unwrap();
        t
    };
    let (kc, vc) = (cache("k_cache"), cache("v_cache"));
    let proj = upload(
        &gpu,
        "proj",
        DType::F32,
        &[d.attn_in_rows()],
        &rng.vec(d.attn_in_rows(), 1.0),
    );
    let qn = upload(&gpu, "q_norm", DType::BF16, &[hd], &rng.vec_bf16(hd, 0.1));
    let kn = upload(&gpu, "k_norm", DType::BF16, &[hd], &rng.vec_bf16(hd, 0.1));
    let q = poisoned(&gpu, "q", DType::F32, &[h * hd]);
    let part_acc = poisoned(&gpu, "part_acc", DType::F32, &[h, ATTN_SPLITS, hd]);
    let part_ml = poisoned(&gpu, "part_ml", DType::F32, &[h, ATTN_SPLITS, 2]);
    let out = poisoned(&gpu, "out", DType::BF16, &[h * hd]);
    for len in [1024usize, 8192, 32768, 131072] {
        let pos = upload(&gpu, "pos", DType::I32, &[1], &[(len - 1) as f32]);
        let (pv, qnv, knv, kcv, vcv, qv, pav, pmv, ov, posv) = (
            proj.view(),
            qn.view(),
            kn.view(),
            kc.view(),
            vc.view(),
            q.view(),
            part_acc.view(),
            part_ml.view(),
            out.view(),
            pos.view(),
        );
        let args = AttnDecodeArgs {
            proj: &pv,
            q_norm: &qnv,
            k_norm: &knv,
            k_cache: &kcv,
            v_cache: &vcv,
            q: &qv,
            part_acc: &pav,
            part_ml: &pmv,
            out: &ov,
            pos: &posv,
            max_seq,
        };
        let t = time(&gpu, 20, || k.decode(&args).unwrap());
        let mean_us = |name: &str| t.kernel_ms(name) * 1e3;
        let (prepare, partial, combine) = (
            mean_us("attn_prepare"),
            mean_us("attn_decode_partial"),
            mean_us("attn_decode_combine"),
        );
        let kv_bytes = (2 * kvh * len * hd * 2) as f64;
        eprintln!(
            "bench_attention_decode_128k: context {len}: per layer {:.1} us: prepare {prepare:.1} \
             us, partial {partial:.1} us ({:.2} TB/s of K/V), combine {combine:.1} us",
            prepare + partial + combine,
            kv_bytes / (partial as f64 * 1e-6) / 1e12,
        );
        let o = download(&gpu, &out);
        assert!(
            o.iter().all(|x| x.is_finite()),
            "the benchmark's output holds NaN or inf"
        );
    }
}

/// Prefill of one 8192-token chunk at the model dims: ms per layer and tensor-core TFLOP/s of
/// the causal attention (4 * T^2 / 2 * HD * H flops).
fn bench_attention_prefill_8k() {
    let Some(gpu) = gpu("bench_attention_prefill_8k") else {
        return;
    };
    let d = Dims::qwen36_35b_a3b();
    let k = Attention::load(&gpu, &d).unwrap();
    let mut rng = Rng::new("bench_attention_prefill_8k");
    let (h, kvh, hd, rows) = (
        d.attn_heads,
        d.attn_kv_heads,
        d.attn_head_dim,
        d.attn_in_rows(),
    );
    let tokens = 8192;
    let max_seq = tokens;
    let proj = upload(
        &gpu,
        "proj",
        DType::F32,
        &[tokens, rows],
        &rng.vec(tokens * rows, 1.0),
    );
    let qn = upload(&gpu, "q_norm", DType::BF16, &[hd], &rng.vec_bf16(hd, 0.1));
    let kn = upload(&gpu, "k_norm", DType::BF16, &[hd], &rng.vec_bf16(hd, 0.1));
    let kc = poisoned(&gpu, "k_cache", DType::BF16, &[kvh, max_seq, hd]);
    let vc = poisoned(&gpu, "v_cache", DType::BF16, &[kvh, max_seq, hd]);
    let q = poisoned(&gpu, "q", DType::BF16, &[tokens, h * hd]);
    let out = poisoned(&gpu, "out", DType::BF16, &[tokens, h * hd]);
    let (pv, qnv, knv, kcv, vcv, qv, ov) = (
        proj.view(),
        qn.view(),
        kn.view(),
        kc.view(),
        vc.view(),
        q.view(),
        out.view(),
    );
    let args = AttnPrefillArgs {
        proj: &pv,
        q_norm: &qnv,
        k_norm: &knv,
        k_cache: &kcv,
        v_cache: &vcv,
        q: &qv,
        out: &ov,
        start: 0,
        tokens,
        max_seq,
    };
    let t = time(&gpu, 5, || k.prefill(&args).unwrap());
    let (prepare, flash) = (
        t.kernel_ms("attn_prefill_prepare"),
        t.kernel_ms("attn_prefill_flash"),
    );
    // What prepare must move: per token the query halves and k, v read (f32); q, k, v written
    // (bf16).
    let prepare_bytes = (tokens * (h + 2 * kvh) * hd * (4 + 2)) as f64;
    let flops = 4.0 * (tokens as f64).powi(2) / 2.0 * hd as f64 * h as f64;
    let tflops = |ms: f32| flops / (ms as f64 * 1e-3) / 1e12;
    eprintln!(
        "bench_attention_prefill_8k: {tokens} tokens, per layer {:.3} ms ({:.1} TFLOP/s): \
         prepare {prepare:.3} ms ({:.0} GB/s), flash {flash:.3} ms ({:.1} TFLOP/s); {:.0} tok/s per layer",
        prepare + flash,
        tflops(prepare + flash),
        prepare_bytes / (prepare as f64 * 1e-3) / 1e9,
        tflops(flash),
        tokens as f64 / ((prepare + flash) as f64 * 1e-3)
    );
    let o = download(&gpu, &out);
    assert!(
        o.iter().all(|x| x.is_finite()),
        "the benchmark's output holds NaN or inf"
    );
}
