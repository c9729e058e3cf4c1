//! The token pick on the GPU against `PickRule::pick`, the host reference: a greedy pick is
//! lm_head's argmax over its final norm (against lily-cpu), a draw (`Sampling::draw`) picks the
//! host's token except where the host's own arithmetic sits within 1e-9 of a boundary (those
//! are counted and must stay rare), and the step graph of each path serves its rules (below).
//! Decode and prefill end in the same pick (forward/pick.rs).
//!
//! Needs a CUDA GPU and NVRTC; prints SKIPPED and passes where there is no driver.

mod common;

use common::*;
use common::sampling::*;
use lily_cpu::products;
use lily_cuda::dims::Dims;
use lily_cuda::kernels::gemv::Gemv;
use lily_cuda::kernels::sampling::{PickPath, RULE_BYTES, Sampling, rule_bytes};
use lily_cuda::runtime::tensor::DType;
use lily_model::PickRule;

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
        products::matvec(&host_bf16("w", vec![rows, h], &w), &xn, &mut expected);
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

/// A decision closer than this (relative to the mass in play) to a boundary may go either way:
/// the GPU sums in another order (and top-p masses in fixed point).
const BOUNDARY: f64 = 1e-9;

/// Mismatches explained by a boundary that a run may show before the test fails.
const HANDFUL: usize = 5;

/// The host's draw laid out for boundary distances: the weights (step 2), the kept tokens in id
/// order with their running f64 sums, and how close the top-k / top-p cuts came to going the
/// other way.
struct Draw {
    weights: Vec<f32>,
    kept: Vec<u32>,
    running: Vec<f64>,
    /// Relative distance of the top-p mass at the cut from its target (infinite: no top-p cut).
    p_margin: f64,
    /// Whether the token just inside a cut and the one just outside differ by at most one ulp
    /// (a 1-ulp difference between the host's expf and the GPU's exp can swap them).
    ulp_close_cut: bool,
}

fn ulp_close(a: f32, b: f32) -> bool {
    a != b && a.to_bits().abs_diff(b.to_bits()) <= 1
}

fn host_draw(logits: &[f32], r: &PickRule) -> Draw {
    let mut weights = Vec::new();
    r.weights(logits, &mut weights);
    let mut c: Vec<(u32, f32)> = weights
        .iter()
        .enumerate()
        .filter(|(_, &w)| w > 0.0)
        .map(|(i, &w)| (i as u32, w))
        .collect();
    c.sort_unstable_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut ulp_close_cut = false;
    let k = r.top_k as usize;
    if k > 0 && c.len() > k {
        ulp_close_cut |= ulp_close(c[k - 1].1, c[k].1);
        c.truncate(k);
    }
    let mut p_margin = f64::INFINITY;
    if r.top_p < 1.0 && !c.is_empty() {
        let total: f64 = c.iter().map(|c| c.1 as f64).sum();
        let target = r.top_p as f64 * total;
        let mut mass = 0.0f64;
        let end = c
            .iter()
            .position(|x| {
                mass += x.1 as f64;
                mass >= target
            })
            .unwrap_or(c.len() - 1);
        let before = mass - c[end].1 as f64;
        p_margin = (mass - target).min(target - before).abs() / total;
        if end + 1 < c.len() {
            ulp_close_cut |= ulp_close(c[end].1, c[end + 1].1);
        }
        c.truncate(end + 1);
    }
    c.sort_unstable_by_key(|x| x.0);
    let mut sum = 0.0f64;
    let running = c
        .iter()
        .map(|x| {
            sum += x.1 as f64;
            sum
        })
        .collect();
    Draw {
        weights,
        kept: c.iter().map(|x| x.0).collect(),
        running,
        p_margin,
        ulp_close_cut,
    }
}

impl Draw {
    /// The pick for `u` (as the host walks it) and the relative distance of u * total from the
    /// nearest boundary between two kept tokens.
    fn pick(&self, u: f64) -> Option<(u32, f64)> {
        let total = *self.running.last()?;
        let r = u * total;
        let j = self
            .running
            .iter()
            .position(|&s| s > r)
            .unwrap_or(self.kept.len() - 1);
        let mut margin = (self.running[j] - r).abs();
        if j > 0 {
            margin = margin.min((r - self.running[j - 1]).abs());
        }
        Some((self.kept[j], margin / total))
    }
}

