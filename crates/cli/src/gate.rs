//! `lily gate`: the privacy gate on stdin. Text or an OpenAI chat request (a JSON object with
//! `messages`) comes in; a JSON verdict goes out: decision, spans, categories, masked text or
//! request, and a trace. With `--jsonl`, many inputs per process: one JSON object per line in
//! (`{"text": ...}` or a chat request, optional `"id"` and `"destination"`), one verdict per
//! line out, in order; a bad line gets an error object and the rest go on. `lily gate bench`
//! measures its latency.

use std::io::{BufRead, Read, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::{Args, Subcommand};
use lily_gate::{inspect_request, is_chat_request, Destination, Gate, Policy, Vault};
use serde_json::{json, Value};

#[derive(Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct GateArgs {
    #[command(subcommand)]
    command: Option<GateCommand>,
    #[command(flatten)]
    inspect: InspectArgs,
}

#[derive(Subcommand)]
pub enum GateCommand {
    /// Inspect stdin and print the verdict (the default).
    Inspect(InspectArgs),
    /// Latency of the pattern tier alone and of all tiers, in ms per KB, on one core.
    Bench(BenchArgs),
    /// Precision, recall and F1 per type, decision confusion, leak rate and friction on a
    /// labelled corpus.
    Eval(EvalArgs),
}

#[derive(Args)]
pub struct InspectArgs {
    /// Policy file (JSON); the embedded safe default when absent.
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Where the text would go: `cloud` or `local`.
    #[arg(long, default_value = "cloud")]
    destination: String,
    /// Run only the identifier patterns (no learned tiers).
    #[arg(long)]
    patterns_only: bool,
    /// JSON lines: one input object per line (`{"id": .., "text": ..}` or a chat request),
    /// one verdict per line with its `line` number and `id`; each line its own conversation.
    #[arg(long)]
    jsonl: bool,
}

#[derive(Args)]
pub struct BenchArgs {
    /// Documents separated by lines holding only `---`; the built-in mixed corpus when absent.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Timed runs of every document per configuration.
    #[arg(long, default_value_t = 20)]
    repeat: usize,
    /// Instead: the in-process cost of the whole gate (all tiers, loaded once) on a realistic
    /// 4 KB chat request, as `lily serve --upstream` runs it per request, and its ratio to the
    /// time to first token of the local demo model (CPU) on the same request.
    #[arg(long)]
    request: bool,
}

#[derive(Args)]
pub struct EvalArgs {
    /// Corpus (JSON lines, see lily_gate::eval); the committed one when absent.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Policy file (JSON); the embedded safe default when absent.
    #[arg(long)]
    policy: Option<PathBuf>,
    /// Also list the items that leak or are held back.
    #[arg(long)]
    items: bool,
}

pub fn run(args: GateArgs) -> anyhow::Result<()> {
    match args.command {
        None => inspect(args.inspect),
        Some(GateCommand::Inspect(a)) => inspect(a),
        Some(GateCommand::Bench(a)) => bench(a),
        Some(GateCommand::Eval(a)) => eval(a),
    }
}

fn eval(args: EvalArgs) -> anyhow::Result<()> {
    let report = lily_gate::eval::run(args.corpus.as_deref(), load_policy(&args.policy)?)?;
    let mut out = std::io::stdout().lock();
    write!(out, "{report}")?;
    if args.items {
        report.write_items(&mut out)?;
    }
    Ok(())
}

fn load_policy(path: &Option<PathBuf>) -> anyhow::Result<Policy> {
    Ok(match path {
        Some(p) => Policy::load(p)?,
        None => Policy::default_policy(),
    })
}

fn build_gate(policy: Policy, patterns_only: bool) -> anyhow::Result<Gate> {
    if patterns_only {
        Ok(Gate::identifiers_only(policy))
    } else {
        Gate::new(policy).context("loading the learned tiers of the gate")
    }
}

