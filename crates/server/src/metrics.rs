//! Prometheus text-format metrics. Under vLLM's names (`vllm:*`, each labelled `model_name`,
//! histograms with vLLM's bucket boundaries) what vLLM also measures, so that dashboards and
//! inference gateways built for vLLM read Lily as they are: requests running and waiting, cache
//! usage, time to first token, inter-token latency, end-to-end latency, prompt and generated
//! tokens. Under `lily_*` what is Lily's own: requests by endpoint and status, prefix-cache
//! hits, cancellations, the decode rate, and the hybrid routing counters.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Seconds; vLLM's boundaries for time to first token.
const TTFT_BUCKETS: &[f64] = &[
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
];
/// Seconds; vLLM's boundaries for inter-token latency, which start at 10 ms, with three below
/// them: a decode step on the GPU is ~2 ms and would otherwise fall in the first bucket. Extra
/// boundaries leave quantiles computed over vLLM's ones unchanged.
const INTER_TOKEN_BUCKETS: &[f64] = &[
    0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0,
];
/// Seconds; vLLM's boundaries for request latency.
const E2E_BUCKETS: &[f64] = &[
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0,
];

struct Histogram {
    bounds: &'static [f64],
    /// Per bound (cumulative at render time), plus +Inf.
    counts: Vec<AtomicU64>,
    sum_micros: AtomicU64,
}

impl Histogram {
    fn new(bounds: &'static [f64]) -> Self {
        Self { bounds, counts: (0..=bounds.len()).map(|_| AtomicU64::new(0)).collect(), sum_micros: AtomicU64::new(0) }
    }

    fn observe(&self, d: Duration) {
        let s = d.as_secs_f64();
        let i = self.bounds.iter().position(|&b| s <= b).unwrap_or(self.bounds.len());
        self.counts[i].fetch_add(1, Ordering::Relaxed);
        self.sum_micros.fetch_add(d.as_micros() as u64, Ordering::Relaxed);
    }

    /// `labels`: what goes before `le` inside the braces (`model_name="x",`), or empty.
    fn render(&self, out: &mut String, name: &str, labels: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        let mut cumulative = 0;
        for (i, c) in self.counts.iter().enumerate() {
            cumulative += c.load(Ordering::Relaxed);
            let le = self.bounds.get(i).map_or("+Inf".to_string(), |b| b.to_string());
            let _ = writeln!(out, "{name}_bucket{{{labels}le=\"{le}\"}} {cumulative}");
        }
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let labels = braced(labels.trim_end_matches(','));
        let _ = writeln!(out, "{name}_sum{labels} {sum}\n{name}_count{labels} {cumulative}");
    }
}

/// `{labels}`, or nothing without labels.
fn braced(labels: &str) -> String {
    if labels.is_empty() {
        String::new()
    } else {
        format!("{{{labels}}}")
    }
}

/// A label value as the text format wants it: backslash, double quote and newline escaped.
fn label_value(v: &str) -> String {
    v.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n")
}

/// Counters with one label, for hybrid routing: (metric, label value) -> count.
const LABELLED: &[(&str, &str, &str)] = &[
    ("lily_gate_decisions_total", "decision", "Privacy gate decisions on requests for the cloud."),
    ("lily_route_requests_total", "route", "Chat requests by where they were served (cloud, cloud-masked, local, none)."),
    ("lily_upstream_failures_total", "stage", "Upstream (cloud) failures, before the first byte or mid-stream."),
];

pub struct Metrics {
    /// `model_name="..."`, the label every `vllm:` series carries.
    model_label: String,
    requests: Mutex<BTreeMap<(String, u16), u64>>,
    labelled: Mutex<BTreeMap<(&'static str, &'static str), u64>>,
    waiting: AtomicU64,
    running: AtomicU64,
    /// f64 bits: the running sequence's tokens over the context length.
    cache_usage: AtomicU64,
    ttft: Histogram,
    inter_token: Histogram,
    e2e: Histogram,
    prompt_tokens: AtomicU64,
    cached_tokens: AtomicU64,
    generated_tokens: AtomicU64,
    cancelled: AtomicU64,
    /// f64 bits: decode rate of the last finished request.
    last_decode_rate: AtomicU64,
    finished_requests: AtomicU64,
    finished_micros: AtomicU64,
}

