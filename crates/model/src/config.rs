//! The model configuration, read from a checkpoint's `config.json` and strictly validated:
//! anything that is not the Qwen3.5/3.6 MoE architecture (at any size) is refused at load time
//! with an error naming the field, what was expected and what was found.
//!
//! Two layouts are accepted: the official vision-language wrapper (`model_type: qwen3_5_moe`,
//! text fields under `text_config`, tensors under `model.language_model.`) and the text-only
//! config that transformers' `Qwen3_5MoeForCausalLM.save_pretrained` writes
//! (`model_type: qwen3_5_moe_text`, fields at the top level, tensors under `model.`).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::error::{ModelError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LayerKind {
    /// Gated DeltaNet (`linear_attention` in `layer_types`).
    LinearAttention,
    /// Gated softmax attention with a KV cache (`full_attention`).
    FullAttention,
}

/// Which checkpoint layout the config came from; it decides the tensor name prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CheckpointLayout {
    /// Official release: `model.language_model.*` text tensors next to `model.visual.*`.
    VisionLanguage,
    /// Text-only save: `model.*` text tensors.
    TextOnly,
}

impl CheckpointLayout {
    /// Prefix of the text model's tensors (`embed_tokens`, `layers`, `norm`).
    pub fn text_prefix(self) -> &'static str {
        match self {
            CheckpointLayout::VisionLanguage => "model.language_model.",
            CheckpointLayout::TextOnly => "model.",
        }
    }
}

/// The gated (softmax) attention layers.
#[derive(Debug, Clone, PartialEq)]
pub struct AttentionConfig {
    pub num_heads: usize,
    pub num_kv_heads: usize,
    pub head_dim: usize,
    /// Leading dims of each head that RoPE rotates (`head_dim * partial_rotary_factor`).
    pub rotary_dim: usize,
    pub rope_theta: f64,
    /// Kept for completeness: with text-only positions (all three mRoPE rows equal) mRoPE is
    /// exactly 1-D RoPE, whatever the sections and interleaving.
    pub mrope_section: Vec<usize>,
    pub mrope_interleaved: bool,
}

/// The Gated DeltaNet layers.
#[derive(Debug, Clone, PartialEq)]
pub struct LinearAttentionConfig {
    pub num_key_heads: usize,
    pub num_value_heads: usize,
    pub key_head_dim: usize,
    pub value_head_dim: usize,
    pub conv_kernel: usize,
}

impl LinearAttentionConfig {
    pub fn key_dim(&self) -> usize {
        self.num_key_heads * self.key_head_dim
    }
    pub fn value_dim(&self) -> usize {
        self.num_value_heads * self.value_head_dim
    }
    /// Channels of the depthwise conv: q | k | v.
    pub fn conv_dim(&self) -> usize {
        2 * self.key_dim() + self.value_dim()
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct MoeConfig {
    pub num_experts: usize,
    pub experts_per_token: usize,
    pub expert_intermediate: usize,
    pub shared_intermediate: usize,
}

/// The weight format of an FP8 checkpoint (`quantization_config` of config.json): matrices in
/// e4m3 with one scale per block of `block` = [rows, cols] (`<name>.weight_scale_inv`),
/// activations left to the runtime (`activation_scheme: dynamic`). Which tensors stay in BF16
/// is read from the checkpoint itself (each tensor's dtype), not from `modules_to_not_convert`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fp8Quantization {
    pub block: [usize; 2],
}

#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub layout: CheckpointLayout,
    pub vocab_size: usize,
    pub hidden_size: usize,
    pub layer_kinds: Vec<LayerKind>,
    pub rms_norm_eps: f32,
    pub max_position_embeddings: usize,
    pub tie_word_embeddings: bool,
    pub attention: AttentionConfig,
    pub linear: LinearAttentionConfig,
    pub moe: MoeConfig,
    /// Ids that end generation: `eos_token_id` of `generation_config.json` and `config.json`.
    pub eos_token_ids: Vec<u32>,
    /// `Some` for an FP8 checkpoint (`quantization_config`), `None` for BF16/F32 weights.
    pub quantization: Option<Fp8Quantization>,
}

