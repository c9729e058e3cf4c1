//! Each kernel family against the CPU reference (lily-cpu) on fresh random inputs, with outputs
//! poisoned (NaN) before the run. Bounds are on max|gpu - cpu| / max|cpu|:
//! - f32 outputs from identical bf16 inputs: 1e-4 (only the summation order differs);
//! - bf16 outputs: 1e-2 (one bf16 rounding is 2^-9 relative);
//! - recurrent state after several steps: 1e-3 (fast-math exp/sigmoid in the gating).
//!
//! Needs a CUDA GPU and NVRTC; prints SKIPPED and passes where there is no driver.

mod common;

use std::sync::Arc;

use common::*;
use lily_cpu::{attention, gdn, linalg, moe, norm, rope};
use lily_cuda::dims::{Dims, ATTN_SPLITS};
use lily_cuda::runtime::driver::{Function, Gpu, KernelArgs};
use lily_cuda::kernels::attention::{Attention, AttnDecodeArgs};
use lily_cuda::kernels::norm::Norm;
use lily_cuda::kernels::gdn::{Gdn, GdnDecodeArgs};
use lily_cuda::kernels::gemv::Gemv;
use lily_cuda::kernels::Out;
use lily_cuda::kernels::moe::{Moe, MoeArgs};
use lily_cuda::kernels::sampling::{Sampling, RULE_BYTES};
use lily_cuda::runtime::nvrtc::{Nvrtc, TARGET_ARCH};
use lily_cuda::runtime::tensor::{DType, Tensor};

#[test]
fn gemv_matches_cpu_matvec_at_model_shapes() {
    let Some(gpu) = gpu("gemv") else { return };
    let dims = Dims::qwen36_35b_a3b();
    let gemv = Gemv::load(&gpu, &dims).unwrap();
    let mut rng = Rng::new("gemv");
    // GDN out_proj and attention o_proj, and row counts that leave a block partly empty.
    for (rows, cols) in [
        (2048, dims.gdn_out()),
        (2048, dims.attn_out()),
        (257, dims.gdn_out()),
        (1031, dims.attn_out()),
    ] {
        let w = rng.vec_bf16(rows * cols, 1.0 / (cols as f32).sqrt());
        let x = rng.vec_bf16(cols, 1.0);
        let mut expected = vec![0.0; rows];
        linalg::matvec(&host_bf16("w", vec![rows, cols], &w), &x, &mut expected);
        let wd = upload(&gpu, "w", DType::BF16, &[rows, cols], &w);
        let xd = upload(&gpu, "x", DType::BF16, &[cols], &x);
        let y = poisoned(&gpu, "y", DType::F32, &[rows]);
        gemv.run(&wd.view(), &xd.view(), &y.view(), Out::Write).unwrap();
        check(
            &format!("gemv {rows}x{cols}"),
            &download(&gpu, &y),
            &expected,
            1e-4,
        );
        // Accumulate: the residual add of the output projections.
        let r = rng.vec(rows, 1.0);
        let y = upload(&gpu, "y", DType::F32, &[rows], &r);
        gemv.run(&wd.view(), &xd.view(), &y.view(), Out::Add).unwrap();
        let sum: Vec<f32> = expected.iter().zip(&r).map(|(a, b)| a + b).collect();
        check(
            &format!("gemv {rows}x{cols} accumulate"),
            &download(&gpu, &y),
            &sum,
            1e-4,
        );
    }
}

/// The input a normed product multiplies: the CPU's zero-centred RMSNorm of `resid`, rounded to
/// bf16 as the kernels stage it.
fn normed_bf16(resid: &[f32], norm_w: &[f32], eps: f32) -> Vec<f32> {
    let mut xn = vec![0.0; resid.len()];
    norm::rms_norm_zero_centred(resid, norm_w, eps, &mut xn);
    xn.into_iter().map(round_bf16).collect()
}