impl Metrics {
    pub fn new(model_name: &str) -> Self {
        Self {
            model_label: format!("model_name=\"{}\"", label_value(model_name)),
            requests: Mutex::default(),
            labelled: Mutex::default(),
            waiting: AtomicU64::new(0),
            running: AtomicU64::new(0),
            cache_usage: AtomicU64::new(0),
            ttft: Histogram::new(TTFT_BUCKETS),
            inter_token: Histogram::new(INTER_TOKEN_BUCKETS),
            e2e: Histogram::new(E2E_BUCKETS),
            prompt_tokens: AtomicU64::new(0),
            cached_tokens: AtomicU64::new(0),
            generated_tokens: AtomicU64::new(0),
            cancelled: AtomicU64::new(0),
            last_decode_rate: AtomicU64::new(0),
            finished_requests: AtomicU64::new(0),
            finished_micros: AtomicU64::new(0),
        }
    }

    pub fn request(&self, endpoint: &str, status: u16) {
        if let Ok(mut r) = self.requests.lock() {
            *r.entry((endpoint.to_string(), status)).or_insert(0) += 1;
        }
    }

    /// Counts one event of a labelled counter named in `LABELLED`.
    pub fn count(&self, metric: &'static str, label: &'static str) {
        if let Ok(mut m) = self.labelled.lock() {
            *m.entry((metric, label)).or_insert(0) += 1;
        }
    }

    /// Requests in the queue, not yet taken by the engine.
    pub fn set_waiting(&self, depth: usize) {
        self.waiting.store(depth as u64, Ordering::Relaxed);
    }

    /// A request is taken by the engine (`true`) or done with it (`false`).
    pub fn set_running(&self, running: bool) {
        self.running.store(running as u64, Ordering::Relaxed);
        if !running {
            self.set_cache_usage(0.0);
        }
    }

    /// Fraction of the sequence's context (its KV cache) the running request fills.
    pub fn set_cache_usage(&self, fraction: f64) {
        self.cache_usage.store(fraction.to_bits(), Ordering::Relaxed);
    }

    pub fn first_token(&self, since_arrival: Duration) {
        self.ttft.observe(since_arrival);
    }

    pub fn inter_token(&self, gap: Duration) {
        self.inter_token.observe(gap);
    }

    pub fn cancelled(&self) {
        self.cancelled.fetch_add(1, Ordering::Relaxed);
    }

    /// Mean wall time of a finished request, arrival to end; what a queued request waits
    /// per request ahead of it.
    pub fn mean_request_time(&self) -> Duration {
        let n = self.finished_requests.load(Ordering::Relaxed).max(1);
        Duration::from_micros(self.finished_micros.load(Ordering::Relaxed) / n)
    }