impl Config {
    pub fn num_layers(&self) -> usize {
        self.layer_kinds.len()
    }

    /// Reads `dir/config.json` and, when present, `dir/generation_config.json` (for stop ids).
    pub fn load(dir: &Path) -> Result<Config> {
        let path = dir.join("config.json");
        let text = read_to_string(&path)?;
        let mut config = Config::from_json(&text, &path)?;
        let gen_path = dir.join("generation_config.json");
        if gen_path.exists() {
            let gen: Value = parse_json(&read_to_string(&gen_path)?, &gen_path)?;
            let fields = Fields {
                obj: as_object(&gen, &gen_path, "")?,
                prefix: "",
                path: &gen_path,
            };
            let mut ids = fields.token_ids("eos_token_id")?;
            for id in std::mem::take(&mut config.eos_token_ids) {
                if !ids.contains(&id) {
                    ids.push(id);
                }
            }
            config.eos_token_ids = ids;
        }
        Ok(config)
    }

    /// Parses and validates the text of a `config.json`; `path` is only used in errors.
    pub fn from_json(text: &str, path: &Path) -> Result<Config> {
        let root: Value = parse_json(text, path)?;
        let root = as_object(&root, path, "")?;
        let top = Fields {
            obj: root,
            prefix: "",
            path,
        };
        let model_type = top.str("model_type")?;
        let (layout, text) = match model_type {
            "qwen3_5_moe" => {
                let text = top.object("text_config")?;
                let text = Fields {
                    obj: text,
                    prefix: "text_config.",
                    path,
                };
                if let Some(inner) = text.opt_str("model_type")? {
                    text.expect(
                        "model_type",
                        "\"qwen3_5_moe_text\"",
                        inner,
                        inner == "qwen3_5_moe_text",
                    )?;
                }
                (CheckpointLayout::VisionLanguage, text)
            }
            "qwen3_5_moe_text" => (CheckpointLayout::TextOnly, top),
            other => {
                return Err(top.error(
                    "model_type",
                    "\"qwen3_5_moe\" (vision-language wrapper) or \"qwen3_5_moe_text\"",
                    format!("{other:?}"),
                ))
            }
        };
        let mut config = parse_text_config(&top, &text, layout)?;
        // transformers writes `quantization_config` at the top level; a text-only save nests
        // nothing, and the wrapper's `text_config` never carries it, but both places are read.
        config.quantization = match (
            top.present("quantization_config"),
            text.obj.get("quantization_config"),
        ) {
            (Some(_), _) => parse_quantization(&top)?,
            (None, Some(v)) if !v.is_null() => parse_quantization(&text)?,
            _ => None,
        };
        Ok(config)
    }
}

/// `quantization_config`: only fine-grained FP8 (`quant_method: fp8`, e4m3 weights in blocks,
/// dynamic activations) is supported; anything else is refused naming the field.
fn parse_quantization(parent: &Fields) -> Result<Option<Fp8Quantization>> {
    let q = Fields {
        obj: parent.object("quantization_config")?,
        prefix: &format!("{}quantization_config.", parent.prefix),
        path: parent.path,
    };
    let method = q.str("quant_method")?;
    q.expect(
        "quant_method",
        "\"fp8\" (fine-grained FP8 with block scales; other quantisations are not supported)",
        format!("{method:?}"),
        method == "fp8",
    )?;
    let fmt = q.opt_str("fmt")?.unwrap_or("e4m3");
    q.expect(
        "fmt",
        "\"e4m3\" (e5m2 weights are not supported)",
        format!("{fmt:?}"),
        fmt == "e4m3",
    )?;
    let scheme = q.opt_str("activation_scheme")?.unwrap_or("dynamic");
    q.expect(
        "activation_scheme",
        "\"dynamic\" (activations quantised at run time; static input scales are not supported)",
        format!("{scheme:?}"),
        scheme == "dynamic",
    )?;
    let expected = "[rows, cols]: two positive block sizes (per-tensor FP8 is not supported)";
    let block = q.required("weight_block_size", expected)?;
    let sizes: Option<Vec<usize>> = block.as_array().and_then(|items| {
        items
            .iter()
            .map(|v| v.as_u64().filter(|&x| x > 0).map(|x| x as usize))
            .collect()
    });
    match sizes.as_deref() {
        Some(&[rows, cols]) => Ok(Some(Fp8Quantization {
            block: [rows, cols],
        })),
        _ => Err(q.error("weight_block_size", expected, block)),
    }
}

