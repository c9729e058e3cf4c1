//! The host side of the decode steps: queueing a prompt or an input, replaying the captured
//! step graphs, running one step ahead of the host and taking it back, reading picks back, and
//! running a prompt through the prefill. One decode step is a fixed sequence of ~400 launches
//! that reads the token and position from GPU memory and writes the next token back there
//! (forward/decode.rs), so it is captured once per sequence and pick path (greedy, or a draw
//! with the cuts it makes) as a CUDA graph and replayed with no host synchronisation in between.

use lily_model::PickRule;

use crate::backend::CudaBackend;
use crate::error::{CudaError, Result};
use crate::forward::{decode, prefill};
use crate::kernels::sampling::{rule_bytes, PickPath};
use crate::sequence::CudaSequence;

impl CudaBackend {
    /// Runs `n` decode steps without waiting: each runs the token at the sequence's device
    /// position and writes the pick after it. Whole groups of STEPS_PER_GRAPH replay the
    /// captured run of that many steps, the rest the one-step graph.
    pub fn run_steps(&self, seq: &mut CudaSequence, n: usize) -> Result<()> {
        self.settle(seq)?;
        self.launch_steps(seq, n)?;
        seq.position += n;
        Ok(())
    }

    /// Queues `n` steps from the device's position, which must be the sequence's.
    fn launch_steps(&self, seq: &mut CudaSequence, n: usize) -> Result<()> {
        if seq.position + n > seq.max_seq {
            return Err(CudaError::Invalid(format!(
                "{} more tokens do not fit: the sequence holds {} of {}",
                n, seq.position, seq.max_seq
            )));
        }
        // Every graph this call replays is captured before the first replay: a capture waits
        // for the stream, which would hold back the steps already queued.
        let parts = [
            (STEPS_PER_GRAPH, n / STEPS_PER_GRAPH),
            (1, n % STEPS_PER_GRAPH),
        ];
        for (steps, times) in parts {
            if times > 0 {
                self.capture_steps(seq, steps)?;
            }
        }
        for (steps, times) in parts {
            for _ in 0..times {
                seq.graphs[&(seq.path, steps)].launch()?;
                seq.rule_advanced(steps);
            }
        }
        Ok(())
    }

    /// Takes back a step `decode_pick` ran ahead that the caller did not ask for: the device
    /// position goes back to the sequence's (after the step, as the upload waits for it). The
    /// step's recurrent state went to the other half of each pair (gdn.cu), and what else it
    /// wrote (its key and value, its conv-ring slot, its pick, the logits) sits at the
    /// position the next step rewrites, or is scratch.
    fn settle(&self, seq: &mut CudaSequence) -> Result<()> {
        if !seq.ahead {
            return Ok(());
        }
        self.model.gpu
            .upload(seq.pos.ptr(), &(seq.position as i32).to_le_bytes())?;
        // Its pick carries the tag the next step's will: gone before that step runs.
        seq.forget_picks();
        // The step moved a drawn rule on: back to the draw it started from.
        if let Some(rule) = seq.rule_host.filter(|r| !r.is_greedy()) {
            self.upload_rule(seq, &rule.advanced(-1))?;
        }
        seq.ahead = false;
        Ok(())
    }

    /// Captures `steps` decode steps on the sequence's pick path as one graph, unless the
    /// sequence has it: a sequence pays the capture time and memory only for the paths its
    /// rules take and the run lengths it asks for (a token loop, as the server's, never asks
    /// for a run of STEPS_PER_GRAPH).
    fn capture_steps(&self, seq: &mut CudaSequence, steps: usize) -> Result<()> {
        let path = seq.path;
        if !seq.graphs.contains_key(&(path, steps)) {
            // Only what is queued from here on is captured; the wait keeps it apart from
            // earlier work still running on the stream.
            self.model.gpu.synchronize()?;
            let graph = self
                .model
                .gpu
                .capture(|| (0..steps).try_for_each(|i| decode::step(&self.model, seq, path, i > 0)))?;
            seq.graphs.insert((path, steps), graph);
        }
        Ok(())
    }

    /// Writes `tokens` into the sequence's id buffer from its current position on and marks
    /// them as prompt, so the steps that run them do not overwrite them with picks.
    pub fn queue_prompt(&self, seq: &mut CudaSequence, tokens: &[u32]) -> Result<()> {
        self.settle(seq)?;
        let end = seq.position + tokens.len();
        if end > seq.max_seq {
            return Err(CudaError::Invalid(format!(
                "prompt of {} tokens does not fit: the sequence holds {} of {}",
                tokens.len(),
                seq.position,
                seq.max_seq
            )));
        }
        if let Some(bad) = tokens.iter().find(|&&t| t as usize >= self.model.dims.vocab) {
            return Err(CudaError::Invalid(format!(
                "token id {bad} is outside the vocabulary of {}",
                self.model.dims.vocab
            )));
        }
        let bytes: Vec<u8> = tokens
            .iter()
            .flat_map(|t| (*t as i32).to_le_bytes())
            .collect();
        seq.held_pick = None;
        // Unknown until both uploads have succeeded.
        seq.prompt_end_host = usize::MAX;
        self.model.gpu
            .upload(seq.ids.ptr() + 4 * seq.position as u64, &bytes)?;
        self.model.gpu
            .upload(seq.prompt_end.ptr(), &(end as i32).to_le_bytes())?;
        seq.prompt_end_host = end;
        Ok(())
    }

