//! The seam between "what the model is" and "how it runs". The CPU reference and the CUDA
//! backend implement the same trait, so the engine, the server and the tests are written once.

use crate::PickRule;

/// One way to run the model. The backend owns the weights; a `Sequence` owns one sequence's
/// state (KV cache of the attention layers, recurrent and conv state of the GDN layers).
pub trait Backend {
    /// Per-sequence state: everything that depends on the tokens seen so far.
    type Sequence;
    /// A copy of a sequence's state at some position, for prefix caching.
    type Snapshot: Clone + Send + Sync;
    type Error: std::error::Error + Send + Sync + 'static;

    /// Rows of the logits vector (the padded vocabulary, 248,320 for the real model).
    fn vocab_size(&self) -> usize;

    /// A fresh sequence that can hold up to `max_seq` tokens. Fails (before any work) when the
    /// caches for `max_seq` do not fit.
    fn new_sequence(&self, max_seq: usize) -> Result<Self::Sequence, Self::Error>;

    /// Runs `tokens` after what the sequence already holds and returns the logits (f32,
    /// `vocab_size` of them) of the last of them.
    fn prefill(&self, seq: &mut Self::Sequence, tokens: &[u32]) -> Result<Vec<f32>, Self::Error>;

    /// One decode step: appends `token` and returns the logits of the next position.
    fn decode(&self, seq: &mut Self::Sequence, token: u32) -> Result<Vec<f32>, Self::Error>;

    /// `prefill`, returning the next token chosen under `rule` instead of the logits. A backend
    /// that can choose where its logits are (the GPU) overrides this and copies only the id.
    fn prefill_pick(
        &self,
        seq: &mut Self::Sequence,
        tokens: &[u32],
        rule: &PickRule,
    ) -> Result<u32, Self::Error> {
        Ok(rule.pick(&self.prefill(seq, tokens)?, &mut Vec::new()))
    }

    /// `decode`, returning the next token chosen under `rule` instead of the logits. `more`:
    /// whether the caller will ask for the token after the returned one (feeding it back under
    /// the same rule) unless that token ends the generation, so that a backend may start that
    /// step before it is asked (the GPU's: no idle gap between tokens); a step started and then
    /// not asked for is taken back, so `more` changes no result.
    fn decode_pick(
        &self,
        seq: &mut Self::Sequence,
        token: u32,
        rule: &PickRule,
        more: bool,
    ) -> Result<u32, Self::Error> {
        let _ = more;
        Ok(rule.pick(&self.decode(seq, token)?, &mut Vec::new()))
    }

    /// One decode step over several sequences, each at its own position: appends `tokens[i]` to
    /// `seqs[i]` and returns each one's next-position logits, in order. `tokens` has one entry
    /// per sequence. A sequence's result must not depend on which others share the step (nor
    /// on its place among them): a backend that batches (reads each weight once for all of
    /// them) computes every sequence's sums in the same order as for that sequence alone, so
    /// a request's output is the same alone or among others.
    fn decode_batch(
        &self,
        seqs: &mut [&mut Self::Sequence],
        tokens: &[u32],
    ) -> Result<Vec<Vec<f32>>, Self::Error> {
        debug_assert_eq!(seqs.len(), tokens.len());
        seqs.iter_mut().zip(tokens).map(|(s, &t)| self.decode(s, t)).collect()
    }

    /// `decode_batch`, returning each sequence's next token chosen under its own rule
    /// (`rules[i]` for `seqs[i]`) instead of the logits.
    fn decode_batch_pick(
        &self,
        seqs: &mut [&mut Self::Sequence],
        tokens: &[u32],
        rules: &[PickRule],
    ) -> Result<Vec<u32>, Self::Error> {
        debug_assert_eq!(seqs.len(), rules.len());
        let mut scratch = Vec::new();
        let logits = self.decode_batch(seqs, tokens)?;
        Ok(logits.iter().zip(rules).map(|(l, r)| r.pick(l, &mut scratch)).collect())
    }

    /// Number of tokens the sequence holds.
    fn position(&self, seq: &Self::Sequence) -> usize;

    fn snapshot(&self, seq: &Self::Sequence) -> Self::Snapshot;
    fn restore(&self, seq: &mut Self::Sequence, snapshot: &Self::Snapshot);
}
