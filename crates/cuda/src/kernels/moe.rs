//! Launchers for moe.cu, three launches per layer: the router product with routing on the GPU
//! and the shared expert's gate|up; the 8 chosen experts' gate|up and the shared expert's down;
//! the chosen experts' down, which adds all 9 to the residual stream.

use std::sync::Arc;

use crate::dims::{Dims, WeightFormat};
use crate::runtime::driver::{Function, Gpu, KernelArgs, Module};
use crate::error::{CudaError, Result};
use crate::kernels::gemm::{self, ExpertTiles, Gemm};
use crate::kernels::Out;
use crate::shapes::{self, Shapes};
use crate::runtime::tensor::{DType, MatrixView, Tensor, View};
use crate::runtime::driver::DevicePtr;

pub struct Moe {
    gpu: Arc<Gpu>,
    _module: Module,
    router: Function,
    gate_up: Function,
    down: Function,
    route_rows: Function,
    plan: Function,
    scatter: Function,
    combine: Function,
    dims: Dims,
    shapes: Shapes,
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
    /// [experts, 2 * inter, hidden] and [experts, hidden, inter], in the model's weight format.
    pub gate_up: &'a MatrixView<'a>,
    pub down: &'a MatrixView<'a>,
    /// [2 * inter, hidden] and [hidden, inter], in the model's weight format.
    pub shared_gate_up: &'a MatrixView<'a>,
    pub shared_down: &'a MatrixView<'a>,
    /// BF16 [hidden]: receives the post-attention norm output, which the experts read.
    pub x: &'a View<'a>,
    /// I32 [top_k], F32 [top_k + 1], F32 [top_k + 1, inter]: scratch.
    pub ids: &'a View<'a>,
    pub weights: &'a View<'a>,
    pub h: &'a View<'a>,
    /// F32 [hidden]: scratch, the shared expert's weighted output.
    pub shared_out: &'a View<'a>,
    /// F32 [hidden]: the residual stream: normed for the input, and the experts' output is added to it.
    pub residual: &'a View<'a>,
    /// [rows, hidden] in the model's weight format: the next layer's input product, whose
    /// first rows the router asks into L2 (shapes.rs: l2_ahead_rows); the decode step's last
    /// layer names the next step's first. None: nothing asked.
    pub ahead: Option<&'a View<'a>>,
}

impl Moe {
    pub fn load(gpu: &Arc<Gpu>, dims: &Dims) -> Result<Self> {
        let shapes = shapes::current()?;
        if shapes.moe_down_rows * dims.top_k > 32 {
            return Err(CudaError::Invalid(format!(
                "moe_down_rows = {} gives blocks of more than 1,024 threads at {} routed experts",
                shapes.moe_down_rows, dims.top_k
            )));
        }
        let module = super::load(gpu, "moe.cu", dims)?;
        Ok(Moe {
            gpu: gpu.clone(),
            router: module.function("moe_router")?,
            gate_up: module.function("moe_gate_up")?,
            down: module.function("moe_down")?,
            route_rows: module.function("moe_route_rows")?,
            plan: module.function("moe_plan")?,
            scatter: module.function("moe_scatter")?,
            combine: module.function("moe_combine")?,
            _module: module,
            dims: dims.clone(),
            shapes,
        })
    }

