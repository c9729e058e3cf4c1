//! How long the JSON constraint and a forced tool call take to mask the real 248K-token
//! Qwen3.6 vocabulary at typical points of a document. Measurements, ignored by default:
//!
//!     cargo test -p lily-engine --release --test constraint_speed -- --ignored --nocapture

use std::time::Instant;

use lily_engine::json_constraint::{compile_schema, JsonMachine, VocabIndex};
use lily_engine::tool_choice::ForcedToolCall;
use lily_model::Tokenizer;

#[test]
#[ignore]
fn mask_time_over_the_qwen_vocabulary() {
    let tok = Tokenizer::qwen3_6();
    let vocab: Vec<Vec<u8>> = (0..tok.vocab_size() as u32)
        .map(|id| if tok.is_special(id) { vec![] } else { tok.token_bytes(id).map(<[u8]>::to_vec).unwrap_or_default() })
        .collect();
    let index = VocabIndex::new(&vocab);
    let schema = serde_json::json!({"type": "object", "properties": {"name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}, "age": {"type": "integer"}}, "required": ["name"]});
    let root = compile_schema(&schema).unwrap();
    for (label, prefix) in [("start", ""), ("in a key", "{\"na"), ("in a string", "{\"name\": \"Li"), ("after a value", "{\"name\": \"Lily\""), ("in a number", "{\"name\": \"x\", \"age\": 4")] {
        let mut m = JsonMachine::new(root.clone());
        assert!(m.feed(prefix.as_bytes()), "{prefix}");
        let rounds = 5;
        let mut allowed = 0;
        let mut took = std::time::Duration::ZERO;
        for _ in 0..rounds {
            let start = Instant::now();
            let mask = m.allowed_tokens(&vocab, &index, &[]);
            took += start.elapsed();
            allowed = mask.iter().filter(|&&a| a).count();
            // The fast paths must agree with feeding each token to the machine.
            let reference: Vec<bool> = vocab.iter().map(|t| !t.is_empty() && m.accepts(t)).collect();
            assert!(mask == reference, "{label}");
        }
        let ms = took.as_secs_f64() * 1e3 / rounds as f64;
        println!("{label:>14}: {ms:7.2} ms per mask, {allowed} of {} tokens allowed", vocab.len());
    }
}

#[test]
#[ignore]
fn forced_tool_call_mask_time_over_the_qwen_vocabulary() {
    let tok = Tokenizer::qwen3_6();
    let vocab: Vec<Vec<u8>> = (0..tok.vocab_size() as u32)
        .map(|id| if tok.is_special(id) { vec![] } else { tok.token_bytes(id).map(<[u8]>::to_vec).unwrap_or_default() })
        .collect();
    let specials: Vec<(u32, Vec<u8>)> =
        (0..tok.vocab_size() as u32).filter(|&id| tok.is_special(id)).map(|id| (id, tok.token_bytes(id).unwrap_or_default().to_vec())).collect();
    let index = VocabIndex::new(&vocab);
    let tools = [serde_json::json!({"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
        "city": {"type": "string"}, "days": {"type": "integer"}, "unit": {"enum": ["celsius", "fahrenheit"]}}, "required": ["city"]}}})];
    let call = ForcedToolCall::new(&["get_weather"], &tools);
    for (label, prefix) in [
        ("opening", ""),
        ("after the name", "<tool_call>\n<function=get_weather>\n"),
        ("in a string", "<tool_call>\n<function=get_weather>\n<parameter=city>\nPar"),
        ("in an integer", "<tool_call>\n<function=get_weather>\n<parameter=days>\n1"),
    ] {
        let mut m = call.clone();
        assert!(m.feed(prefix.as_bytes()), "{prefix}");
        let rounds = 5;
        let start = Instant::now();
        let mut allowed = 0;
        for _ in 0..rounds {
            allowed = m.allowed_tokens(&vocab, &index, &specials, &[]).iter().filter(|&&a| a).count();
        }
        let ms = start.elapsed().as_secs_f64() * 1e3 / rounds as f64;
        println!("{label:>14}: {ms:7.2} ms per mask, {allowed} of {} tokens allowed", vocab.len());
    }
}
