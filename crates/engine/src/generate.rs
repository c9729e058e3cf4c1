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
        // Another token after the next one unless a stop, the caller or the room ends it.
        let more =
            stats.generated_tokens + 1 < options.max_tokens && backend.position(seq) + 1 < max_seq;
        next = match picker.rule() {
            Some(rule) => backend.decode_pick(seq, token, &rule, more)?,
            None => picker.pick(&backend.decode(seq, token)?),
        };
    }
    stats.decode_time = decode_start.elapsed();
    Ok(stats)
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use super::*;

    const VOCAB: usize = 64;

    /// Picks the token after the last one it holds; records the `more` of each decode_pick.
    #[derive(Default)]
    struct Counting {
        more: RefCell<Vec<bool>>,
    }

    #[derive(Debug, thiserror::Error)]
    #[error("unreachable")]
    struct Never;

    fn logits_for(seq: &[u32]) -> Vec<f32> {
        let mut v = vec![0.0; VOCAB];
        v[(seq.last().copied().unwrap_or(0) as usize + 1) % VOCAB] = 1.0;
        v
    }

    impl Backend for Counting {
        type Sequence = Vec<u32>;
        type Snapshot = Vec<u32>;
        type Error = Never;
        fn vocab_size(&self) -> usize {
            VOCAB
        }
        fn new_sequence(&self, _max_seq: usize) -> Result<Vec<u32>, Never> {
            Ok(Vec::new())
        }
        fn prefill(&self, seq: &mut Vec<u32>, tokens: &[u32]) -> Result<Vec<f32>, Never> {
            seq.extend_from_slice(tokens);
            Ok(logits_for(seq))
        }
        fn decode(&self, seq: &mut Vec<u32>, token: u32) -> Result<Vec<f32>, Never> {
            seq.push(token);
            Ok(logits_for(seq))
        }
        fn decode_pick(
            &self,
            seq: &mut Vec<u32>,
            token: u32,
            rule: &PickRule,
            more: bool,
        ) -> Result<u32, Never> {
            self.more.borrow_mut().push(more);
            Ok(rule.pick(&self.decode(seq, token)?, &mut Vec::new()))
        }
        fn position(&self, seq: &Vec<u32>) -> usize {
            seq.len()
        }
        fn snapshot(&self, seq: &Vec<u32>) -> Vec<u32> {
            seq.clone()
        }
        fn restore(&self, seq: &mut Vec<u32>, snapshot: &Vec<u32>) {
            *seq = snapshot.clone();
        }
    }

    /// `more` is false exactly on the decode_pick whose token is the last the loop may take:
    /// the token budget's, or the context's.
    #[test]
    fn decode_pick_is_told_whether_another_token_may_follow() {
        let run = |max_tokens, max_seq, stop_ids: Vec<u32>| {
            let b = Counting::default();
            let options = GenerateOptions {
                max_tokens,
                stop_ids,
            };
            let mut seq = Vec::new();
            let stats = generate(
                &b,
                &mut seq,
                &[1, 2, 3],
                max_seq,
                &options,
                &mut Greedy,
                |_| ControlFlow::Continue(()),
            )
            .unwrap();
            (b.more.into_inner(), stats.generated_tokens, stats.stop)
        };
        // Four tokens: the prefill's, then three decode_picks, the last one's pick ends the run.
        assert_eq!(
            run(4, 100, vec![]),
            (vec![true, true, false], 4, StopReason::Length)
        );
        // Six positions after a three-token prompt: the third decode_pick fills the context.
        assert_eq!(
            run(100, 6, vec![]),
            (vec![true, true, false], 4, StopReason::ContextFull)
        );
        // A stop id is not known ahead: the decode_pick that returns it was told `more`.
        assert_eq!(
            run(100, 100, vec![6]),
            (vec![true, true], 3, StopReason::StopId)
        );
    }
}
