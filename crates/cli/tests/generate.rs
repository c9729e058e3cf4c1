//! `lily generate` end to end on a golden fixture: the streamed ids are transformers' greedy
//! continuation, generation stops at the checkpoint's eos id, and text prompts without a
//! tokenizer are refused with a clear message.

use std::path::PathBuf;
use std::process::Command;

fn fixture(name: &str) -> (PathBuf, Vec<u32>, Vec<u32>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../cpu/tests/fixtures")
        .join(name);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("golden.json")).unwrap()).unwrap();
    let ids = |key: &str| -> Vec<u32> {
        json[key]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_u64().unwrap() as u32)
            .collect()
    };
    (dir.clone(), ids("prompt"), ids("continuation"))
}

fn run(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lily"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

#[test]
fn streams_the_greedy_continuation_and_stops_on_eos() {
    let (dir, prompt, continuation) = fixture("linear3_full1");
    let ids = prompt
        .iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(",");
    let (ok, stdout, stderr) = run(&[
        "generate",
        "--model",
        dir.to_str().unwrap(),
        "--prompt-ids",
        &ids,
        "--max-tokens",
        "32",
        "--print-ids",
    ]);
    assert!(ok, "{stderr}");
    let got: Vec<u32> = stdout
        .split_whitespace()
        .map(|s| s.parse().unwrap())
        .collect();
    // This fixture's eos id (255) appears in the continuation: output ends with it.
    let eos_at = continuation
        .iter()
        .position(|&t| t == 255)
        .expect("fixture continuation contains eos");
    assert_eq!(got, continuation[..=eos_at]);
    assert!(
        stderr.contains("prefill:") && stderr.contains("tok/s") && stderr.contains("StopId"),
        "{stderr}"
    );
}

#[test]
fn text_prompt_without_tokenizer_is_refused() {
    let (dir, _, _) = fixture("linear3_full1");
    let (ok, _, stderr) = run(&[
        "generate",
        "--model",
        dir.to_str().unwrap(),
        "--prompt",
        "hello",
    ]);
    assert!(!ok);
    assert!(
        stderr.contains("no tokenizer.json") && stderr.contains("--prompt-ids"),
        "{stderr}"
    );
}
