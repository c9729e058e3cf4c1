//! Hybrid compute over real HTTP: the server under test (its local engine the scripted test
//! model) in front of a recording upstream (support/upstream.rs), a real server on loopback
//! that keeps every byte it receives. Every test checks those bytes: no raw value the gate
//! flagged may arrive. The labelled "done when" set runs against the real binary with the
//! demo checkpoint as the local model (crates/cli/tests/hybrid_demo.rs).

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use lily_gate::{Gate, Policy};
use lily_server::hybrid::HybridConfig;
use serde_json::{json, Value};
use support::upstream::{Behaviour, RecordingUpstream};
use support::*;

const CLOUD: &str = "cloud-model";
const KEY: &str = "test-upstream-key";

/// The full gate (learned tiers) is loaded once per test binary, as the server does once.
fn gate() -> Arc<Gate> {
    static GATE: OnceLock<Arc<Gate>> = OnceLock::new();
    GATE.get_or_init(|| Arc::new(Gate::new(Policy::default_policy()).expect("the gate's learned tiers load"))).clone()
}

fn audit_path(name: &str) -> PathBuf {
    let p = std::env::temp_dir().join(format!("lily-audit-{}-{name}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

struct Hybrid {
    server: TestServer,
    upstream: RecordingUpstream,
    audit: PathBuf,
}

fn start(name: &str, chunk_bytes: usize, tweak: impl FnOnce(&mut HybridConfig)) -> Hybrid {
    let upstream = RecordingUpstream::start(chunk_bytes);
    let audit = audit_path(name);
    let mut hybrid = HybridConfig {
        upstream_url: upstream.base_url(),
        upstream_model: CLOUD.into(),
        upstream_key: Some(KEY.into()),
        gate: gate(),
        upstream_timeout: Duration::from_secs(5),
        fallback: true,
        consent_ttl: Duration::from_secs(600),
        audit_log: Some(audit.clone()),
    };
    tweak(&mut hybrid);
    let mut config = config();
    config.hybrid = Some(hybrid);
    Hybrid { server: TestServer::start(config), upstream, audit }
}

fn ask(text: &str, stream: bool) -> Value {
    json!({"model": "auto", "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": text}],
           "stream": stream, "max_tokens": 8, "temperature": 0})
}

fn post(h: &Hybrid, body: &Value, headers: &[(&str, &str)]) -> HttpResponse {
    http(h.server.addr, "POST", "/v1/chat/completions", Some(body.to_string().as_bytes()), headers)
}

/// (content, reasoning, tool-call arguments, models named) of a streamed reply.
fn gather(r: &HttpResponse) -> (String, String, String, Vec<String>) {
    let (mut content, mut reasoning, mut args, mut models) = (String::new(), String::new(), String::new(), Vec::new());
    for d in r.sse_data() {
        if d == "[DONE]" {
            continue;
        }
        let v: Value = serde_json::from_str(&d).unwrap();
        assert!(v.get("error").is_none(), "error event: {d}");
        if let Some(m) = v["model"].as_str() {
            if !models.iter().any(|x| x == m) {
                models.push(m.to_string());
            }
        }
        let delta = &v["choices"][0]["delta"];
        content += delta["content"].as_str().unwrap_or("");
        reasoning += delta["reasoning_content"].as_str().unwrap_or("");
        for c in delta["tool_calls"].as_array().into_iter().flatten() {
            args += c["function"]["arguments"].as_str().unwrap_or("");
        }
    }
    (content, reasoning, args, models)
}

fn audit_lines(h: &Hybrid) -> Vec<Value> {
    std::fs::read_to_string(&h.audit).unwrap_or_default().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

fn assert_audit_clean(h: &Hybrid, values: &[&str]) {
    let log = std::fs::read_to_string(&h.audit).unwrap();
    for v in values {
        assert!(!log.contains(v), "the audit log holds the raw value {v:?}:\n{log}");
    }
}

const EMAIL: &str = "maria.gonzalez@acme.io";
const PHONE: &str = "+1 415 555 0134";
const MASKED_PROMPT: &str = "Please write to maria.gonzalez@acme.io and call +1 415 555 0134 about the delivery.";

#[test]
fn masked_round_trip_not_streamed() {
    let h = start("masked", 3, |_| {});
    let r = post(&h, &ask(MASKED_PROMPT, false), &[]);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("x-lily-route"), Some("cloud-masked"));
    assert!(r.header("x-request-id").is_some_and(|id| id.starts_with("req-")));
    let v = r.json();
    assert_eq!(v["model"], CLOUD);
    assert_eq!(v["choices"][0]["message"]["content"], format!("You said: {MASKED_PROMPT}"));
    assert_eq!(v["choices"][0]["message"]["reasoning_content"], format!("thinking about {MASKED_PROMPT}"));
    h.upstream.assert_never_received(0, &[EMAIL, PHONE, "415 555"]);
    let got = h.upstream.received();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body["model"], CLOUD);
    assert_eq!(got[0].header("authorization").as_deref(), Some(format!("Bearer {KEY}").as_str()));
    assert!(got[0].body["messages"][1]["content"].as_str().unwrap().contains("<EMAIL_1>"));
    let audit = audit_lines(&h);
    assert_eq!(audit.len(), 1);
    assert_eq!(audit[0]["decision"], "mask");
    assert_eq!(audit[0]["destination"], "cloud-masked");
    assert_eq!(audit[0]["upstream_status"], 200);
    assert!(audit[0]["masked_spans"].as_u64().unwrap() >= 2);
    assert_eq!(audit[0]["request_id"], r.header("x-request-id").unwrap());
    assert_audit_clean(&h, &[EMAIL, PHONE]);
}