#[test]
fn gemv_with_fused_rmsnorm_matches_cpu_norm_then_matvec() {
    let Some(gpu) = gpu("gemv_normed") else {
        return;
    };
    let dims = Dims::qwen36_35b_a3b();
    let gemv = Gemv::load(&gpu, &dims).unwrap();
    let mut rng = Rng::new("gemv_normed");
    let (rows, h) = (dims.gdn_in_rows(), dims.hidden);
    let w = rng.vec_bf16(rows * h, 1.0 / (h as f32).sqrt());
    let resid = rng.vec(h, 4.0);
    let norm_w = rng.vec_bf16(h, 0.1);
    let xn = normed_bf16(&resid, &norm_w, dims.eps);
    let mut expected = vec![0.0; rows];
    linalg::matvec(&host_bf16("w", vec![rows, h], &w), &xn, &mut expected);
    let y = poisoned(&gpu, "y", DType::F32, &[rows]);
    let xn_out = poisoned(&gpu, "xn", DType::BF16, &[h]);
    gemv.run_normed(
        &upload(&gpu, "w", DType::BF16, &[rows, h], &w).view(),
        &upload(&gpu, "resid", DType::F32, &[h], &resid).view(),
        &upload(&gpu, "norm_w", DType::BF16, &[h], &norm_w).view(),
        Some(&xn_out.view()),
        &y.view(),
    )
    .unwrap();
    check(
        "gemv with fused rmsnorm: normed input",
        &download(&gpu, &xn_out),
        &xn,
        1e-2,
    );
    // A bf16 rounding of the normed input may land on the other side: one ulp on a few inputs.
    check(
        "gemv with fused rmsnorm",
        &download(&gpu, &y),
        &expected,
        1e-3,
    );
}

/// A decode step's first product takes the token at ids[pos] from the embedding table as its
/// input and writes it out as the residual stream; an id outside the table gives NaN.
#[test]
fn first_product_takes_the_token_embedding_as_its_input() {
    let Some(gpu) = gpu("embed_normed") else {
        return;
    };
    let dims = Dims {
        vocab: 100,
        ..Dims::qwen36_35b_a3b()
    };
    let gemv = Gemv::load(&gpu, &dims).unwrap();
    let mut rng = Rng::new("embed_normed");
    let (rows, h) = (1031, dims.hidden);
    let table = rng.vec_bf16(dims.vocab * h, 1.0);
    let w = rng.vec_bf16(rows * h, 1.0 / (h as f32).sqrt());
    let norm_w = rng.vec_bf16(h, 0.1);
    let table_d = upload(&gpu, "table", DType::BF16, &[dims.vocab, h], &table);
    let w_d = upload(&gpu, "w", DType::BF16, &[rows, h], &w);
    let norm_d = upload(&gpu, "norm_w", DType::BF16, &[h], &norm_w);
    let ids = upload(&gpu, "ids", DType::I32, &[4], &[3.0, 57.0, 100.0, -1.0]);
    for (p, token) in [(1, Some(57)), (0, Some(3)), (2, None), (3, None)] {
        let pos = upload(&gpu, "pos", DType::I32, &[1], &[p as f32]);
        let x = poisoned(&gpu, "x", DType::F32, &[h]);
        let y = poisoned(&gpu, "y", DType::F32, &[rows]);
        gemv.run_embed_normed(
            &w_d.view(),
            &table_d.view(),
            &ids.view(),
            &pos.view(),
            &x.view(),
            &norm_d.view(),
            &y.view(),
        )
        .unwrap();
        let (got_x, got_y) = (download(&gpu, &x), download(&gpu, &y));
        let Some(t) = token else {
            assert!(got_x.iter().all(|v| v.is_nan()), "position {p}: x is NaN");
            assert!(got_y.iter().all(|v| v.is_nan()), "position {p}: y is NaN");
            continue;
        };
        let row = &table[t * h..(t + 1) * h];
        assert_eq!(got_x, row, "position {p}: x is token {t}'s embedding");
        let xn = normed_bf16(row, &norm_w, dims.eps);
        let mut expected = vec![0.0; rows];
        linalg::matvec(&host_bf16("w", vec![rows, h], &w), &xn, &mut expected);
        check(
            &format!("embedded product at position {p}"),
            &got_y,
            &expected,
            1e-3,
        );
    }
}

