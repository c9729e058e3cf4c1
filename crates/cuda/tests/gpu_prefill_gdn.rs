//! The Gated DeltaNet prefill (Gdn::prefill) against the CPU reference (lily-cpu), chunk after
//! chunk from a random initial state, then one step of the existing decode kernel from where the
//! prefill left the state and the conv ring. Bounds on max|gpu - cpu| / max|cpu|:
//! - out (bf16): 2e-2 (one bf16 rounding, and the CPU's chunked form sums in another order);
//! - recurrent state and the decode read-out (f32): 1e-3 (fast-math exp/sigmoid in the gating;
//!   the GPU's chunked delta rule multiplies split operands, 3xTF32 or three bf16 passes on
//!   hi/lo halves (~2^-16 per product: the state ~1e-5 off, measured), where plain TF32 would
//!   already be ~5e-4 off).
//!
//! The conv ring starts NaN-poisoned: positions before 0 must read as zero, never from the ring.
//! Needs a CUDA GPU and NVRTC; prints SKIPPED and passes where there is no driver.

mod common;

use std::sync::Arc;

use common::*;
use lily_cpu::{gdn, norm};
use lily_cuda::dims::Dims;
use lily_cuda::runtime::driver::Gpu;
use lily_cuda::kernels::gdn::{Gdn, GdnDecodeArgs, GdnPrefillArgs, GdnPrefillScratch};
use lily_cuda::runtime::tensor::{DType, Tensor};

/// The full model's dims with other GDN head shapes (the tiny checkpoints' among them).
fn gdn_dims(
    key_heads: usize,
    value_heads: usize,
    key_dim: usize,
    value_dim: usize,
    conv: usize,
) -> Dims {
    Dims {
        gdn_key_heads: key_heads,
        gdn_value_heads: value_heads,
        gdn_key_dim: key_dim,
        gdn_value_dim: value_dim,
        conv_kernel: conv,
        ..Dims::qwen36_35b_a3b()
    }
}

/// One layer's GDN mixer on the CPU (no projections), continuing across calls the way
/// crates/cpu/src/model.rs runs it: chunked delta rule for several tokens, recurrent for one.
struct CpuGdn {
    d: Dims,
    conv_w: Vec<f32>,
    a_log: Vec<f32>,
    dt_bias: Vec<f32>,
    norm_w: Vec<f32>,
    conv_state: Vec<f32>,
    state: Vec<f32>,
}

impl CpuGdn {
    /// Runs `proj` [T, gdn_in_rows]; returns the read-out before the gated norm and after it,
    /// both [T, V * VD].
    fn run(&mut self, proj: &[f32]) -> (Vec<f32>, Vec<f32>) {
        let d = &self.d;
        let (c, rows, v, vd) = (
            d.gdn_conv_channels(),
            d.gdn_in_rows(),
            d.gdn_value_heads,
            d.gdn_value_dim,
        );
        let kd = d.gdn_key_heads * d.gdn_key_dim;
        let t_len = proj.len() / rows;
        let x: Vec<f32> = proj.chunks(rows).flat_map(|r| r[..c].to_vec()).collect();
        let mut conv = vec![0.0; t_len * c];
        gdn::causal_conv1d_silu(&x, &self.conv_w, &mut self.conv_state, &mut conv);
        let q: Vec<f32> = conv.chunks(c).flat_map(|r| r[..kd].to_vec()).collect();
        let k: Vec<f32> = conv
            .chunks(c)
            .flat_map(|r| r[kd..2 * kd].to_vec())
            .collect();
        let vv: Vec<f32> = conv.chunks(c).flat_map(|r| r[2 * kd..].to_vec()).collect();
        let b_at = c + d.gdn_out();
        let b: Vec<f32> = proj
            .chunks(rows)
            .flat_map(|r| r[b_at..b_at + v].to_vec())
            .collect();
        let a: Vec<f32> = proj
            .chunks(rows)
            .flat_map(|r| r[b_at + v..b_at + 2 * v].to_vec())
            .collect();
        let (mut g, mut beta) = (vec![0.0; t_len * v], vec![0.0; t_len * v]);
        gdn::decay_and_beta(&a, &b, &self.a_log, &self.dt_bias, &mut g, &mut beta);
        let shape = gdn::GdnShape {
            num_key_heads: d.gdn_key_heads,
            num_value_heads: v,
            key_dim: d.gdn_key_dim,
            value_dim: vd,
        };
        let input = gdn::GdnInputs {
            q: &q,
            k: &k,
            v: &vv,
            g: &g,
            beta: &beta,
        };
        let mut o = vec![0.0; t_len * v * vd];
        if t_len == 1 {
            gdn::gated_delta_rule_recurrent(shape, &input, &mut self.state, &mut o);
        } else {
            gdn::gated_delta_rule_chunked(shape, &input, &mut self.state, &mut o);
        }
        let mut gated = vec![0.0; t_len * v * vd];
        for (t, row) in proj.chunks(rows).enumerate() {
            for h in 0..v {
                let at = (t * v + h) * vd;
                norm::gated_rms_norm(
                    &o[at..at + vd],
                    &row[c + h * vd..c + (h + 1) * vd],
                    &self.norm_w,
                    d.eps,
                    &mut gated[at..at + vd],
                );
            }
        }
        (o, gated)
    }
}

