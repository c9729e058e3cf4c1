//! Gated attention on the GPU against the CPU reference (lily-cpu: attention, norm, rope):
//! decode's split-KV attention over short and split contexts, and the prefill (norm + RoPE +
//! cache write for a chunk, causal flash attention on the tensor cores) chunk after chunk into
//! one NaN-poisoned cache, then one decode step on top of the prefilled cache.
//! Bounds on max|gpu - cpu| / max|cpu|: bf16 outputs 2e-2 (the prefill rounds q to bf16 for
//! the tensor cores and so are the softmax weights), f32 q of decode 1e-4, bf16 q and caches
//! of the prefill 1e-2 (one rounding).
//!
//! Needs a CUDA GPU and NVRTC; prints SKIPPED and passes where there is no driver.

mod common;

use std::sync::Arc;
use common::*;
use lily_cpu::activation::sigmoid;
use lily_cpu::{attention, norm, rope};
use lily_cuda::dims::{ATTN_SPLITS, Dims};
use lily_cuda::kernels::attention::{Attention, AttnDecodeArgs, AttnPrefillArgs};
use lily_cuda::runtime::driver::{Function, Gpu, KernelArgs};
use lily_cuda::runtime::nvrtc::{Nvrtc, TARGET_ARCH};
use lily_cuda::runtime::tensor::{DType, Tensor};

/// One decode step of the attention mixer at each context length against lily-cpu (a fresh
/// random cache each time, the new k/v written at the last position by the kernel). The output
/// bound is 2e-2: q and the softmax weights are rounded to bf16 for the tensor cores, and the
/// output is bf16. At the last length the step runs twice and must give the same bits.
/// `late`: the position is first one less and `write_late` sets it just before the step.
fn attention_decode_matches_cpu(
    gpu: &Arc<Gpu>,
    d: &Dims,
    what: &str,
    lens: &[usize],
    late: Option<&Function>,
) {
    let k = Attention::load(gpu, d).unwrap();
    let mut rng = Rng::new(what);
    let (h, kvh, hd) = (d.attn_heads, d.attn_kv_heads, d.attn_head_dim);
    let inv_freq = rope::inverse_frequencies(d.rope_dim, d.rope_theta as f64);
    for (n, &len) in lens.iter().enumerate() {
        let p = len - 1;
        // Not a round number, so a wrong per-head cache stride shows.
        let max_seq = len + 5;
        let proj = rng.vec(d.attn_in_rows(), 1.0);
        let qn = rng.vec_bf16(hd, 0.1);
        let kn = rng.vec_bf16(hd, 0.1);
        // Cache [KVH, max_seq, HD] with random history before p.
        let mut kc = rng.vec_bf16(kvh * max_seq * hd, 1.0);
        let mut vc = rng.vec_bf16(kvh * max_seq * hd, 1.0);
        let kcd = upload(gpu, "k_cache", DType::BF16, &[kvh, max_seq, hd], &kc);
        let vcd = upload(gpu, "v_cache", DType::BF16, &[kvh, max_seq, hd], &vc);
        let projd = upload(gpu, "proj", DType::F32, &[d.attn_in_rows()], &proj);
        let qnd = upload(gpu, "q_norm", DType::BF16, &[hd], &qn);
        let knd = upload(gpu, "k_norm", DType::BF16, &[hd], &kn);
        let first = if late.is_some() { p - 1 } else { p };
        let posd = upload(gpu, "pos", DType::I32, &[1], &[first as f32]);
        let q = poisoned(gpu, "q", DType::F32, &[h * hd]);
        let part_acc = poisoned(gpu, "part_acc", DType::F32, &[h, ATTN_SPLITS, hd]);
        let part_ml = poisoned(gpu, "part_ml", DType::F32, &[h, ATTN_SPLITS, 2]);
        let out = poisoned(gpu, "out", DType::BF16, &[h * hd]);
        let (projv, qnv, knv, kcv, vcv, qv, pav, pmv, outv, posv) = (
            projd.view(),
            qnd.view(),
            knd.view(),
            kcd.view(),
            vcd.view(),
            q.view(),
            part_acc.view(),
            part_ml.view(),
            out.view(),
            posd.view(),
        );
        let args = AttnDecodeArgs {
            proj: &projv,
            q_norm: &qnv,
            k_norm: &knv,
            k_cache: &kcv,
            v_cache: &vcv,
            q: &qv,
            part_acc: &pav,
            part_ml: &pmv,
            out: &outv,
            pos: &posv,
            max_seq,
        };
        if let Some(f) = late {
            let mut a = KernelArgs::new().ptr(posd.ptr()).i32(p as i32).u64(200_000);
            gpu.launch(f, (1, 1, 1), 32, 0, &mut a).unwrap();
        }
        k.decode(&args).unwrap();
        let got = download(gpu, &out);

        // CPU: norm + RoPE the new q and k, put k and v (bf16, as cached) at p, attend, gate.
        let mut qv: Vec<f32> = (0..h)
            .flat_map(|i| proj[i * 2 * hd..i * 2 * hd + hd].to_vec())
            .collect();
        norm::rms_norm_zero_centred_rows(&mut qv, &qn, d.eps);
        qv.chunks_mut(hd)
            .for_each(|x| rope::apply_rope(x, p, &inv_freq));
        let q_rows = 2 * h * hd;
        for j in 0..kvh {
            let mut kn_row = proj[q_rows + j * hd..q_rows + (j + 1) * hd].to_vec();
            norm::rms_norm_zero_centred_rows(&mut kn_row, &kn, d.eps);
            rope::apply_rope(&mut kn_row, p, &inv_freq);
            for i in 0..hd {
                kc[(j * max_seq + p) * hd + i] = round_bf16(kn_row[i]);
                vc[(j * max_seq + p) * hd + i] = round_bf16(proj[q_rows + kvh * hd + j * hd + i]);
            }
        }
        // The reference's RoPE angle is p * inv_freq in f32, as transformers computes it: its
        // absolute error grows like p * 2^-24 (1.2e-3 at 20,000); the kernel's is in f64.
        check(
            &format!("{what}: attention q (norm + rope) at {p}"),
            &download(gpu, &q),
            &qv,
            1e-4f32.max(p as f32 * 1.2e-7),
        );
        // The CPU cache layout is position-major [S, Hkv, D].
        let to_cpu = |c: &[f32]| -> Vec<f32> {
            (0..len)
                .flat_map(|s| {
                    (0..kvh).flat_map(move |j| {
                        c[(j * max_seq + s) * hd..(j * max_seq + s + 1) * hd].to_vec()
                    })
                })
                .collect()
        };
        let mut expected = vec![0.0; h * hd];
        let shape = attention::AttentionShape {
            num_heads: h,
            num_kv_heads: kvh,
            head_dim: hd,
        };
        attention::causal_attention(
            shape,
            &qv,
            &to_cpu(&kc),
            &to_cpu(&vc),
            1.0 / (hd as f32).sqrt(),
            &mut expected,
        );
        for i in 0..h {
            for j in 0..hd {
                expected[i * hd + j] *= lily_cpu::activation::sigmoid(proj[i * 2 * hd + hd + j]);
            }
        }
        check(
            &format!("{what}: attention decode, context {len}"),
            &got,
            &expected,
            2e-2,
        );
        if n + 1 == lens.len() {
            k.decode(&args).unwrap();
            let again = download(gpu, &out);
            assert!(
                got.iter()
                    .zip(&again)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "{what}: attention decode at context {len} differs between two runs"
            );
        }
    }
}