    /// Runs `tokens` through the model from the sequence's position and leaves the pick under
    /// the sequence's rule after the last one as the next input; nothing waits for the GPU.
    pub fn prefill_tokens(&self, seq: &mut CudaSequence, tokens: &[u32]) -> Result<()> {
        if tokens.is_empty() {
            return Err(CudaError::Invalid(
                "prefill needs at least one token".into(),
            ));
        }
        self.queue_prompt(seq, tokens)?;
        if tokens.len() == 1 {
            // One token is exactly a decode step, and the captured step is far cheaper than a
            // chunk's few hundred launches over every touched expert.
            return self.run_steps(seq, 1);
        }
        prefill::prompt(&self.model, seq, self.prefill_scratch()?, tokens.len())?;
        seq.rule_advanced(1);
        seq.position += tokens.len();
        Ok(())
    }

    /// The step's pick of the token after `token` under `rule` (the trait's `decode_pick`):
    /// only the id (4 bytes) comes back instead of the logits. With `more`, the next step
    /// runs ahead on the pick before the host has read it, under the same rule, and the next
    /// call on that pick and rule finds it queued: the GPU then never waits for the host
    /// between tokens (the host's read-back, its handling of the token and the next launch
    /// took ~15 us of each ~1.8 ms step). Anything else settles it first (`settle`). A drawn
    /// rule runs ahead too: each step moves it to its stream's next draw, the rule a caller
    /// drawing from the same stream gives for the next token.
    pub(crate) fn pick_after(
        &self,
        seq: &mut CudaSequence,
        token: u32,
        rule: &PickRule,
        more: bool,
    ) -> Result<u32> {
        // The rule of the step run ahead, if one is: the held one, a draw back.
        let queued = seq
            .rule_host
            .map(|r| if seq.ahead { r.advanced(-1) } else { r });
        let same_rule = queued.is_some_and(|q| same_rule(&q, rule));
        if seq.ahead && same_rule && seq.held_pick == Some((seq.position, token)) {
            seq.ahead = false;
            seq.position += 1;
        } else {
            self.set_rule(seq, rule)?;
            self.queue_input(seq, token)?;
            self.run_steps(seq, 1)?;
        }
        if more && same_rule && seq.position < seq.max_seq {
            self.launch_steps(seq, 1)?;
            seq.ahead = true;
        }
        // The pick of the step at position - 1 is ids[position].
        self.last_pick(seq)
    }

