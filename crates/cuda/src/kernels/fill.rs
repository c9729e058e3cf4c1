//! Launchers for fill.cu: seeded synthetic values (benchmark weights, test poison, random inputs).

use std::sync::Arc;

use crate::dims::Dims;
use crate::runtime::driver::{Function, Gpu, KernelArgs, Module};
use crate::error::{CudaError, Result};
use crate::runtime::tensor::{DType, View};

pub struct Fill {
    gpu: Arc<Gpu>,
    _module: Module,
    bf16: Function,
    f32: Function,
    e4m3: Function,
}

impl Fill {
    pub fn load(gpu: &Arc<Gpu>, dims: &Dims) -> Result<Self> {
        let module = super::load(gpu, "fill.cu", dims)?;
        Ok(Fill {
            gpu: gpu.clone(),
            bf16: module.function("fill_bf16")?,
            f32: module.function("fill_f32")?,
            e4m3: module.function("fill_e4m3")?,
            _module: module,
        })
    }

    /// Fills `t` with values uniform in [offset - scale, offset + scale] drawn from `seed`.
    pub fn uniform(&self, t: &View, seed: u32, offset: f32, scale: f32) -> Result<()> {
        let n: usize = t.shape.iter().product();
        let f = match t.dtype {
            DType::BF16 => &self.bf16,
            DType::F32 => &self.f32,
            other => {
                return Err(CudaError::Shape {
                    tensor: t.to_string(),
                    expected: "BF16 or F32".into(),
                    actual: format!("{other:?}"),
                })
            }
        };
        let blocks = n.div_ceil(256).clamp(1, 132 * 16) as u32;
        let mut args = KernelArgs::new()
            .ptr(t.ptr)
            .u64(n as u64)
            .i32(seed as i32)
            .f32(offset)
            .f32(scale);
        self.gpu.launch(f, (blocks, 1, 1), 256, 0, &mut args)
    }

    /// Fills an F8E4M3 tensor (an even number of values) with e4m3 values uniform over
    /// [-448, 448] drawn from `seed` (its block scales are filled separately).
    pub fn e4m3(&self, t: &View, seed: u32) -> Result<()> {
        let n: usize = t.shape.iter().product();
        if t.dtype != DType::F8E4M3 || n % 2 != 0 {
            return Err(CudaError::Shape {
                tensor: t.to_string(),
                expected: "F8E4M3 with an even number of values".into(),
                actual: format!("{:?} {:?}", t.dtype, t.shape),
            });
        }
        let pairs = n / 2;
        let blocks = pairs.div_ceil(256).clamp(1, 132 * 16) as u32;
        let mut args = KernelArgs::new().ptr(t.ptr).u64(pairs as u64).i32(seed as i32);
        self.gpu.launch(&self.e4m3, (blocks, 1, 1), 256, 0, &mut args)
    }
}