fn inspect(args: InspectArgs) -> anyhow::Result<()> {
    let policy = load_policy(&args.policy)?;
    let dest: Destination = args.destination.parse()?;
    if args.jsonl {
        let gate = build_gate(policy, args.patterns_only)?;
        return inspect_lines(
            &gate,
            dest,
            std::io::stdin().lock(),
            std::io::stdout().lock(),
        );
    }
    // Read one byte past the limit so an oversized input is refused, not read without end.
    let limit = policy.max_input_bytes as u64 + 1;
    let mut input = Vec::new();
    std::io::stdin()
        .take(limit)
        .read_to_end(&mut input)
        .context("reading stdin")?;
    let gate = build_gate(policy, args.patterns_only)?;
    let mut stdout = std::io::stdout().lock();
    write_verdict(&gate, &input, dest, &mut stdout)?;
    writeln!(stdout)?;
    Ok(())
}

/// The verdict on `input` as JSON: a chat request's when `input` is one, else the text's.
fn write_verdict(
    gate: &Gate,
    input: &[u8],
    dest: Destination,
    out: &mut impl Write,
) -> anyhow::Result<()> {
    let mut vault = Vault::new();
    let request = std::str::from_utf8(input)
        .ok()
        .filter(|s| s.trim_start().starts_with('{'))
        .and_then(|s| serde_json::from_str::<serde_json::Value>(s).ok())
        .filter(is_chat_request);
    // Serialised straight from the structs (not through `Value`) to keep field order and
    // print confidences as written.
    match request {
        Some(request) => {
            serde_json::to_writer_pretty(out, &inspect_request(gate, &request, dest, &mut vault)?)?
        }
        None => serde_json::to_writer_pretty(out, &gate.inspect_bytes(input, dest, &mut vault))?,
    }
    Ok(())
}

/// `--jsonl`: every line of `input` to one line of `out`. Only I/O errors stop it; a line
/// that cannot be inspected becomes `{"line": n, "id": .., "error": ".."}`.
fn inspect_lines(
    gate: &Gate,
    dest: Destination,
    input: impl BufRead,
    mut out: impl Write,
) -> anyhow::Result<()> {
    for (i, line) in input.split(b'\n').enumerate() {
        let line = line.context("reading stdin")?;
        let line = line.strip_suffix(b"\r").unwrap_or(&line);
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let number = i + 1;
        let (id, result) = match serde_json::from_slice::<serde_json::Value>(line) {
            Ok(value) => {
                let id = value.get("id").cloned().unwrap_or(serde_json::Value::Null);
                (id, line_verdict(gate, &value, dest))
            }
            Err(e) => (
                serde_json::Value::Null,
                Err(anyhow::anyhow!("line is not JSON: {e}")),
            ),
        };
        let id = serde_json::to_string(&id)?;
        match result {
            // The verdict's own fields follow, in the order `lily gate` prints them.
            Ok(verdict) => writeln!(out, "{{\"line\":{number},\"id\":{id},{}", &verdict[1..])?,
            Err(e) => writeln!(
                out,
                "{{\"line\":{number},\"id\":{id},\"error\":{}}}",
                serde_json::to_string(&format!("{e:#}"))?
            )?,
        }
    }
    out.flush()?;
    Ok(())
}

/// The verdict on one `--jsonl` object as a JSON object (never `{}`: a verdict has fields).
fn line_verdict(
    gate: &Gate,
    value: &serde_json::Value,
    default_dest: Destination,
) -> anyhow::Result<String> {
    let dest = match value.get("destination") {
        None => default_dest,
        Some(serde_json::Value::String(d)) => d.parse()?,
        Some(_) => anyhow::bail!("\"destination\" must be a string"),
    };
    let mut vault = Vault::new();
    if is_chat_request(value) {
        return Ok(serde_json::to_string(&inspect_request(
            gate, value, dest, &mut vault,
        )?)?);
    }
    match value.get("text") {
        Some(serde_json::Value::String(text)) => Ok(serde_json::to_string(&gate.inspect_bytes(
            text.as_bytes(),
            dest,
            &mut vault,
        ))?),
        Some(_) => anyhow::bail!("\"text\" must be a string"),
        None => anyhow::bail!("a line needs \"text\" or a chat request's \"messages\""),
    }
}

const BUILTIN_CORPUS: &str = include_str!("../../gate/benches/latency_corpus.txt");

