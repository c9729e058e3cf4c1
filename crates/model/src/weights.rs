//! The model's weights, memory-mapped from safetensors (one file or shards listed in
//! `model.safetensors.index.json`) and checked against the config: every tensor the forward pass
//! needs must be present with the right shape and a supported dtype (F32, BF16, F16, or FP8 e4m3
//! with block scales), or loading fails naming the file, the tensor and what was expected.
//!
//! FP8 checkpoints (config.json `quantization_config`, quant_method `fp8`): every F8_E4M3 tensor
//! `<module>.weight` is paired with `<module>.weight_scale_inv` (F32 or BF16, one scale per block)
//! and the pair becomes one `Tensor` whose reads dequantise. Which tensors are FP8 is whatever
//! the checkpoint stores: the official release keeps embeddings, `lm_head`, norms, the routers,
//! `shared_expert_gate` and GDN's `in_proj_a`/`in_proj_b`/`conv1d`/`A_log`/`dt_bias` in BF16.
//!
//! Both checkpoint spellings are accepted: official names (`model.language_model.*`, experts
//! fused as `mlp.experts.gate_up_proj` [E, 2I, H] and `mlp.experts.down_proj` [E, H, I]) and what
//! transformers' `save_pretrained` writes (`model.*`, one `mlp.experts.N.{gate,up,down}_proj.weight`
//! per expert). Either way each expert ends up as three matrix views into the mapped bytes.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use memmap2::Mmap;
use safetensors::SafeTensors;

use crate::config::{Config, Fp8Quantization, LayerKind};
use crate::error::{ModelError, Result};
use crate::tensor::{BlockScale, DType, Storage, Tensor};

/// What an FP8 weight's block scales are called: `<module>.weight` -> `<module>.weight_scale_inv`.
pub const SCALE_SUFFIX: &str = "_scale_inv";

/// Every tensor of a checkpoint directory, by name, with the file it came from.
pub struct Checkpoint {
    tensors: HashMap<String, (Tensor, Arc<PathBuf>)>,
    /// Tensors whose dtype Lily cannot read (name -> file, dtype); an error only if needed.
    unsupported: HashMap<String, (Arc<PathBuf>, String)>,
    /// What was searched, for "missing tensor" errors.
    source: String,
    /// Whether `model.visual.*` tensors are mapped (for copying a checkpoint whole); the forward
    /// pass never reads them.
    keep_visual: bool,
}

impl Checkpoint {
    /// Maps `dir/model.safetensors.index.json`'s shards, or else `dir/model.safetensors`,
    /// leaving out the vision tower.
    pub fn open(dir: &Path) -> Result<Checkpoint> {
        Checkpoint::open_dir(dir, false)
    }

    /// As `open`, with the vision tower's tensors too.
    pub fn open_with_vision(dir: &Path) -> Result<Checkpoint> {
        Checkpoint::open_dir(dir, true)
    }

    /// The shard files of checkpoint directory `dir`: the index's, or `model.safetensors`.
    pub fn shard_files(dir: &Path) -> Result<Vec<PathBuf>> {
        let index_path = dir.join("model.safetensors.index.json");
        if index_path.exists() {
            let (_, shards) = read_index(&index_path)?;
            Ok(shards.into_iter().map(|s| dir.join(s)).collect())
        } else {
            Ok(vec![dir.join("model.safetensors")])
        }
    }

    fn open_dir(dir: &Path, keep_visual: bool) -> Result<Checkpoint> {
        let index_path = dir.join("model.safetensors.index.json");
        let single = dir.join("model.safetensors");
        if index_path.exists() {
            Checkpoint::open_sharded(dir, &index_path, keep_visual)
        } else if single.exists() {
            let mut checkpoint = Checkpoint {
                tensors: HashMap::new(),
                unsupported: HashMap::new(),
                source: single.display().to_string(),
                keep_visual,
            };
            checkpoint.map_shard(&single, 1, 1)?;
            Ok(checkpoint)
        } else {
            Err(ModelError::NoWeights {
                dir: dir.to_path_buf(),
            })
        }
    }

