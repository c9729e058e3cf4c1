//! The CUDA backend end to end against the CPU reference on the tiny checkpoint of
//! lily-cpu's golden fixtures (the DESIGN.md tiny config: 3 GDN + 1 attention layer, 8 experts).
//! The checkpoint is f32 and the GPU holds bf16 weights and bf16 GEMV inputs, so logits are
//! compared with a bf16 bound: max|gpu - cpu| / max|cpu| <= 5e-2.
//! Needs a CUDA GPU; prints SKIPPED and passes where there is no driver.

mod common;

use std::path::PathBuf;

use common::*;
use lily_cpu::CpuModel;
use lily_cuda::{CudaBackend, CudaError};
use lily_model::Backend;

const BOUND: f32 = 5e-2;

/// The fixture directory; LILY_TINY_FIXTURE overrides it where the test binary runs away from
/// the source tree (scripts/gpu_check.sh stages a copy next to the binaries).
fn fixture() -> PathBuf {
    std::env::var_os("LILY_TINY_FIXTURE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../cpu/tests/fixtures/linear3_full1"))
}

#[test]
fn prefill_and_decode_match_the_cpu_reference() {
    if gpu("backend").is_none() {
        return;
    }
    let cpu = CpuModel::load(&fixture()).unwrap();
    let gpu = CudaBackend::load(&fixture()).unwrap();
    let vocab = cpu.vocab_size() as u64;
    let prompt: Vec<u32> = (0..13u64).map(|i| ((i * 2_654_435_761) % (1 << 32) % vocab) as u32).collect();
    let (mut cs, mut gs) = (cpu.new_sequence(64).unwrap(), gpu.new_sequence(64).unwrap());
    let mut c = cpu.prefill(&mut cs, &prompt).unwrap();
    let mut g = gpu.prefill(&mut gs, &prompt).unwrap();
    check("prefill logits", &g, &c, BOUND);
    let mut agree = 0;
    let steps = 16;
    for step in 0..steps {
        let token = lily_engine::argmax(&c);
        agree += (lily_engine::argmax(&g) == token) as usize;
        c = cpu.decode(&mut cs, token).unwrap();
        g = gpu.decode(&mut gs, token).unwrap();
        check(&format!("decode step {step} logits"), &g, &c, BOUND);
    }
    eprintln!("greedy picks agree on {agree} of {steps} steps");
    assert_eq!(gpu.position(&gs), prompt.len() + steps);
}

#[test]
fn restoring_a_snapshot_replays_the_same_logits() {
    if gpu("snapshot").is_none() {
        return;
    }
    let gpu = CudaBackend::load(&fixture()).unwrap();
    let mut s = gpu.new_sequence(32).unwrap();
    gpu.prefill(&mut s, &[1, 2, 3, 4, 5]).unwrap();
    let snap = gpu.snapshot(&s);
    let first: Vec<Vec<f32>> = [9, 10].iter().map(|&t| gpu.decode(&mut s, t).unwrap()).collect();
    gpu.restore(&mut s, &snap);
    assert_eq!(gpu.position(&s), 5);
    let again: Vec<Vec<f32>> = [9, 10].iter().map(|&t| gpu.decode(&mut s, t).unwrap()).collect();
    assert_eq!(first, again);
}

#[test]
fn a_sequence_that_does_not_fit_fails_before_any_work() {
    if gpu("oom").is_none() {
        return;
    }
    let gpu = CudaBackend::load(&fixture()).unwrap();
    match gpu.new_sequence(1 << 30) {
        Err(CudaError::OutOfMemory { max_seq, needed_mib, free_mib }) => {
            assert_eq!(max_seq, 1 << 30);
            assert!(needed_mib > free_mib);
        }
        Err(e) => panic!("expected OutOfMemory, got {e}"),
        Ok(_) => panic!("a 2^30-token sequence should not fit"),
    }
    let mut s = gpu.new_sequence(4).unwrap();
    let err = gpu.prefill(&mut s, &[1, 2, 3, 4, 5]).unwrap_err().to_string();
    assert!(err.contains("does not fit"), "{err}");
}
