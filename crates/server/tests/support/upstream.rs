//! A recording OpenAI-compatible upstream for the hybrid tests: a real HTTP/1.1 server on
//! loopback (plain std TCP, one thread per connection) that keeps every byte it receives,
//! head and body, and echoes the last user message back: `You said: <text>` as content (and
//! `thinking about <text>` as reasoning), or, when the request has tools, a call of the first
//! tool with `{"text": <text>}` as arguments. Streamed replies go out in chunks of
//! `chunk_bytes` bytes, so placeholders are split across SSE events. It can be told to fail
//! before its first byte (a 503 or a dropped connection) or to die after some chunks.
#![allow(dead_code)] // crates/cli/tests/hybrid_demo.rs uses only part of it

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    Echo,
    /// Answers 503 at once.
    Unavailable,
    /// Reads the request and closes the connection without a byte.
    Hangup,
    /// Streams this many chunks, then closes the connection mid-body.
    DieAfter(usize),
    /// Waits this long before answering.
    Slow(Duration),
}

#[derive(Debug, Clone)]
pub struct Received {
    /// Every byte of the request as it arrived.
    pub raw: Vec<u8>,
    pub body: Value,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<String> {
        let text = String::from_utf8_lossy(&self.raw);
        let head = text.split("\r\n\r\n").next().unwrap_or("");
        head.lines()
            .filter_map(|l| l.split_once(':'))
            .find(|(k, _)| k.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim().to_string())
    }
}

struct Shared {
    received: Mutex<Vec<Received>>,
    behaviour: Mutex<Behaviour>,
    chunk_bytes: usize,
}

pub struct RecordingUpstream {
    pub addr: SocketAddr,
    shared: Arc<Shared>,
}

impl RecordingUpstream {
    pub fn start(chunk_bytes: usize) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Arc::new(Shared { received: Mutex::new(Vec::new()), behaviour: Mutex::new(Behaviour::Echo), chunk_bytes });
        let s = shared.clone();
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(conn) = conn else { continue };
                let s = s.clone();
                std::thread::spawn(move || {
                    let _ = serve(conn, &s);
                });
            }
        });
        Self { addr, shared }
    }

    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    pub fn set(&self, b: Behaviour) {
        *self.shared.behaviour.lock().unwrap() = b;
    }

    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().unwrap().clone()
    }

    pub fn count(&self) -> usize {
        self.shared.received.lock().unwrap().len()
    }

    /// Every byte received since request number `from`.
    pub fn bytes_since(&self, from: usize) -> Vec<u8> {
        self.shared.received.lock().unwrap()[from..].iter().flat_map(|r| r.raw.clone()).collect()
    }

    /// Panics if any byte received since request `from` contains one of `values`.
    pub fn assert_never_received(&self, from: usize, values: &[&str]) {
        let bytes = self.bytes_since(from);
        let text = String::from_utf8_lossy(&bytes);
        for v in values {
            assert!(!text.contains(v), "the upstream received the raw value {v:?} in:\n{text}");
        }
    }
}

fn serve(conn: TcpStream, shared: &Shared) -> std::io::Result<()> {
    conn.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(conn.try_clone()?);
    let mut raw = Vec::new();
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        raw.extend_from_slice(line.as_bytes());
        if let Some((k, v)) = line.split_once(':') {
            if k.trim().eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)?;
    raw.extend_from_slice(&body);
    let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    shared.received.lock().unwrap().push(Received { raw, body: body.clone() });
    let behaviour = *shared.behaviour.lock().unwrap();
    let mut conn = conn;
    match behaviour {
        Behaviour::Hangup => return conn.shutdown(std::net::Shutdown::Both),
        Behaviour::Unavailable => {
            let msg = r#"{"error":{"message":"overloaded","type":"server_error"}}"#;
            return write!(conn, "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{msg}", msg.len());
        }
        Behaviour::Slow(d) => std::thread::sleep(d),
        Behaviour::Echo | Behaviour::DieAfter(_) => {}
    }
    let said = last_user_text(&body);
    let tool = body.pointer("/tools/0/function/name").and_then(Value::as_str).map(str::to_string);
    let model = body["model"].as_str().unwrap_or("?").to_string();
    if body["stream"].as_bool().unwrap_or(false) {
        let die_after = match behaviour {
            Behaviour::DieAfter(n) => Some(n),
            _ => None,
        };
        write!(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n")?;
        let mut events = Vec::new();
        let first = json!({"role": "assistant", "content": ""});
        events.push(first);
        match &tool {
            Some(name) => {
                events.push(json!({"tool_calls": [{"index": 0, "id": "call_up_1", "type": "function", "function": {"name": name, "arguments": ""}}]}));
                for piece in pieces(&json!({"text": said}).to_string(), shared.chunk_bytes) {
                    events.push(json!({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}));
                }
            }
            None => {
                for piece in pieces(&format!("thinking about {said}"), shared.chunk_bytes) {
                    events.push(json!({"reasoning_content": piece}));
                }
                for piece in pieces(&format!("You said: {said}"), shared.chunk_bytes) {
                    events.push(json!({"content": piece}));
                }
            }
        }
        for (i, delta) in events.iter().enumerate() {
            if die_after == Some(i) {
                conn.flush()?;
                return conn.shutdown(std::net::Shutdown::Both);
            }
            let chunk = json!({"id": "up-1", "object": "chat.completion.chunk", "created": 1, "model": model,
                               "choices": [{"index": 0, "delta": delta, "finish_reason": null}]});
            send_chunk(&mut conn, &format!("data: {chunk}\n\n"))?;
        }
        let reason = if tool.is_some() { "tool_calls" } else { "stop" };
        let last = json!({"id": "up-1", "object": "chat.completion.chunk", "created": 1, "model": model,
                          "choices": [{"index": 0, "delta": {}, "finish_reason": reason}]});
        send_chunk(&mut conn, &format!("data: {last}\n\n"))?;
        send_chunk(&mut conn, "data: [DONE]\n\n")?;
        conn.write_all(b"0\r\n\r\n")?;
    } else {
        let message = match &tool {
            Some(name) => json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_up_1", "type": "function",
                                 "function": {"name": name, "arguments": json!({"text": said}).to_string()}}]}),
            None => json!({"role": "assistant", "content": format!("You said: {said}"), "reasoning_content": format!("thinking about {said}")}),
        };
        let reply = json!({"id": "up-1", "object": "chat.completion", "created": 1, "model": model,
                           "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
                           "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}})
        .to_string();
        write!(conn, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{reply}", reply.len())?;
    }
    conn.flush()
}

fn send_chunk(conn: &mut TcpStream, data: &str) -> std::io::Result<()> {
    write!(conn, "{:x}\r\n{data}\r\n", data.len())?;
    conn.flush()
}

/// `text` in pieces of about `n` bytes, cut on character boundaries.
pub fn pieces(text: &str, n: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let mut cut = n.min(rest.len());
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        out.push(rest[..cut].to_string());
        rest = &rest[cut..];
    }
    out
}

fn last_user_text(body: &Value) -> String {
    let Some(messages) = body["messages"].as_array() else { return String::new() };
    let Some(user) = messages.iter().rev().find(|m| m["role"] == "user") else { return String::new() };
    match &user["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join(" "),
        _ => String::new(),
    }
}
