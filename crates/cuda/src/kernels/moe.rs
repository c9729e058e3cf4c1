//! Launchers for moe.cu: the router product with routing on the GPU, then the 8 chosen experts
//! and the shared one in one gate|up launch and one down launch: three launches per layer.

use std::sync::Arc;

use crate::dims::Dims;
use crate::driver::{Function, Gpu, KernelArgs, Module};
use crate::error::Result;
use crate::tensor::{DType, View};

/// Warps per block; must match MOE_WARPS in moe.cu and GEMV_WARPS in gemv.cu.
const WARPS: usize = 4;

/// moe.cu builds on gemv.cu's row product (the router), so it is compiled behind it.
pub const SOURCE: &str = concat!(include_str!("gemv.cu"), "\n", include_str!("moe.cu"));

pub struct Moe {
    gpu: Arc<Gpu>,
    _module: Module,
    router: Function,
    gate_up: Function,
    down: Function,
    dims: Dims,
}

pub struct MoeArgs<'a> {
    /// BF16 [experts + 1, hidden]: the router, then shared_expert_gate.
    pub router: &'a View<'a>,
    /// BF16 [hidden]: post_attention_layernorm.
    pub norm: &'a View<'a>,
    /// F32 [experts + 1]: router logits then the shared expert's gate logit (scratch).
    pub logits: &'a View<'a>,
    /// U64 [1] used as a u32 block counter; must be zero before the first use (the router's
    /// last block resets it).
    pub done: &'a View<'a>,
    /// BF16 [experts, 2 * inter, hidden] and [experts, hidden, inter].
    pub gate_up: &'a View<'a>,
    pub down: &'a View<'a>,
    /// BF16 [2 * inter, hidden] and [hidden, inter].
    pub shared_gate_up: &'a View<'a>,
    pub shared_down: &'a View<'a>,
    /// BF16 [hidden]: receives the post-attention norm output, which the experts read.
    pub x: &'a View<'a>,
    /// I32 [top_k], F32 [top_k + 1], F32 [top_k + 1, inter]: scratch.
    pub ids: &'a View<'a>,
    pub weights: &'a View<'a>,
    pub h: &'a View<'a>,
    /// F32 [hidden]: the residual stream: normed for the input, and the experts' output is added to it.
    pub residual: &'a View<'a>,
}

impl Moe {
    pub fn load(gpu: &Arc<Gpu>, dims: &Dims) -> Result<Self> {
        let module = super::load(gpu, "moe.cu", SOURCE, dims)?;
        Ok(Moe {
            gpu: gpu.clone(),
            router: module.function("moe_router")?,
            gate_up: module.function("moe_gate_up")?,
            down: module.function("moe_down")?,
            _module: module,
            dims: dims.clone(),
        })
    }

    pub fn run(&self, a: &MoeArgs) -> Result<()> {
        let d = &self.dims;
        let (e, k, i, hid) = (d.experts, d.top_k, d.moe_inter, d.hidden);
        let router = a.router.expect(DType::BF16, &[e + 1, hid])?;
        let norm = a.norm.expect(DType::BF16, &[hid])?;
        let logits = a.logits.expect(DType::F32, &[e + 1])?;
        let done = a.done.expect(DType::U64, &[1])?;
        let gate_up = a.gate_up.expect(DType::BF16, &[e, 2 * i, hid])?;
        let down = a.down.expect(DType::BF16, &[e, hid, i])?;
        let shared_gate_up = a.shared_gate_up.expect(DType::BF16, &[2 * i, hid])?;
        let shared_down = a.shared_down.expect(DType::BF16, &[hid, i])?;
        let x = a.x.expect(DType::BF16, &[hid])?;
        let ids = a.ids.expect(DType::I32, &[k])?;
        let weights = a.weights.expect(DType::F32, &[k + 1])?;
        let h = a.h.expect(DType::F32, &[k + 1, i])?;
        let residual = a.residual.expect(DType::F32, &[hid])?;
        let mut args = KernelArgs::new()
            .ptr(router)
            .ptr(residual)
            .ptr(norm)
            .ptr(x)
            .f32(d.eps)
            .ptr(logits)
            .ptr(done)
            .ptr(ids)
            .ptr(weights);
        self.gpu.launch(
            &self.router,
            ((e + 1).div_ceil(WARPS) as u32, 1, 1),
            (WARPS * 32) as u32,
            0,
            &mut args,
        )?;
        let mut args = KernelArgs::new()
            .ptr(gate_up)
            .ptr(shared_gate_up)
            .ptr(x)
            .ptr(ids)
            .ptr(h);
        self.gpu.launch(
            &self.gate_up,
            ((k + 1) as u32, i.div_ceil(WARPS) as u32, 1),
            (WARPS * 32) as u32,
            0,
            &mut args,
        )?;
        let mut args = KernelArgs::new()
            .ptr(down)
            .ptr(shared_down)
            .ptr(h)
            .ptr(ids)
            .ptr(weights)
            .ptr(residual);
        // DOWN_ROWS rows of DOWN_GROUPS warps each per block (moe.cu).
        self.gpu.launch(
            &self.down,
            (hid.div_ceil(2) as u32, 1, 1),
            2 * 4 * 32,
            0,
            &mut args,
        )
    }
}