#[test]
fn masked_round_trip_streamed_with_placeholders_split_across_chunks() {
    for chunk_bytes in [1, 3, 7] {
        let h = start(&format!("stream{chunk_bytes}"), chunk_bytes, |_| {});
        let r = post(&h, &ask(MASKED_PROMPT, true), &[]);
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.header("x-lily-route"), Some("cloud-masked"));
        let (content, reasoning, _, models) = gather(&r);
        assert_eq!(content, format!("You said: {MASKED_PROMPT}"), "chunks of {chunk_bytes} bytes");
        assert_eq!(reasoning, format!("thinking about {MASKED_PROMPT}"));
        assert_eq!(models, [CLOUD]);
        assert_eq!(r.sse_data().last().map(String::as_str), Some("[DONE]"));
        h.upstream.assert_never_received(0, &[EMAIL, PHONE, "415 555"]);
        assert_audit_clean(&h, &[EMAIL, PHONE]);
    }
}

#[test]
fn tools_schemas_and_every_field_are_masked_and_tool_arguments_unmasked() {
    let h = start("tools", 2, |_| {});
    let body = json!({
        "model": CLOUD, "stream": true, "max_tokens": 8,
        "messages": [{"role": "user", "content": "Book a table for maria.gonzalez@acme.io", "name": "quinn.ash@acme.org"}],
        "tools": [{"type": "function", "function": {"name": "book", "description": "Confirmations go to ops.desk@acme.io",
                   "parameters": {"type": "object", "properties": {"text": {"type": "string", "description": "e.g. lee.v@acme.io"}}}}}],
        "user": "user.42@acme.net",
        "metadata": {"owner": "sam.k@acme.org"},
        "stop": ["stop.at@acme.io"],
    });
    let r = post(&h, &body, &[]);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("x-lily-route"), Some("cloud-masked"));
    let (_, _, args, _) = gather(&r);
    assert_eq!(serde_json::from_str::<Value>(&args).unwrap()["text"], "Book a table for maria.gonzalez@acme.io");
    h.upstream.assert_never_received(
        0,
        &[EMAIL, "quinn.ash", "ops.desk", "lee.v@", "user.42", "sam.k", "stop.at"],
    );
    // Non-streamed too.
    let mut body = body;
    body["stream"] = json!(false);
    let r = post(&h, &body, &[]);
    let v = r.json();
    let args = v["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"].as_str().unwrap();
    assert_eq!(serde_json::from_str::<Value>(args).unwrap()["text"], "Book a table for maria.gonzalez@acme.io");
    h.upstream.assert_never_received(0, &[EMAIL, "quinn.ash", "ops.desk", "lee.v@", "user.42", "sam.k", "stop.at"]);
}

const HEALTH: &str = "I was diagnosed with type 2 diabetes last month and my doctor raised my metformin dose; how should I plan meals?";
const SECRET: &str = "sk-proj-4fT9xQ2mL8vN3bR7kW1zY6hJ0cD5sA2e";

