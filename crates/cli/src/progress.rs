//! Logging set-up, and progress bars for the long start-up steps. The loaders report progress
//! as tracing events (`lily_model::PROGRESS`: stage, done, total); on a terminal, with text
//! logs, each stage is drawn as a bar and other log lines are printed above the bars; otherwise
//! (a file, a pipe, JSON logs) the progress events are plain log lines like any other.

use std::collections::HashMap;
use std::fmt::Debug;
use std::io::{IsTerminal, Write};
use std::sync::Mutex;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use lily_model::PROGRESS;
use tracing::field::{Field, Visit};
use tracing::{Event, Subscriber};
use tracing_subscriber::filter::{filter_fn, EnvFilter};
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

use crate::LogFormat;

/// Installs the global subscriber: logs on stderr (stdout stays clean for generated text and
/// JSON), filtered by RUST_LOG (default: info).
pub fn init_logging(format: LogFormat) {
    let filter = || EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let logs = tracing_subscriber::fmt().with_env_filter(filter()).with_writer(std::io::stderr);
    match format {
        LogFormat::Text if std::io::stderr().is_terminal() => {
            let bars = MultiProgress::new();
            let lines = tracing_subscriber::fmt::layer()
                .with_writer(AboveBars(bars.clone()))
                .with_filter(filter_fn(|meta| meta.target() != PROGRESS));
            tracing_subscriber::registry().with(filter()).with(lines).with(ProgressBars::new(bars)).init();
        }
        LogFormat::Text => logs.init(),
        // The request span's fields (its id) go on every line.
        LogFormat::Json => logs.json().with_current_span(true).with_span_list(false).init(),
    }
}

/// Writes log lines to stderr with the bars lifted out of the way.
#[derive(Clone)]
struct AboveBars(MultiProgress);

impl Write for AboveBars {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.suspend(|| std::io::stderr().write(buf))
    }
    fn write_all(&mut self, buf: &[u8]) -> std::io::Result<()> {
        self.0.suspend(|| std::io::stderr().write_all(buf))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}

impl<'a> MakeWriter<'a> for AboveBars {
    type Writer = AboveBars;
    fn make_writer(&'a self) -> AboveBars {
        self.clone()
    }
}

/// One bar per stage, moved by the progress events.
struct ProgressBars {
    multi: MultiProgress,
    bars: Mutex<HashMap<String, ProgressBar>>,
}

impl ProgressBars {
    fn new(multi: MultiProgress) -> Self {
        Self { multi, bars: Mutex::default() }
    }
}

/// A progress event's fields.
#[derive(Default)]
struct Step {
    stage: String,
    done: u64,
    total: u64,
    message: String,
}

impl Visit for Step {
    fn record_u64(&mut self, field: &Field, value: u64) {
        match field.name() {
            "done" => self.done = value,
            "total" => self.total = value,
            _ => {}
        }
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.record_u64(field, value.max(0) as u64);
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "stage" {
            self.stage = value.to_string();
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        if field.name() == "message" {
            self.message = format!("{value:?}");
        }
    }
}

impl<S: Subscriber> Layer<S> for ProgressBars {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        if event.metadata().target() != PROGRESS {
            return;
        }
        let mut step = Step::default();
        event.record(&mut step);
        if step.stage.is_empty() || step.total == 0 {
            return;
        }
        let mut bars = self.bars.lock().unwrap_or_else(|e| e.into_inner());
        let bar = bars.entry(step.stage.clone()).or_insert_with(|| {
            let style = ProgressStyle::with_template("{prefix:>9} [{bar:30}] {pos}/{len} {elapsed:>4} {wide_msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar())
                .progress_chars("=> ");
            self.multi.add(ProgressBar::new(step.total).with_style(style).with_prefix(step.stage.clone()))
        });
        bar.set_length(step.total);
        bar.set_position(step.done);
        if step.done < step.total {
            bar.set_message(step.message);
            return;
        }
        // Done: the bar gives way to one line saying so, and stops being redrawn.
        let took = bar.elapsed();
        bar.finish_and_clear();
        bars.remove(&step.stage);
        let _ = self.multi.println(format!("{}: {} ({:.1} s)", step.stage, step.message, took.as_secs_f64()));
    }
}
