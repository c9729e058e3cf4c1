//! `lily gate`: the privacy gate on stdin. Text or an OpenAI chat request (a JSON object with
//! `messages`) comes in; a JSON verdict goes out: decision, spans, categories, masked text or
//! request, and a trace. `lily gate bench` measures its latency.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::time::Instant;

use anyhow::Context;
use clap::{Args, Subcommand};
use lily_gate::{inspect_request, is_chat_request, Destination, Gate, Policy, Vault};

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
}

#[derive(Args)]
pub struct BenchArgs {
    /// Documents separated by lines holding only `---`; the built-in mixed corpus when absent.
    #[arg(long)]
    corpus: Option<PathBuf>,
    /// Timed runs of every document per configuration.
    #[arg(long, default_value_t = 20)]
    repeat: usize,
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
    fn json_that_is_not_a_chat_request_is_text() {
        let (_, v) = verdict(br#"{"email": "eve@acme.org"}"#);
        assert_eq!(v["masked_text"], r#"{"email": "<EMAIL_1>"}"#);
    }
}
