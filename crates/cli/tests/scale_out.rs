//! Scale-out behind an existing router (docs/SCALE_OUT.md): two demo replicas of `lily serve`
//! behind `vllm-router` on loopback. Chats are spread over both replicas, every turn of a chat
//! goes to the replica holding its prefix (the prefix cache serves the earlier turns), and once
//! a replica is killed every request is answered by the other.
//!
//! The router comes from `$LILY_TEST_PYTHON`'s environment (scripts/test.sh installs it from
//! scripts/test-requirements.txt) or the PATH; where there is none the test says so and passes,
//! except under CI (`CI` set), where it fails. The router's warnings and errors go to
//! target/tmp/scale_out-router.log.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// Conversations; with consistent hashing over two replicas, the chance that all of them land
/// on one replica is 2^-10. Odd, so that a router that takes turns between the replicas (no
/// affinity) moves every chat at its next turn.
const CHATS: usize = 11;
const TURNS: usize = 3;

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One HTTP/1.0 exchange (the peer closes after it, and sends no chunked body); the status and
/// the body, or None when the connection fails.
fn http(
    port: u16,
    method: &str,
    path: &str,
    body: &str,
    headers: &[(&str, &str)],
) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
    let extra: String = headers
        .iter()
        .map(|(k, v)| format!("{k}: {v}\r\n"))
        .collect();
    write!(s, "{method} {path} HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\n\r\n{body}", body.len()).ok()?;
    let mut raw = String::new();
    s.read_to_string(&mut raw).ok()?;
    let (head, body) = raw.split_once("\r\n\r\n")?;
    Some((head.split(' ').nth(1)?.parse().ok()?, body.to_string()))
}

/// Chat completions this replica has answered with 200, from its /metrics.
fn answered(port: u16) -> u64 {
    let (status, text) = http(port, "GET", "/metrics", "", &[]).expect("the replica's /metrics");
    assert_eq!(status, 200);
    text.lines()
        .filter(|l| {
            l.starts_with("lily_requests_total{")
                && l.contains("endpoint=\"/v1/chat/completions\"")
                && l.contains("status=\"200\"")
        })
        .map(|l| l.rsplit(' ').next().unwrap().parse::<f64>().unwrap() as u64)
        .sum()
}

struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn wait_healthy(port: u16, what: &str) {
    let start = Instant::now();
    while http(port, "GET", "/health", "", &[]).map(|r| r.0) != Some(200) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "{what} on port {port} did not become healthy"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `vllm-router` beside the test Python, else on the PATH; None (a skip) where there is none.
fn router_binary() -> Option<PathBuf> {
    let beside_python = std::env::var_os("LILY_TEST_PYTHON")
        .map(PathBuf::from)
        .and_then(|p| p.parent().map(|d| d.join("vllm-router")))
        .filter(|p| p.exists());
    let router = beside_python.unwrap_or_else(|| PathBuf::from("vllm-router"));
    let runs = Command::new(&router)
        .arg("--help")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !runs {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must provide vllm-router (scripts/test.sh installs it: pip install vllm-router)"
        );
        eprintln!("skipping: no vllm-router beside $LILY_TEST_PYTHON or on the PATH (pip install vllm-router, or run scripts/test.sh)");
        return None;
    }
    Some(router)
}

fn replica(port: u16) -> Process {
    let child = Command::new(env!("CARGO_BIN_EXE_lily"))
        .args(["serve", "--bind", &format!("127.0.0.1:{port}")])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    Process(child)
}

/// One chat turn through the router, keyed to its conversation by `X-Session-ID`: the
/// answer's text and how many prompt tokens came from the replica's prefix cache.
fn turn(router: u16, chat: usize, messages: &[Value]) -> (String, u64) {
    let body = json!({"model": "lily-demo", "max_tokens": 8, "temperature": 0, "messages": messages,
                      "chat_template_kwargs": {"enable_thinking": false}});
    let session = format!("chat-{chat}");
    let (status, text) = http(
        router,
        "POST",
        "/v1/chat/completions",
        &body.to_string(),
        &[("X-Session-ID", &session)],
    )
    .unwrap_or_else(|| panic!("chat {chat}: the router closed the connection"));
    assert_eq!(status, 200, "chat {chat}: {text}");
    let r: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("chat {chat}: {e}: {text}"));
    let answer = r["choices"][0]["message"]["content"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    (
        answer,
        r["usage"]["prompt_tokens_details"]["cached_tokens"]
            .as_u64()
            .unwrap(),
    )
}

