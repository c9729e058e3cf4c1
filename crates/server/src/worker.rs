//! The engine thread: one sequence at a time, taken from a bounded first-come-first-served
//! queue. It owns the backend, the reusable sequence and the prefix cache, and streams each
//! job's output back as events. A job ends early when its client goes away (checked every
//! token), its deadline passes, or the server is told to stop.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use lily_engine::json_constraint::JsonMachine;
use lily_engine::prefix_cache::PrefixCache;
use lily_engine::sampling::{token_logprob, Sampler, SamplingParams, TokenLogprob};
use lily_engine::tool_calls::ParameterTypes;
use lily_engine::tool_choice::ForcedToolCall;
use lily_engine::{generate, GenerateOptions, Pick, StopReason};
use lily_model::{Backend, PickRule};
use tokio::sync::mpsc::UnboundedSender;

use crate::error::ApiError;
use crate::metrics::Metrics;
use crate::model::TokenTable;
use crate::output::{Delta, LogprobEntry, OutputPipeline};
use crate::readiness::Readiness;
use crate::request::GenerationParams;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FinishReason {
    Stop,
    Length,
    ToolCalls,
}

impl FinishReason {
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Stop => "stop",
            FinishReason::Length => "length",
            FinishReason::ToolCalls => "tool_calls",
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Usage {
    pub prompt_tokens: usize,
    pub completion_tokens: usize,
    pub cached_tokens: usize,
}

/// What the engine sends back for a job: the deltas and the end of each choice (`n` of them,
/// one after the other), or an error that ends the whole job.
#[derive(Debug)]
pub enum Event {
    Delta {
        choice: usize,
        delta: Delta,
    },
    Done {
        choice: usize,
        finish_reason: FinishReason,
        usage: Usage,
    },
    Error(ApiError),
}

/// How a job's text is interpreted.
#[derive(Debug, Clone)]
pub enum JobKind {
    /// Chat: reasoning split off (`thinking`: the prompt opened `<think>`), tool calls parsed
    /// when the request declared tools; `forced_call`: after the reasoning, the answer
    /// must open a call to one of these functions (`tool_choice` "required" or named).
    Chat { thinking: bool, tools: Option<ParameterTypes>, forced_call: Option<ForcedToolCall> },
    /// Plain completion: text as generated.
    Completion,
}

pub struct Job {
    pub prompt: Vec<u32>,
    pub params: GenerationParams,
    pub kind: JobKind,
    pub events: UnboundedSender<Event>,
    pub arrived: Instant,
    pub deadline: Instant,
    pub timeout: Duration,
    /// The request's span (its id), entered while the engine runs the job.
    pub span: tracing::Span,
}

#[derive(Debug, PartialEq, Eq)]
pub enum PushError {
    Full,
    Closed,
}

/// Bounded FIFO between the HTTP handlers and the engine thread.
pub struct JobQueue {
    state: Mutex<QueueState>,
    ready: Condvar,
    capacity: usize,
}

struct QueueState {
    jobs: VecDeque<Job>,
    closed: bool,
}

impl JobQueue {
    pub fn new(capacity: usize) -> Self {
        Self { state: Mutex::new(QueueState { jobs: VecDeque::new(), closed: false }), ready: Condvar::new(), capacity }
    }

    pub fn try_push(&self, job: Job) -> Result<usize, PushError> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.closed {
            return Err(PushError::Closed);
        }
        if s.jobs.len() >= self.capacity {
            return Err(PushError::Full);
        }
        s.jobs.push_back(job);
        self.ready.notify_one();
        Ok(s.jobs.len())
    }

    /// Blocks for the next job; `None` once closed and empty.
    fn pop(&self) -> Option<Job> {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(job) = s.jobs.pop_front() {
                return Some(job);
            }
            if s.closed {
                return None;
            }
            s = self.ready.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    pub fn len(&self) -> usize {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).jobs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// No new jobs; the engine thread finishes the queued ones and exits.
    pub fn close(&self) {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).closed = true;
        self.ready.notify_all();
    }
}

/// Bytes a prefix-cache snapshot of the backend's state at a position takes.
pub type SnapshotBytes<B> = Box<dyn Fn(&B, usize) -> usize + Send>;

pub struct WorkerConfig<B: Backend> {
    pub max_seq: usize,
    pub prefix_cache_bytes: usize,
    /// Bytes a snapshot at this position takes (for the prefix cache's budget).
    pub snapshot_bytes: SnapshotBytes<B>,
    /// See `EngineSpec::is_fatal`.
    pub is_fatal: fn(&B::Error) -> bool,
    pub stop_ids: Vec<u32>,
}