fn rules(rng: &mut Rng) -> Vec<PickRule> {
    let mut out = Vec::new();
    for temperature in [0.3, 0.7, 1.0, 1.5] {
        for top_k in [0, 1, 5, 50, 5000] {
            for top_p in [1.0, 0.95, 0.5, 0.1] {
                for min_p in [0.0, 0.05] {
                    for u in [0.0, 0.999_999, 0.5, rng.next().abs() as f64, {
                        let v = rng.next().abs() as f64;
                        v * v
                    }] {
                        out.push(PickRule {
                            temperature,
                            top_k,
                            top_p,
                            min_p,
                            draw: PickRule::draw_for(u),
                        });
                    }
                }
            }
        }
    }
    out
}

/// Every rule on one set of logits; returns (picks compared, mismatches at a boundary).
fn compare_all(s: &Setup, logits: &[f32], rng: &mut Rng, what: &str) -> (usize, usize) {
    let mut host_scratch = Vec::new();
    let (mut compared, mut excused) = (0, 0);
    let rules = rules(rng);
    let mut checked_weights = Vec::new();
    for group in rules.chunks(5) {
        let draw = host_draw(logits, &group[0]);
        for r in group {
            let want = r.pick(logits, &mut host_scratch);
            let got = s.pick(r);
            compared += 1;
            let (ours, margin) = draw.pick(r.u()).unwrap_or((want, f64::INFINITY));
            let borderline = margin < BOUNDARY || draw.p_margin < BOUNDARY || draw.ulp_close_cut;
            // The host sums the top-p mass in another order than this test's plain walk: they
            // may only disagree at a boundary.
            assert!(
                ours == want || borderline,
                "{what}: the test's walk picks {ours}, the host {want} for {r:?}"
            );
            if got == want {
                continue;
            }
            assert!(
                borderline,
                "{what}: GPU picked {got}, host {want} for {r:?} (draw margin {margin:.2e}, \
                 top-p margin {:.2e}, kept {})",
                draw.p_margin,
                draw.kept.len()
            );
            eprintln!(
                "{what}: GPU {got} vs host {want} at a boundary for {r:?} (draw margin \
                 {margin:.2e}, top-p margin {:.2e}, 1-ulp cut {})",
                draw.p_margin, draw.ulp_close_cut
            );
            excused += 1;
        }
        let key = (group[0].temperature.to_bits(), group[0].min_p.to_bits());
        if !checked_weights.contains(&key) {
            checked_weights.push(key);
            check_weights(&s.weights(), &draw.weights, what, &group[0]);
        }
    }
    (compared, excused)
}

/// The GPU's exp is rounded once from f64; the host's expf may be one ulp off that. Anything
/// more, or more than a few in a thousand, is a bug.
fn check_weights(gpu: &[f32], host: &[f32], what: &str, r: &PickRule) {
    let mut off = 0;
    for (i, (g, h)) in gpu.iter().zip(host).enumerate() {
        if g.to_bits() != h.to_bits() {
            assert!(
                g.to_bits().abs_diff(h.to_bits()) <= 1,
                "{what}: weight {i} is {g:e} on the GPU, {h:e} on the host (T {}, min_p {})",
                r.temperature,
                r.min_p
            );
            off += 1;
        }
    }
    assert!(
        off <= gpu.len() / 300 + 1,
        "{what}: {off} of {} weights differ by an ulp",
        gpu.len()
    );
}

#[test]
fn draws_match_the_host_pick_at_every_vocabulary_size() {
    let Some(gpu) = gpu("gpu draw") else { return };
    let mut rng = Rng::new("gpu draw");
    let (mut compared, mut excused) = (0, 0);
    for n in [248_320, 64, 1000, 1025, 3] {
        for std in [0.5, 5.0] {
            let x = logits(&mut rng, n, std);
            let s = Setup::new(&gpu, load(&gpu), &x);
            let what = format!("vocab {n}, std {std}");
            let (c, e) = compare_all(&s, &x, &mut rng, &what);
            eprintln!("{what}: {c} picks, {e} at a boundary");
            compared += c;
            excused += e;
        }
    }
    eprintln!("{compared} picks, {excused} mismatches at a boundary");
    assert!(
        excused <= HANDFUL,
        "{excused} mismatches at a boundary: more than rounding explains"
    );
}

