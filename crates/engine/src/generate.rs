//! The generation loop: prefill the prompt, then decode one token at a time until a stop id,
//! the token budget, the context end, or the caller says stop.

use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use lily_model::{Backend, PickRule};

pub struct GenerateOptions {
    /// Most tokens to generate (the stop token, if one ends the run, counts).
    pub max_tokens: usize,
    /// Ids that end generation; the stop id itself is reported to `on_token` but not fed back.
    pub stop_ids: Vec<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopReason {
    /// A stop id was generated.
    StopId,
    /// `max_tokens` were generated.
    Length,
    /// The sequence reached its `max_seq`.
    ContextFull,
    /// `on_token` returned `Break` (a stop string matched, the client went away, ...).
    Caller,
}

#[derive(Debug, Clone)]
pub struct GenerateStats {
    pub prompt_tokens: usize,
    pub generated_tokens: usize,
    /// Time to first token: the prefill and the first pick.
    pub prefill_time: Duration,
    /// Time spent in decode steps after the first token.
    pub decode_time: Duration,
    pub stop: StopReason,
}

impl GenerateStats {
    pub fn prefill_tokens_per_s(&self) -> f64 {
        self.prompt_tokens as f64 / self.prefill_time.as_secs_f64().max(1e-9)
    }
    /// Decode rate over the steps after the first token (the first comes from the prefill).
    pub fn decode_tokens_per_s(&self) -> f64 {
        self.generated_tokens.saturating_sub(1) as f64 / self.decode_time.as_secs_f64().max(1e-9)
    }
}

pub use lily_model::pick::argmax;

/// How `generate` chooses each token: on the backend's side under a rule (only the id comes
/// back: the GPU copies 4 bytes instead of a 1 MB logits vector), or on the host from the
/// logits (penalties, masks, logprobs).
pub trait Pick {
    /// The rule for the backend to apply to the next token's logits, or `None` when this token
    /// needs the logits on the host (then `pick` is called with them).
    fn rule(&mut self) -> Option<PickRule>;
    /// The next token from its logits; called right after `rule` returned `None`.
    fn pick(&mut self, logits: &[f32]) -> u32;
}

/// Greedy decoding, always on the backend's side.
pub struct Greedy;

impl Pick for Greedy {
    fn rule(&mut self) -> Option<PickRule> {
        Some(PickRule::GREEDY)
    }
    fn pick(&mut self, logits: &[f32]) -> u32 {
        argmax(logits)
    }
}

/// Runs `prompt` through `seq` (which may already hold a cached prefix) and generates.
/// `picker` chooses each next token (`Greedy`, or the server's sampler); `on_token` sees each
/// generated token as soon as it exists.
pub fn generate<B: Backend>(
    backend: &B,
    seq: &mut B::Sequence,
    prompt: &[u32],
    max_seq: usize,
    options: &GenerateOptions,
    picker: &mut impl Pick,
    mut on_token: impl FnMut(u32) -> ControlFlow<()>,
) -> Result<GenerateStats, B::Error> {
    let start = Instant::now();
    let mut next = match picker.rule() {
        Some(rule) => backend.prefill_pick(seq, prompt, &rule)?,
        None => picker.pick(&backend.prefill(seq, prompt)?),
    };
    let mut stats = GenerateStats {
        prompt_tokens: prompt.len(),
        generated_tokens: 0,
        prefill_time: Duration::ZERO,
        decode_time: Duration::ZERO,
        stop: StopReason::Length,
    };
    let mut decode_start = start;
    while stats.generated_tokens < options.max_tokens {
        let token = next;
        stats.generated_tokens += 1;
        if stats.generated_tokens == 1 {
            stats.prefill_time = start.elapsed();
            decode_start = Instant::now();
        }
        if on_token(token).is_break() {
            stats.stop = StopReason::Caller;
            break;
        }
        if options.stop_ids.contains(&token) {
            stats.stop = StopReason::StopId;
            break;
        }
        if stats.generated_tokens == options.max_tokens {
            break;
        }
        if backend.position(seq) >= max_seq {
            stats.stop = StopReason::ContextFull;
            break;
        }
        next = match picker.rule() {
            Some(rule) => backend.decode_pick(seq, token, &rule)?,
            None => picker.pick(&backend.decode(seq, token)?),
        };
    }
    stats.decode_time = decode_start.elapsed();
    Ok(stats)
}