/// lm_head with the final norm, and the greedy pick it folds in: the largest logit, the lowest
/// id of a tie, NaN left out; finish_step then makes the pick the next input.
#[test]
fn lm_head_with_its_norm_and_greedy_pick_matches_cpu() {
    let Some(gpu) = gpu("lm_head") else {
        return;
    };
    let dims = Dims::qwen36_35b_a3b();
    let gemv = Gemv::load(&gpu, &dims).unwrap();
    let sampling = Sampling::load(&gpu, &dims).unwrap();
    let mut rng = Rng::new("lm_head");
    let h = dims.hidden;
    // Fewer rows than the grid's warps, and more (not a multiple of them).
    for rows in [64, 1025, 30_011] {
        let mut w = rng.vec_bf16(rows * h, 1.0 / (h as f32).sqrt());
        let resid = rng.vec(h, 4.0);
        let norm_w = rng.vec_bf16(h, 0.1);
        let xn = normed_bf16(&resid, &norm_w, dims.eps);
        // The largest logit twice (the same weights: a tie the lower id wins, across warps
        // and, at 30,011 rows, blocks) and a NaN row (left out).
        let (lo, hi, nan) = (rows / 4 + 1, rows - 2, 5);
        let top: Vec<f32> = xn.iter().map(|v| round_bf16(v / 8.0)).collect();
        for r in [hi, lo] {
            w[r * h..(r + 1) * h].copy_from_slice(&top);
        }
        w[nan * h] = f32::NAN;
        let mut expected = vec![0.0; rows];
        linalg::matvec(&host_bf16("w", vec![rows, h], &w), &xn, &mut expected);
        assert!(expected[nan].is_nan());
        assert_eq!(lily_model::pick::argmax(&expected) as usize, lo);
        let wd = upload(&gpu, "w", DType::BF16, &[rows, h], &w);
        let resid = upload(&gpu, "resid", DType::F32, &[h], &resid);
        let norm_w = upload(&gpu, "norm_w", DType::BF16, &[h], &norm_w);
        let best = upload(&gpu, "best", DType::U64, &[1], &[0.0]);
        let what = format!("lm_head {rows} rows");
        let y = poisoned(&gpu, "y", DType::F32, &[rows]);
        gemv.run_lm_head(
            &wd.view(),
            &resid.view(),
            &norm_w.view(),
            &y.view(),
            &best.view(),
        )
        .unwrap();
        let got = download(&gpu, &y);
        assert!(
            got[nan].is_nan(),
            "{what}: the NaN row's logit {}",
            got[nan]
        );
        // The planted rows apart, so that their size does not loosen the others' bound.
        let rest = |v: &[f32]| -> Vec<f32> {
            let mut v = v.to_vec();
            for r in [nan, lo, hi] {
                v[r] = 0.0;
            }
            v
        };
        check(&what, &rest(&got), &rest(&expected), 1e-3);
        check(
            &what,
            &[got[lo], got[hi]],
            &[expected[lo], expected[hi]],
            1e-3,
        );
        let mut b = [0u8; 8];
        gpu.download(&mut b, best.ptr()).unwrap();
        let key = u64::from_le_bytes(b);
        let u = got[lo].to_bits();
        let high = if u & 0x8000_0000 != 0 {
            !u
        } else {
            u | 0x8000_0000
        };
        assert_eq!(
            key >> 32,
            high as u64,
            "{what}: the key holds the winner's logit"
        );
        let ids = upload(&gpu, "ids", DType::I32, &[4], &[7.0, -1.0, -1.0, -1.0]);
        let pos = upload(&gpu, "pos", DType::I32, &[1], &[0.0]);
        let picked = gpu.pinned(16).unwrap();
        // A zeroed rule: greedy, which finish_step leaves as it is.
        let rule = upload(&gpu, "rule", DType::U64, &[RULE_BYTES / 8], &[0.0; RULE_BYTES / 8]);
        sampling
            .finish_step(
                &best.view(),
                &ids.view(),
                &pos.view(),
                &upload(&gpu, "end", DType::I32, &[1], &[1.0]).view(),
                &picked,
                &rule.view(),
            )
            .unwrap();
        gpu.synchronize().unwrap();
        assert_eq!(
            picked.read_u64(8),
            1 << 32 | lo as u64,
            "{what}: the pick in host memory, slot 1"
        );
        assert_eq!(
            download(&gpu, &ids),
            vec![7.0, lo as f32, -1.0, -1.0],
            "{what}"
        );
        assert_eq!(download(&gpu, &pos), vec![1.0]);
        assert_eq!(download(&gpu, &rule), vec![0.0; RULE_BYTES / 8], "{what}: a greedy rule stays");
        assert_eq!(
            download(&gpu, &best),
            vec![0.0],
            "{what}: the argmax cell is cleared for the next step"
        );
    }
}

