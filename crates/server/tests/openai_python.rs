//! Drives tests/python/test_openai_client.py (the official `openai` Python client) against two
//! scripted-model servers. Uses `$LILY_TEST_PYTHON` (set by scripts/test.sh, which installs
//! openai) or `python3`; when that has no `openai` module the test says so and passes, except
//! under CI (`CI` set), where it fails.

mod support;

use std::path::Path;
use std::process::Command;

use support::*;

#[test]
fn official_openai_python_client() {
    let Some(python) = openai_python() else { return };
    let server = TestServer::start(config());
    let mut small = config();
    small.queue_capacity = 1;
    let small_queue = TestServer::start(small);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/python/test_openai_client.py");
    let out = Command::new(&python)
        .arg(&script)
        .env("LILY_BASE_URL", format!("http://{}", server.addr))
        .env("LILY_SMALL_QUEUE_URL", format!("http://{}", small_queue.addr))
        .env("LILY_MODEL", MODEL)
        .output()
        .expect("running python");
    let log = String::from_utf8_lossy(&out.stderr);
    eprintln!("{log}");
    assert!(out.status.success(), "the openai client tests failed:\n{log}\n{}", String::from_utf8_lossy(&out.stdout));
}