/// What the engine thread shares with the HTTP side.
pub struct Shared {
    pub queue: Arc<JobQueue>,
    pub metrics: Arc<Metrics>,
    /// Set when the server stops waiting for in-flight work: every generation ends now.
    pub abort: Arc<AtomicBool>,
    pub readiness: Arc<Readiness>,
}

/// Held by the engine thread: when the thread ends, by a panic included, the engine is no
/// longer ready (unless the server is stopping, which says so itself).
pub struct FailOnExit(pub Arc<Readiness>);

impl Drop for FailOnExit {
    fn drop(&mut self) {
        self.0.fail("the engine thread stopped");
    }
}

/// Positions on this grid are snapshotted inside long prompts so that prompts sharing a
/// long head (a system prompt, earlier turns) but differing later still hit the cache.
const SNAPSHOT_GRID: usize = 64;

struct Worker<B: Backend> {
    backend: B,
    seq: B::Sequence,
    empty: B::Snapshot,
    cache: PrefixCache<B::Snapshot>,
    tokens: Arc<TokenTable>,
    config: WorkerConfig<B>,
    metrics: Arc<Metrics>,
    /// Set when the server stops waiting for in-flight work: every generation ends now.
    abort: Arc<AtomicBool>,
}

/// Runs the engine on this thread until the queue is closed and drained. Ready (for
/// `/health`) once a sequence is allocated; `loading_started` is when loading began, for the log.
/// An error comes only from that allocation, before the engine is ready: after it, a failed
/// generation is answered to its request (and a fatal one turns the engine off).
pub fn run_worker<B: Backend>(
    backend: B,
    tokens: Arc<TokenTable>,
    config: WorkerConfig<B>,
    shared: &Shared,
    loading_started: Instant,
) -> Result<(), B::Error> {
    shared.readiness.loading("allocating the sequence");
    let seq = backend.new_sequence(config.max_seq)?;
    let empty = backend.snapshot(&seq);
    let cache = PrefixCache::new(config.prefix_cache_bytes);
    let (metrics, abort) = (shared.metrics.clone(), shared.abort.clone());
    let mut worker = Worker { backend, seq, empty, cache, tokens, config, metrics, abort };
    shared.readiness.ready(worker.tokens.bytes.len());
    tracing::info!(seconds = loading_started.elapsed().as_secs_f64(), "engine ready");
    let mut failed = false;
    while let Some(job) = shared.queue.pop() {
        let span = job.span.clone();
        let _in_request = span.enter();
        worker.metrics.set_waiting(shared.queue.len());
        let events = job.events.clone();
        if events.is_closed() {
            worker.metrics.cancelled();
            continue;
        }
        if failed {
            let _ = events.send(Event::Error(shared.readiness.check().err().unwrap_or_else(ApiError::shutting_down)));
            continue;
        }
        if worker.abort.load(Ordering::Relaxed) {
            let _ = events.send(Event::Error(ApiError::shutting_down()));
            continue;
        }
        if Instant::now() >= job.deadline {
            let _ = events.send(Event::Error(ApiError::timeout(job.timeout.as_secs())));
            continue;
        }
        worker.metrics.set_running(true);
        // A bug in one request must not take the engine down with it.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| worker.run(job)));
        worker.metrics.set_running(false);
        match outcome {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                tracing::error!(error = %e, "generation failed");
                let _ = events.send(Event::Error(ApiError::internal(format!("Generation failed: {e}"))));
                if (worker.config.is_fatal)(&e) {
                    // The queued requests are answered 503 rather than run on a broken backend.
                    tracing::error!("the engine cannot go on after this error: /health answers 503 from now on");
                    shared.readiness.fail(e.to_string());
                    failed = true;
                }
            }
            Err(_) => {
                tracing::error!("generation panicked");
                let _ = events.send(Event::Error(ApiError::internal("Generation failed (internal error).")));
            }
        }
    }
    Ok(())
}

/// Per-job state touched by both the `pick` and the `on_token` callbacks.
struct Run {
    sampler: Sampler,
    constraint: Option<JsonMachine>,
    /// Until the answer has opened the forced tool call.
    forced_call: Option<ForcedToolCall>,
    output: OutputPipeline,
    logprob: Option<TokenLogprob>,
    last_token_at: Option<Instant>,
    client_gone: bool,
    timed_out: bool,
    aborted: bool,
    sent_tokens: usize,
}

