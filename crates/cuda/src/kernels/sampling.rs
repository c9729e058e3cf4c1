//! Launchers for sampling.cu: one draw on the GPU under a `PickRule` read from device memory
//! (so a captured step graph serves every rule of its `PickPath`; a greedy pick is lm_head's,
//! gemv.rs: run_lm_head) and the end-of-step bookkeeping.

use std::sync::Arc;

use lily_model::PickRule;

use crate::dims::Dims;
use crate::runtime::driver::{Function, Gpu, KernelArgs, Module, PinnedBuffer};
use crate::error::{CudaError, Result};
use crate::runtime::tensor::{DType, View};

/// Bytes of the device rule (`PickRuleDev` in sampling.cu).
pub const RULE_BYTES: usize = 24;

/// Tokens per block of the draw kernels and histogram bins of the radix select (sampling.cu's
/// SAMPLE_CHUNK and SAMPLE_BINS).
const CHUNK: usize = 1024;
const BINS: usize = 1024;
const THREADS: u32 = 256;

/// The largest vocabulary the draw handles: its masses are 44-bit fixed point summed in 63 bits.
pub const MAX_VOCAB: usize = 1 << 19;

/// The radix select's passes per cut: 3 digits of 10 bits (top-k's are passes 0..3, top-p's
/// 3..6).
const PASSES_PER_CUT: i32 = 3;

/// What a step launches to pick its token, which is what a captured step graph is specific to:
/// lm_head alone (greedy), or lm_head and the draw with the select passes of the cuts the rule
/// makes. The rule's other values (temperature, min-p, the cuts' sizes, the draw) are read from
/// device memory, so one graph serves every rule of its path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PickPath {
    Greedy,
    Draw { top_k: bool, top_p: bool },
}

impl PickPath {
    /// The path of `rule`, by the comparisons sampling.cu makes (a NaN top-p cuts nothing).
    pub fn of(rule: &PickRule) -> PickPath {
        if rule.is_greedy() {
            PickPath::Greedy
        } else {
            PickPath::Draw {
                top_k: rule.top_k > 0,
                top_p: rule.top_p < 1.0,
            }
        }
    }
}

/// `rule` as the device reads it: `{ float temperature; int top_k; float top_p; float min_p;
/// u64 draw; }`, little-endian (the draw kernel derives u from the draw, as PickRule::u does).
/// A top_k beyond i32 keeps every token, as it does on the host.
pub fn rule_bytes(rule: &PickRule) -> [u8; RULE_BYTES] {
    let mut b = [0u8; RULE_BYTES];
    b[0..4].copy_from_slice(&rule.temperature.to_le_bytes());
    b[4..8].copy_from_slice(&(rule.top_k.min(i32::MAX as u32) as i32).to_le_bytes());
    b[8..12].copy_from_slice(&rule.top_p.to_le_bytes());
    b[12..16].copy_from_slice(&rule.min_p.to_le_bytes());
    b[16..24].copy_from_slice(&rule.draw.to_le_bytes());
    b
}

/// Bytes of the draw's scratch for `vocab` tokens (mirrors `sample_scratch` in sampling.cu):
/// state, histogram, per-block sums and bin counts, and the weights. Allocate it as a U64
/// tensor of `scratch_bytes(vocab) / 8` elements.
pub fn scratch_bytes(vocab: usize) -> usize {
    let blocks = vocab.div_ceil(CHUNK);
    let bytes = 64 + 12 * BINS + 8 * blocks + 4 * BINS * blocks + 4 * vocab;
    bytes.next_multiple_of(8)
}

pub struct Sampling {
    gpu: Arc<Gpu>,
    _module: Module,
    weights: Function,
    select: Function,
    sample_draw: Function,
    finish: Function,
}

impl Sampling {
    pub fn load(gpu: &Arc<Gpu>, dims: &Dims) -> Result<Self> {
        let module = super::load(gpu, "sampling.cu", dims)?;
        Ok(Sampling {
            gpu: gpu.clone(),
            weights: module.function("sample_weights")?,
            select: module.function("sample_select")?,
            sample_draw: module.function("sample_draw")?,
            finish: module.function("finish_step")?,
            _module: module,
        })
    }

