//! Launchers for sampling.cu: greedy argmax on the GPU and the end-of-step bookkeeping.

use std::sync::Arc;

use crate::dims::Dims;
use crate::driver::{Function, Gpu, KernelArgs, Module};
use crate::error::Result;
use crate::tensor::{DType, View};

pub struct Sampling {
    gpu: Arc<Gpu>,
    _module: Module,
    argmax: Function,
    finish: Function,
}

impl Sampling {
    pub fn load(gpu: &Arc<Gpu>, dims: &Dims) -> Result<Self> {
        let module = super::load(gpu, "sampling.cu", include_str!("sampling.cu"), dims)?;
        Ok(Sampling {
            gpu: gpu.clone(),
            argmax: module.function("argmax")?,
            finish: module.function("finish_step")?,
            _module: module,
        })
    }

    /// best = max over logits of (value, lowest index) as a packed key; `best` must hold 0.
    pub fn argmax(&self, logits: &View, best: &View) -> Result<()> {
        let n = logits.shape.iter().product::<usize>();
        let l = logits.expect(DType::F32, &[n])?;
        let b = best.expect(DType::U64, &[1])?;
        let blocks = n.div_ceil(256 * 8).clamp(1, 1024) as u32;
        let mut args = KernelArgs::new().ptr(l).i32(n as i32).ptr(b);
        self.gpu
            .launch(&self.argmax, (blocks, 1, 1), 256, 0, &mut args)
    }

    /// Writes the picked token to ids[pos + 1] (unless that is still a prompt position),
    /// advances pos and clears `best`.
    pub fn finish_step(
        &self,
        best: &View,
        ids: &View,
        pos: &View,
        prompt_end: &View,
    ) -> Result<()> {
        let b = best.expect(DType::U64, &[1])?;
        let p = pos.expect(DType::I32, &[1])?;
        let e = prompt_end.expect(DType::I32, &[1])?;
        let mut args = KernelArgs::new().ptr(b).ptr(ids.ptr).ptr(p).ptr(e);
        self.gpu.launch(&self.finish, (1, 1, 1), 1, 0, &mut args)
    }
}
