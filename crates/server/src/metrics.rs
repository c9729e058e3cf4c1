//! Prometheus text-format metrics: request counts by endpoint and status, queue depth,
//! time-to-first-token and inter-token histograms, token counters and the decode rate.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Seconds. Time to first token spans a tiny CPU model (ms) to long prompts on the GPU (s).
const TTFT_BUCKETS: &[f64] = &[0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];
/// Seconds. Decode steps are ~2 ms at the GPU goal; the CPU reference is slower.
const INTER_TOKEN_BUCKETS: &[f64] = &[0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0];

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

    fn render(&self, out: &mut String, name: &str, help: &str) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        let mut cumulative = 0;
        for (i, c) in self.counts.iter().enumerate() {
            cumulative += c.load(Ordering::Relaxed);
            let le = self.bounds.get(i).map_or("+Inf".to_string(), |b| b.to_string());
            let _ = writeln!(out, "{name}_bucket{{le=\"{le}\"}} {cumulative}");
        }
        let sum = self.sum_micros.load(Ordering::Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {cumulative}");
    }
}

/// Counters with one label, for hybrid routing: (metric, label value) -> count.
const LABELLED: &[(&str, &str, &str)] = &[
    ("lily_gate_decisions_total", "decision", "Privacy gate decisions on requests for the cloud."),
    ("lily_route_requests_total", "route", "Chat requests by where they were served (cloud, cloud-masked, local, none)."),
    ("lily_upstream_failures_total", "stage", "Upstream (cloud) failures, before the first byte or mid-stream."),
];

pub struct Metrics {
    requests: Mutex<BTreeMap<(String, u16), u64>>,
    labelled: Mutex<BTreeMap<(&'static str, &'static str), u64>>,
    queue_depth: AtomicU64,
    ttft: Histogram,
    inter_token: Histogram,
    prompt_tokens: AtomicU64,
    cached_tokens: AtomicU64,
    generated_tokens: AtomicU64,
    cancelled: AtomicU64,
    /// f64 bits: decode rate of the last finished request.
    last_decode_rate: AtomicU64,
    finished_requests: AtomicU64,
    finished_micros: AtomicU64,
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            requests: Mutex::default(),
            labelled: Mutex::default(),
            queue_depth: AtomicU64::new(0),
            ttft: Histogram::new(TTFT_BUCKETS),
            inter_token: Histogram::new(INTER_TOKEN_BUCKETS),
            prompt_tokens: AtomicU64::new(0),
            cached_tokens: AtomicU64::new(0),
            generated_tokens: AtomicU64::new(0),
            cancelled: AtomicU64::new(0),
            last_decode_rate: AtomicU64::new(0),
            finished_requests: AtomicU64::new(0),
            finished_micros: AtomicU64::new(0),
        }
    }
}

impl Metrics {
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

    pub fn set_queue_depth(&self, depth: usize) {
        self.queue_depth.store(depth as u64, Ordering::Relaxed);
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
        self.prompt_tokens.fetch_add(prompt as u64, Ordering::Relaxed);
        self.cached_tokens.fetch_add(cached as u64, Ordering::Relaxed);
        self.generated_tokens.fetch_add(generated as u64, Ordering::Relaxed);
        if generated > 1 {
            self.last_decode_rate.store(decode_rate.to_bits(), Ordering::Relaxed);
        }
    }

    pub fn render(&self) -> String {
        let mut out = String::new();
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
        let counter = |out: &mut String, name: &str, help: &str, v: &AtomicU64| {
            let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} counter\n{name} {}", v.load(Ordering::Relaxed));
        };
        let _ = writeln!(
            out,
            "# HELP lily_queue_depth Requests waiting for the engine.\n# TYPE lily_queue_depth gauge\nlily_queue_depth {}",
            self.queue_depth.load(Ordering::Relaxed)
        );
        self.ttft.render(&mut out, "lily_time_to_first_token_seconds", "From request arrival to the first generated token.");
        self.inter_token.render(&mut out, "lily_inter_token_seconds", "Between consecutive generated tokens.");
        counter(&mut out, "lily_prompt_tokens_total", "Prompt tokens of finished requests.", &self.prompt_tokens);
        counter(&mut out, "lily_cached_prompt_tokens_total", "Prompt tokens served from the prefix cache.", &self.cached_tokens);
        counter(&mut out, "lily_generated_tokens_total", "Generated tokens.", &self.generated_tokens);
        counter(&mut out, "lily_cancelled_requests_total", "Generations stopped because the client went away.", &self.cancelled);
        let rate = f64::from_bits(self.last_decode_rate.load(Ordering::Relaxed));
        let _ = writeln!(
            out,
            "# HELP lily_decode_tokens_per_second Decode rate of the last finished request.\n# TYPE lily_decode_tokens_per_second gauge\nlily_decode_tokens_per_second {rate}"
        );
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_cumulative_histograms_and_labelled_counters() {
        let m = Metrics::default();
        m.request("/v1/chat/completions", 200);
        m.request("/v1/chat/completions", 200);
        m.request("/v1/chat/completions", 429);
        m.count("lily_route_requests_total", "cloud-masked");
        m.count("lily_route_requests_total", "cloud-masked");
        m.count("lily_gate_decisions_total", "mask");
        m.first_token(Duration::from_millis(7));
        m.first_token(Duration::from_secs(100));
        let text = m.render();
        assert!(text.contains("lily_requests_total{endpoint=\"/v1/chat/completions\",status=\"200\"} 2"));
        assert!(text.contains("lily_requests_total{endpoint=\"/v1/chat/completions\",status=\"429\"} 1"));
        assert!(text.contains("lily_time_to_first_token_seconds_bucket{le=\"0.005\"} 0"));
        assert!(text.contains("lily_time_to_first_token_seconds_bucket{le=\"0.01\"} 1"));
        assert!(text.contains("lily_time_to_first_token_seconds_bucket{le=\"+Inf\"} 2"));
        assert!(text.contains("lily_time_to_first_token_seconds_count 2"));
        assert!(text.contains("lily_route_requests_total{route=\"cloud-masked\"} 2"));
        assert!(text.contains("lily_gate_decisions_total{decision=\"mask\"} 1"));
    }
}
