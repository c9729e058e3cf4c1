//! `lily serve` with no --model: the built-in demo checkpoint answers over HTTP through the
//! whole real stack (Qwen-family tokenizer, the Qwen3.6 chat template, the CPU reference),
//! and SIGTERM stops it cleanly.

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use support::{free_port, lily, Server};

#[test]
fn demo_checkpoint_answers_and_sigterm_stops_the_server() {
    let port = free_port();
    let mut command = lily();
    command.args(["serve", "--bind", &format!("127.0.0.1:{port}")]);
    let mut server = Server::start(command, port);
    let ask = r#"{"model": "lily-demo", "temperature": 0, "messages": [{"role": "user", "content": "What color is the sky?"}]}"#;
    let (status, r) = server.post("/v1/chat/completions", ask);
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["choices"][0]["message"]["content"], "The sky is blue.");
    assert!(r["choices"][0]["message"]["reasoning_content"]
        .as_str()
        .unwrap()
        .contains("sky"));
    // Asked again, the prompt comes from the prefix cache (all but its last token) and the
    // restored state gives the same answer.
    let (_, again) = server.post("/v1/chat/completions", ask);
    let prompt_tokens = again["usage"]["prompt_tokens"].as_u64().unwrap();
    assert_eq!(
        again["usage"]["prompt_tokens_details"]["cached_tokens"]
            .as_u64()
            .unwrap(),
        prompt_tokens - 1
    );
    assert_eq!(again["choices"][0]["message"], r["choices"][0]["message"]);
    let sum = r#"{"model": "lily-demo", "temperature": 0, "chat_template_kwargs": {"enable_thinking": false},
                  "messages": [{"role": "user", "content": "What is 3 plus 4?"}]}"#;
    assert_eq!(
        server.post("/v1/chat/completions", sum).1["choices"][0]["message"]["content"],
        "3 plus 4 is 7."
    );

    let pid = server.child.id().to_string();
    assert!(Command::new("kill")
        .args(["-TERM", &pid])
        .status()
        .unwrap()
        .success());
    let start = Instant::now();
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            assert!(status.success(), "lily serve exited with {status}");
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "lily serve did not exit after SIGTERM"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
