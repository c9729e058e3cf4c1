//! `lily gate --jsonl`: many texts through one process, one verdict per input line, and a bad
//! line answered with an error object while the lines after it are still inspected.

use std::io::Write;
use std::process::{Command, Stdio};

fn run(args: &[&str], input: &str) -> Vec<serde_json::Value> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_lily"))
        .args(["gate", "--jsonl"])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn jsonl_batch_keeps_ids_order_and_goes_on_after_a_bad_line() {
    let input = [
        r#"{"id": "a", "text": "Call me on +44 20 7946 0958"}"#,
        r#"{"id": "b", "model": "m", "messages": [{"role": "user", "content": "my key is AKIAIOSFODNN7EXAMPLE"}]}"#,
        r#"{"id": "c", "text": "unterminated"#,
        r#"{"id": "d", "text": "How do I reverse a list in Python?"}"#,
        r#"{"id": "e"}"#,
        r#"{"id": "f", "text": "mail eve@acme.org", "destination": "local"}"#,
    ]
    .join("\n");
    let lines = run(&["--patterns-only"], &input);
    // A line that is not JSON has no id to give back; its line number says which it was.
    let ids: Vec<Option<&str>> = lines.iter().map(|l| l["id"].as_str()).collect();
    assert_eq!(
        ids,
        [Some("a"), Some("b"), None, Some("d"), Some("e"), Some("f")]
    );
    assert_eq!(lines[2]["line"], 3);
    assert_eq!(lines[0]["decision"], "mask");
    assert_eq!(lines[0]["masked_text"], "Call me on <PHONE_1>");
    assert_eq!(lines[1]["decision"], "refuse");
    assert!(lines[2]["error"].is_string() && lines[2].get("decision").is_none());
    assert_eq!(lines[3]["decision"], "allow");
    assert!(lines[4]["error"].as_str().unwrap().contains("text"));
    assert_eq!(lines[5]["decision"], "allow");
    // Each line is its own conversation: placeholders start again at 1.
    let again = run(
        &["--patterns-only"],
        "{\"text\": \"a@acme.org\"}\n{\"text\": \"b@acme.org\"}\n",
    );
    assert_eq!(again[0]["masked_text"], "<EMAIL_1>");
    assert_eq!(again[1]["masked_text"], "<EMAIL_1>");
}

#[test]
fn jsonl_runs_all_tiers() {
    let lines = run(
        &[],
        "{\"id\": 1, \"text\": \"Write to bob@acme.io about the invoice.\"}\n",
    );
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["decision"], "mask");
}