/// GDN in_proj alone (the streamed layer-input product with its norm): microseconds per launch
/// and the rate over its weights, each launch reading another of four copies (202 MB, four
/// times L2) so that the weights come from DRAM as in a step. For ncu on the H200 (inside the
/// step in_proj takes longer than its bytes at the read rate, so its stalls are worth reading):
/// scripts/ncu_kernels.sh OUT gemv_hidden_normed .gpu/tests/gpu_kernels --ignored bench_gemv_normed_in_proj
#[test]
#[ignore]
fn bench_gemv_normed_in_proj() {
    let Some(gpu) = gpu("bench_gemv_normed_in_proj") else {
        return;
    };
    let dims = Dims::qwen36_35b_a3b();
    let gemv = Gemv::load(&gpu, &dims).unwrap();
    let mut rng = Rng::new("bench_gemv_normed_in_proj");
    let (rows, h) = (dims.gdn_in_rows(), dims.hidden);
    let w = rng.vec_bf16(rows * h, 1.0 / (h as f32).sqrt());
    let copies: Vec<_> = (0..4)
        .map(|_| upload(&gpu, "w", DType::BF16, &[rows, h], &w))
        .collect();
    let resid = upload(&gpu, "resid", DType::F32, &[h], &rng.vec(h, 4.0));
    let norm_w = upload(&gpu, "norm_w", DType::BF16, &[h], &rng.vec_bf16(h, 0.1));
    let y = poisoned(&gpu, "y", DType::F32, &[rows]);
    let mut k = 0;
    let ms = mean_ms_of(&gpu, 40, || {
        gemv.run_normed(
            &copies[k % 4].view(),
            &resid.view(),
            &norm_w.view(),
            None,
            &y.view(),
        )
        .unwrap();
        k += 1;
    });
    let bytes = (rows * h * 2) as f64;
    eprintln!(
        "bench_gemv_normed_in_proj: {rows} x {h}: {:.2} us per launch, {:.2} TB/s",
        ms * 1e3,
        bytes / (ms as f64 * 1e-3) / 1e12
    );
    assert!(
        download(&gpu, &y).iter().all(|x| x.is_finite()),
        "the benchmark's output holds NaN or inf"
    );
}

#[test]
fn launchers_name_the_tensor_with_the_wrong_shape() {
    let Some(gpu) = gpu("shapes") else { return };
    let dims = Dims::qwen36_35b_a3b();
    let gemv = Gemv::load(&gpu, &dims).unwrap();
    let w = poisoned(&gpu, "layer 0 out_proj", DType::BF16, &[2048, 4096]);
    let x = poisoned(&gpu, "gdn_normed", DType::BF16, &[2048]);
    let y = poisoned(&gpu, "x", DType::F32, &[2048]);
    let err = gemv
        .run(&w.view(), &x.view(), &y.view(), Out::Add)
        .unwrap_err()
        .to_string();
    assert!(err.contains("gdn_normed") && err.contains("4096"), "{err}");
}

/// `rows` rows of `d.hidden` through the GPU rmsnorm against the CPU one; a single row goes as a
/// vector.
fn rmsnorm_matches_cpu_rows(gpu: &Arc<Gpu>, d: &Dims, rows: usize, rng: &mut Rng) {
    let k = Norm::load(gpu, d).unwrap();
    let n = d.hidden;
    // Rows of different scales: a norm taken over the wrong row shows up.
    let x: Vec<f32> = (0..rows)
        .flat_map(|r| rng.vec(n, 0.5 + r as f32 % 7.0))
        .collect();
    let w = rng.vec_bf16(n, 0.1);
    let mut expected = vec![0.0; rows * n];
    for (row, out) in x.chunks(n).zip(expected.chunks_mut(n)) {
        norm::rms_norm_zero_centred(row, &w, d.eps, out);
    }
    let shape = if rows == 1 { vec![n] } else { vec![rows, n] };
    let out = poisoned(gpu, "out", DType::BF16, &shape);
    k.rmsnorm(
        &upload(gpu, "x", DType::F32, &shape, &x).view(),
        &upload(gpu, "w", DType::BF16, &[n], &w).view(),
        &out.view(),
        rows,
    )
    .unwrap();
    check(
        &format!("rmsnorm: {rows} rows of {n}"),
        &download(gpu, &out),
        &expected,
        1e-2,
    );
}

