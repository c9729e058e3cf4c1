//! The "done when" for hybrid compute, with the real binary: `lily serve --upstream`
//! over the built-in demo checkpoint (the local model, on the CPU) in front of a recording,
//! echoing upstream (crates/server/tests/support/upstream.rs: a real HTTP server on loopback
//! that keeps every byte it receives and answers "You said: <last user message>", streamed in
//! 3-byte pieces so placeholders are split across events). A labelled set of mixed prompts
//! (crates/server/tests/data/hybrid_prompts.jsonl), each sent streamed and not: every benign
//! item is served by the cloud, no raw value of an item the gate flags reaches the upstream,
//! and every masked reply reaches the client with the original values restored.

mod support;
#[path = "../../server/tests/support/upstream.rs"]
mod upstream;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use support::{free_port, lily, Server};
use upstream::RecordingUpstream;

const CLOUD: &str = "cloud-model";

struct Reply {
    status: u16,
    route: String,
    body: String,
}

/// One request over HTTP/1.0, so the reply (streamed or not) is delimited by the close.
fn post(port: u16, body: &Value) -> Reply {
    let body = body.to_string();
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    write!(s, "POST /v1/chat/completions HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let route = head
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(k, _)| k.eq_ignore_ascii_case("x-lily-route"))
        .map_or("none".to_string(), |(_, v)| v.trim().to_string());
    Reply { status, route, body: body.to_string() }
}

/// The answer's text, from a JSON reply or the `data:` events of a stream.
fn content(r: &Reply, stream: bool) -> String {
    if !stream {
        let v: Value = serde_json::from_str(&r.body).unwrap();
        return v["choices"][0]["message"]["content"].as_str().unwrap_or("").to_string();
    }
    r.body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .filter(|d| *d != "[DONE]")
        .map(|d| serde_json::from_str::<Value>(d).unwrap())
        .filter_map(|v| v["choices"][0]["delta"]["content"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn labelled_mixed_prompts_with_the_demo_model_local() {
    let upstream = RecordingUpstream::start(3);
    let port = free_port();
    let audit = std::env::temp_dir().join(format!("lily-hybrid-demo-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&audit);
    let mut command = lily();
    command
        .args(["serve", "--backend", "cpu", "--bind", &format!("127.0.0.1:{port}")])
        .args(["--upstream", &upstream.base_url(), "--upstream-model", CLOUD, "--audit-log"])
        .arg(&audit)
        .env("LILY_UPSTREAM_API_KEY", "test-key");
    let _server = Server::start(command, port);
    let set = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/tests/data/hybrid_prompts.jsonl")).unwrap();
    let mut misses = Vec::new();
    let mut routes = std::collections::BTreeMap::<String, usize>::new();
    let mut all_values = Vec::new();
    for line in set.lines().filter(|l| !l.trim().is_empty()) {
        let item: Value = serde_json::from_str(line).unwrap();
        let (label, prompt) = (item["label"].as_str().unwrap(), item["prompt"].as_str().unwrap());
        let values: Vec<&str> = item["values"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        for stream in [false, true] {
            let before = upstream.count();
            let body = json!({"model": "auto", "stream": stream, "max_tokens": 8, "temperature": 0,
                              "messages": [{"role": "user", "content": prompt}]});
            let r = post(port, &body);
            *routes.entry(r.route.clone()).or_default() += 1;
            if label == "benign" {
                assert_eq!((r.status, r.route.as_str()), (200, "cloud"), "benign item served elsewhere: {prompt}\n{}", r.body);
                assert_eq!(content(&r, stream), format!("You said: {prompt}"));
                continue;
            }
            if r.route == "cloud" {
                misses.push(format!("{label}: {prompt}"));
                continue;
            }
            // Flagged: not one raw value reaches the upstream.
            upstream.assert_never_received(before, &values);
            all_values.extend(values.iter().map(|v| v.to_string()));
            match r.route.as_str() {
                "cloud-masked" => assert_eq!(content(&r, stream), format!("You said: {prompt}"), "masked reply not restored (stream: {stream})"),
                "local" => {
                    assert_eq!(upstream.count(), before, "a local item reached the upstream: {prompt}");
                    assert_eq!(r.status, 200, "{}", r.body);
                    assert!(r.body.contains("\"model\":\"lily-demo\""), "the demo model answers: {}", r.body);
                }
                _ => {
                    assert_eq!(upstream.count(), before, "{prompt}");
                    let code = serde_json::from_str::<Value>(&r.body).unwrap()["error"]["code"].clone();
                    assert!(r.status == 403 && (code == "sensitive_content_refused" || code == "consent_required"), "{}", r.body);
                }
            }
        }
    }
    assert!(misses.is_empty(), "the gate let these labelled items go to the cloud unmasked: {misses:#?}");
    eprintln!("served: {routes:?}");
    for route in ["cloud", "cloud-masked", "local", "none"] {
        assert!(routes.contains_key(route), "no item was served by {route}: {routes:?}");
    }
    // The audit log has a line per request and none of the values.
    let log = std::fs::read_to_string(&audit).unwrap();
    assert_eq!(log.lines().count(), 2 * set.lines().filter(|l| !l.trim().is_empty()).count());
    for v in &all_values {
        assert!(!log.contains(v.as_str()), "the audit log holds {v:?}");
    }
}