/// One layer's parameters and recurrent tensors on the GPU.
struct Layer {
    conv_w: Tensor,
    ring: Tensor,
    a_log: Tensor,
    dt_bias: Tensor,
    norm: Tensor,
    state: Tensor,
}

/// Random parameters and initial state, the same on both sides; the ring starts poisoned.
fn layer(gpu: &Arc<Gpu>, d: &Dims, rng: &mut Rng) -> (Layer, CpuGdn) {
    let (c, kk, v, vd) = (
        d.gdn_conv_channels(),
        d.conv_kernel,
        d.gdn_value_heads,
        d.gdn_value_dim,
    );
    let cpu = CpuGdn {
        d: d.clone(),
        conv_w: rng.vec_bf16(c * kk, 0.5),
        a_log: rng.vec(v, 1.0),
        dt_bias: rng.vec(v, 1.0),
        norm_w: rng.vec_bf16(vd, 1.0),
        conv_state: vec![0.0; c * (kk - 1)],
        state: rng.vec(v * d.gdn_key_dim * vd, 0.5),
    };
    let gpu_layer = Layer {
        conv_w: upload(gpu, "conv_w", DType::BF16, &[c, kk], &cpu.conv_w),
        ring: poisoned(gpu, "conv_ring", DType::F32, &[kk, c]),
        a_log: upload(gpu, "a_log", DType::F32, &[v], &cpu.a_log),
        dt_bias: upload(gpu, "dt_bias", DType::F32, &[v], &cpu.dt_bias),
        norm: upload(gpu, "norm", DType::BF16, &[vd], &cpu.norm_w),
        // The pair decode reads and writes by position parity (gdn.cu); the prefills below
        // work in place on the first half, as the backend's do from an even position.
        state: upload(
            gpu,
            "state",
            DType::F32,
            &[2, v, d.gdn_key_dim, vd],
            &[cpu.state.clone(), cpu.state.clone()].concat(),
        ),
    };
    (gpu_layer, cpu)
}

/// Prefills `chunks` one after the other, then decodes one more token, checking each against
/// the CPU.
fn prefill_then_decode(test: &str, d: &Dims, chunks: &[usize]) {
    let Some(gpu) = gpu(test) else { return };
    let kernels = Gdn::load(&gpu, d).unwrap();
    let mut rng = Rng::new(test);
    let (l, mut cpu) = layer(&gpu, d, &mut rng);
    let (rows, out_w) = (d.gdn_in_rows(), d.gdn_out());
    let scratch = GdnPrefillScratch::new(&gpu, d, *chunks.iter().max().unwrap()).unwrap();
    let mut start = 0;
    for &tokens in chunks {
        let proj = rng.vec(tokens * rows, 1.0);
        let projd = upload(&gpu, "proj", DType::F32, &[tokens, rows], &proj);
        let out = poisoned(&gpu, "out", DType::BF16, &[tokens, out_w]);
        kernels
            .prefill(&GdnPrefillArgs {
                proj: &projd.view(),
                conv_w: &l.conv_w.view(),
                conv_ring: &l.ring.view(),
                a_log: &l.a_log.view(),
                dt_bias: &l.dt_bias.view(),
                norm: &l.norm.view(),
                state: &l.state.at(0),
                out: &out.view(),
                scratch: &scratch,
                start,
                tokens,
            })
            .unwrap();
        let (_, gated) = cpu.run(&proj);
        let what = format!("{test}: prefill of {tokens} tokens at {start}");
        check(&format!("{what}, out"), &download(&gpu, &out), &gated, 2e-2);
        let n = cpu.state.len();
        check(
            &format!("{what}, state"),
            &download(&gpu, &l.state)[..n],
            &cpu.state,
            1e-3,
        );
        start += tokens;
    }
    // The backend moves the prefill's state to the half of the next position (prefill.rs).
    let n = cpu.state.len();
    if start % 2 == 1 {
        gpu.copy_dtod(l.state.at(1).ptr, l.state.at(0).ptr, 4 * n).unwrap();
    }

    let proj = rng.vec(rows, 1.0);
    let projd = upload(&gpu, "proj", DType::F32, &[rows], &proj);
    let o = poisoned(&gpu, "o", DType::F32, &[out_w]);
    kernels
        .decode(&GdnDecodeArgs {
            proj: &projd.view(),
            conv_w: &l.conv_w.view(),
            conv_ring: &l.ring.view(),
            a_log: &l.a_log.view(),
            dt_bias: &l.dt_bias.view(),
            state: &l.state.view(),
            out: &o.view(),
            pos: &upload(&gpu, "pos", DType::I32, &[1], &[start as f32]).view(),
            pos_lag: 0,
        })
        .unwrap();
    let normed = poisoned(&gpu, "normed", DType::BF16, &[out_w]);
    kernels
        .gated_norm(&o.view(), &projd.view(), &l.norm.view(), &normed.view())
        .unwrap();
    let (o_cpu, gated) = cpu.run(&proj);
    let what = format!("{test}: decode at {start} after the prefill");
    check(
        &format!("{what}, read-out"),
        &download(&gpu, &o),
        &o_cpu,
        1e-3,
    );
    check(
        &format!("{what}, out"),
        &download(&gpu, &normed),
        &gated,
        2e-2,
    );
    let next = (start + 1) % 2 * n;
    check(
        &format!("{what}, state"),
        &download(&gpu, &l.state)[next..next + n],
        &cpu.state,
        1e-3,
    );
}