fn parse_text_config(top: &Fields, text: &Fields, layout: CheckpointLayout) -> Result<Config> {
    let act = text.str("hidden_act")?;
    text.expect("hidden_act", "\"silu\"", act, act == "silu")?;
    if let Some(bias) = text.opt_bool("attention_bias")? {
        text.expect("attention_bias", "false", bias, !bias)?;
    }
    // Older Qwen3-Next-style configs spell the output gate out; this model always has it.
    if let Some(gate) = text.opt_bool("attn_output_gate")? {
        text.expect("attn_output_gate", "true", gate, gate)?;
    }

    let vocab_size = text.positive("vocab_size")?;
    let hidden_size = text.positive("hidden_size")?;
    let num_layers = text.positive("num_hidden_layers")?;
    let rms_norm_eps = text.f64("rms_norm_eps")?;
    text.expect(
        "rms_norm_eps",
        "a positive number",
        rms_norm_eps,
        rms_norm_eps > 0.0,
    )?;
    let layer_kinds = parse_layer_kinds(text, num_layers)?;

    let attention = parse_attention(text)?;
    let linear = LinearAttentionConfig {
        num_key_heads: text.positive("linear_num_key_heads")?,
        num_value_heads: text.positive("linear_num_value_heads")?,
        key_head_dim: text.positive("linear_key_head_dim")?,
        value_head_dim: text.positive("linear_value_head_dim")?,
        conv_kernel: text.positive("linear_conv_kernel_dim")?,
    };
    text.expect(
        "linear_num_value_heads",
        format!(
            "a multiple of linear_num_key_heads ({})",
            linear.num_key_heads
        ),
        linear.num_value_heads,
        linear.num_value_heads % linear.num_key_heads == 0,
    )?;

    let moe = MoeConfig {
        num_experts: text.positive("num_experts")?,
        experts_per_token: text.positive("num_experts_per_tok")?,
        expert_intermediate: text.positive("moe_intermediate_size")?,
        shared_intermediate: text.positive("shared_expert_intermediate_size")?,
    };
    text.expect(
        "num_experts_per_tok",
        format!("at most num_experts ({})", moe.num_experts),
        moe.experts_per_token,
        moe.experts_per_token <= moe.num_experts,
    )?;

    // The wrapper carries `tie_word_embeddings` at the top level; a text-only save inside.
    let tie_word_embeddings = match text.opt_bool("tie_word_embeddings")? {
        Some(tie) => tie,
        None => top.opt_bool("tie_word_embeddings")?.unwrap_or(false),
    };
    let max_position_embeddings = text.opt_usize("max_position_embeddings")?.unwrap_or(32768);
    let mut eos_token_ids = text.token_ids("eos_token_id")?;
    if !std::ptr::eq(top.obj, text.obj) {
        for id in top.token_ids("eos_token_id")? {
            if !eos_token_ids.contains(&id) {
                eos_token_ids.push(id);
            }
        }
    }

    Ok(Config {
        layout,
        vocab_size,
        hidden_size,
        layer_kinds,
        rms_norm_eps: rms_norm_eps as f32,
        max_position_embeddings,
        tie_word_embeddings,
        attention,
        linear,
        moe,
        eos_token_ids,
        quantization: None,
    })
}