#[test]
fn a_greedy_rule_leaves_the_pick_to_lm_head() {
    let Some(gpu) = gpu("gpu greedy") else { return };
    let mut rng = Rng::new("gpu greedy");
    let x = logits(&mut rng, 1025, 2.0);
    let s = Setup::new(&gpu, load(&gpu), &x);
    // Greedy whatever else the rule holds: the draw kernels (launched as a draw with both
    // cuts would be) leave lm_head's argmax in `best`.
    for temperature in [0.0, -1.0] {
        s.set_rule(&PickRule {
            temperature,
            top_k: 5,
            top_p: 0.5,
            min_p: 0.05,
            draw: PickRule::draw_for(0.7),
        });
        s.gpu
            .copy_dtod(s.best.ptr(), s.max_key_dev.ptr(), 8)
            .unwrap();
        s.launch_draw(PickPath::Draw {
            top_k: true,
            top_p: true,
        })
        .unwrap();
        let mut b = [0u8; 8];
        gpu.download(&mut b, s.best.ptr()).unwrap();
        assert_eq!(
            u64::from_le_bytes(b),
            s.max_key,
            "temperature {temperature}"
        );
        assert_eq!(
            s.take_best(),
            lily_model::pick::argmax(&x),
            "temperature {temperature}"
        );
    }
}

/// Logits at the real vocabulary with `tied` sharing the largest one (3.0; the rest near -20).
fn planted_ties(tied: &[usize]) -> Vec<f32> {
    let mut x: Vec<f32> = (0..248_320).map(|i| -20.0 + (i % 97) as f32 * 0.01).collect();
    for &i in tied {
        x[i] = 3.0;
    }
    x
}

#[test]
fn planted_top_ties_keep_the_lowest_ids() {
    let Some(gpu) = gpu("gpu ties") else { return };
    // Seven tokens share the largest logit; top_k 5 keeps the five lowest ids among them, and
    // sweeping u reaches exactly those (in id order).
    let tied = [9, 1030, 50_000, 123_456, 200_001, 248_000, 248_319];
    let x = planted_ties(&tied);
    let s = Setup::new(&gpu, load(&gpu), &x);
    for (j, u) in [0.0, 0.21, 0.41, 0.61, 0.81, 0.999_999]
        .into_iter()
        .enumerate()
    {
        let r = PickRule {
            temperature: 1.0,
            top_k: 5,
            top_p: 1.0,
            min_p: 0.0,
            draw: PickRule::draw_for(u),
        };
        assert_eq!(s.pick(&r) as usize, tied[j.min(4)], "u {u}");
    }
}

#[test]
fn planted_top_ties_cut_by_top_p_keep_the_lowest_ids() {
    let Some(gpu) = gpu("gpu ties top-p") else {
        return;
    };
    // Seven tokens of weight 1 and the rest ~e-20: top_p 0.4 needs 2.8 of the seven, so the
    // cut takes three of the tied weight (the k < have case of the last pass), the lowest ids.
    let tied = [17, 1024, 60_000, 131_072, 200_003, 248_001, 248_318];
    let x = planted_ties(&tied);
    let s = Setup::new(&gpu, load(&gpu), &x);
    for (j, u) in [0.0, 0.34, 0.67, 0.999_999].into_iter().enumerate() {
        let r = PickRule {
            temperature: 1.0,
            top_k: 0,
            top_p: 0.4,
            min_p: 0.0,
            draw: PickRule::draw_for(u),
        };
        let want = r.pick(&x, &mut Vec::new());
        assert_eq!(want as usize, tied[j.min(2)], "the host, u {u}");
        assert_eq!(s.pick(&r), want, "u {u}");
    }
}

#[test]
fn all_minus_infinity_falls_back_to_the_argmax() {
    let Some(gpu) = gpu("gpu no candidate") else {
        return;
    };
    let x = vec![f32::NEG_INFINITY; 1500];
    let s = Setup::new(&gpu, load(&gpu), &x);
    let r = PickRule {
        temperature: 1.0,
        top_k: 0,
        top_p: 0.9,
        min_p: 0.0,
        draw: PickRule::draw_for(0.5),
    };
    assert_eq!(s.pick(&r), r.pick(&x, &mut Vec::new()));
}