    pub fn run(&self, a: &MoeArgs) -> Result<()> {
        let d = &self.dims;
        let (e, k, i, hid) = (d.experts, d.top_k, d.moe_inter, d.hidden);
        let router = a.router.expect(DType::BF16, &[e + 1, hid])?;
        let norm = a.norm.expect(DType::BF16, &[hid])?;
        let logits = a.logits.expect(DType::F32, &[e + 1])?;
        let done = a.done.expect(DType::U64, &[1])?;
        let gate_up = self.matrix(a.gate_up, &[e, 2 * i, hid])?;
        let down = self.matrix(a.down, &[e, hid, i])?;
        let shared_gate_up = self.matrix(a.shared_gate_up, &[2 * i, hid])?;
        let shared_down = self.matrix(a.shared_down, &[hid, i])?;
        let x = a.x.expect(DType::BF16, &[hid])?;
        let ids = a.ids.expect(DType::I32, &[k])?;
        let weights = a.weights.expect(DType::F32, &[k + 1])?;
        let h = a.h.expect(DType::F32, &[k + 1, i])?;
        let shared_out = a.shared_out.expect(DType::F32, &[hid])?;
        let residual = a.residual.expect(DType::F32, &[hid])?;
        let (ahead, ahead_rows) = match a.ahead {
            None => (0, 0),
            Some(v) => v.expect_rows(self.weight_dtype(), hid)?,
        };
        let mut args = KernelArgs::new()
            .ptr(router)
            .ptr(residual)
            .ptr(norm)
            .ptr(x)
            .f32(d.eps)
            .ptr(logits)
            .ptr(done)
            .ptr(ids)
            .ptr(weights)
            .ptr(shared_gate_up.0)
            .ptr(shared_gate_up.1)
            .ptr(h)
            .ptr(ahead)
            .i32(ahead_rows as i32);
        // One router row, then one shared-expert intermediate row, per warp (moe_router).
        let warps = self.shapes.router_warps;
        self.gpu.launch(
            &self.router,
            (
                (e + 1).div_ceil(warps) as u32 + i.div_ceil(warps) as u32,
                1,
                1,
            ),
            (warps * 32) as u32,
            0,
            &mut args,
        )?;
        let mut args = KernelArgs::new()
            .ptr(gate_up.0)
            .ptr(gate_up.1)
            .ptr(shared_down.0)
            .ptr(shared_down.1)
            .ptr(x)
            .ptr(ids)
            .ptr(weights)
            .ptr(h)
            .ptr(shared_out);
        // Columns 0..k: the routed experts' gate|up; column k: the shared expert's down.
        self.gpu.launch(
            &self.gate_up,
            (
                (k + 1) as u32,
                i.div_ceil(self.shapes.moe_warps * self.fp8_rows()) as u32,
                1,
            ),
            (self.shapes.moe_warps * 32) as u32,
            0,
            &mut args,
        )?;
        let mut args = KernelArgs::new()
            .ptr(down.0)
            .ptr(down.1)
            .ptr(h)
            .ptr(ids)
            .ptr(weights)
            .ptr(shared_out)
            .ptr(residual);
        self.gpu.launch(
            &self.down,
            (
                hid.div_ceil(
                    self.shapes.moe_down_rows * self.shapes.moe_down_warp_rows * self.fp8_rows(),
                ) as u32,
                1,
                1,
            ),
            (self.shapes.moe_down_rows * k * 32) as u32,
            0,
            &mut args,
        )
    }

    /// Rows per warp of the decode kernels relative to bf16's (moe.cu: MOE_FP8_ROWS): FP8 rows
    /// are half the loads, so a warp takes twice as many.
    fn fp8_rows(&self) -> usize {
        match self.dims.weights {
            WeightFormat::Bf16 => 1,
            WeightFormat::Fp8 { .. } => 2,
        }
    }

    /// The dtype of the products' matrices in this model.
    fn weight_dtype(&self) -> DType {
        match self.dims.weights {
            WeightFormat::Bf16 => DType::BF16,
            WeightFormat::Fp8 { .. } => DType::F8E4M3,
        }
    }

    /// A decode matrix's address and its scales' (0 for bf16), checked against `shape` and the
    /// model's weight format.
    fn matrix(&self, m: &MatrixView, shape: &[usize]) -> Result<(DevicePtr, DevicePtr)> {
        Ok((m.w.expect(self.weight_dtype(), shape)?, m.scale_ptr()?))
    }

