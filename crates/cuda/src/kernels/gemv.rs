//! Launchers for gemv.cu: y (+)= W x for the decode path.

use std::sync::Arc;

use crate::dims::Dims;
use crate::driver::{Function, Gpu, KernelArgs, Module};
use crate::error::{CudaError, Result};
use crate::tensor::{DType, View};

/// Warps (rows) per block; must match GEMV_WARPS in gemv.cu.
const WARPS: usize = 4;

pub struct Gemv {
    gpu: Arc<Gpu>,
    _module: Module,
    by_cols: Vec<(usize, Function)>,
}

impl Gemv {
    pub fn load(gpu: &Arc<Gpu>, dims: &Dims) -> Result<Self> {
        let module = super::load(gpu, "gemv.cu", include_str!("gemv.cu"), dims)?;
        let by_cols = vec![
            (dims.hidden, module.function("gemv_hidden")?),
            (dims.gdn_out(), module.function("gemv_gdn_out")?),
            (dims.attn_out(), module.function("gemv_attn_out")?),
        ];
        Ok(Gemv { gpu: gpu.clone(), _module: module, by_cols })
    }

    /// y = W x, or y += W x with `accumulate`. W: BF16 [rows, cols] with cols one of the
    /// compiled widths (hidden, GDN value width, attention width); x: BF16 [cols]; y: F32 [rows].
    pub fn run(&self, w: &View, x: &View, y: &View, accumulate: bool) -> Result<()> {
        let (rows, cols) = match w.shape[..] {
            [r, c] if w.dtype == DType::BF16 => (r, c),
            _ => {
                return Err(CudaError::Shape { tensor: w.to_string(), expected: "BF16 [rows, cols]".into(), actual: format!("{:?} {:?}", w.dtype, w.shape) })
            }
        };
        let f = self.by_cols.iter().find(|(c, _)| *c == cols).map(|(_, f)| f).ok_or_else(|| CudaError::Shape {
            tensor: w.to_string(),
            expected: format!("columns in {:?}", self.by_cols.iter().map(|(c, _)| *c).collect::<Vec<_>>()),
            actual: format!("{cols}"),
        })?;
        let x = x.expect(DType::BF16, &[cols])?;
        let y = y.expect(DType::F32, &[rows])?;
        let mut args = KernelArgs::new().ptr(w.ptr).ptr(x).ptr(y).i32(rows as i32).i32(accumulate as i32);
        self.gpu.launch(f, (rows.div_ceil(WARPS) as u32, 1, 1), (WARPS * 32) as u32, 0, &mut args)
    }
}