    /// Ids held at positions `range` (prompt tokens and picks alike); waits for queued work.
    pub fn ids(&self, seq: &CudaSequence, range: std::ops::Range<usize>) -> Result<Vec<u32>> {
        let mut bytes = vec![0u8; 4 * range.len()];
        self.model.gpu
            .download(&mut bytes, seq.ids.ptr() + 4 * range.start as u64)?;
        Ok(bytes
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u32)
            .collect())
    }

    /// The last step's logits: after a `decode_pick` that ran a step ahead, that step's.
    pub fn logits(&self, seq: &CudaSequence) -> Result<Vec<f32>> {
        let mut bytes = vec![0u8; 4 * self.model.dims.vocab];
        self.model.gpu.download(&mut bytes, seq.logits.ptr())?;
        Ok(bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    /// Sets the rule the sequence's next step (or prefill) applies to pick its token; each
    /// step moves a drawn rule to its stream's next draw (`PickRule::advanced`). The upload
    /// (synchronous: it waits for queued work) is skipped when the GPU already holds the rule:
    /// a generation loop's rule for the next token is the one the last step left, greedy or
    /// drawn from the same stream.
    pub fn set_rule(&self, seq: &mut CudaSequence, rule: &PickRule) -> Result<()> {
        self.settle(seq)?;
        if !seq.rule_host.is_some_and(|held| same_rule(&held, rule)) {
            self.upload_rule(seq, rule)?;
        }
        seq.path = PickPath::of(rule);
        Ok(())
    }

    fn upload_rule(&self, seq: &mut CudaSequence, rule: &PickRule) -> Result<()> {
        // Unknown until the upload has succeeded.
        seq.rule_host = None;
        self.model.gpu.upload(seq.rule.ptr(), &rule_bytes(rule))?;
        seq.rule_host = Some(*rule);
        Ok(())
    }

    /// The token the last step or prefill picked (the sequence's next input); waits for it.
    pub(crate) fn last_pick(&self, seq: &mut CudaSequence) -> Result<u32> {
        let id = self.wait_pick(seq)?;
        seq.held_pick = Some((seq.position, id));
        Ok(id)
    }

    /// The pick that lands at the sequence's position (finish_step's slot position % 2, tagged
    /// with the position), polled in host memory rather than behind an event recorded in the
    /// stream between two steps. Past POLL_SPIN the driver's wait takes over (a long prefill;
    /// a failed step reports its error there). Polling needs no event recorded between two
    /// steps and no synchronisation on it, and finish_step no system-scope fence: the pick and
    /// its position arrive as one 8-byte store.
    fn wait_pick(&self, seq: &CudaSequence) -> Result<u32> {
        let at = 8 * (seq.position % 2);
        let tagged = |v: u64| (v >> 32) as usize == seq.position;
        let start = std::time::Instant::now();
        let mut slot = seq.picked.read_u64(at);
        while !tagged(slot) {
            if start.elapsed() > POLL_SPIN {
                self.model.gpu.synchronize()?;
                slot = seq.picked.read_u64(at);
                if !tagged(slot) {
                    return Err(CudaError::Invalid(format!(
                        "no pick landed at position {}",
                        seq.position
                    )));
                }
                break;
            }
            std::hint::spin_loop();
            slot = seq.picked.read_u64(at);
        }
        let id = slot as u32;
        if id as usize >= self.model.dims.vocab {
            return Err(CudaError::Invalid(format!(
                "the GPU picked token {id}, outside the vocabulary"
            )));
        }
        Ok(id)
    }

    /// Makes `token` the input of the sequence's next step: queue_prompt, unless the GPU
    /// already holds it there as the last pick (a generation loop feeds each pick straight
    /// back), which saves two synchronous uploads per generated token.
    fn queue_input(&self, seq: &mut CudaSequence, token: u32) -> Result<()> {
        // The step at `position` writes its pick when position + 1 >= prompt_end; queue_prompt
        // would set prompt_end to position + 1, so a lower one behaves the same.
        let held = seq.held_pick == Some((seq.position, token));
        if held && seq.prompt_end_host <= seq.position + 1 {
            return Ok(());
        }
        self.queue_prompt(seq, &[token])
    }

    /// Clears a sequence's recurrent state, conv ring and position (the KV cache needs no
    /// clearing: positions past the sequence's length are never read).
    pub(crate) fn reset(&self, s: &mut CudaSequence) -> Result<()> {
        self.settle(s)?;
        s.held_pick = None;
        s.rule_host = None;
        for t in [&s.gdn_state, &s.conv_ring, &s.pos, &s.prompt_end, &s.rule] {
            self.model.gpu.memset_u32(t.ptr(), 0, t.bytes() / 4)?;
        }
        self.model.gpu.memset_u32(s.best.ptr(), 0, 2)?;
        self.model.gpu.memset_u32(s.router_done.ptr(), 0, 2)?;
        self.model.gpu.synchronize()?;
        s.forget_picks();
        s.position = 0;
        s.prompt_end_host = 0;
        // The zeroed rule: greedy, with every field zero.
        s.rule_host = Some(PickRule {
            top_p: 0.0,
            ..PickRule::GREEDY
        });
        s.path = PickPath::Greedy;
        Ok(())
    }

    /// Runs one decode step eagerly with every launch timed: (launch label, milliseconds).
    pub fn profile_step(&self, s: &mut CudaSequence) -> Result<Vec<(String, f32)>> {
        self.settle(s)?;
        if s.position + 1 > s.max_seq {
            return Err(CudaError::Invalid(
                "profile_step: the sequence is full".into(),
            ));
        }
        self.model.gpu.synchronize()?;
        self.model.gpu.profile_start();
        let recorded = decode::step(&self.model, s, s.path, false);
        let timings = self.model.gpu.profile_finish();
        recorded?;
        s.rule_advanced(1);
        s.position += 1;
        timings
    }

    /// Empties the sequence for reuse at the same `max_seq` (the benchmark's rounds).
    pub fn clear(&self, s: &mut CudaSequence) -> Result<()> {
        self.reset(s)
    }
}

/// Decode steps captured back to back in one graph, so that programmatic dependent launch
/// links each step's last kernel to the next step's first, as it links the layers: the first
/// input product's weights then stream during the previous step's lm_head instead of after a
/// graph boundary, where it sat on the step's path far longer than the same product of the
/// other layers.
const STEPS_PER_GRAPH: usize = 8;

/// How long `wait_pick` polls host memory before it blocks in the driver: a few decode steps.
const POLL_SPIN: std::time::Duration = std::time::Duration::from_millis(20);

/// Whether two rules pick alike on the device: the same bytes (a NaN field equals itself).
fn same_rule(a: &PickRule, b: &PickRule) -> bool {
    rule_bytes(a) == rule_bytes(b)
}
