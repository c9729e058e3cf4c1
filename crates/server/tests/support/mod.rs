//! A scripted model and a tiny HTTP client, so the server can be tested end to end over real
//! loopback HTTP without a checkpoint.
//!
//! The model reads its script from the prompt: it writes the text after the last `say:` (up
//! to the end of that message, special-token text as the special token) and then
//! `<|im_end|>`; with no `say:` it writes "ab" forever.
//! Its tokenizer is byte-level with the Qwen special tokens as single ids. Every other token
//! gets a seeded pseudo-random logit, so sampling has something to choose from. A prompt
//! containing `[slow]` makes every decode step take 20 ms; one containing `[broken]` fails its
//! prefill with an error the server is told is fatal (as a CUDA context error is).
#![allow(dead_code)] // each test binary uses a different part of this module

pub mod upstream;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use lily_model::tokenizer::escape::{escape_specials, escaped_pieces, EscapedPiece};
use lily_model::{Backend, ChatOptions, PickRule};
use lily_server::request::{ChatMessage, Role};
use lily_server::{EngineSpec, ServerConfig, TextModel};
use serde_json::Value;

pub const ENDOFTEXT: u32 = 256;
pub const IM_START: u32 = 257;
pub const IM_END: u32 = 258;
const SPECIALS: [&str; 7] = ["<|endoftext|>", "<|im_start|>", "<|im_end|>", "<think>", "</think>", "<tool_call>", "</tool_call>"];
/// One more id than tokens: the last row is padding, as in the real vocabulary.
pub const VOCAB: usize = 256 + SPECIALS.len() + 1;
pub const MODEL: &str = "scripted-test-model";

pub struct ByteModel;

impl ByteModel {
    pub fn encode_text(text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        let mut rest = text;
        while let Some((at, s)) = find_special(rest) {
            out.extend(rest[..at].bytes().map(u32::from));
            out.push(special_id(s));
            rest = &rest[at + s.len()..];
        }
        out.extend(rest.bytes().map(u32::from));
        out
    }
}

fn special_id(text: &str) -> u32 {
    256 + SPECIALS
        .iter()
        .position(|s| *s == text)
        .expect("a special token") as u32
}

/// The leftmost special-token text in `text` and its offset.
fn find_special(text: &str) -> Option<(usize, &'static str)> {
    (0..text.len()).find_map(|i| {
        SPECIALS
            .iter()
            .find(|s| text.as_bytes()[i..].starts_with(s.as_bytes()))
            .map(|s| (i, *s))
    })
}

impl TextModel for ByteModel {
    fn encode(&self, text: &str) -> Vec<u32> {
        Self::encode_text(text)
    }
    fn escape(&self, text: &str) -> String {
        escape_specials(text, find_special).into_owned()
    }
    fn encode_chat(&self, prompt: &str) -> Vec<u32> {
        let mut out = Vec::new();
        for piece in escaped_pieces(prompt, find_special) {
            match piece {
                EscapedPiece::Text(t) => out.extend(t.bytes().map(u32::from)),
                EscapedPiece::Special(s) => out.push(special_id(s)),
            }
        }
        out
    }
    fn token_bytes(&self, id: u32) -> Option<Vec<u8>> {
        match id {
            0..=255 => Some(vec![id as u8]),
            _ => SPECIALS.get(id as usize - 256).map(|s| s.as_bytes().to_vec()),
        }
    }
    fn is_special(&self, id: u32) -> bool {
        id >= 256
    }
    fn stop_ids(&self) -> Vec<u32> {
        vec![IM_END, ENDOFTEXT]
    }
    fn render_chat(
        &self,
        messages: &[ChatMessage],
        tools: &[Value],
        options: &ChatOptions,
    ) -> Result<String, String> {
        let mut out = String::new();
        if !tools.is_empty() {
            out += "<|im_start|>system\n# Tools\n";
            for t in tools {
                out += &t.to_string();
                out += "\n";
            }
            out += "<|im_end|>\n";
        }
        for m in messages {
            match m.role {
                Role::Tool => out += &format!("<|im_start|>user\n<tool_response>\n{}\n</tool_response><|im_end|>\n", m.content),
                role => {
                    out += &format!("<|im_start|>{}\n{}", role.as_str(), m.content);
                    for c in &m.tool_calls {
                        out += &format!("<tool_call>\n<function={}>\n</function>\n</tool_call>", c.name);
                    }
                    out += "<|im_end|>\n";
                }
            }
        }
        if options.add_generation_prompt {
            out += "<|im_start|>assistant\n";
            out += if options.enable_thinking {
                "<think>\n"
            } else {
                "<think>\n\n</think>\n\n"
            };
        }
        Ok(out)
    }
}

