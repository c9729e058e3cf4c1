//! The model dimensions the kernels are compiled for. Kernels take them as compile-time
//! constants, so one set of sources serves the full model and the tiny test checkpoints.

#[derive(Debug, Clone, PartialEq)]
pub struct Dims {
    pub hidden: usize,
    pub vocab: usize,
    /// Per layer: true for gated attention, false for Gated DeltaNet.
    pub attention_layers: Vec<bool>,
    pub eps: f32,
    pub gdn_key_heads: usize,
    pub gdn_value_heads: usize,
    pub gdn_key_dim: usize,
    pub gdn_value_dim: usize,
    pub conv_kernel: usize,
    pub attn_heads: usize,
    pub attn_kv_heads: usize,
    pub attn_head_dim: usize,
    pub rope_dim: usize,
    pub rope_theta: f32,
    pub experts: usize,
    pub top_k: usize,
    pub moe_inter: usize,
    pub shared_inter: usize,
    /// How the products' weight matrices are stored (the kernels are compiled for one).
    pub weights: WeightFormat,
}

/// The weight matrices of the products (GDN and attention projections, experts, shared
/// expert): bf16, or e4m3 with one f32 scale per `block_rows` x `block_cols` block (an FP8
/// checkpoint's layout; embeddings, norms, the router and lm_head stay bf16 either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WeightFormat {
    Bf16,
    Fp8 { block_rows: usize, block_cols: usize },
}

impl WeightFormat {
    /// Bytes of one weight value.
    pub fn bytes(self) -> usize {
        match self {
            WeightFormat::Bf16 => 2,
            WeightFormat::Fp8 { .. } => 1,
        }
    }
}

/// Most splits of the context one attention head's decode uses (see attention.cu): 66 splits
/// of the 2 KV heads are one block per SM on the H200's 132 (256 split 8K contexts into two
/// waves and cost 6% of decode speed there).
pub const ATTN_SPLITS: usize = 66;

impl Dims {
    /// Qwen3.6-35B-A3B (docs/DESIGN.md §1).
    pub fn qwen36_35b_a3b() -> Dims {
        Dims {
            hidden: 2048,
            vocab: 248_320,
            attention_layers: (0..40).map(|i| (i + 1) % 4 == 0).collect(),
            eps: 1e-6,
            gdn_key_heads: 16,
            gdn_value_heads: 32,
            gdn_key_dim: 128,
            gdn_value_dim: 128,
            conv_kernel: 4,
            attn_heads: 16,
            attn_kv_heads: 2,
            attn_head_dim: 256,
            rope_dim: 64,
            rope_theta: 1e7,
            experts: 256,
            top_k: 8,
            moe_inter: 512,
            shared_inter: 512,
            weights: WeightFormat::Bf16,
        }
    }

    pub fn layers(&self) -> usize {
        self.attention_layers.len()
    }
    pub fn gdn_layers(&self) -> usize {
        self.attention_layers.iter().filter(|a| !**a).count()
    }
    pub fn attn_layers(&self) -> usize {
        self.attention_layers.iter().filter(|a| **a).count()
    }
    /// Channels of the GDN conv: q | k | v.
    pub fn gdn_conv_channels(&self) -> usize {
        2 * self.gdn_key_heads * self.gdn_key_dim + self.gdn_value_heads * self.gdn_value_dim
    }
    pub fn gdn_out(&self) -> usize {
        self.gdn_value_heads * self.gdn_value_dim
    }
    /// Rows of the concatenated GDN input projection: qkv | z | b | a.
    pub fn gdn_in_rows(&self) -> usize {
        self.gdn_conv_channels() + self.gdn_out() + 2 * self.gdn_value_heads
    }
    /// Rows of GDN's b | a projections (one each per value head).
    pub fn gdn_ba_rows(&self) -> usize {
        2 * self.gdn_value_heads
    }
    pub fn attn_out(&self) -> usize {
        self.attn_heads * self.attn_head_dim
    }
    /// Rows of the concatenated attention projection: q (query | gate per head) | k | v.
    pub fn attn_in_rows(&self) -> usize {
        2 * self.attn_out() + 2 * self.attn_kv_heads * self.attn_head_dim
    }
    /// KV cache bytes per token over all attention layers (bf16 k and v).
    pub fn kv_bytes_per_token(&self) -> usize {
        self.attn_layers() * 2 * self.attn_kv_heads * self.attn_head_dim * 2
    }

