//! The CUDA `Backend`: one decode step is a fixed sequence of ~400 launches that reads the
//! token and position from GPU memory and writes the next token back there, so it is captured
//! once per sequence and pick path (greedy, or a draw with the cuts it makes) as a CUDA graph
//! and replayed with no host synchronisation in between.
//! Prefill runs the prompt in chunks through batched kernels (prefill.rs) and leaves the
//! sequence where the step graph continues.

use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use lily_model::{Backend, Config, PickRule, Weights};

use crate::dims::{Dims, ATTN_SPLITS};
use crate::driver::{Gpu, Graph, PinnedBuffer};
use crate::error::{CudaError, Result};
use crate::kernels::attention::AttnDecodeArgs;
use crate::kernels::gdn::GdnDecodeArgs;
use crate::kernels::moe::MoeArgs;
use crate::kernels::sampling::{
    rule_bytes, scratch_bytes as pick_scratch_bytes, PickPath, RULE_BYTES,
};
use crate::kernels::Kernels;
use crate::prefill::{PrefillScratch, PREFILL_CHUNK};
use crate::tensor::{DType, Tensor, View};
use crate::weights::{DeviceWeights, Mixer};

pub struct CudaBackend {
    pub gpu: Arc<Gpu>,
    pub dims: Dims,
    pub kernels: Kernels,
    pub weights: DeviceWeights,
    /// The prefill's chunk buffers, allocated at the first prefill.
    pub(crate) prefill: OnceLock<PrefillScratch>,
}

impl CudaBackend {
    /// Compiles the kernels for `dims` and allocates the weights (contents undefined) on `gpu`
    /// (opened by the caller, who may have probed it first).
    fn allocate(gpu: Arc<Gpu>, dims: Dims) -> Result<CudaBackend> {
        // The GPU may have been opened on another thread (the server probes it on the main
        // thread and builds the backend on its engine thread, which then does all the work).
        gpu.bind()?;
        tracing::info!(gpu = %gpu.name, arch = %gpu.arch(), sms = gpu.multiprocessors, driver = gpu.driver_version, "CUDA device");
        let kernels = Kernels::load(&gpu, &dims)?;
        let weights = DeviceWeights::allocate(&gpu, &dims)?;
        Ok(CudaBackend {
            gpu,
            dims,
            kernels,
            weights,
            prefill: OnceLock::new(),
        })
    }

    /// The model of `dims` with seeded synthetic weights generated on the GPU.
    pub fn synthetic(gpu: Arc<Gpu>, dims: Dims, seed: u32) -> Result<CudaBackend> {
        let b = Self::allocate(gpu, dims)?;
        b.weights.fill_synthetic(&b.kernels, seed)?;
        b.gpu.synchronize()?;
        Ok(b)
    }

    /// Loads the checkpoint in `dir` (memory-mapped) and copies it to the GPU once.
    pub fn load(gpu: Arc<Gpu>, dir: &Path) -> Result<CudaBackend> {
        let config = Config::load(dir).map_err(|e| CudaError::Weights(e.to_string()))?;
        let weights = Weights::load(dir, &config).map_err(|e| CudaError::Weights(e.to_string()))?;
        Self::from_weights(gpu, &config, &weights)
    }

    pub fn from_weights(gpu: Arc<Gpu>, config: &Config, weights: &Weights) -> Result<CudaBackend> {
        let b = Self::allocate(gpu, Dims::from_config(config))?;
        b.weights.upload(&b.gpu, weights)?;
        Ok(b)
    }

