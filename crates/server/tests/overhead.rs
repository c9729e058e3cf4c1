//! What the server adds over the raw engine, on the tiny CPU fixture model: time to first
//! token and time per token, raw `generate` versus a streamed `/v1/completions` over
//! loopback. A measurement, not a check, so it is ignored by default:
//!
//!     cargo test -p lily-server --release --test overhead -- --ignored --nocapture

mod support;

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::ops::ControlFlow;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lily_cpu::CpuModel;
use lily_engine::{generate, GenerateOptions, Greedy};
use lily_server::{EngineSpec, ServerConfig};
use serde_json::json;
use support::{http, ByteModel};

const NEW_TOKENS: usize = 64;
const ROUNDS: usize = 5;

fn fixture() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../cpu/tests/fixtures/linear3_full1"))
}

fn prompt(round: usize, len: usize) -> Vec<u32> {
    // Distinct per round (and no stop id 255), like the benchmark contract's synthetic prompt.
    (0..len).map(|i| (((i + round * 7919) as u64 * 2654435761) % 255) as u32).collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// (time to first token, mean time per later token) of the raw engine.
fn raw(model: &CpuModel, prompt: &[u32]) -> (Duration, Duration, usize) {
    let mut seq = model.new_sequence(1024).unwrap();
    let options = GenerateOptions { max_tokens: NEW_TOKENS, stop_ids: vec![] };
    let stats = generate(model, &mut seq, prompt, 1024, &options, &mut Greedy, |_| ControlFlow::Continue(())).unwrap();
    let per = stats.decode_time / (stats.generated_tokens.max(2) - 1) as u32;
    (stats.prefill_time, per, stats.generated_tokens)
}

/// The same through the server: first token and mean gap between later tokens as the client
/// sees them.
fn served(addr: std::net::SocketAddr, prompt: &[u32]) -> (Duration, Duration, usize) {
    let body = json!({"model": "fixture", "prompt": prompt, "max_tokens": NEW_TOKENS, "temperature": 0, "stream": true, "stream_options": {"include_usage": true}}).to_string();
    let mut sock = TcpStream::connect(addr).unwrap();
    sock.set_nodelay(true).unwrap();
    let start = Instant::now();
    write!(sock, "POST /v1/completions HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    let mut times = Vec::new();
    let mut tokens = 0;
    for line in BufReader::new(sock).lines() {
        let line = line.unwrap();
        if let Some(data) = line.strip_prefix("data: ") {
            if data == "[DONE]" {
                break;
            }
            let v: serde_json::Value = serde_json::from_str(data).unwrap();
            if let Some(n) = v["usage"]["completion_tokens"].as_u64() {
                tokens = n as usize;
            } else if v["choices"][0]["finish_reason"].is_null() {
                times.push(start.elapsed());
            }
        }
    }
    // Bytes that are not yet whole UTF-8 characters are held back, so a few tokens share a
    // chunk: spread the time from the first to the last chunk over the tokens between.
    let per = (times[times.len() - 1] - times[0]) / (tokens.max(2) - 1) as u32;
    (times[0], per, tokens)
}

#[test]
#[ignore]
fn server_overhead_over_the_raw_engine() {
    let model = CpuModel::load(fixture()).unwrap();
    let mut config = ServerConfig::new("fixture", 1024);
    config.prefix_cache_bytes = 0;
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            addr_tx.send(listener.local_addr().unwrap()).unwrap();
            let engine = EngineSpec {
                make_backend: || CpuModel::load(fixture()),
                snapshot_bytes: Box::new(|m: &CpuModel, p| m.sequence_bytes(p)),
                is_fatal: |_| false,
            };
            lily_server::serve(listener, config, Arc::new(ByteModel), engine, std::future::pending()).await.unwrap();
        });
    });
    let addr = addr_rx.recv().unwrap();
    while http(addr, "GET", "/health", None, &[]).status != 200 {
        std::thread::sleep(Duration::from_millis(5));
    }
    for len in [16, 256] {
        let (mut rt, mut rp, mut st, mut sp) = (vec![], vec![], vec![], vec![]);
        raw(&model, &prompt(99, len));
        served(addr, &prompt(98, len));
        for round in 0..ROUNDS {
            let p = prompt(round, len);
            let (t, per, n) = raw(&model, &p);
            assert_eq!(n, NEW_TOKENS);
            rt.push(t.as_secs_f64() * 1e3);
            rp.push(per.as_secs_f64() * 1e3);
            let (t, per, n) = served(addr, &p);
            assert_eq!(n, NEW_TOKENS);
            st.push(t.as_secs_f64() * 1e3);
            sp.push(per.as_secs_f64() * 1e3);
        }
        let (rt, rp, st, sp) = (median(rt), median(rp), median(st), median(sp));
        println!(
            "prompt {len:>4} tokens, {NEW_TOKENS} new: TTFT raw {rt:.3} ms, served {st:.3} ms (+{:.3} ms); \
             per token raw {rp:.4} ms, served {sp:.4} ms (+{:.4} ms)",
            st - rt,
            sp - rp
        );
    }
}