#[test]
fn gdn_prefill_matches_cpu_at_model_dims_and_decode_continues() {
    // A one-token chunk between two longer ones; 67 and 130 are not multiples of any tile.
    prefill_then_decode("gdn_prefill_model", &Dims::qwen36_35b_a3b(), &[67, 1, 130]);
}

#[test]
fn gdn_prefill_matches_cpu_over_many_chunks_of_the_delta_rule() {
    // 300 tokens after 67: four full 64-token chunks and a partial one, from a state that a
    // partial chunk left; the state's error would compound from chunk to chunk.
    prefill_then_decode(
        "gdn_prefill_model_long",
        &Dims::qwen36_35b_a3b(),
        &[67, 300],
    );
    // Exactly one chunk, then exactly two: no partial chunk at all.
    prefill_then_decode(
        "gdn_prefill_tiny_whole_chunks",
        &gdn_dims(2, 4, 16, 16, 4),
        &[64, 128],
    );
}

#[test]
fn gdn_prefill_matches_cpu_at_tiny_dims_and_decode_continues() {
    // linear3_full1's GDN: chunks shorter than the conv kernel, so the second reads the ring
    // the first wrote and the third reads across both.
    prefill_then_decode("gdn_prefill_tiny", &gdn_dims(2, 4, 16, 16, 4), &[1, 3, 200]);
    // full_first_official's: one key head for three value heads, key dim 24, conv kernel 3.
    prefill_then_decode("gdn_prefill_kd24", &gdn_dims(1, 3, 24, 16, 3), &[2, 67]);
    // two_full_bf16's: value dim 8, narrower than a block's columns.
    prefill_then_decode("gdn_prefill_vd8", &gdn_dims(2, 4, 16, 8, 4), &[5, 64]);
}

#[test]
fn gdn_prefill_refuses_a_chunk_larger_than_its_scratch() {
    let Some(gpu) = gpu("gdn_prefill_too_long") else {
        return;
    };
    let d = gdn_dims(2, 4, 16, 16, 4);
    let kernels = Gdn::load(&gpu, &d).unwrap();
    let mut rng = Rng::new("gdn_prefill_too_long");
    let (l, _) = layer(&gpu, &d, &mut rng);
    let scratch = GdnPrefillScratch::new(&gpu, &d, 4).unwrap();
    let proj = poisoned(&gpu, "proj", DType::F32, &[5, d.gdn_in_rows()]);
    let out = poisoned(&gpu, "out", DType::BF16, &[5, d.gdn_out()]);
    let err = kernels
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
            tokens: 5,
        })
        .unwrap_err()
        .to_string();
    assert!(err.contains("5 tokens") && err.contains("holds 4"), "{err}");
}

/// The prefill of one layer at the model's dims for an 8K chunk: total and per kernel.
#[test]
#[ignore]
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
    let ms = mean_ms_of(&gpu, 10, run);
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
    gpu.profile_start();
    run();
    for (label, ms) in gpu.profile_finish().unwrap() {
        eprintln!("  {label}: {ms:.3} ms");
    }
}
