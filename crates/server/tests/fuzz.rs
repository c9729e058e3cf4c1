//! Property test of the request parser: thousands of mutated requests (JSON-level and
//! byte-level) must never panic, and those that parse must be within the documented ranges.
//! A sample also goes over HTTP, where no answer may be a 500 and the server must stay up.

mod support;

use lily_server::request::{parse_chat, parse_completion};
use serde_json::{json, Value};
use support::*;

/// A small seeded generator so every run tries the same cases (a failure reproduces).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn seeds() -> Vec<Value> {
    vec![
        json!({"model": MODEL, "messages": [{"role": "system", "content": "s"}, {"role": "user", "content": [{"type": "text", "text": "hi"}]}],
               "stream": true, "stream_options": {"include_usage": true}, "max_tokens": 5, "stop": ["a", "b"],
               "temperature": 0.7, "top_p": 0.9, "top_k": 5, "min_p": 0.1, "seed": 3, "logprobs": true, "top_logprobs": 2,
               "presence_penalty": 0.5, "frequency_penalty": -0.5,
               "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}}}}],
               "tool_choice": "auto", "chat_template_kwargs": {"enable_thinking": false},
               "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": {"type": "object", "properties": {"a": {"type": "array", "items": {"enum": [1, "x"]}}}}}}}),
        json!({"model": MODEL, "messages": [{"role": "assistant", "content": null, "tool_calls": [{"id": "c", "type": "function", "function": {"name": "f", "arguments": "{}"}}]},
               {"role": "tool", "tool_call_id": "c", "content": "r"}], "response_format": {"type": "json_object"}}),
        json!({"model": MODEL, "prompt": [1, 2, 3], "logprobs": 3, "max_tokens": 2, "stream": false}),
        json!({"model": MODEL, "prompt": "text", "echo": false, "stop": "x"}),
    ]
}

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth > 2 { 6 } else { 8 }) {
        0 => Value::Null,
        1 => json!(rng.below(2) == 0),
        2 => json!(rng.next() as i64),
        3 => json!((rng.next() as f64 / u64::MAX as f64 - 0.5) * 10.0),
        4 => json!(["", "text", "\u{0}", "<think>", "é😀", "image_url", "json_schema"][rng.below(7)]),
        5 => json!(-(rng.below(3) as i64)),
        6 => Value::Array((0..rng.below(4)).map(|_| random_value(rng, depth + 1)).collect()),
        _ => {
            let keys = ["type", "text", "role", "content", "schema", "name", "properties", "items", "$ref", "anyOf"];
            Value::Object((0..rng.below(4)).map(|_| (keys[rng.below(keys.len())].to_string(), random_value(rng, depth + 1))).collect())
        }
    }
}

/// Replaces, removes or adds one value somewhere in the tree.
fn mutate(v: &mut Value, rng: &mut Rng) {
    match v {
        Value::Object(m) if !m.is_empty() && rng.below(3) > 0 => {
            let key = m.keys().nth(rng.below(m.len())).unwrap().clone();
            match rng.below(4) {
                0 => {
                    m.remove(&key);
                }
                1 => {
                    m.insert(key, random_value(rng, 0));
                }
                _ => mutate(m.get_mut(&key).unwrap(), rng),
            }
        }
        Value::Array(a) if !a.is_empty() && rng.below(3) > 0 => {
            let i = rng.below(a.len());
            if rng.below(4) == 0 {
                a.remove(i);
            } else {
                mutate(&mut a[i], rng);
            }
        }
        _ => *v = random_value(rng, 0),
    }
}

fn byte_mutate(bytes: &mut Vec<u8>, rng: &mut Rng) {
    for _ in 0..=rng.below(4) {
        if bytes.is_empty() {
            return;
        }
        let i = rng.below(bytes.len());
        match rng.below(3) {
            0 => bytes[i] = rng.next() as u8,
            1 => bytes.truncate(i),
            _ => bytes.insert(i, b"{}[]\",:\\"[rng.below(8)]),
        }
    }
}

fn check_parsed(bytes: &[u8]) {
    if let Ok(r) = parse_chat(bytes) {
        assert!(!r.messages.is_empty());
        let p = &r.params.sampling;
        assert!((0.0..=2.0).contains(&p.temperature) && p.top_p > 0.0 && p.top_p <= 1.0 && (0.0..=1.0).contains(&p.min_p));
        assert!(r.params.max_tokens != Some(0));
        assert!(r.params.logprobs.is_none_or(|n| n <= 20));
    }
    if let Ok(r) = parse_completion(bytes) {
        assert!(r.params.max_tokens.is_some_and(|m| m > 0));
    }
}

#[test]
fn mutated_requests_never_panic_the_parser() {
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let seeds = seeds();
    for case in 0..20_000 {
        let mut v = seeds[case % seeds.len()].clone();
        for _ in 0..=rng.below(3) {
            mutate(&mut v, &mut rng);
        }
        let mut bytes = v.to_string().into_bytes();
        check_parsed(&bytes);
        byte_mutate(&mut bytes, &mut rng);
        check_parsed(&bytes);
    }
}

#[test]
fn mutated_requests_over_http_never_get_a_500() {
    let s = TestServer::start(config());
    let mut rng = Rng(0xfeed_beef_0bad_cafe);
    let seeds = seeds();
    for case in 0..300 {
        let mut v = seeds[case % seeds.len()].clone();
        mutate(&mut v, &mut rng);
        // Keep generation short and never streaming-forever.
        if let Some(o) = v.as_object_mut() {
            o.insert("max_tokens".into(), json!(3));
        }
        let path = if case % seeds.len() >= 2 { "/v1/completions" } else { "/v1/chat/completions" };
        let r = http(s.addr, "POST", path, Some(v.to_string().as_bytes()), &[]);
        assert!(r.status < 500, "{v}\n-> {} {}", r.status, r.body);
        if r.status >= 400 {
            assert!(r.json()["error"]["message"].is_string());
        }
    }
    assert_eq!(s.post("/v1/chat/completions", &chat_body("say:alive")).status, 200);
}
