//! The attention prefill (norm + RoPE + cache write for a chunk, causal flash attention on the
//! tensor cores) against the CPU reference (lily-cpu), chunk after chunk into one NaN-poisoned
//! cache, then one decode step on top of the prefilled cache. Bounds on max|gpu - cpu| / max|cpu|:
//! bf16 outputs 2e-2 (q is rounded to bf16 for the tensor cores and so are the softmax weights),
//! bf16 q and caches 1e-2 (one rounding).
//!
//! Needs a CUDA GPU and NVRTC; prints SKIPPED and passes where there is no driver.

mod common;

use std::sync::Arc;

use common::*;
use lily_cpu::activation::sigmoid;
use lily_cpu::{attention, norm, rope};
use lily_cuda::dims::{Dims, ATTN_SPLITS};
use lily_cuda::runtime::driver::Gpu;
use lily_cuda::kernels::attention::{Attention, AttnDecodeArgs, AttnPrefillArgs};
use lily_cuda::runtime::tensor::{DType, Tensor};

/// The attention dims of a tiny test checkpoint (head dim 32, 4 query heads on 1 KV head).
fn tiny_fixture() -> Dims {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cpu/tests/fixtures/linear3_full1");
    Dims::from_config(&lily_model::Config::load(&dir).unwrap())
}

/// The CPU side of one attention layer: caches position-major [S, KVH, HD], as the GPU caches
/// them (k and v rounded to bf16).
struct Reference {
    d: Dims,
    q_norm: Vec<f32>,
    k_norm: Vec<f32>,
    inv_freq: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
}

impl Reference {
    fn new(d: &Dims, q_norm: &[f32], k_norm: &[f32]) -> Reference {
        Reference {
            d: d.clone(),
            q_norm: q_norm.to_vec(),
            k_norm: k_norm.to_vec(),
            inv_freq: rope::inverse_frequencies(d.rope_dim, d.rope_theta as f64),
            k: Vec::new(),
            v: Vec::new(),
        }
    }

    /// Appends the chunk's k and v to the caches and returns its (q [T, H*HD], gated out [T, H*HD]).
    fn chunk(&mut self, proj: &[f32]) -> (Vec<f32>, Vec<f32>) {
        let d = &self.d;
        let (h, kvh, hd) = (d.attn_heads, d.attn_kv_heads, d.attn_head_dim);
        let rows = d.attn_in_rows();
        let q_rows = 2 * h * hd;
        let start = self.k.len() / (kvh * hd);
        let tokens = proj.len() / rows;
        let mut q = Vec::with_capacity(tokens * h * hd);
        for t in 0..tokens {
            let row = &proj[t * rows..(t + 1) * rows];
            let mut qt: Vec<f32> = (0..h)
                .flat_map(|i| row[i * 2 * hd..i * 2 * hd + hd].to_vec())
                .collect();
            norm::rms_norm_zero_centred_rows(&mut qt, &self.q_norm, d.eps);
            qt.chunks_mut(hd)
                .for_each(|x| rope::apply_rope(x, start + t, &self.inv_freq));
            q.extend(qt);
            for j in 0..kvh {
                let mut k = row[q_rows + j * hd..q_rows + (j + 1) * hd].to_vec();
                norm::rms_norm_zero_centred_rows(&mut k, &self.k_norm, d.eps);
                rope::apply_rope(&mut k, start + t, &self.inv_freq);
                self.k.extend(k.into_iter().map(round_bf16));
                let v = &row[q_rows + (kvh + j) * hd..q_rows + (kvh + j + 1) * hd];
                self.v.extend(v.iter().copied().map(round_bf16));
            }
        }
        let mut out = vec![0.0; tokens * h * hd];
        let shape = attention::AttentionShape {
            num_heads: h,
            num_kv_heads: kvh,
            head_dim: hd,
        };
        let scale = 1.0 / (hd as f32).sqrt();
        attention::causal_attention(shape, &q, &self.k, &self.v, scale, &mut out);
        for t in 0..tokens {
            for i in 0..h {
                for j in 0..hd {
                    let gate = proj[t * rows + i * 2 * hd + hd + j];
                    out[(t * h + i) * hd + j] *= sigmoid(gate);
                }
            }
        }
        (q, out)
    }

