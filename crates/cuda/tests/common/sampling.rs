//! The sampling tests' fixtures, shared with their micro-benchmarks.

use std::sync::Arc;
use super::*;
use lily_cuda::dims::Dims;
use lily_cuda::kernels::sampling::{PickPath, RULE_BYTES, Sampling, rule_bytes, scratch_bytes};
use lily_cuda::runtime::driver::Gpu;
use lily_cuda::runtime::tensor::{DType, Tensor};
use lily_model::PickRule;

/// One vocabulary's buffers on the GPU.
pub struct Setup {
    pub gpu: Arc<Gpu>,
    pub k: Sampling,
    pub n: usize,
    /// The argmax key of the logits, which lm_head leaves in `best` before a draw, on the host
    /// and on the GPU (U64 [1], copied into `best` in stream order).
    pub max_key: u64,
    pub max_key_dev: Tensor,
    pub logits: Tensor,
    pub rule: Tensor,
    pub scratch: Tensor,
    pub best: Tensor,
}

impl Setup {
    pub fn new(gpu: &Arc<Gpu>, k: Sampling, logits: &[f32]) -> Setup {
        let n = logits.len();
        let scratch = Tensor::new(gpu, "scratch", DType::U64, &[scratch_bytes(n) / 8]).unwrap();
        // Poisoned: the draw must not depend on what the scratch held before.
        gpu.memset_u32(scratch.ptr(), 0x7fc0_0000, scratch.bytes() / 4)
            .unwrap();
        let max_key = argmax_key(logits);
        let max_key_dev = Tensor::new(gpu, "max_key", DType::U64, &[1]).unwrap();
        gpu.upload(max_key_dev.ptr(), &max_key.to_le_bytes())
            .unwrap();
        Setup {
            gpu: gpu.clone(),
            k,
            n,
            max_key,
            max_key_dev,
            logits: upload(gpu, "logits", DType::F32, &[n], logits),
            rule: Tensor::new(gpu, "rule", DType::U64, &[RULE_BYTES / 8]).unwrap(),
            scratch,
            best: upload(gpu, "best", DType::U64, &[1], &[0.0]),
        }
    }

    pub fn set_rule(&self, rule: &PickRule) {
        self.gpu.upload(self.rule.ptr(), &rule_bytes(rule)).unwrap();
    }

    /// lm_head's argmax into `best`, then the draw with the passes of `rule`'s path.
    pub fn launch(&self, rule: &PickRule) {
        self.gpu
            .copy_dtod(self.best.ptr(), self.max_key_dev.ptr(), 8)
            .unwrap();
        self.launch_draw(PickPath::of(rule)).unwrap();
    }

    /// The draw's launches for `path` (none for a greedy one, whose pick is lm_head's).
    pub fn launch_draw(&self, path: PickPath) -> lily_cuda::Result<()> {
        let PickPath::Draw { top_k, top_p } = path else {
            return Ok(());
        };
        self.k.draw(
            &self.logits.view(),
            &self.rule.view(),
            &self.scratch.view(),
            &self.best.view(),
            top_k,
            top_p,
        )
    }

    /// The token in `best`, which is then cleared as finish_step leaves it.
    pub fn take_best(&self) -> u32 {
        let mut b = [0u8; 8];
        self.gpu.download(&mut b, self.best.ptr()).unwrap();
        self.gpu.memset_u32(self.best.ptr(), 0, 2).unwrap();
        let key = u64::from_le_bytes(b);
        assert_ne!(key, 0, "nothing wrote best");
        0xffff_ffff - (key & 0xffff_ffff) as u32
    }

    pub fn pick(&self, rule: &PickRule) -> u32 {
        self.set_rule(rule);
        self.launch(rule);
        self.take_best()
    }

    /// The weights the last draw computed (the scratch's last region; see sample_scratch).
    pub fn weights(&self) -> Vec<f32> {
        let mut b = vec![0u8; self.scratch.bytes()];
        self.gpu.download(&mut b, self.scratch.ptr()).unwrap();
        let blocks = self.n.div_ceil(1024);
        let at = 64 + 12 * 1024 + blocks * (8 + 4 * 1024);
        b[at..at + 4 * self.n]
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
            .collect()
    }
}

/// The key lm_head's epilogue leaves for `logits` (common.cuh: argmax_key): the largest logit
/// with its lowest id, 0 when every logit is NaN.
pub fn argmax_key(logits: &[f32]) -> u64 {
    let i = lily_model::pick::argmax(logits) as usize;
    if logits[i].is_nan() {
        return 0;
    }
    let u = logits[i].to_bits();
    let ordered = if u & 0x8000_0000 != 0 {
        !u
    } else {
        u | 0x8000_0000
    };
    (ordered as u64) << 32 | (0xffff_ffff - i as u32) as u64
}

/// Logits like a model's: flat (std ~0.5) or peaked (std ~5), with ties planted at the top and
/// inside, and a few -inf entries.
pub fn logits(rng: &mut Rng, n: usize, std: f32) -> Vec<f32> {
    // Uniform in [-a, a) has std a / sqrt(3).
    let mut x = rng.vec(n, std * 3f32.sqrt());
    let at = |rng: &mut Rng| ((rng.next() * 0.5 + 0.5) * n as f32) as usize % n;
    if n >= 16 {
        let top = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        for _ in 0..3 {
            let i = at(rng);
            x[i] = top;
        }
        for _ in 0..n / 16 {
            let (i, j) = (at(rng), at(rng));
            x[i] = x[j];
        }
        for _ in 0..3 {
            let i = at(rng);
            x[i] = f32::NEG_INFINITY;
        }
    }
    x
}

pub fn load(gpu: &Arc<Gpu>) -> Sampling {
    Sampling::load(gpu, &Dims::qwen36_35b_a3b()).unwrap()
}
