//! The library path end to end on the committed demo checkpoint (CPU reference): what an
//! embedder's few lines do, and what `examples/generate.rs` shows.

use std::path::Path;

use lily_runtime::{BackendKind, ChatOptions, Lily, Message, SamplingParams, StopReason};

const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/demo");

fn answer(lily: &Lily, question: &str, max_tokens: usize) -> (String, lily_runtime::GenerateStats) {
    let options = ChatOptions {
        enable_thinking: false,
        ..ChatOptions::default()
    };
    let prompt = lily
        .chat_prompt(&[Message::new("user", question)], &options)
        .unwrap();
    let greedy = SamplingParams {
        temperature: 0.0,
        ..SamplingParams::default()
    };
    let mut text = String::new();
    let stats = lily
        .generate_text(&prompt, max_tokens, greedy, |piece| text.push_str(piece))
        .unwrap();
    (text, stats)
}

#[test]
fn a_demo_chat_generates_text_greedily() {
    let lily = Lily::load(Path::new(DEMO), BackendKind::Cpu).unwrap();
    let (text, stats) = answer(&lily, "Tell me about the cat.", 24);
    assert!(
        stats.generated_tokens > 0 && stats.generated_tokens <= 24,
        "{stats:?}"
    );
    assert!(
        text.chars().any(char::is_alphabetic),
        "no words in {text:?}"
    );
    // The chat format's end of turn is a stop, never text.
    assert!(!text.contains("<|im_end|>"), "{text:?}");
    if stats.stop == StopReason::Length {
        assert_eq!(stats.generated_tokens, 24);
    }
    // Greedy is deterministic.
    assert_eq!(answer(&lily, "Tell me about the cat.", 24).0, text);
}

#[test]
fn a_missing_checkpoint_is_an_error_naming_it() {
    let err = Lily::load(Path::new("/nonexistent/lily-checkpoint"), BackendKind::Cpu)
        .err()
        .expect("no checkpoint there");
    assert!(
        err.to_string().contains("/nonexistent/lily-checkpoint"),
        "{err}"
    );
}