#[test]
fn rmsnorm_matches_cpu() {
    let Some(gpu) = gpu("rmsnorm") else { return };
    let mut rng = Rng::new("rmsnorm");
    // One warp per row, 8 rows per block: row counts that leave a block partly empty.
    let model = Dims::qwen36_35b_a3b();
    for rows in [1, 3, 8, 67] {
        rmsnorm_matches_cpu_rows(&gpu, &model, rows, &mut rng);
    }
    // A hidden size of 64: only 16 lanes of each warp hold a float4.
    let tiny = Dims {
        hidden: 64,
        ..model
    };
    for rows in [1, 13] {
        rmsnorm_matches_cpu_rows(&gpu, &tiny, rows, &mut rng);
    }
}

/// The rmsnorm of an 8192-token prefill chunk at the model dims: microseconds per launch and the
/// achieved rate over its traffic (f32 rows read, bf16 rows written). Run on the H200 with
/// --ignored.
#[test]
#[ignore]
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
    k.rmsnorm(&xv, &wv, &ov, rows).unwrap();
    gpu.synchronize().unwrap();
    gpu.profile_start();
    for _ in 0..10 {
        k.rmsnorm(&xv, &wv, &ov, rows).unwrap();
    }
    let ms = mean_ms(&gpu.profile_finish().unwrap(), "rmsnorm");
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