    /// The GPU cache [KVH, max_seq, HD] restricted to the positions so far, position-major.
    fn positions_of_gpu_cache(&self, c: &[f32], max_seq: usize) -> Vec<f32> {
        let (kvh, hd) = (self.d.attn_kv_heads, self.d.attn_head_dim);
        let len = self.k.len() / (kvh * hd);
        (0..len)
            .flat_map(|s| {
                (0..kvh).flat_map(move |j| {
                    c[(j * max_seq + s) * hd..(j * max_seq + s + 1) * hd].to_vec()
                })
            })
            .collect()
    }
}

/// Prefills `chunks` (token counts) one after another into one cache, checking each chunk's q and
/// output and then the caches against the CPU, then decodes one more token with the decode
/// kernels on top of the prefilled cache and checks it against the CPU attending to all of it.
fn prefill_chunks_then_decode(
    gpu: &Arc<Gpu>,
    d: &Dims,
    what: &str,
    chunks: &[usize],
    rng: &mut Rng,
) {
    let k = Attention::load(gpu, d).unwrap();
    let (h, kvh, hd, rows) = (
        d.attn_heads,
        d.attn_kv_heads,
        d.attn_head_dim,
        d.attn_in_rows(),
    );
    let total: usize = chunks.iter().sum();
    // Positions past the last token stay NaN: a key the kernel failed to mask would poison rows.
    let max_seq = total + 5;
    let qn = rng.vec_bf16(hd, 0.1);
    let kn = rng.vec_bf16(hd, 0.1);
    let qnd = upload(gpu, "q_norm", DType::BF16, &[hd], &qn);
    let knd = upload(gpu, "k_norm", DType::BF16, &[hd], &kn);
    let kcd = poisoned(gpu, "k_cache", DType::BF16, &[kvh, max_seq, hd]);
    let vcd = poisoned(gpu, "v_cache", DType::BF16, &[kvh, max_seq, hd]);
    let mut reference = Reference::new(d, &qn, &kn);
    let mut start = 0;
    for &tokens in chunks {
        let proj = rng.vec(tokens * rows, 1.0);
        let projd = upload(gpu, "proj", DType::F32, &[tokens, rows], &proj);
        let q = poisoned(gpu, "q", DType::BF16, &[tokens, h * hd]);
        let out = poisoned(gpu, "out", DType::BF16, &[tokens, h * hd]);
        k.prefill(&AttnPrefillArgs {
            proj: &projd.view(),
            q_norm: &qnd.view(),
            k_norm: &knd.view(),
            k_cache: &kcd.view(),
            v_cache: &vcd.view(),
            q: &q.view(),
            out: &out.view(),
            start,
            tokens,
            max_seq,
        })
        .unwrap();
        let (q_ref, out_ref) = reference.chunk(&proj);
        let label = format!("{what}: prefill start {start} tokens {tokens}");
        check(&format!("{label} q"), &download(gpu, &q), &q_ref, 1e-2);
        check(&label, &download(gpu, &out), &out_ref, 2e-2);
        start += tokens;
    }
    check(
        &format!("{what}: k cache after {total} tokens"),
        &reference.positions_of_gpu_cache(&download(gpu, &kcd), max_seq),
        &reference.k,
        1e-2,
    );
    check(
        &format!("{what}: v cache after {total} tokens"),
        &reference.positions_of_gpu_cache(&download(gpu, &vcd), max_seq),
        &reference.v,
        1e-2,
    );

    let proj = rng.vec(rows, 1.0);
    let out = poisoned(gpu, "out", DType::BF16, &[h * hd]);
    k.decode(&AttnDecodeArgs {
        proj: &upload(gpu, "proj", DType::F32, &[rows], &proj).view(),
        q_norm: &qnd.view(),
        k_norm: &knd.view(),
        k_cache: &kcd.view(),
        v_cache: &vcd.view(),
        q: &poisoned(gpu, "q", DType::F32, &[h * hd]).view(),
        part_acc: &poisoned(gpu, "part_acc", DType::F32, &[h, ATTN_SPLITS, hd]).view(),
        part_ml: &poisoned(gpu, "part_ml", DType::F32, &[h, ATTN_SPLITS, 2]).view(),
        out: &out.view(),
        pos: &upload(gpu, "pos", DType::I32, &[1], &[total as f32]).view(),
        max_seq,
    })
    .unwrap();
    let (_, out_ref) = reference.chunk(&proj);
    check(
        &format!("{what}: decode at {total} after prefill"),
        &download(gpu, &out),
        &out_ref,
        2e-2,
    );
}

