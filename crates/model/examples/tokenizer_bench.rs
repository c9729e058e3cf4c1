//! Encode throughput of Lily's tokenizer on the test corpus, single-threaded.
//!
//! `cargo run --release -p lily-model --example tokenizer_bench [corpus.jsonl.gz] [rounds]`
//! prints one JSON line. scripts/reference/bench_tokenizer.py runs it beside the Python references on the
//! same corpus and prints the comparison; the numbers are recorded in
//! crates/model/src/tokenizer/README.md.

use std::io::Read;
use std::time::Instant;

use lily_model::Tokenizer;

fn main() {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tokenizer/corpus.jsonl.gz").into());
    let rounds: usize = args.next().map_or(5, |r| r.parse().expect("rounds is a number"));
    let mut json = String::new();
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    flate2::read::GzDecoder::new(file).read_to_string(&mut json).expect("corpus is gzip'd UTF-8");
    let texts: Vec<String> = json
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON line")["text"].as_str().expect("text").to_owned())
        .collect();
    let bytes: usize = texts.iter().map(String::len).sum();

    let start = Instant::now();
    let tok = Tokenizer::qwen3_6();
    let load_s = start.elapsed().as_secs_f64();

    let mut seconds = Vec::with_capacity(rounds);
    let mut tokens = 0;
    for _ in 0..rounds {
        let start = Instant::now();
        tokens = texts.iter().map(|t| tok.encode(t).len()).sum::<usize>();
        seconds.push(start.elapsed().as_secs_f64());
    }
    let first = seconds[0];
    let mut sorted = seconds.clone();
    sorted.sort_by(f64::total_cmp);
    let median = sorted[sorted.len() / 2];
    let mbps = |s: f64| bytes as f64 / s / 1e6;
    println!(
        "{{\"name\": \"lily\", \"bytes\": {bytes}, \"tokens\": {tokens}, \"load_s\": {load_s:.3}, \"first_mb_s\": {:.2}, \"median_mb_s\": {:.2}}}",
        mbps(first),
        mbps(median)
    );
}
