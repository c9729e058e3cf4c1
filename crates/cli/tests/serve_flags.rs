//! `lily serve` as a vLLM or llama-server user would start it: flags from `LILY_*` variables,
//! `--model` as a Hugging Face repo id found in the hub cache, `--max-model-len`,
//! `--chat-template`, JSON logs carrying the request id.

mod support;

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::{json, Value};
use support::{free_port, lily, Server};

const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/demo");

fn chat(model: &str, content: &str) -> String {
    json!({"model": model, "temperature": 0, "max_tokens": 4, "messages": [{"role": "user", "content": content}]}).to_string()
}

/// A scratch directory of this test process, empty.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lily-serve-flags-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `lily serve` that must fail at start-up: its stderr.
fn refused(args: &[&str], envs: &[(&str, &Path)]) -> String {
    let out = lily().args(["serve", "--backend", "cpu", "--port", &free_port().to_string()]).args(args).envs(envs.iter().copied()).stdout(Stdio::null()).output().unwrap();
    assert!(!out.status.success(), "lily serve {args:?} started");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn flags_come_from_lily_variables_and_the_command_line_wins() {
    let port = free_port();
    let mut command = lily();
    command
        .args(["serve", "--port", &port.to_string()])
        // Wrong on purpose: --port replaces it.
        .env("LILY_PORT", "1")
        .env("LILY_HOST", "127.0.0.1")
        .env("LILY_BACKEND", "cpu")
        .env("LILY_SERVED_MODEL_NAME", "my-model")
        .env("LILY_MAX_MODEL_LEN", "40");
    let server = Server::start(command, port);
    let (_, models) = server.get("/v1/models");
    let models: Value = serde_json::from_str(&models).unwrap();
    assert_eq!(models["data"][0]["id"], "my-model");
    let (status, r) = server.post("/v1/chat/completions", &chat("my-model", "What color is the sky?"));
    assert_eq!(status, 200, "{r}");
    // Past the 40 tokens of LILY_MAX_MODEL_LEN: refused, naming the limit.
    let (status, r) = server.post("/v1/chat/completions", &chat("my-model", &"the sky is blue ".repeat(10)));
    assert_eq!((status, r["error"]["code"].as_str()), (400, Some("context_length_exceeded")), "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("40"), "{r}");
}

#[test]
fn max_model_len_cannot_exceed_the_models_context() {
    let config: Value = serde_json::from_str(&std::fs::read_to_string(Path::new(DEMO).join("config.json")).unwrap()).unwrap();
    let context = config["max_position_embeddings"].as_u64().or(config["text_config"]["max_position_embeddings"].as_u64()).unwrap();
    let err = refused(&["--max-model-len", &(context + 1).to_string()], &[]);
    assert!(err.contains("longer than the model's context") && err.contains(&context.to_string()), "{err}");
}

/// A hub cache as `huggingface-cli download` leaves it, holding the demo checkpoint as
/// `acme/tiny-demo` at commit `c0ffee` (branch main) and `beef00` (tag v0).
fn fake_hub() -> PathBuf {
    let hub = scratch("hub");
    let repo = hub.join("models--acme--tiny-demo");
    std::fs::create_dir_all(repo.join("refs")).unwrap();
    std::fs::write(repo.join("refs/main"), "c0ffee").unwrap();
    std::fs::write(repo.join("refs/v0"), "beef00\n").unwrap();
    for commit in ["c0ffee", "beef00"] {
        let snapshot = repo.join("snapshots").join(commit);
        std::fs::create_dir_all(&snapshot).unwrap();
        for file in std::fs::read_dir(DEMO).unwrap() {
            let file = file.unwrap().path();
            if file.is_file() {
                std::os::unix::fs::symlink(&file, snapshot.join(file.file_name().unwrap())).unwrap();
            }
        }
    }
    hub
}

#[test]
fn a_repo_id_is_served_from_the_hub_cache_under_its_name() {
    let hub = fake_hub();
    let port = free_port();
    let mut command = lily();
    command.args(["serve", "--backend", "cpu", "--model", "acme/tiny-demo", "--port", &port.to_string()]).env("HF_HUB_CACHE", &hub);
    let server = Server::start(command, port);
    let (_, models) = server.get("/v1/models");
    assert_eq!(serde_json::from_str::<Value>(&models).unwrap()["data"][0]["id"], "acme/tiny-demo");
    let (status, r) = server.post("/v1/chat/completions", &chat("acme/tiny-demo", "What color is the sky?"));
    assert_eq!(status, 200, "{r}");
    drop(server);

    // HF_HOME/hub when HF_HUB_CACHE is unset; a tag as --revision.
    let home = scratch("hf-home");
    std::fs::rename(&hub, home.join("hub")).unwrap();
    let port = free_port();
    let mut command = lily();
    command
        .args(["serve", "--backend", "cpu", "--model", "acme/tiny-demo", "--revision", "v0", "--port", &port.to_string()])
        .env_remove("HF_HUB_CACHE")
        .env("HF_HOME", &home);
    let server = Server::start(command, port);
    assert_eq!(server.post("/v1/chat/completions", &chat("acme/tiny-demo", "hi")).0, 200);
    drop(server);

    // Not in the cache: an error that says where it looked and that nothing is downloaded.
    let err = refused(&["--model", "acme/absent"], &[("HF_HUB_CACHE", &home.join("hub"))]);
    let looked = home.join("hub/models--acme--absent/refs/main");
    assert!(err.contains(&looked.display().to_string()) && err.contains("HF_HUB_CACHE") && err.contains("never downloads"), "{err}");
    let err = refused(&["--model", "acme/tiny-demo", "--revision", "v9"], &[("HF_HUB_CACHE", &home.join("hub"))]);
    assert!(err.contains("refs/v9"), "{err}");
}

#[test]
fn a_chat_template_file_replaces_the_checkpoints_and_a_bad_one_is_refused() {
    let dir = scratch("template");
    // The checkpoint's template opens a thinking block; this one does not, and marks the turn.
    let template = dir.join("plain.jinja");
    std::fs::write(
        &template,
        "{% for m in messages %}<|im_start|>{{ m.role }}\nPLAIN {{ m.content }}<|im_end|>\n{% endfor %}\
         {% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}",
    )
    .unwrap();
    let expected = "<|im_start|>user\nPLAIN What color is the sky?<|im_end|>\n<|im_start|>assistant\n";
    let mut tokenized = lily().args(["tokenize", "--model", DEMO]).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
    std::io::Write::write_all(tokenized.stdin.as_mut().unwrap(), expected.as_bytes()).unwrap();
    let out = tokenized.wait_with_output().unwrap();
    let ids: Vec<u32> = serde_json::from_slice(&out.stdout).unwrap();

    let port = free_port();
    let mut command = lily();
    command.args(["serve", "--backend", "cpu", "--port", &port.to_string()]).env("LILY_CHAT_TEMPLATE", &template);
    let server = Server::start(command, port);
    let (status, r) = server.post("/v1/chat/completions", &chat("lily-demo", "What color is the sky?"));
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["usage"]["prompt_tokens"].as_u64().unwrap(), ids.len() as u64, "the prompt is this template's");
    drop(server);

    let broken = dir.join("broken.jinja");
    std::fs::write(&broken, "{% for m in messages %}{{ m.content }").unwrap();
    let err = refused(&["--chat-template", broken.to_str().unwrap()], &[]);
    assert!(err.contains("--chat-template") && err.contains("broken.jinja"), "{err}");
    std::fs::write(&broken, "{{ messages[0].content | no_such_filter }}").unwrap();
    let err = refused(&["--chat-template", broken.to_str().unwrap()], &[]);
    assert!(err.contains("--chat-template") && err.contains("no_such_filter"), "{err}");
}

#[test]
fn json_logs_carry_the_request_id_on_every_line_of_a_request() {
    let port = free_port();
    let mut command = lily();
    command.args(["serve", "--backend", "cpu", "--log-format", "json", "--port", &port.to_string()]);
    let server = Server::start(command, port);
    let body = chat("lily-demo", "What color is the sky?");
    let (status, head_and_body) = server.request("POST", "/v1/chat/completions", &body);
    assert_eq!(status, 200, "{head_and_body}");
    let (_, r) = server.post("/v1/chat/completions", &body);
    assert_eq!(r["object"], "chat.completion");
    // A client's own id is kept and sent back.
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    std::io::Write::write_all(
        &mut s,
        format!("POST /v1/chat/completions HTTP/1.0\r\nx-request-id: client-42\r\nContent-Length: {}\r\n\r\n{body}", body.len()).as_bytes(),
    )
    .unwrap();
    let mut raw = String::new();
    std::io::Read::read_to_string(&mut s, &mut raw).unwrap();
    assert!(raw.to_ascii_lowercase().contains("x-request-id: client-42"), "{raw}");

    let lines: Vec<Value> = server.log_text().lines().map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON ({e}): {l}"))).collect();
    let of_request: Vec<&Value> = lines.iter().filter(|l| l["span"]["request_id"] == "client-42").collect();
    let messages: Vec<&str> = of_request.iter().map(|l| l["fields"]["message"].as_str().unwrap()).collect();
    // The engine thread's line and the HTTP side's, both naming the request.
    assert!(messages.contains(&"request finished") && messages.contains(&"answered"), "{messages:?}");
    let ids: std::collections::BTreeSet<&str> = lines.iter().filter_map(|l| l["span"]["request_id"].as_str()).collect();
    assert_eq!(ids.len(), 3, "one id per request: {ids:?}");
}