/// A job's token choice: on the backend's side (only the id comes back) unless this token needs
/// the logits here: a constraint's mask, logprobs, or penalties.
struct JobPicker<'a> {
    run: &'a RefCell<Run>,
    tokens: &'a TokenTable,
    stop_ids: &'a [u32],
    top_logprobs: Option<usize>,
    /// The next token's constraint mask, made by `rule` (which it decides) for `pick`.
    mask: Option<Vec<bool>>,
}

impl JobPicker<'_> {
    fn mask(&self, r: &Run) -> Option<Vec<bool>> {
        match (&r.forced_call, &r.constraint) {
            _ if r.output.in_reasoning() => None,
            (Some(forced), _) => {
                Some(forced.allowed_tokens(&self.tokens.constraint_bytes, &self.tokens.constraint_index, &self.tokens.specials, self.stop_ids))
            }
            (None, Some(machine)) => Some(machine.allowed_tokens(
                &self.tokens.constraint_bytes,
                &self.tokens.constraint_index,
                self.stop_ids,
            )),
            (None, None) => None,
        }
    }
}

impl Pick for JobPicker<'_> {
    fn rule(&mut self) -> Option<PickRule> {
        let mut r = self.run.borrow_mut();
        self.mask = self.mask(&r);
        if self.top_logprobs.is_some() || self.mask.is_some() {
            return None;
        }
        r.sampler.backend_rule()
    }

    fn pick(&mut self, logits: &[f32]) -> u32 {
        let mut r = self.run.borrow_mut();
        let mask = self.mask.take();
        let token = r.sampler.pick(logits, mask.as_deref());
        if let Some(n) = self.top_logprobs {
            r.logprob = Some(token_logprob(logits, token, n));
        }
        token
    }
}

impl<B: Backend> Worker<B> {
    /// Restores the longest cached prefix of `prompt` and prefills up to (not including) its
    /// last token, snapshotting on the way. Returns how many tokens came from the cache.
    fn prepare(&mut self, prompt: &[u32]) -> Result<usize, B::Error> {
        let cached = match self.cache.lookup(prompt) {
            Some(hit) => {
                self.backend.restore(&mut self.seq, hit.snapshot);
                hit.tokens
            }
            None => {
                self.backend.restore(&mut self.seq, &self.empty);
                0
            }
        };
        let last = prompt.len() - 1;
        let grid = last / SNAPSHOT_GRID * SNAPSHOT_GRID;
        let mut at = cached;
        for point in [grid, last] {
            if point > at && !self.cache.contains(&prompt[..point]) {
                self.backend.prefill(&mut self.seq, &prompt[at..point])?;
                at = point;
                let snapshot = self.backend.snapshot(&self.seq);
                self.cache.insert(prompt[..point].to_vec(), snapshot, (self.config.snapshot_bytes)(&self.backend, point));
            }
        }
        if at < last {
            self.backend.prefill(&mut self.seq, &prompt[at..last])?;
        }
        Ok(cached)
    }

    /// The job's choices one after the other; each after the first finds the prompt in the
    /// prefix cache. Stops early when a choice ends the job (client gone, time out, abort).
    fn run(&mut self, job: Job) -> Result<(), B::Error> {
        for choice in 0..job.params.n {
            if !self.run_choice(&job, choice)? {
                break;
            }
        }
        Ok(())
    }

