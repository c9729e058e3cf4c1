//! `lily serve` as a child process on a free loopback port, for the tests of the binary.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct Server {
    pub child: Child,
    pub port: u16,
    /// Where the server's stderr (its log) goes.
    pub log: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.log);
    }
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A `lily` command with no `LILY_*` variable inherited, so that the tests see only what they
/// set, and the default log level (info), whatever RUST_LOG says.
pub fn lily() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lily"));
    c.env_remove("RUST_LOG");
    for (k, _) in std::env::vars_os() {
        if k.to_string_lossy().starts_with("LILY_") {
            c.env_remove(k);
        }
    }
    c
}

impl Server {
    /// Runs `command` (a `lily serve` listening on `port`) and waits until `/health` answers 200.
    pub fn start(mut command: Command, port: u16) -> Server {
        static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let log =
            std::env::temp_dir().join(format!("lily-serve-test-{}-{n}.log", std::process::id()));
        let child = command
            .stderr(std::fs::File::create(&log).unwrap())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        let mut server = Server { child, port, log };
        let start = Instant::now();
        loop {
            if let Some(status) = server.child.try_wait().unwrap() {
                panic!("lily serve exited with {status}:\n{}", server.log_text());
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() && server.get("/health").0 == 200 {
                return server;
            }
            assert!(
                start.elapsed() < Duration::from_secs(60),
                "the server did not become ready:\n{}",
                server.log_text()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub fn log_text(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// (status, body) of one request on a fresh connection.
    pub fn request(&self, method: &str, path: &str, body: &str) -> (u16, String) {
        let mut s = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        write!(s, "{method} {path} HTTP/1.0\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        let mut raw = String::new();
        s.read_to_string(&mut raw).unwrap();
        let (head, body) = raw.split_once("\r\n\r\n").unwrap();
        (
            head.split(' ').nth(1).unwrap().parse().unwrap(),
            body.to_string(),
        )
    }

    pub fn get(&self, path: &str) -> (u16, String) {
        self.request("GET", path, "")
    }

    pub fn post(&self, path: &str, body: &str) -> (u16, serde_json::Value) {
        let (status, body) = self.request("POST", path, body);
        (
            status,
            serde_json::from_str(&body).unwrap_or_else(|e| panic!("{e}: {body}")),
        )
    }
}