fn percentile(sorted: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

/// ms per KB of every timed run of `gate` over `docs`.
fn time_runs(gate: &Gate, docs: &[String], repeat: usize) -> Vec<f64> {
    let mut per_kb = Vec::with_capacity(docs.len() * repeat);
    for doc in docs {
        let kb = doc.len() as f64 / 1024.0;
        for _ in 0..repeat {
            let start = Instant::now();
            std::hint::black_box(gate.inspect(std::hint::black_box(doc), Destination::Cloud));
            per_kb.push(start.elapsed().as_secs_f64() * 1000.0 / kb);
        }
    }
    per_kb.sort_by(f64::total_cmp);
    per_kb
}

fn bench(args: BenchArgs) -> anyhow::Result<()> {
    if args.request {
        return bench_request(args.repeat.max(200));
    }
    let text = match &args.corpus {
        Some(p) => {
            std::fs::read_to_string(p).with_context(|| format!("reading corpus {}", p.display()))?
        }
        None => BUILTIN_CORPUS.to_string(),
    };
    let docs: Vec<String> = text
        .split("\n---\n")
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(str::to_string)
        .collect();
    anyhow::ensure!(
        !docs.is_empty() && args.repeat > 0,
        "empty corpus or zero repeats"
    );
    let total_kb: f64 = docs.iter().map(|d| d.len() as f64).sum::<f64>() / 1024.0;
    let gates = [
        ("patterns", Gate::identifiers_only(Policy::default_policy())),
        ("all tiers", build_gate(Policy::default_policy(), false)?),
    ];
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "corpus: {} documents, {total_kb:.1} KB; {} timed runs each; one thread",
        docs.len(),
        args.repeat
    )?;
    writeln!(
        out,
        "{:<10} {:>12} {:>12} {:>12}",
        "tiers", "p50 ms/KB", "p95 ms/KB", "max ms/KB"
    )?;
    for (name, gate) in &gates {
        // Warm-up: compiles the lazily built regexes and touches the model weights.
        time_runs(gate, &docs, 1);
        let runs = time_runs(gate, &docs, args.repeat);
        let (p50, p95, max) = (
            percentile(&runs, 50.0),
            percentile(&runs, 95.0),
            runs[runs.len() - 1],
        );
        writeln!(out, "{name:<10} {p50:>12.4} {p95:>12.4} {max:>12.4}")?;
    }
    // Scaling: the corpus concatenated to growing sizes; ms/KB should stay flat (linear time).
    writeln!(out, "\nscaling (whole corpus repeated to size, best of 3):")?;
    writeln!(out, "{:<10} {:>10} {:>12}", "tiers", "size", "ms/KB")?;
    let joined = docs.join("\n\n");
    for size_kb in [1usize, 16, 256, 1024] {
        let mut doc = String::new();
        while doc.len() < size_kb * 1024 {
            doc.push_str(&joined);
            doc.push_str("\n\n");
        }
        let cut = (size_kb * 1024..=doc.len())
            .find(|&i| doc.is_char_boundary(i))
            .unwrap_or(doc.len());
        doc.truncate(cut);
        for (name, gate) in &gates {
            let best = (0..3)
                .map(|_| time_runs(gate, std::slice::from_ref(&doc), 1)[0])
                .fold(f64::INFINITY, f64::min);
            writeln!(out, "{name:<10} {:>8} KB {best:>12.4}", size_kb)?;
        }
    }
    Ok(())
}

/// A chat request of about 4 KB as an assistant client sends it: a system prompt, a tool with
/// a parameter schema, and a conversation that mentions people, e-mail addresses and phone
/// numbers among ordinary text.
fn sample_request() -> Value {
    let system = "You are a helpful assistant for a small logistics company. Answer briefly and politely, \
                  use the tools when a shipment must be looked up, and never invent tracking numbers. \
                  When you draft e-mails, keep them under 120 words and sign them as the operations team.";
    let turns = [
        "Hi, can you draft a reply to Jennifer Morales (jennifer.morales@example.com) about the delayed pallet? \
         She called twice from +1 415 555 0134 and sounded annoyed.",
        "Sure. Here is a draft: Dear Ms Morales, thank you for your patience. The pallet left our Rotterdam hub \
         this morning and should reach you on Thursday. We are sorry for the delay. Operations team",
        "Good, but also mention that Rahul Deshpande from our Hamburg office will call her tomorrow before noon, \
         and give her the reference number of the shipment so she can quote it.",
        "Updated draft: Dear Ms Morales, thank you for your patience. The pallet left Rotterdam this morning and \
         should reach you on Thursday. Rahul Deshpande from our Hamburg office will call you tomorrow before noon.",
        "Please look up the shipment first, then finish the e-mail, and copy d.okafor@contoso.org on it.",
    ];
    let mut messages = vec![json!({"role": "system", "content": system})];
    let mut request = json!({});
    'fill: for round in 0.. {
        for (i, t) in turns.iter().enumerate() {
            let role = if i % 2 == 0 { "user" } else { "assistant" };
            messages.push(json!({"role": role, "content": format!("{t} ({})", round + 1)}));
            request = json!({
                "model": "auto",
                "messages": messages,
                "tools": [{"type": "function", "function": {"name": "lookup_shipment",
                    "description": "Finds a shipment by the customer's e-mail address and returns its status.",
                    "parameters": {"type": "object", "properties": {
                        "email": {"type": "string", "description": "The customer's e-mail address."},
                        "include_history": {"type": "boolean"}}, "required": ["email"]}}}],
                "user": "ops-desk-7",
                "stream": true,
            });
            if request.to_string().len() >= 4096 {
                break 'fill;
            }
        }
    }
    request
}