fn parse_layer_kinds(text: &Fields, num_layers: usize) -> Result<Vec<LayerKind>> {
    let Some(value) = text.obj.get("layer_types").filter(|v| !v.is_null()) else {
        // transformers' fallback: every `full_attention_interval`-th layer is full attention.
        let interval = text.opt_usize("full_attention_interval")?.unwrap_or(4);
        text.expect(
            "full_attention_interval",
            "a positive integer",
            interval,
            interval > 0,
        )?;
        return Ok((0..num_layers)
            .map(|i| {
                if (i + 1) % interval == 0 {
                    LayerKind::FullAttention
                } else {
                    LayerKind::LinearAttention
                }
            })
            .collect());
    };
    let Some(items) = value.as_array() else {
        return Err(text.error(
            "layer_types",
            "a list of layer type names",
            value.to_string(),
        ));
    };
    text.expect(
        "layer_types",
        format!("{num_layers} entries (num_hidden_layers)"),
        format!("{} entries", items.len()),
        items.len() == num_layers,
    )?;
    items
        .iter()
        .enumerate()
        .map(|(i, item)| match item.as_str() {
            Some("linear_attention") => Ok(LayerKind::LinearAttention),
            Some("full_attention") => Ok(LayerKind::FullAttention),
            _ => Err(text.error(
                &format!("layer_types[{i}]"),
                "\"linear_attention\" or \"full_attention\"",
                item.to_string(),
            )),
        })
        .collect()
}

fn parse_attention(text: &Fields) -> Result<AttentionConfig> {
    let num_heads = text.positive("num_attention_heads")?;
    let num_kv_heads = text.positive("num_key_value_heads")?;
    text.expect(
        "num_attention_heads",
        format!("a multiple of num_key_value_heads ({num_kv_heads})"),
        num_heads,
        num_heads % num_kv_heads == 0,
    )?;
    let head_dim = text.positive("head_dim")?;

    let rope = Fields {
        obj: text.object("rope_parameters")?,
        prefix: &format!("{}rope_parameters.", text.prefix),
        path: text.path,
    };
    let rope_type = rope.opt_str("rope_type")?.unwrap_or("default");
    rope.expect(
        "rope_type",
        "\"default\"",
        format!("{rope_type:?}"),
        rope_type == "default",
    )?;
    let rope_theta = rope.f64("rope_theta")?;
    rope.expect(
        "rope_theta",
        "a positive number",
        rope_theta,
        rope_theta > 0.0,
    )?;
    let partial = match rope.obj.get("partial_rotary_factor") {
        Some(_) => rope.f64("partial_rotary_factor")?,
        None => 0.25, // transformers' default for this model
    };
    rope.expect(
        "partial_rotary_factor",
        "a number in (0, 1]",
        partial,
        partial > 0.0 && partial <= 1.0,
    )?;
    // transformers truncates: dim = int(head_dim * partial_rotary_factor).
    let rotary_dim = (head_dim as f64 * partial) as usize;
    rope.expect(
        "partial_rotary_factor",
        format!("a factor giving an even, nonzero rotary dim of head_dim {head_dim}"),
        format!("{partial} (rotary dim {rotary_dim})"),
        rotary_dim > 0 && rotary_dim % 2 == 0,
    )?;
    // transformers falls back to [11, 11, 10] when the field is absent and never checks it;
    // for text it has no effect, so only a section list that is given must add up.
    let mrope_section = match rope.obj.get("mrope_section") {
        None => vec![11, 11, 10],
        Some(Value::Array(items)) => {
            let sections = items
                .iter()
                .map(|v| v.as_u64().map(|x| x as usize))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    rope.error(
                        "mrope_section",
                        "a list of 3 non-negative integers",
                        format!("{items:?}"),
                    )
                })?;
            rope.expect(
                "mrope_section",
                "3 sections (t, h, w)",
                format!("{sections:?}"),
                sections.len() == 3,
            )?;
            let sum: usize = sections.iter().sum();
            rope.expect(
                "mrope_section",
                format!("sections summing to rotary_dim / 2 = {}", rotary_dim / 2),
                format!("{sections:?} (sum {sum})"),
                sum == rotary_dim / 2,
            )?;
            sections
        }
        Some(other) => {
            return Err(rope.error(
                "mrope_section",
                "a list of 3 non-negative integers",
                other.to_string(),
            ))
        }
    };
    let mrope_interleaved = rope.opt_bool("mrope_interleaved")?.unwrap_or(false);
    Ok(AttentionConfig {
        num_heads,
        num_kv_heads,
        head_dim,
        rotary_dim,
        rope_theta,
        mrope_section,
        mrope_interleaved,
    })
}