#[test]
fn health_stays_local_secrets_are_refused_images_never_leave() {
    let h = start("local", 3, |_| {});
    for stream in [false, true] {
        let r = post(&h, &ask(HEALTH, stream), &[]);
        assert_eq!(r.status, 200, "{}", r.body);
        assert_eq!(r.header("x-lily-route"), Some("local"));
        if !stream {
            assert_eq!(r.json()["model"], MODEL);
        }
    }
    let r = post(&h, &ask(&format!("Why does Client(api_key=\"{SECRET}\") fail?"), false), &[]);
    assert_eq!(r.status, 403, "{}", r.body);
    let e = &r.json()["error"];
    assert_eq!(e["code"], "sensitive_content_refused");
    assert!(e["message"].as_str().unwrap().contains("secret"), "{e}");
    assert!(!r.body.contains(SECRET));
    let image = json!({"model": "auto", "max_tokens": 8, "messages": [{"role": "user", "content": [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}]});
    let r = post(&h, &image, &[]);
    assert_ne!(r.header("x-lily-route"), Some("cloud"), "{}", r.body);
    assert_eq!(h.upstream.count(), 0, "zero bytes to the upstream");
    let audit = audit_lines(&h);
    let decisions: Vec<&str> = audit.iter().map(|a| a["decision"].as_str().unwrap()).collect();
    assert_eq!(decisions, ["local", "local", "refuse", "local"]);
    assert_eq!(audit[3]["unreadable"], 1);
    assert_audit_clean(&h, &[SECRET, "diabetes", "metformin"]);
    let metrics = h.server.get("/metrics").body;
    assert!(metrics.contains("lily_gate_decisions_total{decision=\"local\"} 3"), "{metrics}");
    assert!(metrics.contains("lily_route_requests_total{route=\"none\"} 1"), "{metrics}");
}

#[test]
fn forced_local_by_header_or_model_name() {
    let h = start("forced", 3, |_| {});
    let r = post(&h, &ask("What is the capital of France?", false), &[("x-lily-route", "local")]);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("x-lily-route"), Some("local"));
    let mut body = ask(MASKED_PROMPT, true);
    body["model"] = json!(MODEL);
    let r = post(&h, &body, &[]);
    assert_eq!(r.header("x-lily-route"), Some("local"));
    assert_eq!(h.upstream.count(), 0);
    let r = post(&h, &ask("hi", false), &[("x-lily-route", "moon")]);
    assert_eq!(r.status, 400);
    // A benign request for `auto` goes to the cloud as is.
    let r = post(&h, &ask("What is the capital of France?", false), &[]);
    assert_eq!(r.header("x-lily-route"), Some("cloud"));
    assert_eq!(h.upstream.received()[0].body["messages"][1]["content"], "What is the capital of France?");
    let models = h.server.get("/v1/models").json();
    let ids: Vec<&str> = models["data"].as_array().unwrap().iter().map(|m| m["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [MODEL, "auto", CLOUD]);
    let mut unknown = ask("hi", false);
    unknown["model"] = json!("gpt-nope");
    assert_eq!(post(&h, &unknown, &[]).status, 404);
}

const FINANCE: &str = "My salary is 85,000 a year and I have 12,000 of credit card debt and a personal loan; should I consolidate my debt? Reply to maria.gonzalez@acme.io";

#[test]
fn consent_round_trip_single_use_bound_and_expiring() {
    let h = start("consent", 3, |c| c.consent_ttl = Duration::from_millis(1500));
    let ask_consent = |body: &Value| {
        let r = post(&h, body, &[]);
        assert_eq!(r.status, 403, "{}", r.body);
        let e = r.json()["error"].clone();
        assert_eq!(e["code"], "consent_required", "{e}");
        e
    };
    let body = ask(FINANCE, false);
    let e = ask_consent(&body);
    assert!(e["categories"].as_array().unwrap().iter().any(|c| c == "finances"), "{e}");
    let preview = e["masked_preview"].to_string();
    assert!(preview.contains("<EMAIL_1>") && !preview.contains(EMAIL), "{preview}");
    assert_eq!(h.upstream.count(), 0, "nothing is sent before consent");
    let id = e["consent_id"].as_str().unwrap().to_string();
    // Granted: the masked request goes upstream, the reply is unmasked.
    let r = post(&h, &body, &[("x-lily-consent", &id)]);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("x-lily-route"), Some("cloud-masked"));
    assert!(r.json()["choices"][0]["message"]["content"].as_str().unwrap().contains(EMAIL));
    assert_eq!(h.upstream.count(), 1);
    h.upstream.assert_never_received(0, &[EMAIL]);
    // Reused.
    let r = post(&h, &body, &[("x-lily-consent", &id)]);
    assert_eq!((r.status, r.json()["error"]["code"].clone()), (403, json!("consent_invalid")));
    // Bound to the content: another request cannot spend it.
    let id = ask_consent(&body)["consent_id"].as_str().unwrap().to_string();
    let tampered = ask(&FINANCE.replace("85,000", "95,000"), false);
    let r = post(&h, &tampered, &[("x-lily-consent", &id)]);
    assert_eq!(r.json()["error"]["code"], "consent_invalid", "{}", r.body);
    // Expired.
    let id = ask_consent(&body)["consent_id"].as_str().unwrap().to_string();
    std::thread::sleep(Duration::from_millis(1700));
    let r = post(&h, &body, &[("x-lily-consent", &id)]);
    assert_eq!(r.json()["error"]["code"], "consent_invalid", "{}", r.body);
    assert!(r.json()["error"]["message"].as_str().unwrap().contains("expired"));
    assert_eq!(h.upstream.count(), 1);
}

#[test]
fn upstream_failure_before_first_byte_falls_back_or_is_a_502() {
    let h = start("down", 3, |c| c.upstream_timeout = Duration::from_secs(1));
    for (behaviour, stream) in [(Behaviour::Unavailable, false), (Behaviour::Hangup, true), (Behaviour::Slow(Duration::from_secs(2)), false)] {
        h.upstream.set(behaviour);
        let r = post(&h, &ask(MASKED_PROMPT, stream), &[]);
        assert_eq!(r.status, 200, "{behaviour:?}: {}", r.body);
        assert_eq!(r.header("x-lily-route"), Some("local"), "{behaviour:?}");
        assert_eq!(r.header("x-lily-fallback"), Some("upstream-error"));
    }
    h.upstream.assert_never_received(0, &[EMAIL, PHONE]);
    let metrics = h.server.get("/metrics").body;
    assert!(metrics.contains("lily_upstream_failures_total{stage=\"before_first_byte\"} 3"), "{metrics}");
    // Nothing listening at all.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let strict = start("strict", 3, |c| {
        c.fallback = false;
        c.upstream_url = format!("http://{closed}/v1");
    });
    let r = post(&strict, &ask("What is the capital of France?", false), &[]);
    assert_eq!(r.status, 502, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], "upstream_error");
}