/// The step graph is captured once per pick path (lm_head with its argmax, then the draw with
/// the passes of the cuts the path makes); the rule is only rewritten in device memory between
/// replays of its path's graph, and finish_step consumes the pick and clears `best`.
#[test]
fn one_captured_graph_per_path_serves_every_rule() {
    let Some(gpu) = gpu("gpu graph") else { return };
    let mut rng = Rng::new("gpu graph");
    let dims = Dims::qwen36_35b_a3b();
    let gemv = Gemv::load(&gpu, &dims).unwrap();
    let (n, h) = (4099, dims.hidden);
    // Logits of std ~2, so that a draw has candidates besides the top one.
    let lm_head = upload(
        &gpu,
        "lm_head",
        DType::BF16,
        &[n, h],
        &rng.vec_bf16(n * h, 2.0 / (h as f32).sqrt()),
    );
    let resid = upload(&gpu, "resid", DType::F32, &[h], &rng.vec(h, 1.0));
    let norm_w = upload(&gpu, "norm_w", DType::BF16, &[h], &rng.vec_bf16(h, 0.1));
    let s = Setup::new(&gpu, load(&gpu), &vec![f32::NAN; n]);
    let ids = upload(&gpu, "ids", DType::I32, &[4], &[7.0, -1.0, -1.0, -1.0]);
    let pos = upload(&gpu, "pos", DType::I32, &[1], &[0.0]);
    let end = upload(&gpu, "end", DType::I32, &[1], &[1.0]);
    let picked = gpu.pinned(16).unwrap();
    let capture = |path: PickPath| {
        gpu.capture(|| {
            let best = s.best.view();
            gemv.run_lm_head(
                &lm_head.view(),
                &resid.view(),
                &norm_w.view(),
                &s.logits.view(),
                &best,
            )?;
            s.launch_draw(path)?;
            s.k.finish_step(&best, &ids.view(), &pos.view(), &end.view(), &picked, &s.rule.view())
        })
        .unwrap()
    };
    let mut graphs = std::collections::HashMap::new();
    let mut host_scratch = Vec::new();
    for r in [
        PickRule::GREEDY,
        PickRule {
            temperature: 0.8,
            top_k: 40,
            top_p: 0.9,
            min_p: 0.0,
            draw: PickRule::draw_for(0.37),
        },
        PickRule {
            temperature: 1.2,
            top_k: 0,
            top_p: 1.0,
            min_p: 0.0,
            draw: PickRule::draw_for(0.9),
        },
        PickRule {
            temperature: 0.9,
            top_k: 0,
            top_p: 0.8,
            min_p: 0.02,
            draw: PickRule::draw_for(0.61),
        },
        PickRule {
            temperature: 0.7,
            top_k: 20,
            top_p: 1.0,
            min_p: 0.0,
            draw: PickRule::draw_for(0.05),
        },
        PickRule {
            temperature: 0.6,
            top_k: 30,
            top_p: 0.95,
            min_p: 0.0,
            draw: PickRule::draw_for(0.83),
        },
        PickRule {
            draw: PickRule::draw_for(0.3),
            ..PickRule::GREEDY
        },
    ] {
        gpu.memset_u32(pos.ptr(), 0, 1).unwrap();
        s.set_rule(&r);
        let path = PickPath::of(&r);
        graphs
            .entry(path)
            .or_insert_with(|| capture(path))
            .launch()
            .unwrap();
        gpu.synchronize().unwrap();
        let x = download(&gpu, &s.logits);
        assert!(x.iter().all(|v| v.is_finite()), "lm_head wrote every logit");
        let want = r.pick(&x, &mut host_scratch);
        assert_eq!(download(&gpu, &ids)[1], want as f32, "{r:?}");
        assert_eq!(picked.read_u64(8), 1 << 32 | want as u64, "{r:?}: the pick in host memory, tagged with its position");
        assert_eq!(download(&gpu, &pos), vec![1.0]);
        assert_eq!(download(&gpu, &s.best), vec![0.0], "best is cleared");
        let mut rule = vec![0u8; RULE_BYTES];
        gpu.download(&mut rule, s.rule.ptr()).unwrap();
        assert_eq!(rule, rule_bytes(&r.advanced(1)), "{r:?}: the rule moves to its next draw");
    }
}