    /// Maps one safetensors file (any name), e.g. a file of reference arrays.
    pub fn open_file(path: &Path) -> Result<Checkpoint> {
        let mut checkpoint = Checkpoint {
            tensors: HashMap::new(),
            unsupported: HashMap::new(),
            source: path.display().to_string(),
            keep_visual: false,
        };
        checkpoint.map_shard(path, 1, 1)?;
        Ok(checkpoint)
    }

    /// A tensor by its checkpoint name (F32, BF16, F16 or F8_E4M3; an FP8 tensor carries its
    /// block scales only after `attach_block_scales`).
    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.tensors.get(name).map(|(t, _)| t)
    }

    /// Tensors of a dtype Lily cannot read, as (name, dtype), sorted by name.
    pub fn unsupported(&self) -> Vec<(&str, &str)> {
        let mut out: Vec<(&str, &str)> = self
            .unsupported
            .iter()
            .map(|(name, (_, dtype))| (name.as_str(), dtype.as_str()))
            .collect();
        out.sort_unstable();
        out
    }

    /// Every tensor name, sorted.
    pub fn names(&self) -> Vec<&str> {
        let mut names: Vec<&str> = self.tensors.keys().map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    /// Pairs every FP8 tensor `X` with its scales `X_scale_inv` (which leave the map), checking
    /// the scales' dtype and shape against `quantization`'s block size. Refuses, naming the
    /// tensor: FP8 tensors when the config declares no FP8 quantisation, an FP8 tensor without
    /// scales, and scales without an FP8 tensor.
    pub fn attach_block_scales(&mut self, quantization: Option<&Fp8Quantization>) -> Result<()> {
        let mut fp8: Vec<String> = self
            .tensors
            .iter()
            .filter(|(_, (t, _))| t.dtype() == DType::F8E4M3)
            .map(|(name, _)| name.clone())
            .collect();
        fp8.sort_unstable();
        for name in fp8 {
            let (tensor, path) = self.tensors.remove(&name).expect("listed above");
            let fail = |reason: String| ModelError::Fp8 {
                path: path.to_path_buf(),
                tensor: name.clone(),
                reason,
            };
            let Some(q) = quantization else {
                return Err(fail(
                    "is F8_E4M3 but config.json has no quantization_config (expected quant_method \"fp8\" with weight_block_size)".into(),
                ));
            };
            let scale_name = format!("{name}{SCALE_SUFFIX}");
            let Some((scale_inv, _)) = self.tensors.remove(&scale_name) else {
                let why = match self.unsupported.get(&scale_name) {
                    Some((_, dtype)) => format!("has dtype {dtype}, expected F32 or BF16"),
                    None => "is missing".into(),
                };
                return Err(fail(format!(
                    "is F8_E4M3 but its block scales `{scale_name}` {why}"
                )));
            };
            let tensor = tensor
                .with_block_scale(BlockScale {
                    scale_inv,
                    block: q.block,
                })
                .map_err(fail)?;
            self.tensors.insert(name, (tensor, path));
        }
        let orphan = self
            .tensors
            .keys()
            .filter(|n| n.ends_with(SCALE_SUFFIX))
            .min()
            .cloned();
        if let Some(scale_name) = orphan {
            let weight = scale_name.trim_end_matches(SCALE_SUFFIX);
            if let Some((path, dtype)) = self.unsupported.get(weight) {
                return Err(ModelError::DType {
                    path: path.to_path_buf(),
                    tensor: weight.into(),
                    actual: dtype.clone(),
                });
            }
            let found = self
                .tensors
                .get(weight)
                .map_or("is missing".to_string(), |(t, _)| {
                    format!("is {}", t.dtype())
                });
            return Err(ModelError::Fp8 {
                path: self.tensors[&scale_name].1.to_path_buf(),
                tensor: scale_name.clone(),
                reason: format!("block scales for `{weight}`, which {found} (expected F8_E4M3)"),
            });
        }
        Ok(())
    }

    fn open_sharded(dir: &Path, index_path: &Path, keep_visual: bool) -> Result<Checkpoint> {
        let (weight_map, shards) = read_index(index_path)?;
        let mut checkpoint = Checkpoint {
            tensors: HashMap::new(),
            unsupported: HashMap::new(),
            source: index_path.display().to_string(),
            keep_visual,
        };
        for (i, shard) in shards.iter().enumerate() {
            checkpoint.map_shard(&dir.join(shard), i + 1, shards.len())?;
        }
        for (tensor, shard) in &weight_map {
            if !keep_visual && tensor.starts_with("model.visual.") {
                continue;
            }
            let found_in = match (
                checkpoint.tensors.get(tensor),
                checkpoint.unsupported.get(tensor),
            ) {
                (Some((_, path)), _) | (None, Some((path, _))) => {
                    path.file_name().and_then(|f| f.to_str())
                }
                (None, None) => None,
            };
            match found_in {
                Some(file) if file == shard => {}
                _ => {
                    return Err(ModelError::NotInShard {
                        index: index_path.to_path_buf(),
                        tensor: tensor.clone(),
                        shard: shard.clone(),
                    })
                }
            }
        }
        Ok(checkpoint)
    }

    fn map_shard(&mut self, path: &Path, number: usize, count: usize) -> Result<()> {
        let file = std::fs::File::open(path).map_err(|source| ModelError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        // SAFETY: the mapping is read-only; a checkpoint modified while being served is outside
        // what any inference runtime can defend against.
        let mmap = unsafe { Mmap::map(&file) }.map_err(|source| ModelError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        let parsed = SafeTensors::deserialize(&mmap).map_err(|e| ModelError::Safetensors {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })?;
        let shared_path = Arc::new(path.to_path_buf());
        let base = mmap.as_ptr() as usize;
        let mut entries = Vec::new();
        let (mut bytes_here, mut skipped) = (0usize, 0usize);
        for (name, view) in parsed.tensors() {
            if !self.keep_visual && name.starts_with("model.visual.") {
                skipped += 1;
                continue;
            }
            let dtype = match view.dtype() {
                safetensors::Dtype::F32 => DType::F32,
                safetensors::Dtype::BF16 => DType::BF16,
                safetensors::Dtype::F16 => DType::F16,
                safetensors::Dtype::F8_E4M3 => DType::F8E4M3,
                other => {
                    // Kept out of the map; if the model needs it, the error says so by name.
                    self.unsupported
                        .insert(name, (shared_path.clone(), format!("{other:?}")));
                    continue;
                }
            };
            bytes_here += view.data().len();
            entries.push((
                name,
                dtype,
                view.shape().to_vec(),
                view.data().as_ptr() as usize - base,
            ));
        }
        drop(parsed);
        let count_here = entries.len();
        let storage = Arc::new(Storage::Mapped(mmap));
        for (name, dtype, shape, start) in entries {
            let tensor = Tensor::new(&name, storage.clone(), start, dtype, shape);
            self.tensors.insert(name, (tensor, shared_path.clone()));
        }
        tracing::info!(
            target: crate::PROGRESS,
            stage = "shards",
            done = number,
            total = count,
            "mapped shard {number}/{count} {}: {count_here} tensors, {:.1} MB{}",
            path.display(),
            bytes_here as f64 / 1e6,
            if skipped > 0 {
                format!(" ({skipped} vision tensors skipped)")
            } else {
                String::new()
            }
        );
        Ok(())
    }
}

impl Checkpoint {
    /// Takes tensor `name` out of the checkpoint, checking its shape.
    fn take(&mut self, name: &str, shape: &[usize]) -> Result<Tensor> {
        let Some((tensor, path)) = self.tensors.remove(name) else {
            if let Some((path, dtype)) = self.unsupported.get(name) {
                return Err(ModelError::DType {
                    path: path.to_path_buf(),
                    tensor: name.into(),
                    actual: dtype.clone(),
                });
            }
            return Err(ModelError::MissingTensor {
                tensor: name.into(),
                searched: self.source.clone(),
            });
        };
        if tensor.shape() != shape {
            return Err(ModelError::Shape {
                path: path.to_path_buf(),
                tensor: name.into(),
                expected: shape.to_vec(),
                actual: tensor.shape().to_vec(),
            });
        }
        Ok(tensor)
    }

    fn contains(&self, name: &str) -> bool {
        self.tensors.contains_key(name) || self.unsupported.contains_key(name)
    }
}

/// All weights of the text model, as views into the checkpoint's mapped bytes.
/// Matrices are row-major [out, in], as in PyTorch's `nn.Linear`.
pub struct Weights {
    /// [vocab, hidden]
    pub embed_tokens: Tensor,
    pub layers: Vec<LayerWeights>,
    /// Final zero-centred RMSNorm weight [hidden].
    pub norm: Tensor,
    /// [vocab, hidden]; the same tensor as `embed_tokens` when the config ties them.
    pub lm_head: Tensor,
    /// The multi-token-prediction head (`mtp.*`), unused by the forward pass, kept by name for a
    /// speculative-decoding draft head.
    pub mtp: BTreeMap<String, Tensor>,
}

pub struct LayerWeights {
    /// Zero-centred RMSNorm weights [hidden] before the mixer and before the MoE.
    pub input_layernorm: Tensor,
    pub post_attention_layernorm: Tensor,
    pub mixer: MixerWeights,
    pub moe: MoeWeights,
}

// One per layer, built once at load: the size difference between the variants costs nothing.
#[allow(clippy::large_enum_variant)]
pub enum MixerWeights {
    LinearAttention(GatedDeltaNetWeights),
    FullAttention(AttentionWeights),
}

/// Shapes use Hk/Hv key/value heads of dims Dk/Dv, hidden H, conv kernel K.
pub struct GatedDeltaNetWeights {
    /// [2*Hk*Dk + Hv*Dv, H]: q | k | v.
    pub in_proj_qkv: Tensor,
    /// [Hv*Dv, H]: the output gate.
    pub in_proj_z: Tensor,
    /// [Hv, H]: beta = sigmoid(b).
    pub in_proj_b: Tensor,
    /// [Hv, H]: the decay input a.
    pub in_proj_a: Tensor,
    /// [2*Hk*Dk + Hv*Dv, 1, K]: depthwise causal conv, no bias.
    pub conv1d: Tensor,
    /// [Hv]
    pub dt_bias: Tensor,
    /// [Hv]
    pub a_log: Tensor,
    /// [Dv]: plain (not zero-centred) weight of the gated RMSNorm.
    pub norm: Tensor,
    /// [H, Hv*Dv]
    pub out_proj: Tensor,
}

/// Shapes use Hq query heads, Hkv KV heads, head dim D.
pub struct AttentionWeights {
    /// [Hq*2*D, H]: per head, D query rows then D gate rows.
    pub q_proj: Tensor,
    /// [Hkv*D, H]
    pub k_proj: Tensor,
    /// [Hkv*D, H]
    pub v_proj: Tensor,
    /// [H, Hq*D]
    pub o_proj: Tensor,
    /// Zero-centred RMSNorm weights [D], applied per head.
    pub q_norm: Tensor,
    pub k_norm: Tensor,
}

pub struct MoeWeights {
    /// [E, H]
    pub router: Tensor,
    pub experts: Vec<ExpertWeights>,
    pub shared_expert: ExpertWeights,
    /// [1, H]
    pub shared_expert_gate: Tensor,
}

/// One SwiGLU MLP: down(silu(gate x) * up x). Intermediate I, hidden H.
pub struct ExpertWeights {
    /// [I, H]
    pub gate_proj: Tensor,
    /// [I, H]
    pub up_proj: Tensor,
    /// [H, I]
    pub down_proj: Tensor,
}

impl Weights {
    /// Maps the checkpoint in `dir` and checks it against `config`.
    pub fn load(dir: &Path, config: &Config) -> Result<Weights> {
        let start = std::time::Instant::now();
        let mut checkpoint = Checkpoint::open(dir)?;
        checkpoint.attach_block_scales(config.quantization.as_ref())?;
        let weights = Weights::from_checkpoint(&mut checkpoint, config)?;
        let text_prefix = config.layout.text_prefix();
        let mut leftovers: Vec<&String> = checkpoint
            .tensors
            .keys()
            .filter(|n| n.starts_with(text_prefix))
            .collect();
        if !leftovers.is_empty() {
            leftovers.sort();
            tracing::warn!(
                "{} unexpected tensors ignored, e.g. {:?}",
                leftovers.len(),
                &leftovers[..leftovers.len().min(3)]
            );
        }
        tracing::info!(
            "weights ready: {} layers, {} mtp tensors, in {:.2}s",
            weights.layers.len(),
            weights.mtp.len(),
            start.elapsed().as_secs_f64()
        );
        Ok(weights)
    }

    fn from_checkpoint(ck: &mut Checkpoint, config: &Config) -> Result<Weights> {
        let p = config.layout.text_prefix();
        let (v, h) = (config.vocab_size, config.hidden_size);
        let embed_tokens = ck.take(&format!("{p}embed_tokens.weight"), &[v, h])?;
        let norm = ck.take(&format!("{p}norm.weight"), &[h])?;
        let lm_head = if config.tie_word_embeddings && !ck.contains("lm_head.weight") {
            embed_tokens.clone()
        } else {
            ck.take("lm_head.weight", &[v, h])?
        };
        let mut layers = Vec::with_capacity(config.num_layers());
        for (i, kind) in config.layer_kinds.iter().enumerate() {
            let lp = format!("{p}layers.{i}.");
            let mixer = match kind {
                LayerKind::LinearAttention => {
                    MixerWeights::LinearAttention(load_gdn(ck, config, &lp)?)
                }
                LayerKind::FullAttention => {
                    MixerWeights::FullAttention(load_attention(ck, config, &lp)?)
                }
            };
            layers.push(LayerWeights {
                input_layernorm: ck.take(&format!("{lp}input_layernorm.weight"), &[h])?,
                post_attention_layernorm: ck
                    .take(&format!("{lp}post_attention_layernorm.weight"), &[h])?,
                mixer,
                moe: load_moe(ck, config, &lp)?,
            });
        }
        let mtp_names: Vec<String> = ck
            .tensors
            .keys()
            .filter(|n| n.starts_with("mtp."))
            .cloned()
            .collect();
        let mtp = mtp_names
            .into_iter()
            .filter_map(|n| ck.tensors.remove(&n).map(|(t, _)| (n, t)))
            .collect();
        Ok(Weights {
            embed_tokens,
            layers,
            norm,
            lm_head,
            mtp,
        })
    }
}

fn load_gdn(ck: &mut Checkpoint, config: &Config, lp: &str) -> Result<GatedDeltaNetWeights> {
    let l = &config.linear;
    let h = config.hidden_size;
    let a = format!("{lp}linear_attn.");
    Ok(GatedDeltaNetWeights {
        in_proj_qkv: ck.take(&format!("{a}in_proj_qkv.weight"), &[l.conv_dim(), h])?,
        in_proj_z: ck.take(&format!("{a}in_proj_z.weight"), &[l.value_dim(), h])?,
        in_proj_b: ck.take(&format!("{a}in_proj_b.weight"), &[l.num_value_heads, h])?,
        in_proj_a: ck.take(&format!("{a}in_proj_a.weight"), &[l.num_value_heads, h])?,
        conv1d: ck.take(
            &format!("{a}conv1d.weight"),
            &[l.conv_dim(), 1, l.conv_kernel],
        )?,
        dt_bias: ck.take(&format!("{a}dt_bias"), &[l.num_value_heads])?,
        a_log: ck.take(&format!("{a}A_log"), &[l.num_value_heads])?,
        norm: ck.take(&format!("{a}norm.weight"), &[l.value_head_dim])?,
        out_proj: ck.take(&format!("{a}out_proj.weight"), &[h, l.value_dim()])?,
    })
}

fn load_attention(ck: &mut Checkpoint, config: &Config, lp: &str) -> Result<AttentionWeights> {
    let at = &config.attention;
    let h = config.hidden_size;
    let a = format!("{lp}self_attn.");
    Ok(AttentionWeights {
        q_proj: ck.take(
            &format!("{a}q_proj.weight"),
            &[at.num_heads * at.head_dim * 2, h],
        )?,
        k_proj: ck.take(
            &format!("{a}k_proj.weight"),
            &[at.num_kv_heads * at.head_dim, h],
        )?,
        v_proj: ck.take(
            &format!("{a}v_proj.weight"),
            &[at.num_kv_heads * at.head_dim, h],
        )?,
        o_proj: ck.take(
            &format!("{a}o_proj.weight"),
            &[h, at.num_heads * at.head_dim],
        )?,
        q_norm: ck.take(&format!("{a}q_norm.weight"), &[at.head_dim])?,
        k_norm: ck.take(&format!("{a}k_norm.weight"), &[at.head_dim])?,
    })
}

fn load_moe(ck: &mut Checkpoint, config: &Config, lp: &str) -> Result<MoeWeights> {
    let m = &config.moe;
    let h = config.hidden_size;
    let mp = format!("{lp}mlp.");
    let (e, i) = (m.num_experts, m.expert_intermediate);
    let fused = format!("{mp}experts.gate_up_proj");
    let experts = if ck.contains(&fused) {
        let gate_up = ck.take(&fused, &[e, 2 * i, h])?;
        if let Some(scale) = gate_up.block_scale() {
            // The up rows start at row i of each expert: a cut inside a block of scales would
            // give the gate and up halves a shared block, which the views cannot express.
            if i % scale.block[0] != 0 {
                return Err(ModelError::Fp8 {
                    path: PathBuf::from(&ck.source),
                    tensor: fused,
                    reason: format!(
                        "fused gate|up in FP8 needs moe_intermediate_size ({i}) to be a multiple of the block rows ({})",
                        scale.block[0]
                    ),
                });
            }
        }
        let down = ck.take(&format!("{mp}experts.down_proj"), &[e, h, i])?;
        (0..e)
            .map(|x| {
                let gu = gate_up.index(x);
                ExpertWeights {
                    gate_proj: gu.slice_rows(0..i),
                    up_proj: gu.slice_rows(i..2 * i),
                    down_proj: down.index(x),
                }
            })
            .collect()
    } else {
        (0..e)
            .map(|x| load_mlp(ck, &format!("{mp}experts.{x}."), h, i))
            .collect::<Result<Vec<_>>>()?
    };
    Ok(MoeWeights {
        router: ck.take(&format!("{mp}gate.weight"), &[e, h])?,
        experts,
        shared_expert: load_mlp(ck, &format!("{mp}shared_expert."), h, m.shared_intermediate)?,
        shared_expert_gate: ck.take(&format!("{mp}shared_expert_gate.weight"), &[1, h])?,
    })
}

fn load_mlp(
    ck: &mut Checkpoint,
    prefix: &str,
    hidden: usize,
    inter: usize,
) -> Result<ExpertWeights> {
    Ok(ExpertWeights {
        gate_proj: ck.take(&format!("{prefix}gate_proj.weight"), &[inter, hidden])?,
        up_proj: ck.take(&format!("{prefix}up_proj.weight"), &[inter, hidden])?,
        down_proj: ck.take(&format!("{prefix}down_proj.weight"), &[hidden, inter])?,
    })
}

/// Shard names in an index must stay inside the checkpoint directory.
fn is_plain_file_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('/') && !name.contains('\\') && name != "." && name != ".."
}

/// `model.safetensors.index.json`: tensor name -> shard file, and the shard files, sorted.
fn read_index(index_path: &Path) -> Result<(BTreeMap<String, String>, Vec<String>)> {
    let text = std::fs::read_to_string(index_path).map_err(|source| ModelError::Io {
        path: index_path.to_path_buf(),
        source,
    })?;
    let index: serde_json::Value =
        serde_json::from_str(&text).map_err(|source| ModelError::Json {
            path: index_path.to_path_buf(),
            source,
        })?;
    let Some(map) = index.get("weight_map").and_then(|m| m.as_object()) else {
        return Err(ModelError::Config {
            path: index_path.to_path_buf(),
            field: "weight_map".into(),
            expected: "an object from tensor name to shard file".into(),
            actual: index
                .get("weight_map")
                .map_or("nothing (missing)".into(), |v| v.to_string()),
        });
    };
    let mut weight_map = BTreeMap::new();
    for (tensor, file) in map {
        let Some(file) = file.as_str().filter(|f| is_plain_file_name(f)) else {
            return Err(ModelError::Config {
                path: index_path.to_path_buf(),
                field: format!("weight_map.{tensor}"),
                expected: "a shard file name in the same directory".into(),
                actual: file.to_string(),
            });
        };
        weight_map.insert(tensor.clone(), file.to_string());
    }
    let mut shards: Vec<String> = weight_map.values().cloned().collect();
    shards.sort();
    shards.dedup();
    Ok((weight_map, shards))
}