    /// GPU bytes a sequence of `max_seq` tokens needs (caches, recurrent state, scratch).
    pub fn sequence_bytes(&self, max_seq: usize) -> usize {
        let d = &self.dims;
        let kv = max_seq * d.kv_bytes_per_token();
        let gdn = d.gdn_layers()
            * 4
            * (2 * d.gdn_value_heads * d.gdn_key_dim * d.gdn_value_dim
                + d.conv_kernel * d.gdn_conv_channels());
        let scratch = 4
            * (d.vocab
                + d.gdn_in_rows()
                + d.attn_in_rows()
                + 2 * d.attn_heads * ATTN_SPLITS * (d.attn_head_dim + 2));
        kv + gdn + scratch + pick_scratch_bytes(d.vocab) + RULE_BYTES + 4 * (max_seq + 1)
    }

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
                Self::rule_advanced(seq, steps);
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
        self.gpu
            .upload(seq.pos.ptr(), &(seq.position as i32).to_le_bytes())?;
        // Its pick carries the tag the next step's will: gone before that step runs.
        Self::forget_picks(seq);
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
            self.gpu.synchronize()?;
            let graph = self
                .gpu
                .capture(|| (0..steps).try_for_each(|i| self.record_step(seq, path, i > 0)))?;
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
        if let Some(bad) = tokens.iter().find(|&&t| t as usize >= self.dims.vocab) {
            return Err(CudaError::Invalid(format!(
                "token id {bad} is outside the vocabulary of {}",
                self.dims.vocab
            )));
        }
        let bytes: Vec<u8> = tokens
            .iter()
            .flat_map(|t| (*t as i32).to_le_bytes())
            .collect();
        seq.held_pick = None;
        // Unknown until both uploads have succeeded.
        seq.prompt_end_host = usize::MAX;
        self.gpu
            .upload(seq.ids.ptr() + 4 * seq.position as u64, &bytes)?;
        self.gpu
            .upload(seq.prompt_end.ptr(), &(end as i32).to_le_bytes())?;
        seq.prompt_end_host = end;
        Ok(())
    }

    /// Ids held at positions `range` (prompt tokens and picks alike); waits for queued work.
    pub fn ids(&self, seq: &CudaSequence, range: std::ops::Range<usize>) -> Result<Vec<u32>> {
        let mut bytes = vec![0u8; 4 * range.len()];
        self.gpu
            .download(&mut bytes, seq.ids.ptr() + 4 * range.start as u64)?;
        Ok(bytes
            .chunks_exact(4)
            .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as u32)
            .collect())
    }

    /// The last step's logits: after a `decode_pick` that ran a step ahead, that step's.
    pub fn logits(&self, seq: &CudaSequence) -> Result<Vec<f32>> {
        let mut bytes = vec![0u8; 4 * self.dims.vocab];
        self.gpu.download(&mut bytes, seq.logits.ptr())?;
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
        self.gpu.upload(seq.rule.ptr(), &rule_bytes(rule))?;
        seq.rule_host = Some(*rule);
        Ok(())
    }

    /// Records that `steps` more steps (finish_step's) are queued: each moved a drawn rule on.
    pub(crate) fn rule_advanced(seq: &mut CudaSequence, steps: usize) {
        seq.rule_host = seq.rule_host.map(|r| r.advanced(steps as i64));
    }

    /// The token the last step or prefill picked (the sequence's next input); waits for it.
    fn last_pick(&self, seq: &mut CudaSequence) -> Result<u32> {
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
                self.gpu.synchronize()?;
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
        if id as usize >= self.dims.vocab {
            return Err(CudaError::Invalid(format!(
                "the GPU picked token {id}, outside the vocabulary"
            )));
        }
        Ok(id)
    }

    /// Empties both pick slots, so that no tag left by a step the host did not follow (taken
    /// back, or before a restore or reset) matches a pick it waits for. Only while no step is
    /// queued.
    fn forget_picks(seq: &CudaSequence) {
        seq.picked.write_u64(0, 0);
        seq.picked.write_u64(8, 0);
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

    /// Records one decode step's launches on the stream (run directly, or under capture).
    /// `path` must be the sequence's rule's (kernels/mod.rs: lm_head_pick). `linked`: the step
    /// follows another in the same graph, so its first kernels start while that one ends.
    fn record_step(&self, s: &CudaSequence, path: PickPath, linked: bool) -> Result<()> {
        let k = &self.kernels;
        let w = &self.weights;
        let d = &self.dims;
        let (pos, x, xn) = (s.pos.view(), s.x.view(), s.xn.view());
        // The layer's input product with its norm; the first takes the step's token's
        // embedding as its input and writes it to x.
        let input_product = |i: usize, w_in: &View, norm: &View, y: &View| {
            if i == 0 {
                k.gemv
                    .run_embed_normed(w_in, &w.embed.view(), &s.ids.view(), &pos, &x, norm, y)
            } else {
                k.gemv.run_normed(w_in, &x, norm, None, y)
            }
        };
        let (mut gdn_i, mut attn_i) = (0, 0);
        for (i, l) in w.layers.iter().enumerate() {
            match &l.mixer {
                Mixer::Gdn(g) => {
                    let proj = s.gdn_proj.view();
                    input_product(i, &g.in_proj.view(), &l.input_norm.view(), &proj)?;
                    k.gdn.decode(&GdnDecodeArgs {
                        proj: &proj,
                        conv_w: &g.conv_w.view(),
                        conv_ring: &s.conv_ring.at(gdn_i),
                        a_log: &g.a_log.view(),
                        dt_bias: &g.dt_bias.view(),
                        state: &s.gdn_state.at(gdn_i),
                        out: &s.gdn_o.view(),
                        pos: &pos,
                        pos_lag: (linked && gdn_i == 0) as i32,
                    })?;
                    k.gdn.gated_norm(
                        &s.gdn_o.view(),
                        &proj,
                        &g.norm.view(),
                        &s.gdn_normed.view(),
                    )?;
                    k.gemv
                        .run(&g.out_proj.view(), &s.gdn_normed.view(), &x, true)?;
                    gdn_i += 1;
                }
                Mixer::Attn(a) => {
                    let proj = s.attn_proj.view();
                    input_product(i, &a.qkv.view(), &l.input_norm.view(), &proj)?;
                    k.attention.decode(&AttnDecodeArgs {
                        proj: &proj,
                        q_norm: &a.q_norm.view(),
                        k_norm: &a.k_norm.view(),
                        k_cache: &s.k_cache.at(attn_i),
                        v_cache: &s.v_cache.at(attn_i),
                        q: &s.q.view(),
                        part_acc: &s.part_acc.view(),
                        part_ml: &s.part_ml.view(),
                        out: &s.attn_out.view(),
                        pos: &pos,
                        max_seq: s.max_seq,
                    })?;
                    k.gemv.run(&a.o_proj.view(), &s.attn_out.view(), &x, true)?;
                    attn_i += 1;
                }
            }
            // The last layer's router asks for the next step's first product, whose weights
            // cannot stream before the step's graph starts: its ahead rows (evict_last) wait
            // in L2 through lm_head's stream, which reads with evict_first.
            let ahead = match &w.layers[(i + 1) % w.layers.len()].mixer {
                Mixer::Gdn(g) => g.in_proj.view(),
                Mixer::Attn(a) => a.qkv.view(),
            };
            k.moe.run(&MoeArgs {
                router: &l.router.view(),
                norm: &l.post_norm.view(),
                logits: &s.router_logits.view(),
                done: &s.router_done.view(),
                gate_up: &l.gate_up.view(),
                down: &l.down.view(),
                shared_gate_up: &l.shared_gate_up.view(),
                shared_down: &l.shared_down.view(),
                x: &xn,
                ids: &s.expert_ids.view(),
                weights: &s.expert_weights.view(),
                h: &s.expert_h.view(),
                shared_out: &s.shared_expert_out.view(),
                residual: &x,
                ahead: Some(&ahead),
            })?;
        }
        debug_assert_eq!((gdn_i, attn_i), (d.gdn_layers(), d.attn_layers()));
        k.lm_head_pick(
            &w.lm_head.view(),
            &w.final_norm.view(),
            &x,
            &s.logits.view(),
            &s.rule.view(),
            &s.pick_scratch.view(),
            &s.best.view(),
            path,
        )?;
        k.sampling.finish_step(
            &s.best.view(),
            &s.ids.view(),
            &pos,
            &s.prompt_end.view(),
            &s.picked,
            &s.rule.view(),
        )
    }

    /// Clears a sequence's recurrent state, conv ring and position (the KV cache needs no
    /// clearing: positions past the sequence's length are never read).
    fn reset(&self, s: &mut CudaSequence) -> Result<()> {
        self.settle(s)?;
        s.held_pick = None;
        s.rule_host = None;
        for t in [&s.gdn_state, &s.conv_ring, &s.pos, &s.prompt_end, &s.rule] {
            self.gpu.memset_u32(t.ptr(), 0, t.bytes() / 4)?;
        }
        self.gpu.memset_u32(s.best.ptr(), 0, 2)?;
        self.gpu.memset_u32(s.router_done.ptr(), 0, 2)?;
        self.gpu.synchronize()?;
        Self::forget_picks(s);
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
        self.gpu.synchronize()?;
        self.gpu.profile_start();
        let recorded = self.record_step(s, s.path, false);
        let timings = self.gpu.profile_finish();
        recorded?;
        Self::rule_advanced(s, 1);
        s.position += 1;
        timings
    }

    /// Empties the sequence for reuse at the same `max_seq` (the benchmark's rounds).
    pub fn clear(&self, s: &mut CudaSequence) -> Result<()> {
        self.reset(s)
    }
}