    /// Routing of each row of `logits` (F32 [tokens, experts + 1]: router, shared expert gate)
    /// into `ids` (I32 [tokens, top_k + 1], the shared expert last as expert `experts`) and
    /// `weights` (F32, same shape), as `moe::route` does, adding each routed expert's pairs to
    /// `counts` (I32 [experts + 1]).
    pub fn route_rows(
        &self,
        logits: &View,
        ids: &View,
        weights: &View,
        counts: &View,
    ) -> Result<()> {
        let d = &self.dims;
        let t = logits.shape.first().copied().unwrap_or(0);
        let logits = logits.expect(DType::F32, &[t, d.experts + 1])?;
        let ids = ids.expect(DType::I32, &[t * (d.top_k + 1)])?;
        let weights = weights.expect(DType::F32, &[t * (d.top_k + 1)])?;
        let counts = counts.expect(DType::I32, &[d.experts + 1])?;
        let mut args = KernelArgs::new()
            .ptr(logits)
            .i32(t as i32)
            .ptr(ids)
            .ptr(weights)
            .ptr(counts);
        self.gpu.launch(
            &self.route_rows,
            (t.div_ceil(self.shapes.moe_warps) as u32, 1, 1),
            (self.shapes.moe_warps * 32) as u32,
            0,
            &mut args,
        )
    }

    /// The MoE block of a prefill chunk: router product, routing and sort on the GPU, the
    /// routed and shared experts as two grouped GEMMs over (token, expert) pairs, and the
    /// weighted sum added to the residual stream.
    pub fn prefill(&self, gemm: &Gemm, a: &MoePrefillArgs, s: &MoeScratch) -> Result<()> {
        let d = &self.dims;
        let (e, hid, t) = (d.experts, d.hidden, a.tokens);
        let slots = d.top_k + 1;
        let pairs = t * slots;
        a.xn.expect(DType::BF16, &[t, hid])?;
        let x = a.x.expect(DType::F32, &[t, hid])?;
        let logits = s.logits.view().rows(t);
        gemm.run(a.router, a.xn, &logits, Out::Write)?;
        let ids = s.ids.view().range(0, pairs);
        let weights = s.weights.view().range(0, pairs);
        self.route_rows(&logits, &ids, &weights, &s.counts.view())?;
        let n_tiles = gemm::max_tiles(pairs, e);
        let tiles = s.tiles.view().rows(n_tiles);
        let mut args = KernelArgs::new()
            .ptr(s.counts.ptr())
            .i32(t as i32)
            .i32(gemm::TILE_ROWS as i32)
            .ptr(s.offsets.ptr())
            .ptr(s.cursors.ptr())
            .ptr(tiles.ptr)
            .ptr(s.tile_count.ptr());
        self.gpu.launch(&self.plan, (1, 1, 1), 32, 0, &mut args)?;
        let sorted_token = s.sorted_token.view().range(0, pairs);
        let sorted_weight = s.sorted_weight.view().range(0, pairs);
        let pair_row = s.pair_row.view().range(0, pairs);
        let mut args = KernelArgs::new()
            .ptr(ids.ptr)
            .ptr(weights.ptr)
            .i32(pairs as i32)
            .ptr(s.offsets.ptr())
            .ptr(s.cursors.ptr())
            .ptr(sorted_token.ptr)
            .ptr(sorted_weight.ptr)
            .ptr(pair_row.ptr);
        self.gpu.launch(
            &self.scatter,
            (pairs.div_ceil(256) as u32, 1, 1),
            256,
            0,
            &mut args,
        )?;
        let table = ExpertTiles {
            tiles: &tiles,
            count: &s.tile_count.view(),
        };
        let h = s.h.view().rows(pairs);
        gemm.moe_gate_up(a.xn, &sorted_token, a.gate_up, a.shared_gate_up, &table, &h)?;
        let out = s.pair_out.view().rows(pairs);
        gemm.moe_down(&h, a.down, a.shared_down, &table, &sorted_weight, &out)?;
        let mut args = KernelArgs::new().ptr(out.ptr).ptr(pair_row.ptr).ptr(x);
        self.gpu
            .launch(&self.combine, (t as u32, 1, 1), 256, 0, &mut args)
    }
}