/// Time to first token of the demo checkpoint on the CPU for `request`: rendering, tokenizing
/// and the prefill that yields the first token's logits (best of 3).
fn demo_ttft(request: &Value) -> anyhow::Result<(f64, usize)> {
    use lily_model::{Backend, ChatOptions, ChatTemplate, Message, Tokenizer};
    let dir = std::path::Path::new(crate::serve::DEMO_DIR);
    let model = lily_cpu::CpuModel::load(dir).with_context(|| format!("loading the demo checkpoint {}", dir.display()))?;
    let template = ChatTemplate::from_model_dir(dir)?;
    let tokenizer = Tokenizer::from_model_dir(dir)?;
    let messages: Vec<Message> = serde_json::from_value(request["messages"].clone())?;
    let tools = request["tools"].as_array().cloned().unwrap_or_default();
    let mut best = f64::INFINITY;
    let mut tokens = 0;
    for _ in 0..3 {
        let start = Instant::now();
        let text = template.render(&messages, &tools, &ChatOptions::default())?;
        let prompt = tokenizer.encode(&text);
        let mut seq = model.new_sequence(prompt.len() + 1)?;
        std::hint::black_box(model.prefill(&mut seq, &prompt)?);
        best = best.min(start.elapsed().as_secs_f64() * 1000.0);
        tokens = prompt.len();
    }
    Ok((best, tokens))
}

/// Nanoseconds this thread has run on a CPU. On a shared machine wall time also counts the
/// time other processes held the cores; this is the cost of the work itself.
fn thread_cpu_ns() -> Option<u64> {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes one timespec through the valid pointer it is given.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

struct RequestTimes {
    /// Wall time, ms: p50, p95.
    wall: (f64, f64),
    /// On-CPU time of the thread, ms: p50, p95 (where the platform tells).
    cpu: Option<(f64, f64)>,
    decision: String,
}

/// `inspect_request` on `request`, after a warm-up (the first runs compile the lazily built
/// regexes and touch the weights).
fn time_request(gate: &Gate, request: &Value, runs: usize) -> anyhow::Result<RequestTimes> {
    let mut wall = Vec::with_capacity(runs);
    let mut cpu = Vec::with_capacity(runs);
    let mut decision = String::new();
    for i in 0..runs + 10 {
        let (start, cpu_start) = (Instant::now(), thread_cpu_ns());
        let verdict = inspect_request(gate, std::hint::black_box(request), Destination::Cloud, &mut Vault::new())?;
        let (elapsed, cpu_end) = (start.elapsed(), thread_cpu_ns());
        if i >= 10 {
            wall.push(elapsed.as_secs_f64() * 1000.0);
            if let (Some(a), Some(b)) = (cpu_start, cpu_end) {
                cpu.push(b.saturating_sub(a) as f64 / 1e6);
            }
        }
        decision = format!("{} ({} findings)", verdict.decision, verdict.spans.len());
    }
    let p = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        (percentile(v, 50.0), percentile(v, 95.0))
    };
    let cpu = (cpu.len() == runs).then(|| p(&mut cpu));
    Ok(RequestTimes { wall: p(&mut wall), cpu, decision })
}

