//! Opt-in: the CPU reference on the real Qwen3.6-35B-A3B checkpoint (about 70 GB of bf16,
//! memory-mapped; minutes per run on a laptop-class CPU). Run with
//! `LILY_CHECKPOINT_DIR=/path/to/Qwen3.6-35B-A3B cargo test -p lily-cpu --release -- --ignored`.

use lily_cpu::CpuModel;
use lily_engine::argmax;
use lily_model::Backend;

/// The chat prompt for user "Name the two colors of a chessboard." with thinking on
/// (docs/DESIGN.md §1).
const CHESSBOARD_PROMPT: [u32; 19] = [
    248045, 846, 198, 657, 279, 1330, 7736, 314, 264, 31634, 2402, 13, 248046, 198, 248045, 74455,
    198, 248068, 198,
];

/// Highest id the tokenizer can produce; rows above it are vocabulary padding.
const LAST_REAL_ID: u32 = 248076;

#[test]
#[ignore = "needs the real checkpoint: set LILY_CHECKPOINT_DIR"]
fn real_checkpoint_runs_and_decode_matches_prefill() {
    let dir = std::env::var("LILY_CHECKPOINT_DIR")
        .expect("set LILY_CHECKPOINT_DIR to the checkpoint directory");
    let model = CpuModel::load(std::path::Path::new(&dir)).unwrap();
    let c = model.config();
    assert_eq!(
        (c.num_layers(), c.moe.num_experts, c.hidden_size),
        (40, 256, 2048)
    );
    assert_eq!(c.eos_token_ids, vec![248046, 248044]);

    let n = CHESSBOARD_PROMPT.len();
    let mut whole = model.new_sequence(n + 8).unwrap();
    let all = model.prefill(&mut whole, &CHESSBOARD_PROMPT).unwrap();
    let mut split = model.new_sequence(n).unwrap();
    model
        .prefill(&mut split, &CHESSBOARD_PROMPT[..n - 1])
        .unwrap();
    let last = model.decode(&mut split, CHESSBOARD_PROMPT[n - 1]).unwrap();
    let scale = all.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let err = all
        .iter()
        .zip(&last)
        .fold(0.0f32, |m, (a, b)| m.max((a - b).abs()))
        / scale;
    assert!(err <= 1e-4, "prefill vs decode rel error {err}");
    assert!(all.iter().all(|x| x.is_finite()));

    let mut logits = all;
    let mut tokens = Vec::new();
    for _ in 0..8 {
        let t = argmax(&logits);
        assert!(t <= LAST_REAL_ID, "picked padding id {t}");
        tokens.push(t);
        logits = model.decode(&mut whole, t).unwrap();
    }
    eprintln!("greedy continuation: {tokens:?}");
}