#[test]
fn attention_prefill_matches_cpu_at_model_dims() {
    let Some(gpu) = gpu("attention_prefill_model") else {
        return;
    };
    let mut rng = Rng::new("attention_prefill_model");
    // 67 and 130: partial query tiles and key tiles; the second chunk starts mid-tile; then a
    // single-token chunk.
    prefill_chunks_then_decode(
        &gpu,
        &Dims::qwen36_35b_a3b(),
        "model dims",
        &[67, 130, 1],
        &mut rng,
    );
}

#[test]
fn attention_prefill_matches_cpu_at_tiny_dims() {
    let Some(gpu) = gpu("attention_prefill_tiny") else {
        return;
    };
    let mut rng = Rng::new("attention_prefill_tiny");
    let tiny = tiny_fixture();
    prefill_chunks_then_decode(&gpu, &tiny, "tiny dims", &[1, 3, 67, 200], &mut rng);
    // Grouped-query: 3 query heads on each of 2 KV heads; chunks on tile boundaries.
    let gqa = Dims {
        attn_heads: 6,
        attn_kv_heads: 2,
        ..tiny
    };
    prefill_chunks_then_decode(
        &gpu,
        &gqa,
        "tiny dims, 3 heads per KV head",
        &[64, 32, 65],
        &mut rng,
    );
}

#[test]
fn attention_prefill_refuses_a_chunk_past_the_cache() {
    let Some(gpu) = gpu("attention_prefill_bounds") else {
        return;
    };
    let d = tiny_fixture();
    let k = Attention::load(&gpu, &d).unwrap();
    let (h, kvh, hd) = (d.attn_heads, d.attn_kv_heads, d.attn_head_dim);
    let t = |name: &str, dtype, shape: &[usize]| Tensor::new(&gpu, name, dtype, shape).unwrap();
    let (tokens, max_seq) = (8, 10);
    let proj = t("proj", DType::F32, &[tokens, d.attn_in_rows()]);
    let norm_w = t("norm", DType::BF16, &[hd]);
    let cache = t("cache", DType::BF16, &[kvh, max_seq, hd]);
    let q = t("q", DType::BF16, &[tokens, h * hd]);
    let out = t("out", DType::BF16, &[tokens, h * hd]);
    let err = k
        .prefill(&AttnPrefillArgs {
            proj: &proj.view(),
            q_norm: &norm_w.view(),
            k_norm: &norm_w.view(),
            k_cache: &cache.view(),
            v_cache: &cache.view(),
            q: &q.view(),
            out: &out.view(),
            start: 3,
            tokens,
            max_seq,
        })
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("8 tokens from position 3") && err.contains("10 positions"),
        "{err}"
    );
}

/// Prefill of one 8192-token chunk at the model dims: ms per layer and tensor-core TFLOP/s of
/// the causal attention (4 * T^2 / 2 * HD * H flops). Run on the H200 with --ignored.
#[test]
#[ignore]
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
    k.prefill(&args).unwrap();
    gpu.synchronize().unwrap();
    let runs = 5;
    gpu.profile_start();
    for _ in 0..runs {
        k.prefill(&args).unwrap();
    }
    let times = gpu.profile_finish().unwrap();
    let (prepare, flash) = (
        mean_ms(&times, "attn_prefill_prepare"),
        mean_ms(&times, "attn_prefill_flash"),
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