    /// One choice; false when the job must not go on.
    fn run_choice(&mut self, job: &Job, choice: usize) -> Result<bool, B::Error> {
        let cached = self.prepare(&job.prompt)?;
        // The request handler refused a `max_tokens` past the room; this only cuts a default.
        let room = self.config.max_seq.saturating_sub(job.prompt.len());
        let options = GenerateOptions {
            max_tokens: job.params.max_tokens.map_or(room, |m| m.min(room)),
            stop_ids: self.config.stop_ids.clone(),
        };
        // Each choice its own draws: a given seed gives the same set of choices every time.
        let sampling = SamplingParams {
            seed: job
                .params
                .sampling
                .seed
                .map(|s| s.wrapping_add(choice as u64)),
            ..job.params.sampling.clone()
        };
        let (output, forced_call) = match &job.kind {
            JobKind::Chat { thinking, tools, forced_call } => (
                OutputPipeline::new(job.params.stop.clone(), Some(*thinking), tools.clone()),
                forced_call.clone(),
            ),
            JobKind::Completion => (OutputPipeline::new(job.params.stop.clone(), None, None), None),
        };
        let run = RefCell::new(Run {
            sampler: Sampler::new(sampling),
            constraint: job.params.response_format.clone().map(JsonMachine::new),
            forced_call,
            output,
            logprob: None,
            last_token_at: None,
            client_gone: false,
            timed_out: false,
            aborted: false,
            sent_tokens: 0,
        });
        let tokens = self.tokens.clone();
        let stop_ids = self.config.stop_ids.clone();
        let top_logprobs = job.params.logprobs;
        let mut picker = JobPicker { run: &run, tokens: &tokens, stop_ids: &stop_ids, top_logprobs, mask: None };
        let on_token = |token: u32| {
            let mut r = run.borrow_mut();
            let r = &mut *r;
            let now = Instant::now();
            self.metrics.set_cache_usage((job.prompt.len() + r.sent_tokens + 1) as f64 / self.config.max_seq as f64);
            match r.last_token_at {
                // The request's first token; a later choice's first one is no such thing.
                None if choice == 0 => self.metrics.first_token(now - job.arrived),
                None => {}
                Some(t) => self.metrics.inter_token(now - t),
            }
            r.last_token_at = Some(now);
            if job.events.is_closed() {
                r.client_gone = true;
                return ControlFlow::Break(());
            }
            if self.abort.load(Ordering::Relaxed) {
                r.aborted = true;
                return ControlFlow::Break(());
            }
            if now >= job.deadline {
                r.timed_out = true;
                return ControlFlow::Break(());
            }
            r.sampler.observe(token);
            if stop_ids.contains(&token) {
                return ControlFlow::Continue(());
            }
            let bytes = tokens.bytes(token);
            if !r.output.in_reasoning() {
                if let Some(machine) = &mut r.constraint {
                    machine.feed(bytes);
                }
                if let Some(forced) = &mut r.forced_call {
                    // A rejected token only comes when the mask allowed nothing and was
                    // ignored; forcing cannot continue from there.
                    if !forced.feed(bytes) {
                        r.forced_call = None;
                    }
                }
            }
            let (mut delta, stopped) = r.output.push(bytes);
            if let Some(lp) = r.logprob.take() {
                delta.logprobs.push(logprob_entry(&tokens, &lp));
            }
            r.sent_tokens += 1;
            if !delta.is_empty() {
                let _ = job.events.send(Event::Delta { choice, delta });
            }
            if stopped {
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        };
        let stats = generate(&self.backend, &mut self.seq, &job.prompt[job.prompt.len() - 1..], self.config.max_seq, &options, &mut picker, on_token)?;
        let mut r = run.into_inner();
        if r.client_gone {
            self.metrics.cancelled();
            tracing::info!(
                generated = stats.generated_tokens,
                "client went away; generation cancelled"
            );
            return Ok(false);
        }
        if r.timed_out {
            let _ = job
                .events
                .send(Event::Error(ApiError::timeout(job.timeout.as_secs())));
            return Ok(false);
        }
        if r.aborted {
            let _ = job.events.send(Event::Error(ApiError::shutting_down()));
            return Ok(false);
        }
        let tail = r.output.finish();
        if !tail.is_empty() {
            let _ = job.events.send(Event::Delta {
                choice,
                delta: tail,
            });
        }
        let finish_reason = if r.output.tool_calls_emitted > 0 {
            FinishReason::ToolCalls
        } else {
            match stats.stop {
                StopReason::StopId | StopReason::Caller => FinishReason::Stop,
                StopReason::Length | StopReason::ContextFull => FinishReason::Length,
            }
        };
        let usage = Usage { prompt_tokens: job.prompt.len(), completion_tokens: stats.generated_tokens, cached_tokens: cached };
        self.metrics.finished(usage.prompt_tokens, cached, stats.generated_tokens, stats.decode_tokens_per_s(), job.arrived.elapsed());
        tracing::info!(
            prompt = usage.prompt_tokens,
            cached,
            generated = stats.generated_tokens,
            ttft_ms = stats.prefill_time.as_secs_f64() * 1e3,
            decode_tok_s = stats.decode_tokens_per_s(),
            "request finished"
        );
        let _ = job.events.send(Event::Done {
            choice,
            finish_reason,
            usage,
        });
        Ok(true)
    }
}

fn logprob_entry(tokens: &TokenTable, lp: &TokenLogprob) -> LogprobEntry {
    let text = |id: u32| String::from_utf8_lossy(tokens.bytes(id)).into_owned();
    LogprobEntry {
        token: text(lp.token),
        bytes: tokens.bytes(lp.token).to_vec(),
        logprob: lp.logprob,
        top: lp.top.iter().map(|&(id, p)| (text(id), tokens.bytes(id).to_vec(), p)).collect(),
    }
}
