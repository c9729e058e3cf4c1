//! The prefill's tensor-core products against the CPU reference: the dense GEMM at the model's
//! projection shapes, and the MoE block (routing, sort, grouped GEMMs, combine) over a chunk.
//! Fresh random inputs, NaN-poisoned outputs; bounds on max|gpu - cpu| / max|cpu|:
//! 1e-4 for f32 outputs of identical bf16 inputs, 1e-2 where the GPU rounds an intermediate
//! (the experts' SwiGLU output) to bf16.
//!
//! Needs a CUDA GPU and NVRTC; prints SKIPPED and passes where there is no driver.

mod common;

use common::*;
use lily_cpu::{linalg, moe};
use lily_cuda::dims::Dims;
use lily_cuda::kernels::gemm::{self, Gemm};
use lily_cuda::kernels::Out;
use lily_cuda::kernels::moe::{Moe, MoePrefillArgs, MoeScratch};
use lily_cuda::runtime::tensor::DType;

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
            linalg::matvec(
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
fn moe_prefill_matches_cpu_block_per_token() {
    let Some(gpu) = gpu("moe_prefill") else {
        return;
    };
    // Full hidden, top-8 and intermediate; 16 experts keep the host copy small and give each
    // expert ~75 rows at 150 tokens (one partial tile) and > 128 at 300 (two tiles).
    let d = Dims {
        experts: 16,
        ..Dims::qwen36_35b_a3b()
    };
    let gemm = Gemm::load(&gpu, &d).unwrap();
    let k = Moe::load(&gpu, &d).unwrap();
    let mut rng = Rng::new("moe_prefill");
    let (hid, top) = (d.hidden, d.top_k);
    let m = random_moe(&gpu, &mut rng, &d);
    let max_tokens = 300;
    let scratch = MoeScratch::new(&gpu, &d, max_tokens).unwrap();
    // The same scratch across calls: the planning kernel must leave it ready for the next layer.
    for tokens in [150, 1, 300, 7] {
        let xn = rng.vec_bf16(tokens * hid, 1.0);
        let resid = rng.vec(tokens * hid, 1.0);
        let mut expected = resid.clone();
        let mut out = vec![0.0; hid];
        for t in 0..tokens {
            moe::moe_block(&m.host, top, &xn[t * hid..(t + 1) * hid], &mut out);
            for (x, o) in expected[t * hid..(t + 1) * hid].iter_mut().zip(&out) {
                *x += o;
            }
        }
        let xn_d = upload(&gpu, "xn", DType::BF16, &[tokens, hid], &xn);
        let x_d = upload(&gpu, "x", DType::F32, &[tokens, hid], &resid);
        k.prefill(
            &gemm,
            &MoePrefillArgs {
                xn: &xn_d.view(),
                router: &m.router.view(),
                gate_up: &m.gate_up.view(),
                down: &m.down.view(),
                shared_gate_up: &m.shared_gate_up.view(),
                shared_down: &m.shared_down.view(),
                x: &x_d.view(),
                tokens,
            },
            &scratch,
        )
        .unwrap();
        // Compare the MoE's contribution, not the residual it is added to.
        let got: Vec<f32> = download(&gpu, &x_d)
            .iter()
            .zip(&resid)
            .map(|(a, b)| a - b)
            .collect();
        let want: Vec<f32> = expected.iter().zip(&resid).map(|(a, b)| a - b).collect();
        check(&format!("moe prefill {tokens} tokens"), &got, &want, 1e-2);
    }
}

#[test]
fn routing_matches_cpu_at_full_width_ties_included() {
    let Some(gpu) = gpu("routing") else {
        return;
    };
    // All 256 experts (8 per lane): the rows are built so that winners share lanes, tie
    // across lanes and within one, and sit next to -inf and signed zeros.
    let d = Dims::qwen36_35b_a3b();
    let (e, top) = (d.experts, d.top_k);
    let slots = top + 1;
    let k = Moe::load(&gpu, &d).unwrap();
    let mut rng = Rng::new("routing");
    let rows: Vec<Vec<f32>> = vec![
        rng.vec(e + 1, 4.0),
        vec![0.25; e + 1],
        // Few distinct values: many ties, broken by the lowest index.
        (0..=e).map(|i| ((i * 37) % 5) as f32 * 0.5).collect(),
        // Winners all in lane 5 (experts 5, 37, 69, ...), then in lane 6.
        (0..=e)
            .map(|i| {
                if i % 32 == 5 {
                    3.0 + (i / 32) as f32
                } else if i % 32 == 6 {
                    2.0
                } else {
                    -1.0
                }
            })
            .collect(),
        (0..=e)
            .map(|i| match i % 4 {
                0 => f32::NEG_INFINITY,
                1 => -0.0,
                2 => 0.0,
                _ => -1e-30,
            })
            .collect(),
        (0..=e).map(|i| (e - i) as f32 * 1e-3).collect(),
        rng.vec(e + 1, 1e-4).into_iter().map(|x| x + 50.0).collect(),
    ];
    let t = rows.len();
    let flat: Vec<f32> = rows.concat();
    let logits = upload(&gpu, "logits", DType::F32, &[t, e + 1], &flat);
    let ids = poisoned(&gpu, "ids", DType::I32, &[t * slots]);
    let weights = poisoned(&gpu, "weights", DType::F32, &[t * slots]);
    let counts = upload(&gpu, "counts", DType::I32, &[e + 1], &vec![0.0; e + 1]);
    k.route_rows(&logits.view(), &ids.view(), &weights.view(), &counts.view())
        .unwrap();
    let (got_ids, got_w) = (download(&gpu, &ids), download(&gpu, &weights));
    let mut want_counts = vec![0.0f32; e + 1];
    for (r, row) in rows.iter().enumerate() {
        let want = moe::route(&row[..e], top);
        let got: Vec<usize> = got_ids[r * slots..r * slots + top]
            .iter()
            .map(|&i| i as usize)
            .collect();
        let want_ids: Vec<usize> = want.iter().map(|&(i, _)| i).collect();
        assert_eq!(got, want_ids, "row {r}: expert ids");
        for (k, &(i, w)) in want.iter().enumerate() {
            let g = got_w[r * slots + k];
            assert!(
                (g - w).abs() <= 1e-6,
                "row {r}, expert {i}: weight {g} against {w}"
            );
            want_counts[i] += 1.0;
        }
        assert_eq!(
            got_ids[r * slots + top] as usize,
            e,
            "row {r}: the shared expert's id"
        );
        let gate = 1.0 / (1.0 + (-row[e]).exp());
        let g = got_w[r * slots + top];
        assert!(
            (g - gate).abs() <= 1e-6,
            "row {r}: shared gate {g} against {gate}"
        );
    }
    assert_eq!(
        download(&gpu, &counts),
        want_counts,
        "pairs counted per expert"
    );
}

/// Times the dense GEMM at the prefill's shapes for an 8K chunk and prints TFLOP/s.
/// `cargo test --release -p lily-cuda --test gpu_prefill_moe -- --ignored --nocapture`
#[test]
#[ignore]
fn bench_gemm_8k() {
    bench_gemm(8192);
}

/// The same for a 1K prompt, where out_proj and the router take the narrow tiles.
#[test]
#[ignore]
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
        gemm.run(&w.view(), &x.view(), &y.view(), Out::Write).unwrap();
        gpu.synchronize().unwrap();
        let reps = 10;
        let t0 = std::time::Instant::now();
        for _ in 0..reps {
            gemm.run(&w.view(), &x.view(), &y.view(), Out::Write).unwrap();
        }
        gpu.synchronize().unwrap();
        let s = t0.elapsed().as_secs_f64() / reps as f64;
        let tflops = 2.0 * (m * n * k) as f64 / s / 1e12;
        eprintln!(
            "gemm {name} {m}x{n}x{k}: {:.3} ms, {tflops:.1} TFLOP/s",
            s * 1e3
        );
    }
}

/// The MoE block of one layer at the model's dims for an 8K chunk (seeded uniform weights and
/// inputs, so the routing spreads over all experts): total and per kernel, with the grouped
/// GEMMs' rate counted over the real (token, expert) rows, not the padded tiles.
#[test]
#[ignore]
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
    let ms = mean_ms_of(&gpu, 10, run);
    assert!(
        download(&gpu, &x).iter().all(|v| v.is_finite()),
        "the benchmark's output has NaN or infinity"
    );
    eprintln!(
        "moe prefill, {tokens} tokens, {}: {ms:.3} ms per layer",
        gpu.name
    );
    gpu.profile_start();
    run();
    let times = gpu.profile_finish().unwrap();
    for (label, ms) in &times {
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
        let s = mean_ms(&times, kernel) as f64 / 1e3;
        eprintln!(
            "  {kernel}: {:.1} TFLOP/s over the real rows, {:.1} over the padded tiles",
            pairs * per_row / s / 1e12,
            padded * per_row / s / 1e12
        );
    }
}