    /// Checks what the kernels assume, naming the field that breaks it.
    pub fn validate(&self) -> Result<(), String> {
        let checks: [(&str, bool); 10] = [
            ("hidden must be a multiple of 8", self.hidden % 8 == 0),
            (
                "linear value heads * value head dim must be a multiple of 8",
                self.gdn_out() % 8 == 0,
            ),
            (
                "linear key head dim must be a multiple of 8",
                self.gdn_key_dim % 8 == 0,
            ),
            (
                "linear value head dim must be <= 32 or a multiple of 32",
                self.gdn_value_dim <= 32 || self.gdn_value_dim % 32 == 0,
            ),
            (
                "linear value heads must be a multiple of key heads",
                self.gdn_value_heads % self.gdn_key_heads == 0,
            ),
            (
                "attention head dim must be a multiple of 32 and <= 1024",
                self.attn_head_dim % 32 == 0 && self.attn_head_dim <= 1024,
            ),
            (
                "attention heads must be a multiple of kv heads (<= 8 per group)",
                self.attn_heads % self.attn_kv_heads == 0
                    && self.attn_heads / self.attn_kv_heads <= 8,
            ),
            (
                "rotary dims must be even and <= head dim",
                self.rope_dim % 2 == 0 && self.rope_dim <= self.attn_head_dim,
            ),
            (
                "moe intermediate must be a multiple of 8 and equal the shared expert's",
                self.moe_inter % 8 == 0 && self.moe_inter == self.shared_inter,
            ),
            ("top_k must be <= num_experts", self.top_k <= self.experts),
        ];
        if let WeightFormat::Fp8 {
            block_rows,
            block_cols,
        } = self.weights
        {
            // FP8 rows are read in 16-byte chunks of 16 values, each inside one column block;
            // an expert's gate and up, and every expert's down, start on a row block.
            let fp8: [(&str, bool); 3] = [
                (
                    "FP8 weights need hidden, linear value width, attention width and moe \
                     intermediate to be multiples of 16",
                    [self.hidden, self.gdn_out(), self.attn_out(), self.moe_inter]
                        .iter()
                        .all(|c| c % 16 == 0),
                ),
                (
                    "FP8 block columns must be a positive multiple of 16",
                    block_cols > 0 && block_cols % 16 == 0,
                ),
                (
                    "FP8 block rows must divide moe intermediate and hidden",
                    block_rows > 0
                        && self.moe_inter % block_rows == 0
                        && self.hidden % block_rows == 0,
                ),
            ];
            if let Some((what, _)) = fp8.iter().find(|(_, ok)| !ok) {
                return Err(format!(
                    "the CUDA kernels cannot run this model: {what} ({self:?})"
                ));
            }
        }
        match checks.iter().find(|(_, ok)| !ok) {
            Some((what, _)) => Err(format!(
                "the CUDA kernels cannot run this model: {what} ({self:?})"
            )),
            None => Ok(()),
        }
    }

    /// The `-D` macros each kernel source is compiled with: these dimensions and this
    /// process's launch shapes (an invalid `LILY_SHAPES` fails every launcher's load first).
    pub fn defines(&self) -> Vec<(&'static str, i64)> {
        self.defines_for(&crate::shapes::current().unwrap_or_default())
    }

    /// The `-D` macros for these dimensions and the given launch shapes.
    pub fn defines_for(&self, shapes: &crate::shapes::Shapes) -> Vec<(&'static str, i64)> {
        let mut d = vec![
            ("HIDDEN", self.hidden as i64),
            ("GDN_OUT", self.gdn_out() as i64),
            ("ATTN_OUT", self.attn_out() as i64),
            ("GDN_KEY_HEADS", self.gdn_key_heads as i64),
            ("GDN_VALUE_HEADS", self.gdn_value_heads as i64),
            ("GDN_KEY_DIM", self.gdn_key_dim as i64),
            ("GDN_VALUE_DIM", self.gdn_value_dim as i64),
            ("CONV_K", self.conv_kernel as i64),
            ("ATTN_HEADS", self.attn_heads as i64),
            ("ATTN_KV_HEADS", self.attn_kv_heads as i64),
            ("ATTN_HEAD_DIM", self.attn_head_dim as i64),
            ("ROPE_DIM", self.rope_dim as i64),
            ("ATTN_SPLITS", ATTN_SPLITS as i64),
            ("NUM_EXPERTS", self.experts as i64),
            ("TOP_K", self.top_k as i64),
            ("MOE_INTER", self.moe_inter as i64),
        ];
        if let WeightFormat::Fp8 {
            block_rows,
            block_cols,
        } = self.weights
        {
            d.extend([
                ("WEIGHT_FP8", 1),
                ("W_BLOCK_ROWS", block_rows as i64),
                ("W_BLOCK_COLS", block_cols as i64),
            ]);
        }
        d.extend(shapes.defines());
        d
    }
}

