//! The CUDA `Backend`: the model on one GPU (model.rs), sequences (sequence.rs) run by the
//! step protocol (steps.rs) through the forward passes (forward/).

use std::path::Path;
use std::sync::{Arc, OnceLock};

use lily_model::{Backend, Config, PickRule, Weights};

use crate::dims::Dims;
use crate::error::{CudaError, Result};
use crate::forward::prefill::{PrefillScratch, PREFILL_CHUNK};
use crate::model::Model;
use crate::runtime::driver::Gpu;
use crate::sequence::{CudaSequence, CudaSnapshot};

pub struct CudaBackend {
    pub model: Model,
    /// The prefill's chunk buffers, allocated at the first prefill.
    prefill: OnceLock<PrefillScratch>,
}

impl CudaBackend {
    fn new(model: Model) -> CudaBackend {
        CudaBackend {
            model,
            prefill: OnceLock::new(),
        }
    }

    /// The model of `dims` with seeded synthetic weights generated on the GPU.
    pub fn synthetic(gpu: Arc<Gpu>, dims: Dims, seed: u32) -> Result<CudaBackend> {
        Model::synthetic(gpu, dims, seed).map(Self::new)
    }

    /// Loads the checkpoint in `dir` (memory-mapped) and copies it to the GPU once.
    pub fn load(gpu: Arc<Gpu>, dir: &Path) -> Result<CudaBackend> {
        Model::load(gpu, dir).map(Self::new)
    }

    pub fn from_weights(gpu: Arc<Gpu>, config: &Config, weights: &Weights) -> Result<CudaBackend> {
        Model::from_weights(gpu, config, weights).map(Self::new)
    }

    /// GPU bytes a sequence of `max_seq` tokens needs (caches, recurrent state, scratch).
    pub fn sequence_bytes(&self, max_seq: usize) -> usize {
        CudaSequence::bytes(&self.model.dims, max_seq)
    }

    /// The prefill's chunk buffers, allocated at the first call.
    pub(crate) fn prefill_scratch(&self) -> Result<&PrefillScratch> {
        if let Some(s) = self.prefill.get() {
            return Ok(s);
        }
        let needed = PrefillScratch::bytes(&self.model.dims, PREFILL_CHUNK);
        let (free, _) = self.model.gpu.free_memory()?;
        if needed > free {
            return Err(CudaError::Invalid(format!(
                "prefill needs {} MiB of GPU memory for its {PREFILL_CHUNK}-token chunk buffers \
                 but only {} MiB are free",
                needed >> 20,
                free >> 20
            )));
        }
        let s = PrefillScratch::new(&self.model.gpu, &self.model.dims, PREFILL_CHUNK)?;
        Ok(self.prefill.get_or_init(|| s))
    }
}

impl Backend for CudaBackend {
    type Sequence = CudaSequence;
    type Snapshot = CudaSnapshot;
    type Error = CudaError;

    fn vocab_size(&self) -> usize {
        self.model.dims.vocab
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
            None => PrefillScratch::bytes(&self.model.dims, PREFILL_CHUNK),
        };
        let needed = self.sequence_bytes(max_seq) + prefill;
        let (free, _) = self.model.gpu.free_memory()?;
        // Leave room for the graph and the driver's own allocations.
        let margin = 256 << 20;
        if needed + margin > free {
            return Err(CudaError::OutOfMemory {
                max_seq,
                needed_mib: needed >> 20,
                free_mib: free >> 20,
            });
        }
        let mut seq = CudaSequence::allocate(&self.model.gpu, &self.model.dims, max_seq)?;
        self.reset(&mut seq)?;
        Ok(seq)
    }

    fn prefill(&self, seq: &mut CudaSequence, tokens: &[u32]) -> Result<Vec<f32>> {
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

    /// The step picks on the GPU and may run the next one ahead (steps.rs: `pick_after`).
    fn decode_pick(
        &self,
        seq: &mut CudaSequence,
        token: u32,
        rule: &PickRule,
        more: bool,
    ) -> Result<u32> {
        self.pick_after(seq, token, rule, more)
    }

    fn position(&self, seq: &CudaSequence) -> usize {
        seq.position
    }

    fn snapshot(&self, seq: &CudaSequence) -> CudaSnapshot {
        seq.snapshot(&self.model.dims)
    }

    fn restore(&self, seq: &mut CudaSequence, snap: &CudaSnapshot) {
        seq.restore(&self.model.dims, snap)
    }
}