#[test]
fn gdn_decode_matches_cpu_conv_and_recurrence() {
    let Some(gpu) = gpu("gdn") else { return };
    let d = Dims::qwen36_35b_a3b();
    let k = Gdn::load(&gpu, &d).unwrap();
    let mut rng = Rng::new("gdn");
    let (c, v, vd, kk) = (
        d.gdn_conv_channels(),
        d.gdn_value_heads,
        d.gdn_value_dim,
        d.conv_kernel,
    );
    let steps = 6; // past one turn of the conv ring
    let conv_w = rng.vec_bf16(c * kk, 0.5);
    let a_log = rng.vec(v, 1.0);
    let dt_bias = rng.vec(v, 1.0);
    let norm_w = rng.vec_bf16(vd, 1.0);
    let projs: Vec<Vec<f32>> = (0..steps).map(|_| rng.vec(d.gdn_in_rows(), 1.0)).collect();

    // CPU: the whole sequence through the reference ops.
    let part = |p: &Vec<f32>, from: usize, len: usize| p[from..from + len].to_vec();
    let x: Vec<f32> = projs.iter().flat_map(|p| part(p, 0, c)).collect();
    let mut conv_state = vec![0.0; c * (kk - 1)];
    let mut conv_out = vec![0.0; steps * c];
    gdn::causal_conv1d_silu(&x, &conv_w, &mut conv_state, &mut conv_out);
    let kd = d.gdn_key_heads * d.gdn_key_dim;
    let q: Vec<f32> = conv_out.chunks(c).flat_map(|t| t[..kd].to_vec()).collect();
    let kv: Vec<f32> = conv_out
        .chunks(c)
        .flat_map(|t| t[kd..2 * kd].to_vec())
        .collect();
    let vv: Vec<f32> = conv_out
        .chunks(c)
        .flat_map(|t| t[2 * kd..].to_vec())
        .collect();
    let zoff = c + d.gdn_out();
    let b: Vec<f32> = projs.iter().flat_map(|p| part(p, zoff, v)).collect();
    let a: Vec<f32> = projs.iter().flat_map(|p| part(p, zoff + v, v)).collect();
    let (mut g, mut beta) = (vec![0.0; steps * v], vec![0.0; steps * v]);
    gdn::decay_and_beta(&a, &b, &a_log, &dt_bias, &mut g, &mut beta);
    let shape = gdn::GdnShape {
        num_key_heads: d.gdn_key_heads,
        num_value_heads: v,
        key_dim: d.gdn_key_dim,
        value_dim: vd,
    };
    let mut state = vec![0.0; v * d.gdn_key_dim * vd];
    let mut o = vec![0.0; steps * v * vd];
    gdn::gated_delta_rule_recurrent(
        shape,
        &gdn::GdnInputs {
            q: &q,
            k: &kv,
            v: &vv,
            g: &g,
            beta: &beta,
        },
        &mut state,
        &mut o,
    );

    // GPU: one decode step per token.
    let conv_wd = upload(&gpu, "conv_w", DType::BF16, &[c, kk], &conv_w);
    let ring = upload(&gpu, "ring", DType::F32, &[kk, c], &vec![0.0; kk * c]);
    let a_logd = upload(&gpu, "a_log", DType::F32, &[v], &a_log);
    let dtd = upload(&gpu, "dt_bias", DType::F32, &[v], &dt_bias);
    // The pair of states: step t reads state t % 2 and writes the other.
    let stated = upload(
        &gpu,
        "state",
        DType::F32,
        &[2, v, d.gdn_key_dim, vd],
        &vec![0.0; 2 * state.len()],
    );
    let normd = upload(&gpu, "norm", DType::BF16, &[vd], &norm_w);
    for t in 0..steps {
        let proj = upload(&gpu, "proj", DType::F32, &[d.gdn_in_rows()], &projs[t]);
        let pos = upload(&gpu, "pos", DType::I32, &[1], &[t as f32]);
        let out = poisoned(&gpu, "o", DType::F32, &[v * vd]);
        k.decode(&GdnDecodeArgs {
            proj: &proj.view(),
            conv_w: &conv_wd.view(),
            conv_ring: &ring.view(),
            a_log: &a_logd.view(),
            dt_bias: &dtd.view(),
            state: &stated.view(),
            out: &out.view(),
            pos: &pos.view(),
            // Every other step guesses the position one ahead (wrong here: it is fresh), so
            // the reload after the wait is checked too.
            pos_lag: (t % 2) as i32,
        })
        .unwrap();
        let normed = poisoned(&gpu, "normed", DType::BF16, &[v * vd]);
        k.gated_norm(&out.view(), &proj.view(), &normd.view(), &normed.view())
            .unwrap();
        let o_t = &o[t * v * vd..(t + 1) * v * vd];
        check(
            &format!("gdn read-out step {t}"),
            &download(&gpu, &out),
            o_t,
            1e-3,
        );
        let mut expected = vec![0.0; v * vd];
        for h in 0..v {
            let z = &projs[t][c + h * vd..c + (h + 1) * vd];
            norm::gated_rms_norm(
                &o_t[h * vd..(h + 1) * vd],
                z,
                &norm_w,
                d.eps,
                &mut expected[h * vd..(h + 1) * vd],
            );
        }
        check(
            &format!("gdn gated norm step {t}"),
            &download(&gpu, &normed),
            &expected,
            1e-2,
        );
    }
    let n = state.len();
    let last = steps % 2 * n;
    check(
        &format!("gdn recurrent state after {steps} steps"),
        &download(&gpu, &stated)[last..last + n],
        &state,
        1e-3,
    );
}

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
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cpu/tests/fixtures/linear3_full1");
    let tiny = Dims::from_config(&lily_model::Config::load(&dir).unwrap());
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

/// One decode step's attention at the model dims over a 131072-position cache (and shorter
/// contexts for comparison): microseconds per layer of each kernel and the K/V read rate of the
/// split partials. Run on the H200 with --ignored.
#[test]
#[ignore]
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
        k.decode(&args).unwrap();
        gpu.synchronize().unwrap();
        let runs = 20;
        gpu.profile_start();
        for _ in 0..runs {
            k.decode(&args).unwrap();
        }
        let times = gpu.profile_finish().unwrap();
        let mean_us = |name: &str| mean_ms(&times, name) * 1e3;
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

#[test]
fn moe_matches_cpu_block() {
    let Some(gpu) = gpu("moe") else { return };
    // Full hidden, top-8 and intermediate; 16 experts keep the host-side copy small.
    let d = Dims {
        experts: 16,
        ..Dims::qwen36_35b_a3b()
    };
    let k = Moe::load(&gpu, &d).unwrap();
    let mut rng = Rng::new("moe");
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
            ahead: Some(&m.router.view()),
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
                "moe block (router, 8 experts + shared)",
                &got,
                &expected,
                1e-3,
            );
        }
        assert_eq!(
            download(&gpu, &done),
            vec![0.0],
            "router block counter reset after layer {layer}"
        );
    }
}