#[test]
fn attention_decode_matches_cpu_over_short_and_split_contexts() {
    let Some(gpu) = gpu("attention") else { return };
    // 1, 5, 33: one split, tiles of 16 keys cut short, warps without a tile; 3000: 47 splits;
    // 4097: 65 splits of ~63 keys; 20011: all 66 splits of ~303 keys, so each warp's ring of
    // tiles wraps several times and the last tile is partial.
    attention_decode_matches_cpu(
        &gpu,
        &Dims::qwen36_35b_a3b(),
        "attention",
        &[1, 5, 33, 3000, 4097, 20011],
        None,
    );
}

#[test]
fn attention_decode_takes_the_position_written_while_it_waited() {
    let Some(gpu) = gpu("attention_late") else {
        return;
    };
    let cubin = Nvrtc::get()
        .unwrap()
        .compile("write_late.cu", WRITE_LATE, TARGET_ARCH, &[])
        .unwrap();
    let module = gpu.load_module(&cubin).unwrap();
    let write_late = module.function("write_late").unwrap();
    // 33: the new key in a prologue tile; 1025: the guess (1024) has one split fewer.
    attention_decode_matches_cpu(
        &gpu,
        &Dims::qwen36_35b_a3b(),
        "attention, late position",
        &[33, 1025, 4097],
        Some(&write_late),
    );
}

#[test]
fn attention_decode_matches_cpu_at_tiny_dims() {
    let Some(gpu) = gpu("attention_tiny") else {
        return;
    };
    // Head dim 32 and 4 query heads on one KV head: half the mma rows of the group are empty.
    let tiny = tiny_fixture();
    attention_decode_matches_cpu(
        &gpu,
        &tiny,
        "attention_tiny",
        &[1, 17, 200, 4097, 20011],
        None,
    );
    // 3 query heads on each of 2 KV heads: an odd group, and a second KV head's cache rows.
    let gqa = Dims {
        attn_heads: 6,
        attn_kv_heads: 2,
        ..tiny
    };
    attention_decode_matches_cpu(&gpu, &gqa, "attention_tiny_gqa", &[2, 100, 5000], None);
}

/// The attention dims of a tiny test checkpoint (head dim 32, 4 query heads on 1 KV head).
fn tiny_fixture() -> Dims {
    Dims::from_config(&lily_model::Config::load(&fixture()).unwrap())
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