    pub fn finished(&self, prompt: usize, cached: usize, generated: usize, decode_rate: f64, took: Duration) {
        self.finished_requests.fetch_add(1, Ordering::Relaxed);
        self.finished_micros.fetch_add(took.as_micros() as u64, Ordering::Relaxed);
        self.e2e.observe(took);
        self.prompt_tokens.fetch_add(prompt as u64, Ordering::Relaxed);
        self.cached_tokens.fetch_add(cached as u64, Ordering::Relaxed);
        self.generated_tokens.fetch_add(generated as u64, Ordering::Relaxed);
        if generated > 1 {
            self.last_decode_rate.store(decode_rate.to_bits(), Ordering::Relaxed);
        }
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
        let model = &self.model_label;
        let one = |out: &mut String, kind: &str, name: &str, labels: &str, help: &str, value: String| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}\n{name}{} {value}", braced(labels));
        };
        let load = |v: &AtomicU64| v.load(Ordering::Relaxed).to_string();
        let load_f64 = |v: &AtomicU64| f64::from_bits(v.load(Ordering::Relaxed)).to_string();
        one(&mut out, "gauge", "vllm:num_requests_running", model, "Requests the engine is running.", load(&self.running));
        one(&mut out, "gauge", "vllm:num_requests_waiting", model, "Requests waiting for the engine.", load(&self.waiting));
        one(
            &mut out,
            "gauge",
            "vllm:kv_cache_usage_perc",
            model,
            "Fraction of the KV cache in use (the running sequence's tokens over the context length; 1 = full).",
            load_f64(&self.cache_usage),
        );
        let labels = format!("{model},");
        self.ttft.render(&mut out, "vllm:time_to_first_token_seconds", &labels, "From request arrival to the first generated token.");
        self.inter_token.render(&mut out, "vllm:inter_token_latency_seconds", &labels, "Between consecutive generated tokens.");
        self.e2e.render(&mut out, "vllm:e2e_request_latency_seconds", &labels, "From request arrival to its last token, finished requests.");
        one(&mut out, "counter", "vllm:prompt_tokens_total", model, "Prompt tokens of finished requests.", load(&self.prompt_tokens));
        one(&mut out, "counter", "vllm:generation_tokens_total", model, "Generated tokens of finished requests.", load(&self.generated_tokens));

        let _ = writeln!(out, "# HELP lily_requests_total HTTP requests by endpoint and status.\n# TYPE lily_requests_total counter");
        if let Ok(r) = self.requests.lock() {
            for ((endpoint, status), n) in r.iter() {
                let _ = writeln!(out, "lily_requests_total{{endpoint=\"{endpoint}\",status=\"{status}\"}} {n}");
            }
        }
        if let Ok(m) = self.labelled.lock() {
            for (name, label, help) in LABELLED {
                let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter");
                for ((_, value), n) in m.range((*name, "")..).take_while(|((metric, _), _)| metric == name) {
                    let _ = writeln!(out, "{name}{{{label}=\"{value}\"}} {n}");
                }
            }
        }
        one(&mut out, "counter", "lily_cached_prompt_tokens_total", "", "Prompt tokens served from the prefix cache.", load(&self.cached_tokens));
        one(&mut out, "counter", "lily_cancelled_requests_total", "", "Generations stopped because the client went away.", load(&self.cancelled));
        one(&mut out, "gauge", "lily_decode_tokens_per_second", "", "Decode rate of the last finished request.", load_f64(&self.last_decode_rate));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_cumulative_histograms_and_labelled_counters() {
        let m = Metrics::new("Qwen/Qwen3.6 \"x\"");
        m.request("/v1/chat/completions", 200);
        m.request("/v1/chat/completions", 200);
        m.request("/v1/chat/completions", 429);
        m.count("lily_route_requests_total", "cloud-masked");
        m.count("lily_route_requests_total", "cloud-masked");
        m.count("lily_gate_decisions_total", "mask");
        m.first_token(Duration::from_millis(7));
        m.first_token(Duration::from_secs(3000));
        let text = m.render();
        assert!(text.contains("lily_requests_total{endpoint=\"/v1/chat/completions\",status=\"200\"} 2"));
        assert!(text.contains("lily_requests_total{endpoint=\"/v1/chat/completions\",status=\"429\"} 1"));
        let ttft = "vllm:time_to_first_token_seconds";
        let model = r#"model_name="Qwen/Qwen3.6 \"x\"""#;
        assert!(text.contains(&format!("{ttft}_bucket{{{model},le=\"0.005\"}} 0")), "{text}");
        assert!(text.contains(&format!("{ttft}_bucket{{{model},le=\"0.01\"}} 1")));
        assert!(text.contains(&format!("{ttft}_bucket{{{model},le=\"2560\"}} 1")));
        assert!(text.contains(&format!("{ttft}_bucket{{{model},le=\"+Inf\"}} 2")));
        assert!(text.contains(&format!("{ttft}_count{{{model}}} 2")));
        assert!(text.contains(&format!("{ttft}_sum{{{model}}} 3000.007")));
        assert!(text.contains("lily_route_requests_total{route=\"cloud-masked\"} 2"));
        assert!(text.contains("lily_gate_decisions_total{decision=\"mask\"} 1"));
    }
}
