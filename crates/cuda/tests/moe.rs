//! The MoE block on the GPU against the CPU reference (lily-cpu: moe): decode's three launches
//! (router with routing, the experts' gate|up, their down into the residual), and the
//! prefill's routing, sort, grouped GEMMs and combine over a chunk.
//! Fresh random inputs, NaN-poisoned outputs; bounds on max|gpu - cpu| / max|cpu|: 1e-4 for
//! f32 outputs of identical bf16 inputs, 1e-2 where the GPU rounds an intermediate (the
//! experts' SwiGLU output) to bf16.
//!
//! Needs a CUDA GPU and NVRTC; prints SKIPPED and passes where there is no driver.

mod common;

use common::*;
use lily_cpu::{moe, norm};
use lily_cuda::dims::Dims;
use lily_cuda::kernels::gemm::Gemm;
use lily_cuda::kernels::moe::{Moe, MoeArgs, MoePrefillArgs, MoeScratch};
use lily_cuda::runtime::tensor::DType;
use lily_cuda::WeightFormat;

#[test]
fn moe_matches_cpu_block() {
    moe_matches_cpu("moe", WeightFormat::Bf16, 1e-3);
}

/// FP8 experts (e4m3 with 128 x 128 block scales) against the reference over the same
/// dequantised weights: the products sum each 16-value chunk in f16 pairs.
#[test]
fn fp8_moe_matches_cpu_block_of_the_dequantised_weights() {
    let fp8 = WeightFormat::Fp8 {
        block_rows: 128,
        block_cols: 128,
    };
    moe_matches_cpu("moe_fp8", fp8, 3e-3);
}

fn moe_matches_cpu(test: &str, format: WeightFormat, bound: f32) {
    let Some(gpu) = gpu(test) else { return };
    // Full hidden, top-8 and intermediate; 16 experts keep the host-side copy small.
    let d = Dims {
        experts: 16,
        weights: format,
        ..Dims::qwen36_35b_a3b()
    };
    let k = Moe::load(&gpu, &d).unwrap();
    let mut rng = Rng::new(test);
    let (e, hid, i, top) = (d.experts, d.hidden, d.moe_inter, d.top_k);
    let m = random_moe(&gpu, &mut rng, &d);
    let resid = rng.vec(hid, 3.0);
    let post_norm = rng.vec_bf16(hid, 0.1);
    let mut x = vec![0.0; hid];
    norm::rms_norm_zero_centred(&resid, &post_norm, d.eps, &mut x);
    let x: Vec<f32> = x.into_iter().map(round_bf16).collect();
    let mut expected = vec![0.0; hid];
    moe::moe_block(&m.host, top, &x, &mut expected);

    let residual = upload(&gpu, "residual", DType::F32, &[hid], &resid);
    let xn = poisoned(&gpu, "xn", DType::BF16, &[hid]);
    let done = upload(&gpu, "done", DType::U64, &[1], &[0.0]);
    let post_norm = upload(&gpu, "post_norm", DType::BF16, &[hid], &post_norm);
    // Twice: the router's block counter must be back at zero after the first layer.
    for layer in 0..2 {
        let before = download(&gpu, &residual);
        k.run(&MoeArgs {
            router: &m.router.view(),
            norm: &post_norm.view(),
            logits: &poisoned(&gpu, "logits", DType::F32, &[e + 1]).view(),
            done: &done.view(),
            gate_up: &m.gate_up.view(),
            down: &m.down.view(),
            shared_gate_up: &m.shared_gate_up.view(),
            shared_down: &m.shared_down.view(),
            x: &xn.view(),
            ids: &poisoned(&gpu, "ids", DType::I32, &[top]).view(),
            weights: &poisoned(&gpu, "weights", DType::F32, &[top + 1]).view(),
            h: &poisoned(&gpu, "h", DType::F32, &[top + 1, i]).view(),
            shared_out: &poisoned(&gpu, "shared_out", DType::F32, &[hid]).view(),
            residual: &residual.view(),
            ahead: Some(&m.gate_up.w.view().at(0)),
        })
        .unwrap();
        if layer == 0 {
            check("moe normed input", &download(&gpu, &xn), &x, 1e-2);
            let got: Vec<f32> = download(&gpu, &residual)
                .iter()
                .zip(&before)
                .map(|(a, b)| a - b)
                .collect();
            // Inputs are identical bf16 values; only summation order (and a rare bf16 rounding
            // of the normed input landing the other way) differ.
            check(
                &format!("{test} block (router, 8 experts + shared)"),
                &got,
                &expected,
                bound,
            );
        }
        assert_eq!(
            download(&gpu, &done),
            vec![0.0],
            "router block counter reset after layer {layer}"
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
                gate_up: &m.gate_up.w.view(),
                down: &m.down.w.view(),
                shared_gate_up: &m.shared_gate_up.w.view(),
                shared_down: &m.shared_down.w.view(),
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