    /// The next token under the rule in `rule` (U64 [RULE_BYTES / 8], bytes from `rule_bytes`,
    /// written by the host and moved on by each step's finish_step) when it draws, exactly as
    /// `PickRule::pick`, replacing the argmax key of the logits in `best` (lm_head's, gemv.rs:
    /// run_lm_head) with the pick's.
    /// `top_k` / `top_p`: whether to launch that cut's select passes, which must be what the
    /// rule in memory asks for (`PickPath::of`; a cut left out is not made). `scratch` is U64
    /// [scratch_bytes(vocab) / 8], one per sequence; it needs no clearing. A greedy rule is
    /// lm_head's to pick: these kernels then write nothing.
    pub fn draw(
        &self,
        logits: &View,
        rule: &View,
        scratch: &View,
        best: &View,
        top_k: bool,
        top_p: bool,
    ) -> Result<()> {
        let n = logits.shape.iter().product::<usize>();
        if n == 0 || n > MAX_VOCAB {
            return Err(CudaError::Invalid(format!(
                "{logits}: {n} logits; the GPU draw handles 1 to {MAX_VOCAB}"
            )));
        }
        let l = logits.expect(DType::F32, &[n])?;
        let r = rule.expect(DType::U64, &[RULE_BYTES / 8])?;
        let s = scratch.expect(DType::U64, &[scratch_bytes(n) / 8])?;
        let b = best.expect(DType::U64, &[1])?;
        let grid = (n.div_ceil(CHUNK) as u32, 1, 1);
        let n = n as i32;
        let mut args = KernelArgs::new().ptr(l).i32(n).ptr(r).ptr(s).ptr(b);
        self.gpu
            .launch(&self.weights, grid, THREADS, 0, &mut args)?;
        let cuts = [(top_k, 0), (top_p, PASSES_PER_CUT)];
        for pass in cuts
            .iter()
            .filter(|c| c.0)
            .flat_map(|c| c.1..c.1 + PASSES_PER_CUT)
        {
            let mut args = KernelArgs::new().i32(n).ptr(r).ptr(s).i32(pass);
            self.gpu.launch(&self.select, grid, THREADS, 0, &mut args)?;
        }
        let mut args = KernelArgs::new().ptr(l).i32(n).ptr(r).ptr(s).ptr(b);
        self.gpu
            .launch(&self.sample_draw, grid, THREADS, 0, &mut args)
    }

    /// Writes the picked token to ids[pos + 1] (unless that is still a prompt position) and to
    /// `picked` (a pinned buffer of two U64 slots: slot (pos + 1) % 2 gets (pos + 1) << 32 |
    /// token), advances pos, clears `best` and moves a drawn `rule` to its next draw
    /// (`PickRule::advanced(1)`).
    pub fn finish_step(
        &self,
        best: &View,
        ids: &View,
        pos: &View,
        prompt_end: &View,
        picked: &PinnedBuffer,
        rule: &View,
    ) -> Result<()> {
        let r = rule.expect(DType::U64, &[RULE_BYTES / 8])?;
        let b = best.expect(DType::U64, &[1])?;
        let p = pos.expect(DType::I32, &[1])?;
        let e = prompt_end.expect(DType::I32, &[1])?;
        if picked.bytes() < 16 {
            return Err(CudaError::Invalid(format!(
                "finish_step: the pick's host buffer holds {} bytes, not two slots",
                picked.bytes()
            )));
        }
        let mut args = KernelArgs::new()
            .ptr(b)
            .ptr(ids.ptr)
            .ptr(p)
            .ptr(e)
            .ptr(picked.device)
            .ptr(r);
        self.gpu.launch(&self.finish, (1, 1, 1), 1, 0, &mut args)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rule_bytes_follow_the_device_layout() {
        let b = rule_bytes(&PickRule {
            temperature: 0.7,
            top_k: u32::MAX,
            top_p: 0.9,
            min_p: 0.05,
            draw: PickRule::draw_for(0.25),
        });
        assert_eq!(f32::from_le_bytes(b[0..4].try_into().unwrap()), 0.7);
        assert_eq!(i32::from_le_bytes(b[4..8].try_into().unwrap()), i32::MAX);
        assert_eq!(f32::from_le_bytes(b[8..12].try_into().unwrap()), 0.9);
        assert_eq!(f32::from_le_bytes(b[12..16].try_into().unwrap()), 0.05);
        assert_eq!(
            u64::from_le_bytes(b[16..24].try_into().unwrap()),
            PickRule::draw_for(0.25)
        );
    }

    #[test]
    fn scratch_holds_the_weights_and_per_block_bins() {
        // 243 blocks at the real vocabulary: ~1 MB of weights and ~1 MB of bin counts.
        let n = 248_320;
        assert_eq!(scratch_bytes(n), 64 + 12 * 1024 + 243 * (8 + 4096) + 4 * n);
        assert_eq!(scratch_bytes(3) % 8, 0);
    }

    #[test]
    fn a_rule_path_follows_the_device_comparisons() {
        let draw = |top_k, top_p| PickRule {
            temperature: 0.7,
            top_k,
            top_p,
            min_p: 0.0,
            draw: 0,
        };
        assert_eq!(PickPath::of(&PickRule::GREEDY), PickPath::Greedy);
        assert_eq!(
            PickPath::of(&PickRule {
                temperature: -1.0,
                ..draw(5, 0.5)
            }),
            PickPath::Greedy
        );
        assert_eq!(
            PickPath::of(&draw(0, 1.0)),
            PickPath::Draw {
                top_k: false,
                top_p: false
            }
        );
        assert_eq!(
            PickPath::of(&draw(40, 0.9)),
            PickPath::Draw {
                top_k: true,
                top_p: true
            }
        );
        assert_eq!(
            PickPath::of(&draw(0, f32::NAN)),
            PickPath::Draw {
                top_k: false,
                top_p: false
            }
        );
        assert_eq!(
            PickPath::of(&draw(u32::MAX, 1.5)),
            PickPath::Draw {
                top_k: true,
                top_p: false
            }
        );
    }
}