/// One sequence's GPU state and its captured step.
pub struct CudaSequence {
    /// For Drop's wait on a step run ahead.
    gpu: Arc<Gpu>,
    pub max_seq: usize,
    pub(crate) position: usize,
    // State that persists across steps.
    pub(crate) k_cache: Tensor,
    pub(crate) v_cache: Tensor,
    pub(crate) gdn_state: Tensor,
    pub(crate) conv_ring: Tensor,
    pub(crate) ids: Tensor,
    pub(crate) pos: Tensor,
    pub(crate) prompt_end: Tensor,
    pub(crate) best: Tensor,
    /// The `PickRule` the step applies to its logits (sampling.rs's layout; zero: greedy).
    pub(crate) rule: Tensor,
    // Per-step scratch.
    x: Tensor,
    pub(crate) xn: Tensor,
    gdn_proj: Tensor,
    gdn_o: Tensor,
    gdn_normed: Tensor,
    attn_proj: Tensor,
    q: Tensor,
    part_acc: Tensor,
    part_ml: Tensor,
    attn_out: Tensor,
    router_logits: Tensor,
    router_done: Tensor,
    expert_ids: Tensor,
    expert_weights: Tensor,
    expert_h: Tensor,
    shared_expert_out: Tensor,
    pub(crate) logits: Tensor,
    pub(crate) pick_scratch: Tensor,
    /// `rule`'s pick path (set_rule keeps the two in step): which graphs a step replays.
    pub(crate) path: PickPath,
    /// What the host knows the GPU holds, so that a generation loop skips uploads that would
    /// change nothing: the rule the next queued step applies, prompt_end, and (position, id)
    /// of the last pick read back. None where unknown (after a failed upload, or a write the
    /// host did not follow).
    rule_host: Option<PickRule>,
    prompt_end_host: usize,
    held_pick: Option<(usize, u32)>,
    /// Whether a step on the held pick is queued past `position` (decode_pick ran it ahead):
    /// the device's position is then one further than `position`.
    ahead: bool,
    /// Each step's pick, written by finish_step into host memory (two slots by position
    /// parity, tagged with the position; `wait_pick`).
    pub(crate) picked: PinnedBuffer,
    /// The captured graphs by pick path and steps per graph (`capture_steps`).
    graphs: HashMap<(PickPath, usize), Graph>,
}