#[derive(Clone)]
pub struct ScriptedSeq {
    tokens: Vec<u32>,
    script: Option<Vec<u32>>,
    decoded: usize,
    slow: bool,
    max_seq: usize,
}

pub struct ScriptedBackend {
    /// Prompt tokens run through `prefill`, to see what the prefix cache saves.
    pub prefilled: Arc<AtomicUsize>,
    /// Tokens the backend picked itself (`prefill_pick`/`decode_pick`), as the GPU does,
    /// rather than returning logits for the host to pick from.
    pub picked: Arc<AtomicUsize>,
}

#[derive(Debug, thiserror::Error)]
pub enum ScriptedError {
    #[error("sequence full: {0} tokens")]
    Full(usize),
    #[error("the scripted device is broken")]
    Broken,
}

/// `EngineSpec::is_fatal` for the scripted backend.
pub fn scripted_is_fatal(e: &ScriptedError) -> bool {
    matches!(e, ScriptedError::Broken)
}

fn noise(position: usize, id: usize) -> f32 {
    let mut z = (position as u64) << 32 ^ id as u64 ^ 0x9E37_79B9_7F4A_7C15;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (z >> 40) as f32 / (1u64 << 24) as f32 * 2.0
}

impl ScriptedBackend {
    fn logits(&self, seq: &ScriptedSeq) -> Vec<f32> {
        let target = match &seq.script {
            Some(s) => s.get(seq.decoded).copied().unwrap_or(IM_END),
            None => [b'a', b'b'][seq.decoded % 2] as u32,
        };
        let mut logits: Vec<f32> = (0..VOCAB).map(|id| noise(seq.tokens.len(), id)).collect();
        logits[target as usize] += 6.0;
        logits[VOCAB - 1] = -30.0;
        logits
    }
}

fn find(haystack: &[u32], needle: &[u32]) -> Option<usize> {
    haystack.windows(needle.len()).rposition(|w| w == needle)
}

impl Backend for ScriptedBackend {
    type Sequence = ScriptedSeq;
    type Snapshot = ScriptedSeq;
    type Error = ScriptedError;