/// A system prompt of some 150 tokens, different from its first word for every chat, so that
/// its head is cached on whichever replica served the chat, and only there.
fn system_prompt(chat: usize) -> String {
    const WORDS: [&str; 12] = [
        "apple", "river", "stone", "cloud", "maple", "tiger", "violin", "copper", "meadow",
        "lantern", "harbor", "falcon",
    ];
    (0..24)
        .map(|k| {
            format!(
                "{}{}",
                WORDS[(chat * 5 + k) % WORDS.len()],
                chat * 31 + k % 3
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn two_replicas_behind_vllm_router_spread_stick_and_survive_a_kill() {
    let Some(router_bin) = router_binary() else {
        return;
    };
    let ports = [free_port(), free_port()];
    let mut replicas: Vec<Option<Process>> = ports.iter().map(|&p| Some(replica(p))).collect();
    for &p in &ports {
        wait_healthy(p, "lily serve");
    }
    let router_port = free_port();
    let log = std::fs::File::create(
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("scale_out-router.log"),
    )
    .unwrap();
    let workers: Vec<String> = ports
        .iter()
        .map(|p| format!("http://127.0.0.1:{p}"))
        .collect();
    let router = Command::new(&router_bin)
        .args([
            "--host",
            "127.0.0.1",
            "--port",
            &router_port.to_string(),
            "--policy",
            "consistent_hash",
            "--worker-urls",
        ])
        .args(&workers)
        .args([
            "--prometheus-port",
            &free_port().to_string(),
            "--log-level",
            "warning",
        ])
        // Notice a dead replica within a second, and find the live ones at start-up as soon as they answer.
        .args([
            "--health-check-interval-secs",
            "1",
            "--health-failure-threshold",
            "1",
            "--worker-startup-check-interval",
            "1",
        ])
        .args([
            "--retry-initial-backoff-ms",
            "250",
            "--retry-max-backoff-ms",
            "1000",
        ])
        .stdout(log.try_clone().unwrap())
        .stderr(log)
        .spawn()
        .unwrap();
    let _router = Process(router);
    wait_healthy(router_port, "vllm-router");

    // Turn by turn, each chat in turn; which replica answered is read off their counters.
    let mut chats: Vec<Vec<Value>> = (0..CHATS)
        .map(|chat| vec![json!({"role": "system", "content": system_prompt(chat)})])
        .collect();
    let mut replica_of = vec![Vec::new(); CHATS];
    let mut cached = vec![Vec::new(); CHATS];
    for t in 0..TURNS {
        for (chat, messages) in chats.iter_mut().enumerate() {
            messages
                .push(json!({"role": "user", "content": format!("Question {t} of chat {chat}?")}));
            let before = ports.map(answered);
            let (answer, hit) = turn(router_port, chat, messages);
            let served: Vec<usize> = (0..2).filter(|&i| answered(ports[i]) > before[i]).collect();
            assert_eq!(
                served.len(),
                1,
                "chat {chat} turn {t}: not answered by exactly one replica"
            );
            messages.push(json!({"role": "assistant", "content": answer}));
            replica_of[chat].push(served[0]);
            cached[chat].push(hit);
        }
    }
    for chat in 0..CHATS {
        assert!(
            replica_of[chat].iter().all(|&r| r == replica_of[chat][0]),
            "chat {chat} moved between replicas: {:?}",
            replica_of[chat]
        );
        // Its head is cached only where it was served before (no other replica has seen its
        // system prompt). Not every turn hits: the cache keeps the state at the last 64-token
        // mark of a prompt, which a next turn may not share.
        assert!(
            cached[chat][1..].iter().any(|&c| c > 0),
            "chat {chat}: no later turn found its prefix cached: {:?}",
            cached[chat]
        );
    }
    let on_first = replica_of.iter().filter(|r| r[0] == 0).count();
    assert!(
        0 < on_first && on_first < CHATS,
        "the chats were not spread over both replicas: {on_first} of {CHATS} on the first"
    );

    // Kill one replica; every chat, including those it held, is answered by the other.
    let survivor = answered(ports[1]);
    drop(replicas[0].take());
    for (chat, mut messages) in chats.into_iter().enumerate() {
        messages.push(json!({"role": "user", "content": "One more question?"}));
        turn(router_port, chat, &messages);
    }
    assert_eq!(
        answered(ports[1]) - survivor,
        CHATS as u64,
        "the surviving replica did not answer every chat"
    );
}
