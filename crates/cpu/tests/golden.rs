//! The CPU reference against transformers on tiny seeded checkpoints
//! (`scripts/fixtures/make_golden_fixtures.py` writes `tests/fixtures/*`).
//!
//! Error measure: for arrays a (ours) and b (transformers), `max|a - b| / max|b|` over the whole
//! array: relative to the array's scale, so near-zero entries do not blow it up.

use std::path::PathBuf;

use lily_cpu::{CpuModel, Outputs};
use lily_engine::{generate, GenerateOptions, Greedy};
use lily_model::{Backend, Checkpoint};

/// Bound on logits and hidden states for f32 compute on the same weights as transformers.
const F32_BOUND: f32 = 1e-4;
/// Bound against transformers computing in bf16 (it rounds every activation to bf16; we don't).
const BF16_NATIVE_BOUND: f32 = 5e-2;

struct Golden {
    model: CpuModel,
    prompt: Vec<u32>,
    continuation: Vec<u32>,
    arrays: Checkpoint,
}

fn fixture(name: &str) -> Golden {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    let model = CpuModel::load(&dir).unwrap_or_else(|e| panic!("{name}: {e}"));
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("golden.json")).unwrap()).unwrap();
    let ids = |key: &str| {
        json[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect()
    };
    Golden {
        model,
        prompt: ids("prompt"),
        continuation: ids("continuation"),
        arrays: Checkpoint::open_file(&dir.join("golden.safetensors")).unwrap(),
    }
}

fn rel_error(ours: &[f32], reference: &[f32]) -> f32 {
    assert_eq!(ours.len(), reference.len());
    let scale = reference.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    ours.iter()
        .zip(reference)
        .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()))
        / scale
}

/// Logits at every prompt position and every layer's output match transformers.
fn check_prefill(name: &str) -> Golden {
    let g = fixture(name);
    let mut seq = g.model.new_sequence(g.prompt.len()).unwrap();
    let out = g
        .model
        .forward(&mut seq, &g.prompt, Outputs::Everything)
        .unwrap();
    let logits_err = rel_error(&out.logits, &g.arrays.get("logits").unwrap().to_f32_vec());
    let hidden_ref = g.arrays.get("hidden").unwrap();
    let per_layer = hidden_ref.cols();
    let mut hidden_err = 0.0f32;
    for (i, layer) in out.hidden.iter().enumerate() {
        let err = rel_error(layer, &hidden_ref.index(i).to_f32_vec());
        assert!(err <= F32_BOUND, "{name}: layer {i} hidden rel error {err}");
        assert_eq!(layer.len(), per_layer);
        hidden_err = hidden_err.max(err);
    }
    assert_eq!(out.hidden.len(), hidden_ref.rows());
    eprintln!("{name}: logits rel error {logits_err:.2e}, hidden {hidden_err:.2e}");
    assert!(
        logits_err <= F32_BOUND,
        "{name}: logits rel error {logits_err}"
    );
    g
}

/// Greedy continuation through prefill + decode (the engine loop) is transformers' token for token.
fn check_greedy(g: &Golden, name: &str) {
    let max_seq = g.prompt.len() + g.continuation.len();
    let mut seq = g.model.new_sequence(max_seq).unwrap();
    let options = GenerateOptions {
        max_tokens: g.continuation.len(),
        stop_ids: vec![],
    };
    let mut got = Vec::new();
    generate(
        &g.model,
        &mut seq,
        &g.prompt,
        max_seq,
        &options,
        &mut Greedy,
        |t| {
            got.push(t);
            std::ops::ControlFlow::Continue(())
        },
    )
    .unwrap();
    assert_eq!(got, g.continuation, "{name}: greedy continuation");
}

#[test]
fn linear3_full1_matches_transformers() {
    let g = check_prefill("linear3_full1");
    check_greedy(&g, "linear3_full1");
}

#[test]
fn full_first_official_layout_matches_transformers() {
    let g = check_prefill("full_first_official");
    check_greedy(&g, "full_first_official");
    assert_eq!(g.model.config().eos_token_ids, vec![198, 199]);
    assert_eq!(g.model.weights().mtp.len(), 2);
}

#[test]
fn two_full_bf16_matches_transformers() {
    let g = check_prefill("two_full_bf16");
    check_greedy(&g, "two_full_bf16");
    assert_eq!(g.model.weights().lm_head.dtype(), lily_model::DType::BF16);
    let mut seq = g.model.new_sequence(g.prompt.len()).unwrap();
    let out = g
        .model
        .forward(&mut seq, &g.prompt, Outputs::Everything)
        .unwrap();
    let err = rel_error(
        &out.logits,
        &g.arrays.get("logits_bf16_native").unwrap().to_f32_vec(),
    );
    eprintln!("two_full_bf16: vs transformers in bf16: logits rel error {err:.2e}");
    assert!(
        err <= BF16_NATIVE_BOUND,
        "bf16-native logits rel error {err}"
    );
}

/// Prefill of the whole prompt and prefill-then-decode give the same last logits; a snapshot
/// taken mid-way and restored reproduces the same continuation.
#[test]
fn decode_matches_prefill_and_snapshots_round_trip() {
    let g = fixture("full_first_official");
    let prompt = &g.prompt;
    let reference = g.arrays.get("logits").unwrap().to_f32_vec();
    let vocab = g.model.vocab_size();

    let split = 70; // a chunked prefill of 70 (two chunks), then one decode step per token
    let mut seq = g.model.new_sequence(prompt.len()).unwrap();
    g.model.prefill(&mut seq, &prompt[..split]).unwrap();
    let snapshot = g.model.snapshot(&seq);
    let mut last = Vec::new();
    for (i, &t) in prompt[split..].iter().enumerate() {
        last = g.model.decode(&mut seq, t).unwrap();
        let pos = split + i;
        let err = rel_error(&last, &reference[pos * vocab..(pos + 1) * vocab]);
        assert!(
            err <= F32_BOUND,
            "decode at position {pos}: rel error {err}"
        );
    }
    assert_eq!(g.model.position(&seq), prompt.len());
    assert!(
        g.model.decode(&mut seq, 0).is_err(),
        "decoding past max_seq must fail"
    );

    g.model.restore(&mut seq, &snapshot);
    assert_eq!(g.model.position(&seq), split);
    let again = g.model.prefill(&mut seq, &prompt[split..]).unwrap();
    assert!(rel_error(&again, &last) <= F32_BOUND);
}

#[test]
fn bad_requests_are_errors_not_panics() {
    let g = fixture("linear3_full1");
    let mut seq = g.model.new_sequence(4).unwrap();
    assert!(g.model.prefill(&mut seq, &[]).is_err());
    assert!(g.model.prefill(&mut seq, &[256]).is_err());
    assert!(g.model.prefill(&mut seq, &[1, 2, 3, 4, 5]).is_err());
    assert_eq!(g.model.position(&seq), 0);
    assert!(g.model.new_sequence(0).is_err());
    assert!(g.model.new_sequence(usize::MAX / 2).is_err());
}