    fn vocab_size(&self) -> usize {
        VOCAB
    }
    fn new_sequence(&self, max_seq: usize) -> Result<ScriptedSeq, ScriptedError> {
        Ok(ScriptedSeq { tokens: vec![], script: None, decoded: 0, slow: false, max_seq })
    }
    fn prefill(&self, seq: &mut ScriptedSeq, tokens: &[u32]) -> Result<Vec<f32>, ScriptedError> {
        if seq.tokens.len() + tokens.len() > seq.max_seq {
            return Err(ScriptedError::Full(seq.tokens.len() + tokens.len()));
        }
        if find(tokens, &ByteModel::encode_text("[broken]")).is_some() {
            return Err(ScriptedError::Broken);
        }
        self.prefilled.fetch_add(tokens.len(), Ordering::Relaxed);
        seq.tokens.extend_from_slice(tokens);
        seq.decoded = 0;
        seq.slow = find(&seq.tokens, &ByteModel::encode_text("[slow]")).is_some();
        // The script is text: special-token text in it (which the prompt holds as plain bytes,
        // client text being escaped) is written as the special token.
        seq.script = find(&seq.tokens, &ByteModel::encode_text("say:")).map(|at| {
            let rest = &seq.tokens[at + 4..];
            let end = rest.iter().position(|&t| t == IM_END).unwrap_or(rest.len());
            let text: Vec<u8> = rest[..end]
                .iter()
                .flat_map(|&t| ByteModel.token_bytes(t).unwrap_or_default())
                .collect();
            ByteModel::encode_text(&String::from_utf8_lossy(&text))
        });
        Ok(self.logits(seq))
    }
    fn decode(&self, seq: &mut ScriptedSeq, token: u32) -> Result<Vec<f32>, ScriptedError> {
        if seq.tokens.len() >= seq.max_seq {
            return Err(ScriptedError::Full(seq.tokens.len() + 1));
        }
        if seq.slow {
            std::thread::sleep(Duration::from_millis(20));
        }
        seq.tokens.push(token);
        seq.decoded += 1;
        Ok(self.logits(seq))
    }
    fn prefill_pick(&self, seq: &mut ScriptedSeq, tokens: &[u32], rule: &PickRule) -> Result<u32, ScriptedError> {
        self.picked.fetch_add(1, Ordering::Relaxed);
        Ok(rule.pick(&self.prefill(seq, tokens)?, &mut Vec::new()))
    }
    fn decode_pick(&self, seq: &mut ScriptedSeq, token: u32, rule: &PickRule, _more: bool) -> Result<u32, ScriptedError> {
        self.picked.fetch_add(1, Ordering::Relaxed);
        Ok(rule.pick(&self.decode(seq, token)?, &mut Vec::new()))
    }
    fn position(&self, seq: &ScriptedSeq) -> usize {
        seq.tokens.len()
    }
    fn snapshot(&self, seq: &ScriptedSeq) -> ScriptedSeq {
        seq.clone()
    }
    fn restore(&self, seq: &mut ScriptedSeq, snapshot: &ScriptedSeq) {
        *seq = snapshot.clone();
    }
}

pub struct TestServer {
    pub addr: SocketAddr,
    pub prefilled: Arc<AtomicUsize>,
    pub picked: Arc<AtomicUsize>,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    /// Ends with what `serve` returned.
    thread: Option<std::thread::JoinHandle<Result<(), String>>>,
}

pub fn config() -> ServerConfig {
    ServerConfig::new(MODEL, 512)
}

/// What the engine thread runs to load the backend, given the one it would load: the tests of
/// readiness hold the load back or fail it.
pub type Load = Box<dyn FnOnce(ScriptedBackend) -> Result<ScriptedBackend, String> + Send>;

impl TestServer {
    /// A server whose engine is ready (`/health` answers 200) when this returns.
    pub fn start(config: ServerConfig) -> Self {
        let s = Self::start_loading(config, Box::new(Ok));
        let start = std::time::Instant::now();
        while s.get("/health").status != 200 {
            assert!(start.elapsed() < Duration::from_secs(15), "the engine did not become ready");
            std::thread::sleep(Duration::from_millis(5));
        }
        s
    }