fn read_to_string(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| ModelError::Io {
        path: path.to_path_buf(),
        source,
    })
}

fn parse_json(text: &str, path: &Path) -> Result<Value> {
    serde_json::from_str(text).map_err(|source| ModelError::Json {
        path: path.to_path_buf(),
        source,
    })
}

fn as_object<'a>(value: &'a Value, path: &Path, field: &str) -> Result<&'a Map<String, Value>> {
    value.as_object().ok_or_else(|| ModelError::Config {
        path: path.to_path_buf(),
        field: if field.is_empty() {
            "(root)".into()
        } else {
            field.into()
        },
        expected: "a JSON object".into(),
        actual: value.to_string(),
    })
}

/// Typed access to one JSON object of the config, with errors that name the full field path.
#[derive(Clone, Copy)]
struct Fields<'a> {
    obj: &'a Map<String, Value>,
    prefix: &'a str,
    path: &'a Path,
}

impl<'a> Fields<'a> {
    fn error(&self, field: &str, expected: impl ToString, actual: impl ToString) -> ModelError {
        ModelError::Config {
            path: PathBuf::from(self.path),
            field: format!("{}{field}", self.prefix),
            expected: expected.to_string(),
            actual: actual.to_string(),
        }
    }

    fn expect(
        &self,
        field: &str,
        expected: impl ToString,
        actual: impl std::fmt::Display,
        ok: bool,
    ) -> Result<()> {
        if ok {
            Ok(())
        } else {
            Err(self.error(field, expected, actual))
        }
    }

    fn present(&self, field: &str) -> Option<&'a Value> {
        self.obj.get(field).filter(|v| !v.is_null())
    }

    fn required(&self, field: &str, expected: &str) -> Result<&'a Value> {
        self.present(field)
            .ok_or_else(|| self.error(field, expected, "nothing (missing)"))
    }

    fn object(&self, field: &str) -> Result<&'a Map<String, Value>> {
        let value = self.required(field, "a JSON object")?;
        value
            .as_object()
            .ok_or_else(|| self.error(field, "a JSON object", value))
    }

    fn str(&self, field: &str) -> Result<&'a str> {
        let value = self.required(field, "a string")?;
        value
            .as_str()
            .ok_or_else(|| self.error(field, "a string", value))
    }

    fn opt_str(&self, field: &str) -> Result<Option<&'a str>> {
        self.present(field)
            .map(|v| v.as_str().ok_or_else(|| self.error(field, "a string", v)))
            .transpose()
    }

    fn opt_bool(&self, field: &str) -> Result<Option<bool>> {
        self.present(field)
            .map(|v| {
                v.as_bool()
                    .ok_or_else(|| self.error(field, "true or false", v))
            })
            .transpose()
    }

    fn f64(&self, field: &str) -> Result<f64> {
        let value = self.required(field, "a number")?;
        value
            .as_f64()
            .ok_or_else(|| self.error(field, "a number", value))
    }

    fn opt_usize(&self, field: &str) -> Result<Option<usize>> {
        self.present(field)
            .map(|v| {
                v.as_u64()
                    .map(|x| x as usize)
                    .ok_or_else(|| self.error(field, "a non-negative integer", v))
            })
            .transpose()
    }

    fn positive(&self, field: &str) -> Result<usize> {
        let value = self.required(field, "a positive integer")?;
        match value.as_u64() {
            Some(x) if x > 0 => Ok(x as usize),
            _ => Err(self.error(field, "a positive integer", value)),
        }
    }

    /// `eos_token_id` style fields: absent, one id, or a list of ids.
    fn token_ids(&self, field: &str) -> Result<Vec<u32>> {
        let expected = "a token id or a list of token ids";
        let one = |v: &Value| {
            v.as_u64()
                .and_then(|x| u32::try_from(x).ok())
                .ok_or_else(|| self.error(field, expected, v))
        };
        match self.present(field) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items.iter().map(one).collect(),
            Some(v) => Ok(vec![one(v)?]),
        }
    }
}
