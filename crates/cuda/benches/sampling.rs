//! Micro-benchmark (not a test): the GPU draw at the full vocabulary under each kind of rule.
//! Runs on a GPU with `cargo bench -p lily-cuda --bench sampling [NAME...]` or the staged binary
//! with `--bench`; prints SKIPPED where there is no driver.

#[path = "../tests/common/mod.rs"]
mod common;

use common::*;
use common::sampling::*;
use lily_model::PickRule;

fn main() {
    common::run_benches(&[
        ("bench_sampling", bench_sampling),
    ]);
}

fn bench_sampling() {
    let Some(gpu) = gpu("bench_sampling") else {
        return;
    };
    let mut rng = Rng::new("bench_sampling");
    let n = 248_320;
    let x = logits(&mut rng, n, 2.0);
    let s = Setup::new(&gpu, load(&gpu), &x);
    let t = |temperature| PickRule {
        temperature,
        ..PickRule::GREEDY
    };
    for (what, r) in [
        ("temperature 1", t(1.0)),
        (
            "top_p 0.9",
            PickRule {
                top_p: 0.9,
                ..t(1.0)
            },
        ),
        (
            "top_k 50",
            PickRule {
                top_k: 50,
                ..t(1.0)
            },
        ),
        (
            "top_k 50 + top_p 0.9",
            PickRule {
                top_k: 50,
                top_p: 0.9,
                ..t(1.0)
            },
        ),
    ] {
        let r = PickRule { draw: PickRule::draw_for(0.5), ..r };
        s.set_rule(&r);
        let t = time(&gpu, 200, || s.launch(&r));
        let us = 1e3 * t.ms;
        let kernels: Vec<String> = t
            .last_call()
            .iter()
            .map(|(label, ms)| format!("{} {:.1}", label.split(' ').next().unwrap(), ms * 1e3))
            .collect();
        eprintln!(
            "pick at vocab {n}, {what}: {us:.1} us per pick (eager launches; per kernel us: {})",
            kernels.join(", ")
        );
    }
}