    /// A server whose engine loads through `load`, returning as soon as the port is bound.
    pub fn start_loading(config: ServerConfig, load: Load) -> Self {
        let prefilled = Arc::new(AtomicUsize::new(0));
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (shutdown_tx, shutdown_rx) = tokio::sync::oneshot::channel::<()>();
        let counter = prefilled.clone();
        let picked = Arc::new(AtomicUsize::new(0));
        let picked_counter = picked.clone();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                addr_tx.send(listener.local_addr().unwrap()).unwrap();
                let engine = EngineSpec {
                    make_backend: move || load(ScriptedBackend { prefilled: counter, picked: picked_counter }),
                    snapshot_bytes: Box::new(|_: &ScriptedBackend, position| 64 + position * 4),
                    is_fatal: scripted_is_fatal,
                };
                let shutdown = async move {
                    let _ = shutdown_rx.await;
                };
                lily_server::serve(listener, config, Arc::new(ByteModel), engine, shutdown).await.map_err(|e| e.to_string())
            })
        });
        let addr = addr_rx.recv().unwrap();
        Self { addr, prefilled, picked, shutdown: Some(shutdown_tx), thread: Some(thread) }
    }

    /// Sends the shutdown signal and waits for the server to finish.
    pub fn stop(mut self) {
        self.stop_inner().expect("the server stopped with an error");
    }

    /// Waits for the server to stop by itself (as after a failed load): what `serve` returned.
    pub fn wait(mut self) -> Result<(), String> {
        self.thread.take().map_or(Ok(()), |t| t.join().map_err(|_| "the server thread panicked".to_string())?)
    }

    fn stop_inner(&mut self) -> Result<(), String> {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(result)) => result,
            Some(Err(_)) => Err("the server thread panicked".into()),
            None => Ok(()),
        }
    }

    pub fn post(&self, path: &str, body: &Value) -> HttpResponse {
        http(self.addr, "POST", path, Some(body.to_string().as_bytes()), &[])
    }

    pub fn get(&self, path: &str) -> HttpResponse {
        http(self.addr, "GET", path, None, &[])
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.stop_inner();
    }
}

#[derive(Debug)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl HttpResponse {
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
    /// The `data:` payloads of a server-sent event stream.
    pub fn sse_data(&self) -> Vec<String> {
        self.body.lines().filter_map(|l| l.strip_prefix("data: ")).map(str::to_string).collect()
    }
}

/// One HTTP/1.1 request on a fresh connection (`Connection: close`), read to the end.
pub fn http(addr: SocketAddr, method: &str, path: &str, body: Option<&[u8]>, headers: &[(&str, &str)]) -> HttpResponse {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
    let body = body.unwrap_or_default();
    let mut head = format!("{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    if !body.is_empty() {
        head += "Content-Type: application/json\r\n";
    }
    for (k, v) in headers {
        head += &format!("{k}: {v}\r\n");
    }
    head += "\r\n";
    s.write_all(head.as_bytes()).unwrap();
    // A server may answer (413) before reading a large body and close; that is fine.
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    let _ = s.read_to_end(&mut raw);
    parse_response(&raw)
}

pub fn parse_response(raw: &[u8]) -> HttpResponse {
    let text = String::from_utf8_lossy(raw);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or_else(|| panic!("no HTTP head in {text:?}"));
    let mut lines = head.lines();
    let status = lines.next().unwrap().split(' ').nth(1).unwrap().parse().unwrap();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let chunked = headers.iter().any(|(k, v)| k.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
    let body = if chunked { dechunk(body) } else { body.to_string() };
    HttpResponse { status, headers, body }
}

fn dechunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, after)) = rest.split_once("\r\n") {
        let Ok(n) = usize::from_str_radix(size.trim(), 16) else { break };
        if n == 0 || after.len() < n {
            break;
        }
        out += &after[..n];
        rest = after[n..].strip_prefix("\r\n").unwrap_or(&after[n..]);
    }
    out
}

pub fn user_message(content: &str) -> ChatMessage {
    ChatMessage {
        role: Role::User,
        content: content.into(),
        reasoning_content: None,
        tool_calls: vec![],
        tool_call_id: None,
        name: None,
    }
}

pub fn chat_body(user: &str) -> Value {
    serde_json::json!({"model": MODEL, "messages": [{"role": "user", "content": user}], "temperature": 0})
}

/// The Python that has the official `openai` client: `$LILY_TEST_PYTHON` (set by
/// scripts/test.sh, which installs it) or `python3`. `None` (the test says so and passes) when
/// it cannot import `openai`, except under CI (`CI` set), where that fails the test.
pub fn openai_python() -> Option<String> {
    let python = std::env::var("LILY_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let has_openai = std::process::Command::new(&python)
        .args(["-c", "import openai"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_openai {
        assert!(std::env::var_os("CI").is_none(), "CI must provide `{python}` with the openai package (pip install openai)");
        eprintln!("skipping: `{python}` cannot import openai (pip install openai, or set LILY_TEST_PYTHON)");
        return None;
    }
    Some(python)
}
