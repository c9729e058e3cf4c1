//! `lily serve` with no --model: the built-in demo checkpoint answers over HTTP through the
//! whole real stack (Qwen-family tokenizer, the Qwen3.6 chat template, the CPU reference),
//! and SIGTERM stops it cleanly.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn post(port: u16, path: &str, body: &str) -> (u16, serde_json::Value) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "POST {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}", body.len()).unwrap();
    let mut raw = String::new();
    s.read_to_string(&mut raw).unwrap();
    let (head, body) = raw.split_once("\r\n\r\n").unwrap();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (status, serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {body}")))
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
    }
}

#[test]
fn demo_checkpoint_answers_and_sigterm_stops_the_server() {
    let port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_lily"))
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut server = Server(child);
    let start = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(start.elapsed() < Duration::from_secs(30), "the server did not start");
        std::thread::sleep(Duration::from_millis(50));
    }
    let ask = r#"{"model": "lily-demo", "temperature": 0, "messages": [{"role": "user", "content": "What color is the sky?"}]}"#;
    let (status, r) = post(port, "/v1/chat/completions", ask);
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["choices"][0]["message"]["content"], "The sky is blue.");
    assert!(r["choices"][0]["message"]["reasoning_content"].as_str().unwrap().contains("sky"));
    // Asked again, the prompt comes from the prefix cache (all but its last token) and the
    // restored state gives the same answer.
    let (_, again) = post(port, "/v1/chat/completions", ask);
    let prompt_tokens = again["usage"]["prompt_tokens"].as_u64().unwrap();
    assert_eq!(again["usage"]["prompt_tokens_details"]["cached_tokens"].as_u64().unwrap(), prompt_tokens - 1);
    assert_eq!(again["choices"][0]["message"], r["choices"][0]["message"]);
    let sum = r#"{"model": "lily-demo", "temperature": 0, "chat_template_kwargs": {"enable_thinking": false},
                  "messages": [{"role": "user", "content": "What is 3 plus 4?"}]}"#;
    assert_eq!(post(port, "/v1/chat/completions", sum).1["choices"][0]["message"]["content"], "3 plus 4 is 7.");

    let pid = server.0.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let start = Instant::now();
    loop {
        if let Some(status) = server.0.try_wait().unwrap() {
            assert!(status.success(), "lily serve exited with {status}");
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "lily serve did not exit after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
}