pub struct MoePrefillArgs<'a> {
    /// BF16 [tokens, hidden]: the post-attention norm of the chunk.
    pub xn: &'a View<'a>,
    /// BF16 [experts + 1, hidden]: the router, then shared_expert_gate.
    pub router: &'a View<'a>,
    pub gate_up: &'a View<'a>,
    pub down: &'a View<'a>,
    pub shared_gate_up: &'a View<'a>,
    pub shared_down: &'a View<'a>,
    /// F32 [tokens, hidden]: the residual stream the experts' output is added to.
    pub x: &'a View<'a>,
    pub tokens: usize,
}

/// The MoE prefill's buffers for chunks of up to `max_tokens` tokens.
pub struct MoeScratch {
    logits: Tensor,
    ids: Tensor,
    weights: Tensor,
    counts: Tensor,
    offsets: Tensor,
    cursors: Tensor,
    tiles: Tensor,
    tile_count: Tensor,
    sorted_token: Tensor,
    sorted_weight: Tensor,
    pair_row: Tensor,
    h: Tensor,
    pair_out: Tensor,
}

impl MoeScratch {
    /// GPU bytes `new` allocates for `max_tokens`.
    pub fn bytes(d: &Dims, max_tokens: usize) -> usize {
        let pairs = max_tokens * (d.top_k + 1);
        4 * max_tokens * (d.experts + 1)
            // ids, weights, sorted tokens and weights, pair rows
            + 5 * 4 * pairs
            + 4 * (3 * (d.experts + 1) + 4 * gemm::max_tiles(pairs, d.experts) + 1)
            + pairs * (2 * d.moe_inter + 2 * d.hidden)
    }

    pub fn new(gpu: &Arc<Gpu>, d: &Dims, max_tokens: usize) -> Result<MoeScratch> {
        let pairs = max_tokens * (d.top_k + 1);
        let i32t = |name: &str, n: usize| Tensor::new(gpu, name, DType::I32, &[n]);
        let counts = i32t("moe counts", d.experts + 1)?;
        // moe_plan leaves the counts zero for the next layer; the first layer needs them zero.
        gpu.memset_u32(counts.ptr(), 0, d.experts + 1)?;
        Ok(MoeScratch {
            logits: Tensor::new(
                gpu,
                "router logits",
                DType::F32,
                &[max_tokens, d.experts + 1],
            )?,
            ids: i32t("expert ids", pairs)?,
            weights: Tensor::new(gpu, "expert weights", DType::F32, &[pairs])?,
            counts,
            offsets: i32t("expert offsets", d.experts + 1)?,
            cursors: i32t("expert cursors", d.experts + 1)?,
            tiles: Tensor::new(
                gpu,
                "expert tiles",
                DType::I32,
                &[gemm::max_tiles(pairs, d.experts), 4],
            )?,
            tile_count: i32t("expert tile count", 1)?,
            sorted_token: i32t("sorted tokens", pairs)?,
            sorted_weight: Tensor::new(gpu, "sorted weights", DType::F32, &[pairs])?,
            pair_row: i32t("pair rows", pairs)?,
            h: Tensor::new(gpu, "expert h", DType::BF16, &[pairs, d.moe_inter])?,
            pair_out: Tensor::new(gpu, "expert outputs", DType::BF16, &[pairs, d.hidden])?,
        })
    }

    /// I32 [1]: how many row tiles the last prefill's plan made (each expert's rows in tiles
    /// of gemm::TILE_ROWS, its last one partial), which the expert GEMMs run per column tile.
    pub fn row_tiles(&self) -> &Tensor {
        &self.tile_count
    }
}