impl Dims {
    /// The dimensions of a validated checkpoint config.
    pub fn from_config(c: &lily_model::Config) -> Dims {
        Dims {
            hidden: c.hidden_size,
            vocab: c.vocab_size,
            attention_layers: c
                .layer_kinds
                .iter()
                .map(|k| *k == lily_model::LayerKind::FullAttention)
                .collect(),
            eps: c.rms_norm_eps,
            gdn_key_heads: c.linear.num_key_heads,
            gdn_value_heads: c.linear.num_value_heads,
            gdn_key_dim: c.linear.key_head_dim,
            gdn_value_dim: c.linear.value_head_dim,
            conv_kernel: c.linear.conv_kernel,
            attn_heads: c.attention.num_heads,
            attn_kv_heads: c.attention.num_kv_heads,
            attn_head_dim: c.attention.head_dim,
            rope_dim: c.attention.rotary_dim,
            rope_theta: c.attention.rope_theta as f32,
            experts: c.moe.num_experts,
            top_k: c.moe.experts_per_token,
            moe_inter: c.moe.expert_intermediate,
            shared_inter: c.moe.shared_intermediate,
            weights: WeightFormat::Bf16,
        }
    }

    /// Parameters held on the GPU (the concatenations included), for sizing and progress.
    pub fn parameter_count(&self) -> usize {
        let (products, other) = self.parameters_by_kind();
        products + other
    }

    /// Bytes of the weights on the GPU in their format: the products' matrices at
    /// `weights.bytes()` each (plus an f32 scale per block), everything else bf16.
    pub fn weight_bytes(&self) -> usize {
        let (products, other) = self.parameters_by_kind();
        let scales = match self.weights {
            WeightFormat::Bf16 => 0,
            WeightFormat::Fp8 {
                block_rows,
                block_cols,
            } => 4 * products / (block_rows * block_cols) + (4 << 20),
        };
        products * self.weights.bytes() + scales + 2 * other
    }

    /// (Parameters of the products' matrices, all the others): the first are what an FP8
    /// checkpoint stores in e4m3 (GDN's b | a, the router, norms, embeddings and lm_head stay
    /// bf16).
    fn parameters_by_kind(&self) -> (usize, usize) {
        let h = self.hidden;
        let moe = self.experts * 3 * self.moe_inter * h + 3 * self.shared_inter * h;
        let gdn = (self.gdn_in_rows() - self.gdn_ba_rows()) * h + h * self.gdn_out();
        let attn = self.attn_in_rows() * h + h * self.attn_out();
        let products = self.gdn_layers() * (gdn + moe) + self.attn_layers() * (attn + moe);
        let other = 2 * self.vocab * h
            + self.layers() * (self.experts + 1) * h
            + self.gdn_layers()
                * (self.gdn_ba_rows() * h + self.gdn_conv_channels() * self.conv_kernel);
        (products, other)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> lily_model::Config {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../cpu/tests/fixtures")
            .join(name);
        lily_model::Config::load(&dir).unwrap()
    }

    #[test]
    fn the_full_model_fits_the_kernels_and_counts_its_parameters() {
        let d = Dims::qwen36_35b_a3b();
        d.validate().unwrap();
        assert_eq!((d.gdn_layers(), d.attn_layers()), (30, 10));
        assert_eq!(d.gdn_in_rows(), 12352);
        assert_eq!(d.attn_in_rows(), 9216);
        assert_eq!(d.kv_bytes_per_token(), 20480);
        // ~35B parameters (plus the router rows of shared_expert_gate): 70 GB of bf16.
        let p = d.parameter_count() as f64;
        assert!((34.5e9..36.0e9).contains(&p), "{p}");
    }

    #[test]
    fn dims_follow_the_checkpoint_config() {
        let d = Dims::from_config(&fixture("linear3_full1"));
        assert_eq!(d.attention_layers, vec![false, false, false, true]);
        assert_eq!(
            (d.hidden, d.attn_head_dim, d.rope_dim, d.experts, d.top_k),
            (64, 32, 8, 8, 2)
        );
        d.validate().unwrap();
    }

    #[test]
    fn a_model_the_kernels_cannot_run_is_refused_by_name() {
        // Head dim 16 is not a multiple of the 32 lanes the attention kernels spread it over.
        let err = Dims::from_config(&fixture("two_full_bf16"))
            .validate()
            .unwrap_err();
        assert!(err.contains("attention head dim"), "{err}");
    }
}
