//! `lily generate` end to end on a golden fixture: the streamed ids are transformers' greedy
//! continuation, generation stops at the checkpoint's eos id, seeded sampling repeats, a text prompt goes through the
//! chat template and tokenizer to transformers' ids and streams back as text, and text prompts
//! without a tokenizer are refused with a clear message.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The token ids stored under `key` in a fixture's JSON.
fn json_ids(json: &serde_json::Value, key: &str) -> Vec<u32> {
    json[key]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect()
}

fn fixture(name: &str) -> (PathBuf, Vec<u32>, Vec<u32>) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../cpu/tests/fixtures")
        .join(name);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("golden.json")).unwrap()).unwrap();
    let ids = |key: &str| json_ids(&json, key);
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

/// Sampled generation: the same seed gives the same ids, another seed other ids, and bad
/// sampling flags are refused before the model loads.
#[test]
fn sampled_generation_repeats_with_its_seed_and_bad_flags_are_refused() {
    let (dir, prompt, _) = fixture("linear3_full1");
    let ids = prompt.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(",");
    let sample = |seed: &str| {
        let (ok, stdout, stderr) = run(&[
            "generate", "--model", dir.to_str().unwrap(), "--prompt-ids", &ids, "--max-tokens", "24",
            "--print-ids", "--backend", "cpu", "--temperature", "1.5", "--top-p", "0.95", "--seed", seed,
        ]);
        assert!(ok, "{stderr}");
        stdout
    };
    let a = sample("1");
    assert_eq!(a, sample("1"));
    assert_ne!(a, sample("2"));
    for (flag, value) in [("--temperature", "-1"), ("--top-p", "0"), ("--top-p", "1.5"), ("--min-p", "2")] {
        let arg = format!("{flag}={value}");
        let (ok, _, stderr) = run(&["generate", "--model", dir.to_str().unwrap(), "--prompt-ids", &ids, &arg]);
        assert!(!ok && stderr.contains(flag), "{flag} {value}: {stderr}");
    }
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
        stderr.contains("tokenizer.json does not exist") && stderr.contains("--prompt-ids"),
        "{stderr}"
    );
}

/// The golden fixture linear3_full1 (256 ids) with the byte-level tokenizer of
/// tests/fixtures/byte_tokenizer (id = byte value), copied into one directory.
fn fixture_with_tokenizer() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let (model, _, _) = fixture("linear3_full1");
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("linear3_full1_byte_tokenizer");
        std::fs::create_dir_all(&dir).unwrap();
        for file in ["config.json", "generation_config.json", "model.safetensors"] {
            std::fs::copy(model.join(file), dir.join(file)).unwrap();
        }
        std::fs::copy(
            byte_tokenizer_dir().join("tokenizer.json"),
            dir.join("tokenizer.json"),
        )
        .unwrap();
        dir
    })
}

fn byte_tokenizer_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/byte_tokenizer")
}

/// The text and transformers' chat prompt ids (thinking on and off) recorded by
/// scripts/fixtures/make_byte_tokenizer.py.
fn reference_prompts() -> (String, Vec<u32>, Vec<u32>) {
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(byte_tokenizer_dir().join("prompts.json")).unwrap(),
    )
    .unwrap();
    let ids = |key: &str| json_ids(&json, key);
    (
        json["text"].as_str().unwrap().to_owned(),
        ids("think"),
        ids("no_think"),
    )
}

fn generated_ids(extra: &[&str]) -> Vec<u32> {
    let dir = fixture_with_tokenizer();
    let mut args = vec![
        "generate",
        "--model",
        dir.to_str().unwrap(),
        "--max-tokens",
        "32",
        "--print-ids",
    ];
    args.extend_from_slice(extra);
    let (ok, stdout, stderr) = run(&args);
    assert!(ok, "{stderr}");
    stdout
        .split_whitespace()
        .map(|s| s.parse().unwrap())
        .collect()
}

fn joined(ids: &[u32]) -> String {
    ids.iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn text_prompt_is_the_chat_template_prompt_of_transformers() {
    let (text, think, no_think) = reference_prompts();
    // Generation continues the prompt it was given: the same continuation means the same prompt.
    assert_eq!(
        generated_ids(&["--prompt", &text]),
        generated_ids(&["--prompt-ids", &joined(&think)])
    );
    assert_eq!(
        generated_ids(&["--prompt", &text, "--no-think"]),
        generated_ids(&["--prompt-ids", &joined(&no_think)])
    );
    assert_ne!(
        generated_ids(&["--prompt-ids", &joined(&think)]),
        generated_ids(&["--prompt-ids", &joined(&no_think)]),
        "the two prompts must lead to different continuations for this test to tell them apart"
    );
}

#[test]
fn text_output_is_the_decoded_continuation_without_the_stop_token() {
    let (text, _, _) = reference_prompts();
    let mut ids = generated_ids(&["--prompt", &text]);
    if ids.last() == Some(&255) {
        ids.pop();
    }
    // With this tokenizer a token is the byte of its id; bytes that are not UTF-8 decode to
    // U+FFFD as in a full decode.
    let bytes: Vec<u8> = ids.iter().map(|&t| t as u8).collect();
    let expected = String::from_utf8_lossy(&bytes).into_owned() + "\n";
    let dir = fixture_with_tokenizer();
    let (ok, stdout, stderr) = run(&[
        "generate",
        "--model",
        dir.to_str().unwrap(),
        "--prompt",
        &text,
        "--max-tokens",
        "32",
    ]);
    assert!(ok, "{stderr}");
    assert_eq!(stdout, expected);
}
