//! One sequence's GPU state: what persists across steps (KV cache, GDN state and conv ring,
//! the ids and position the step reads, the pick rule), the decode step's scratch, what the
//! host knows of it, its captured step graphs, and host snapshots of it.

use std::collections::HashMap;
use std::sync::Arc;

use lily_model::PickRule;

use crate::dims::{Dims, ATTN_SPLITS};
use crate::error::Result;
use crate::kernels::sampling::{scratch_bytes as pick_scratch_bytes, PickPath, RULE_BYTES};
use crate::runtime::driver::{Graph, Gpu, PinnedBuffer};
use crate::runtime::tensor::{DType, Tensor};

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
    pub(crate) x: Tensor,
    pub(crate) xn: Tensor,
    pub(crate) gdn_proj: Tensor,
    pub(crate) gdn_o: Tensor,
    pub(crate) gdn_normed: Tensor,
    pub(crate) attn_proj: Tensor,
    pub(crate) q: Tensor,
    pub(crate) part_acc: Tensor,
    pub(crate) part_ml: Tensor,
    pub(crate) attn_out: Tensor,
    pub(crate) router_logits: Tensor,
    pub(crate) router_done: Tensor,
    pub(crate) expert_ids: Tensor,
    pub(crate) expert_weights: Tensor,
    pub(crate) expert_h: Tensor,
    pub(crate) shared_expert_out: Tensor,
    pub(crate) logits: Tensor,
    pub(crate) pick_scratch: Tensor,
    /// `rule`'s pick path (set_rule keeps the two in step): which graphs a step replays.
    pub(crate) path: PickPath,
    /// What the host knows the GPU holds, so that a generation loop skips uploads that would
    /// change nothing: the rule the next queued step applies, prompt_end, and (position, id)
    /// of the last pick read back. None where unknown (after a failed upload, or a write the
    /// host did not follow).
    pub(crate) rule_host: Option<PickRule>,
    pub(crate) prompt_end_host: usize,
    pub(crate) held_pick: Option<(usize, u32)>,
    /// Whether a step on the held pick is queued past `position` (decode_pick ran it ahead):
    /// the device's position is then one further than `position`.
    pub(crate) ahead: bool,
    /// Each step's pick, written by finish_step into host memory (two slots by position
    /// parity, tagged with the position; `wait_pick`).
    pub(crate) picked: PinnedBuffer,
    /// The captured graphs by pick path and steps per graph (`capture_steps`).
    pub(crate) graphs: HashMap<(PickPath, usize), Graph>,
}

impl CudaSequence {
    /// Allocates the state of a sequence of up to `max_seq` tokens (contents undefined: the
    /// backend resets it before use).
    pub(crate) fn allocate(g: &Arc<Gpu>, d: &Dims, max_seq: usize) -> Result<CudaSequence> {
        let f32t = |name: &str, shape: &[usize]| Tensor::new(g, name, DType::F32, shape);
        let bf16t = |name: &str, shape: &[usize]| Tensor::new(g, name, DType::BF16, shape);
        let kv_shape = [d.attn_layers(), d.attn_kv_heads, max_seq, d.attn_head_dim];
        Ok(CudaSequence {
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
        })
    }

    /// GPU bytes a sequence of `max_seq` tokens needs (caches, recurrent state, scratch).
    pub fn bytes(d: &Dims, max_seq: usize) -> usize {
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

    /// Empties both pick slots, so that no tag left by a step the host did not follow (taken
    /// back, or before a restore or reset) matches a pick it waits for. Only while no step is
    /// queued.
    pub(crate) fn forget_picks(&self) {
        self.picked.write_u64(0, 0);
        self.picked.write_u64(8, 0);
    }

    /// Records that `steps` more steps (finish_step's) are queued: each moved a drawn rule on.
    pub(crate) fn rule_advanced(&mut self, steps: usize) {
        self.rule_host = self.rule_host.map(|r| r.advanced(steps as i64));
    }

    /// A host copy of the state at the sequence's position: the KV cache up to it, the GDN
    /// state half the next step reads, the conv ring.
    pub(crate) fn snapshot(&self, d: &Dims) -> CudaSnapshot {
        let download = |ptr: u64, bytes: usize| {
            let mut v = vec![0u8; bytes];
            // The trait gives snapshot no error path; a failed copy is a lost GPU, which the
            // next step reports.
            if let Err(e) = self.gpu.download(&mut v, ptr) {
                tracing::error!("snapshot: {e}");
            }
            v
        };
        let kv = self
            .kv_rows(d)
            .map(|at| download(at, self.position * kv_row_bytes(d)))
            .collect();
        CudaSnapshot {
            position: self.position,
            kv: Arc::new(kv),
            gdn_state: Arc::new(
                (0..d.gdn_layers())
                    .flat_map(|l| {
                        let half = self.gdn_state.at(l).at(self.position % 2);
                        download(half.ptr, half.bytes())
                    })
                    .collect(),
            ),
            conv_ring: Arc::new(download(self.conv_ring.ptr(), self.conv_ring.bytes())),
        }
    }

    /// Puts `snap` back, with nothing queued after it: the next step runs at its position.
    pub(crate) fn restore(&mut self, d: &Dims, snap: &CudaSnapshot) {
        let upload = |ptr: u64, bytes: &[u8]| {
            if let Err(e) = self.gpu.upload(ptr, bytes) {
                tracing::error!("restore: {e}");
            }
        };
        for (at, part) in self.kv_rows(d).zip(snap.kv.iter()) {
            upload(at, part);
        }
        let per_layer = snap.gdn_state.len() / d.gdn_layers();
        for (l, state) in snap.gdn_state.chunks_exact(per_layer).enumerate() {
            upload(self.gdn_state.at(l).at(snap.position % 2).ptr, state);
        }
        upload(self.conv_ring.ptr(), &snap.conv_ring);
        upload(self.pos.ptr(), &(snap.position as i32).to_le_bytes());
        upload(self.prompt_end.ptr(), &0i32.to_le_bytes());
        self.position = snap.position;
        self.prompt_end_host = 0;
        self.held_pick = None;
        // The uploads waited for any step run ahead; the position is the snapshot's.
        self.ahead = false;
        self.forget_picks();
    }

    /// Where each (cache, layer, KV head)'s rows start, K cache first.
    fn kv_rows<'a>(&'a self, d: &'a Dims) -> impl Iterator<Item = u64> + 'a {
        [&self.k_cache, &self.v_cache].into_iter().flat_map(move |cache| {
            (0..d.attn_layers() * d.attn_kv_heads)
                .map(move |lh| cache.ptr() + ((lh * self.max_seq) * kv_row_bytes(d)) as u64)
        })
    }
}

/// Bytes of one token's key (or value) in one KV head.
fn kv_row_bytes(d: &Dims) -> usize {
    d.attn_head_dim * 2
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

/// A host copy of a sequence's state at some position.
#[derive(Clone)]
pub struct CudaSnapshot {
    position: usize,
    kv: Arc<Vec<Vec<u8>>>,
    gdn_state: Arc<Vec<u8>>,
    conv_ring: Arc<Vec<u8>>,
}
