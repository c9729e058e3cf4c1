//! Fifty concurrent clients on loopback, half streaming: every one gets its own answer,
//! complete, and nothing is lost or mixed up.

mod support;

use std::time::{Duration, Instant};

use serde_json::{json, Value};
use support::*;

const CLIENTS: usize = 50;

#[test]
fn fifty_concurrent_clients_each_get_their_own_answer() {
    let mut config = config();
    config.queue_capacity = CLIENTS;
    let s = TestServer::start(config);
    let addr = s.addr;
    let start = Instant::now();
    let clients: Vec<_> = (0..CLIENTS)
        .map(|i| {
            std::thread::spawn(move || {
                let expected = format!("client {i} answer {}", "x".repeat(i % 7));
                let stream = i % 2 == 0;
                let body = json!({
                    "model": MODEL, "temperature": 0, "stream": stream,
                    "messages": [{"role": "user", "content": format!("say:</think>{expected}")}],
                });
                let r = http(addr, "POST", "/v1/chat/completions", Some(body.to_string().as_bytes()), &[]);
                assert_eq!(r.status, 200, "client {i}: {}", r.body);
                let got = if stream {
                    let data = r.sse_data();
                    assert_eq!(data.last().map(String::as_str), Some("[DONE]"), "client {i}: stream not finished");
                    data[..data.len() - 1]
                        .iter()
                        .map(|d| {
                            let v: Value = serde_json::from_str(d).unwrap();
                            v["choices"][0]["delta"]["content"].as_str().unwrap_or("").to_string()
                        })
                        .collect::<String>()
                } else {
                    r.json()["choices"][0]["message"]["content"].as_str().unwrap().to_string()
                };
                assert_eq!(got, expected, "client {i} got someone else's answer");
            })
        })
        .collect();
    for c in clients {
        c.join().expect("a client failed");
    }
    let took = start.elapsed();
    assert!(took < Duration::from_secs(30), "50 clients took {took:?}");
    let metrics = s.get("/metrics").body;
    assert!(metrics.contains(&format!("lily_requests_total{{endpoint=\"/v1/chat/completions\",status=\"200\"}} {CLIENTS}")), "{metrics}");
}