fn bench_request(runs: usize) -> anyhow::Result<()> {
    let request = sample_request();
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "chat request: {} bytes, {} messages, 1 tool; {runs} timed runs, one thread",
        request.to_string().len(),
        request["messages"].as_array().map_or(0, Vec::len)
    )?;
    // Where the time goes: the identifier patterns alone, then every tier as the server runs.
    let mut p50_all = 0.0;
    for (name, gate) in [
        ("patterns", Gate::identifiers_only(Policy::default_policy())),
        ("all tiers", build_gate(Policy::default_policy(), false)?),
    ] {
        let t = time_request(&gate, &request, runs)?;
        let (p50, p95) = t.wall;
        let cpu = t.cpu.map_or(String::new(), |(c50, c95)| format!(" (on-CPU p50 {c50:.3} ms, p95 {c95:.3} ms)"));
        writeln!(out, "gate in process, {name:<9}: p50 {p50:.3} ms, p95 {p95:.3} ms{cpu}; decision {}", t.decision)?;
        p50_all = p50;
    }
    match demo_ttft(&request) {
        Ok((ttft, tokens)) => writeln!(
            out,
            "demo model time to first token (CPU, {tokens} prompt tokens): {ttft:.1} ms; gate p50 / TTFT = {:.4} ({:.2}%)",
            p50_all / ttft,
            100.0 * p50_all / ttft
        )?,
        Err(e) => writeln!(out, "demo model time to first token: not measured ({e:#})")?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn verdict(input: &[u8]) -> (String, Value) {
        let gate = Gate::identifiers_only(Policy::default_policy());
        let mut out = Vec::new();
        write_verdict(&gate, input, Destination::Cloud, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let value = serde_json::from_str(&text).unwrap();
        (text, value)
    }

    #[test]
    fn text_verdict_has_decision_spans_mask_and_trace() {
        let (raw, v) = verdict(b"write to eve@acme.org");
        assert!(
            raw.trim_start().starts_with("{\n  \"decision\""),
            "decision comes first: {raw}"
        );
        assert_eq!(v["decision"], "mask");
        assert_eq!(v["spans"][0]["category"], "email");
        assert_eq!(v["spans"][0]["start"], 9);
        assert_eq!(v["spans"][0]["confidence"], 0.99);
        assert_eq!(v["masked_text"], "write to <EMAIL_1>");
        assert!(v["trace"].as_array().unwrap().len() >= 2);
    }

    #[test]
    fn chat_request_is_detected_and_masked() {
        let (_, v) = verdict(
            br#"{"model": "m", "messages": [{"role": "user", "content": "mail eve@acme.org"}]}"#,
        );
        assert_eq!(v["spans"][0]["message"], 0);
        assert_eq!(
            v["masked_request"]["messages"][0]["content"],
            "mail <EMAIL_1>"
        );
    }

    #[test]
    fn jsonl_gives_one_verdict_or_error_per_line() {
        let gate = Gate::identifiers_only(Policy::default_policy());
        let input = concat!(
            "{\"id\": 7, \"text\": \"mail eve@acme.org\"}\n",
            "\n",
            "not json\r\n",
            "{\"id\": \"b\", \"text\": 5}\n",
            "{\"text\": \"hello\", \"destination\": \"local\"}\n",
        );
        let mut out = Vec::new();
        inspect_lines(&gate, Destination::Cloud, input.as_bytes(), &mut out).unwrap();
        let lines: Vec<Value> = String::from_utf8(out)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), 4, "{lines:?}");
        assert_eq!(
            (lines[0]["line"].as_u64(), &lines[0]["id"]),
            (Some(1), &Value::from(7))
        );
        assert_eq!(lines[0]["masked_text"], "mail <EMAIL_1>");
        assert_eq!(lines[1]["line"], 3);
        assert!(lines[1]["error"].as_str().unwrap().contains("not JSON"));
        assert_eq!(lines[2]["id"], "b");
        assert!(lines[2]["error"]
            .as_str()
            .unwrap()
            .contains("must be a string"));
        assert_eq!(lines[3]["decision"], "allow");
    }

    #[test]
    fn json_that_is_not_a_chat_request_is_text() {
        let (_, v) = verdict(br#"{"email": "eve@acme.org"}"#);
        assert_eq!(v["masked_text"], r#"{"email": "<EMAIL_1>"}"#);
    }
}