#[test]
fn upstream_dying_mid_stream_is_finished_locally_or_ends_with_an_error_event() {
    let h = start("midstream", 4, |c| c.upstream_timeout = Duration::from_secs(2));
    // The upstream sends the role chunk, the reasoning and a few content chunks, then dies;
    // the scripted local model answers with the text after `say:`.
    let prompt = "Tell me about maria.gonzalez@acme.io say:LOCAL-END";
    let reasoning_chunks = "thinking about ".len() / 4 + 1 + prompt.len() / 4;
    h.upstream.set(Behaviour::DieAfter(1 + reasoning_chunks + 3));
    let mut body = ask(prompt, true);
    body["max_tokens"] = json!(64);
    let r = post(&h, &body, &[]);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.header("x-lily-route"), Some("cloud-masked"));
    let (content, _, _, models) = gather(&r);
    assert!(content.starts_with("You said: "), "{content}");
    assert!(content.ends_with("LOCAL-END"), "{content}");
    assert_eq!(models, [CLOUD, MODEL]);
    assert_eq!(r.sse_data().last().map(String::as_str), Some("[DONE]"));
    let audit = audit_lines(&h);
    assert_eq!(audit[0]["fallback"], "upstream-error-mid-stream");
    h.upstream.assert_never_received(0, &[EMAIL]);

    let strict = start("midstream-strict", 4, |c| c.fallback = false);
    strict.upstream.set(Behaviour::DieAfter(5));
    let r = post(&strict, &ask(prompt, true), &[]);
    let data = r.sse_data();
    let error: Value = serde_json::from_str(&data[data.len() - 2]).unwrap();
    assert_eq!(error["error"]["code"], "upstream_error");
    assert_eq!(data.last().map(String::as_str), Some("[DONE]"));
}

/// The official `openai` Python client as the caller (tests/python/test_hybrid_client.py).
#[test]
fn official_openai_python_client_through_the_gate() {
    let Some(python) = openai_python() else { return };
    let h = start("python", 3, |_| {});
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/python/test_hybrid_client.py");
    let out = Command::new(&python)
        .arg(&script)
        .env("LILY_BASE_URL", format!("http://{}", h.server.addr))
        .env("LILY_MODEL", MODEL)
        .env("LILY_UPSTREAM_MODEL", CLOUD)
        .output()
        .expect("running python");
    let log = String::from_utf8_lossy(&out.stderr);
    eprintln!("{log}");
    assert!(out.status.success(), "the openai client tests failed:\n{log}\n{}", String::from_utf8_lossy(&out.stdout));
    h.upstream.assert_never_received(0, &[EMAIL, PHONE, SECRET]);
}