impl Drop for CudaSequence {
    /// A step run ahead may still be running on this sequence's buffers: wait for it before
    /// they are freed.
    fn drop(&mut self) {
        if self.ahead {
            if let Err(e) = self.gpu.synchronize() {
                tracing::error!("dropping a sequence: {e}");
            }
        }
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

/// A host copy of a sequence's state at some position.
#[derive(Clone)]
pub struct CudaSnapshot {
    position: usize,
    kv: Arc<Vec<Vec<u8>>>,
    gdn_state: Arc<Vec<u8>>,
    conv_ring: Arc<Vec<u8>>,
}

impl Backend for CudaBackend {
    type Sequence = CudaSequence;
    type Snapshot = CudaSnapshot;
    type Error = CudaError;

    fn vocab_size(&self) -> usize {
        self.dims.vocab
    }

    fn new_sequence(&self, max_seq: usize) -> Result<CudaSequence> {
        // Positions are i32 on the GPU.
        if max_seq == 0 || max_seq >= i32::MAX as usize {
            return Err(CudaError::Invalid(format!(
                "max_seq {max_seq} is out of range"
            )));
        }
        // The prefill's chunk buffers come at the first prefill; count them now so that a
        // sequence that leaves no room for them is refused before any work.
        let prefill = match self.prefill.get() {
            Some(_) => 0,
            None => PrefillScratch::bytes(&self.dims, PREFILL_CHUNK),
        };
        let needed = self.sequence_bytes(max_seq) + prefill;
        let (free, _) = self.gpu.free_memory()?;
        // Leave room for the graph and the driver's own allocations.
        let margin = 256 << 20;
        if needed + margin > free {
            return Err(CudaError::OutOfMemory {
                max_seq,
                needed_mib: needed >> 20,
                free_mib: free >> 20,
            });
        }
        let d = &self.dims;
        let g = &self.gpu;
        let f32t = |name: &str, shape: &[usize]| Tensor::new(g, name, DType::F32, shape);
        let bf16t = |name: &str, shape: &[usize]| Tensor::new(g, name, DType::BF16, shape);
        let kv_shape = [d.attn_layers(), d.attn_kv_heads, max_seq, d.attn_head_dim];
        let mut seq = CudaSequence {
            gpu: g.clone(),
            max_seq,
            position: 0,
            k_cache: bf16t("k_cache", &kv_shape)?,
            v_cache: bf16t("v_cache", &kv_shape)?,
            gdn_state: f32t(
                "gdn_state",
                &[
                    d.gdn_layers(),
                    2,
                    d.gdn_value_heads,
                    d.gdn_key_dim,
                    d.gdn_value_dim,
                ],
            )?,
            conv_ring: f32t(
                "conv_ring",
                &[d.gdn_layers(), d.conv_kernel, d.gdn_conv_channels()],
            )?,
            ids: Tensor::new(g, "ids", DType::I32, &[max_seq + 1])?,
            pos: Tensor::new(g, "pos", DType::I32, &[1])?,
            prompt_end: Tensor::new(g, "prompt_end", DType::I32, &[1])?,
            best: Tensor::new(g, "argmax", DType::U64, &[1])?,
            rule: Tensor::new(g, "pick_rule", DType::U64, &[RULE_BYTES / 8])?,
            x: f32t("x", &[d.hidden])?,
            xn: bf16t("xn", &[d.hidden])?,
            gdn_proj: f32t("gdn_proj", &[d.gdn_in_rows()])?,
            gdn_o: f32t("gdn_o", &[d.gdn_out()])?,
            gdn_normed: bf16t("gdn_normed", &[d.gdn_out()])?,
            attn_proj: f32t("attn_proj", &[d.attn_in_rows()])?,
            q: f32t("q", &[d.attn_out()])?,
            part_acc: f32t(
                "attn_part_acc",
                &[d.attn_heads, ATTN_SPLITS, d.attn_head_dim],
            )?,
            part_ml: f32t("attn_part_ml", &[d.attn_heads, ATTN_SPLITS, 2])?,
            attn_out: bf16t("attn_out", &[d.attn_out()])?,
            router_logits: f32t("router_logits", &[d.experts + 1])?,
            router_done: Tensor::new(g, "router_done", DType::U64, &[1])?,
            expert_ids: Tensor::new(g, "expert_ids", DType::I32, &[d.top_k])?,
            expert_weights: f32t("expert_weights", &[d.top_k + 1])?,
            expert_h: f32t("expert_h", &[d.top_k + 1, d.moe_inter])?,
            shared_expert_out: f32t("shared_expert_out", &[d.hidden])?,
            logits: f32t("logits", &[d.vocab])?,
            pick_scratch: Tensor::new(
                g,
                "pick_scratch",
                DType::U64,
                &[pick_scratch_bytes(d.vocab) / 8],
            )?,
            path: PickPath::Greedy,
            rule_host: None,
            prompt_end_host: 0,
            held_pick: None,
            ahead: false,
            picked: g.pinned(16)?,
            graphs: HashMap::new(),
        };
        self.reset(&mut seq)?;
        Ok(seq)
    }

    fn prefill(&self, seq: &mut CudaSequence, tokens: &[u32]) -> Result<Vec<f32>> {
        if tokens.is_empty() {
            return Err(CudaError::Invalid(
                "prefill needs at least one token".into(),
            ));
        }
        self.prefill_tokens(seq, tokens)?;
        self.logits(seq)
    }

    fn decode(&self, seq: &mut CudaSequence, token: u32) -> Result<Vec<f32>> {
        self.queue_prompt(seq, &[token])?;
        self.run_steps(seq, 1)?;
        self.logits(seq)
    }

    fn prefill_pick(&self, seq: &mut CudaSequence, tokens: &[u32], rule: &PickRule) -> Result<u32> {
        if tokens.is_empty() {
            return Err(CudaError::Invalid(
                "prefill needs at least one token".into(),
            ));
        }
        self.set_rule(seq, rule)?;
        self.prefill_tokens(seq, tokens)?;
        self.last_pick(seq)
    }

    /// The step picks on the GPU; only the id (4 bytes) comes back instead of the logits.
    /// With `more`, the next step runs ahead on the pick before the host has read it, under
    /// the same rule, and the next call on that pick and rule finds it queued: the GPU then
    /// never waits for the host between tokens (the host's read-back, its handling of the token
    /// and the next launch took ~15 us of each ~1.8 ms step). Anything else settles it first
    /// (`settle`). A drawn rule runs ahead too: each step moves it to its stream's next draw,
    /// the rule a caller drawing from the same stream gives for the next token.
    fn decode_pick(
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

    fn position(&self, seq: &CudaSequence) -> usize {
        seq.position
    }

    fn snapshot(&self, seq: &CudaSequence) -> CudaSnapshot {
        let download = |ptr: u64, bytes: usize| {
            let mut v = vec![0u8; bytes];
            // The trait gives snapshot no error path; a failed copy is a lost GPU, which the
            // next step reports.
            if let Err(e) = self.gpu.download(&mut v, ptr) {
                tracing::error!("snapshot: {e}");
            }
            v
        };
        let row = self.dims.attn_head_dim * 2;
        let mut kv = Vec::new();
        for cache in [&seq.k_cache, &seq.v_cache] {
            for l in 0..self.dims.attn_layers() {
                for h in 0..self.dims.attn_kv_heads {
                    let at = cache.ptr()
                        + (((l * self.dims.attn_kv_heads + h) * seq.max_seq) * row) as u64;
                    kv.push(download(at, seq.position * row));
                }
            }
        }
        CudaSnapshot {
            position: seq.position,
            kv: Arc::new(kv),
            gdn_state: Arc::new(
                (0..self.dims.gdn_layers())
                    .flat_map(|l| {
                        let half = seq.gdn_state.at(l).at(seq.position % 2);
                        download(half.ptr, half.bytes())
                    })
                    .collect(),
            ),
            conv_ring: Arc::new(download(seq.conv_ring.ptr(), seq.conv_ring.bytes())),
        }
    }

    fn restore(&self, seq: &mut CudaSequence, snap: &CudaSnapshot) {
        let upload = |ptr: u64, bytes: &[u8]| {
            if let Err(e) = self.gpu.upload(ptr, bytes) {
                tracing::error!("restore: {e}");
            }
        };
        let row = self.dims.attn_head_dim * 2;
        let mut parts = snap.kv.iter();
        for cache in [&seq.k_cache, &seq.v_cache] {
            for l in 0..self.dims.attn_layers() {
                for h in 0..self.dims.attn_kv_heads {
                    let at = cache.ptr()
                        + (((l * self.dims.attn_kv_heads + h) * seq.max_seq) * row) as u64;
                    upload(at, parts.next().expect("snapshot of the same model"));
                }
            }
        }
        let per_layer = snap.gdn_state.len() / self.dims.gdn_layers();
        for (l, state) in snap.gdn_state.chunks_exact(per_layer).enumerate() {
            upload(seq.gdn_state.at(l).at(snap.position % 2).ptr, state);
        }
        upload(seq.conv_ring.ptr(), &snap.conv_ring);
        upload(seq.pos.ptr(), &(snap.position as i32).to_le_bytes());
        upload(seq.prompt_end.ptr(), &0i32.to_le_bytes());
        seq.position = snap.position;
        seq.prompt_end_host = 0;
        seq.held_pick = None;
        // The uploads waited for any step run ahead; the position is the snapshot's.
        seq.ahead = false;
        Self::forget_picks(seq);
    }
}
