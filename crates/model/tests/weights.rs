//! Loading weights: both expert storage formats, single file and sharded, and every way a
//! checkpoint can be broken, each refused with an error naming the file and the tensor.

use std::path::{Path, PathBuf};

use lily_model::config::{Config, Fp8Quantization, LayerKind};
use lily_model::tensor::{bf16_to_f32, e4m3_to_f32};
use lily_model::{DType, ModelError, Weights};

const TEXT_ONLY: &str = include_str!("data/tiny_text_only_config.json");

struct Spec {
    name: String,
    shape: Vec<usize>,
    dtype: &'static str,
}

/// Every tensor a checkpoint of `c` holds, spelled as transformers' text-only save does
/// (`fused == false`) or as the official release does.
fn checkpoint_tensors(c: &Config, fused: bool) -> Vec<Spec> {
    let (h, v) = (c.hidden_size, c.vocab_size);
    let mut t: Vec<(String, Vec<usize>)> = vec![
        ("model.embed_tokens.weight".into(), vec![v, h]),
        ("model.norm.weight".into(), vec![h]),
        ("lm_head.weight".into(), vec![v, h]),
    ];
    let (l, a, m) = (&c.linear, &c.attention, &c.moe);
    for (i, kind) in c.layer_kinds.iter().enumerate() {
        let p = format!("model.layers.{i}.");
        t.push((format!("{p}input_layernorm.weight"), vec![h]));
        t.push((format!("{p}post_attention_layernorm.weight"), vec![h]));
        match kind {
            LayerKind::LinearAttention => {
                for (n, s) in [
                    ("in_proj_qkv.weight", vec![l.conv_dim(), h]),
                    ("in_proj_z.weight", vec![l.value_dim(), h]),
                    ("in_proj_b.weight", vec![l.num_value_heads, h]),
                    ("in_proj_a.weight", vec![l.num_value_heads, h]),
                    ("conv1d.weight", vec![l.conv_dim(), 1, l.conv_kernel]),
                    ("dt_bias", vec![l.num_value_heads]),
                    ("A_log", vec![l.num_value_heads]),
                    ("norm.weight", vec![l.value_head_dim]),
                    ("out_proj.weight", vec![h, l.value_dim()]),
                ] {
                    t.push((format!("{p}linear_attn.{n}"), s));
                }
            }
            LayerKind::FullAttention => {
                for (n, s) in [
                    ("q_proj.weight", vec![2 * a.num_heads * a.head_dim, h]),
                    ("k_proj.weight", vec![a.num_kv_heads * a.head_dim, h]),
                    ("v_proj.weight", vec![a.num_kv_heads * a.head_dim, h]),
                    ("o_proj.weight", vec![h, a.num_heads * a.head_dim]),
                    ("q_norm.weight", vec![a.head_dim]),
                    ("k_norm.weight", vec![a.head_dim]),
                ] {
                    t.push((format!("{p}self_attn.{n}"), s));
                }
            }
        }
        let (e, im, s) = (m.num_experts, m.expert_intermediate, m.shared_intermediate);
        t.push((format!("{p}mlp.gate.weight"), vec![e, h]));
        t.push((format!("{p}mlp.shared_expert_gate.weight"), vec![1, h]));
        t.push((format!("{p}mlp.shared_expert.gate_proj.weight"), vec![s, h]));
        t.push((format!("{p}mlp.shared_expert.up_proj.weight"), vec![s, h]));
        t.push((format!("{p}mlp.shared_expert.down_proj.weight"), vec![h, s]));
        if fused {
            t.push((format!("{p}mlp.experts.gate_up_proj"), vec![e, 2 * im, h]));
            t.push((format!("{p}mlp.experts.down_proj"), vec![e, h, im]));
        } else {
            for x in 0..e {
                t.push((format!("{p}mlp.experts.{x}.gate_proj.weight"), vec![im, h]));
                t.push((format!("{p}mlp.experts.{x}.up_proj.weight"), vec![im, h]));
                t.push((format!("{p}mlp.experts.{x}.down_proj.weight"), vec![h, im]));
            }
        }
    }
    t.into_iter()
        .map(|(name, shape)| Spec {
            name,
            shape,
            dtype: "F32",
        })
        .collect()
}

/// Writes a safetensors file by hand (so tests can also write broken ones). Element k of every
/// tensor holds k as the dtype's bytes pattern; values do not matter here, layout does.
fn write_safetensors(path: &Path, specs: &[Spec]) {
    let mut header = serde_json::Map::new();
    let mut data = Vec::new();
    for s in specs {
        let size = match s.dtype {
            "F32" | "I32" => 4,
            "F8_E4M3" | "F8_E5M2" => 1,
            _ => 2,
        };
        let start = data.len();
        let n: usize = s.shape.iter().product();
        for k in 0..n {
            data.extend_from_slice(&(k as u32).to_le_bytes()[..size]);
        }
        header.insert(
            s.name.clone(),
            serde_json::json!({"dtype": s.dtype, "shape": s.shape, "data_offsets": [start, data.len()]}),
        );
    }
    let mut header = serde_json::Value::Object(header).to_string().into_bytes();
    while header.len() % 8 != 0 {
        header.push(b' ');
    }
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend_from_slice(&header);
    bytes.extend_from_slice(&data);
    std::fs::write(path, bytes).unwrap();
}

struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("lily-weights-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn config() -> Config {
    Config::from_json(TEXT_ONLY, Path::new("config.json")).unwrap()
}

/// A one-file checkpoint of the tiny config after `edit`; returns the load result.
fn load_edited(
    tag: &str,
    fused: bool,
    edit: impl FnOnce(&mut Vec<Spec>),
) -> Result<Weights, ModelError> {
    let dir = TempDir::new(tag);
    let c = config();
    let mut specs = checkpoint_tensors(&c, fused);
    edit(&mut specs);
    write_safetensors(&dir.0.join("model.safetensors"), &specs);
    Weights::load(&dir.0, &c)
}

#[test]
fn per_expert_and_fused_experts_give_the_same_views() {
    let per_expert = load_edited("per-expert", false, |_| {}).unwrap();
    let fused = load_edited("fused", true, |_| {}).unwrap();
    let c = config();
    let (im, h) = (c.moe.expert_intermediate, c.hidden_size);
    for w in [&per_expert, &fused] {
        assert_eq!(w.layers.len(), 4);
        let e3 = &w.layers[0].moe.experts[3];
        assert_eq!(
            (
                e3.gate_proj.shape(),
                e3.up_proj.shape(),
                e3.down_proj.shape()
            ),
            (&[im, h][..], &[im, h][..], &[h, im][..])
        );
    }
    // Fused element k of expert 3's up rows is element 3*2*im*h + im*h + k of the fused tensor.
    let up = fused.layers[0].moe.experts[3].up_proj.to_f32_vec();
    let first = (3 * 2 * im * h + im * h) as u32;
    assert_eq!(up[0].to_bits(), first);
    assert_eq!(up[5].to_bits(), first + 5);
    let down = fused.layers[1].moe.experts[7].down_proj.to_f32_vec();
    assert_eq!(down[0].to_bits(), (7 * h * im) as u32);
}

#[test]
fn sharded_official_names_with_vision_and_mtp() {
    let dir = TempDir::new("sharded");
    let mut v: serde_json::Value = serde_json::from_str(TEXT_ONLY).unwrap();
    let text = v.take();
    let wrapper = serde_json::json!({"model_type": "qwen3_5_moe", "text_config": text, "tie_word_embeddings": false});
    std::fs::write(dir.0.join("config.json"), wrapper.to_string()).unwrap();
    let c = Config::load(&dir.0).unwrap();
    let mut specs = checkpoint_tensors(&c, true);
    for s in &mut specs {
        if let Some(rest) = s.name.strip_prefix("model.") {
            s.name = format!("model.language_model.{rest}");
        }
    }
    specs.push(Spec {
        name: "model.visual.patch_embed.proj.weight".into(),
        shape: vec![4, 3],
        dtype: "F32",
    });
    specs.push(Spec {
        name: "mtp.fc.weight".into(),
        shape: vec![64, 128],
        dtype: "BF16",
    });
    let second = specs.split_off(specs.len() / 2);
    write_safetensors(&dir.0.join("model-00001-of-00002.safetensors"), &specs);
    write_safetensors(&dir.0.join("model-00002-of-00002.safetensors"), &second);
    let mut map = serde_json::Map::new();
    for (list, file) in [
        (&specs, "model-00001-of-00002.safetensors"),
        (&second, "model-00002-of-00002.safetensors"),
    ] {
        for s in list.iter() {
            map.insert(s.name.clone(), file.into());
        }
    }
    let index = serde_json::json!({"metadata": {}, "weight_map": map});
    std::fs::write(
        dir.0.join("model.safetensors.index.json"),
        index.to_string(),
    )
    .unwrap();
    let w = Weights::load(&dir.0, &c).unwrap();
    assert_eq!(w.layers.len(), 4);
    assert_eq!(w.mtp["mtp.fc.weight"].dtype(), lily_model::DType::BF16);

    // An index that points a tensor at the wrong shard is refused.
    let in_first = specs
        .iter()
        .any(|s| s.name == "model.language_model.norm.weight");
    let wrong = if in_first {
        "model-00002-of-00002.safetensors"
    } else {
        "model-00001-of-00002.safetensors"
    };
    map.insert("model.language_model.norm.weight".into(), wrong.into());
    std::fs::write(
        dir.0.join("model.safetensors.index.json"),
        serde_json::json!({"weight_map": map}).to_string(),
    )
    .unwrap();
    let err = Weights::load(&dir.0, &c)
        .err()
        .expect("wrong shard must fail")
        .to_string();
    assert!(
        err.contains("model.language_model.norm.weight") && err.contains("does not contain it"),
        "{err}"
    );
}

#[test]
fn missing_tensor_is_named() {
    let target = "model.layers.3.self_attn.k_norm.weight";
    let err = load_edited("missing", false, |s| s.retain(|t| t.name != target))
        .err()
        .unwrap()
        .to_string();
    assert!(err.contains(target) && err.contains("missing"), "{err}");
}

#[test]
fn misshapen_tensor_names_file_tensor_and_shapes() {
    let target = "model.layers.2.linear_attn.conv1d.weight";
    let err = load_edited("shape", false, |s| {
        s.iter_mut().find(|t| t.name == target).unwrap().shape = vec![128, 4];
    })
    .err()
    .unwrap()
    .to_string();
    assert!(
        err.contains("model.safetensors") && err.contains(target),
        "{err}"
    );
    assert!(
        err.contains("expected shape [128, 1, 4], found [128, 4]"),
        "{err}"
    );
}

#[test]
fn unsupported_dtype_is_named() {
    let target = "model.layers.0.mlp.gate.weight";
    let err = load_edited("dtype", true, |s| {
        s.iter_mut().find(|t| t.name == target).unwrap().dtype = "I32"
    })
    .err()
    .unwrap()
    .to_string();
    assert!(
        err.contains(target) && err.contains("I32") && err.contains("not supported"),
        "{err}"
    );
}

#[test]
fn bf16_and_f16_tensors_load() {
    let w = load_edited("half", false, |s| {
        for t in s.iter_mut() {
            t.dtype = if t.name.contains("experts") {
                "BF16"
            } else {
                "F16"
            };
        }
    })
    .unwrap();
    assert_eq!(
        w.layers[0].moe.experts[0].gate_proj.dtype(),
        lily_model::DType::BF16
    );
    assert_eq!(w.lm_head.dtype(), lily_model::DType::F16);
}

#[test]
fn truncated_and_corrupt_files_are_refused() {
    let dir = TempDir::new("broken");
    let c = config();
    let path = dir.0.join("model.safetensors");
    write_safetensors(&path, &checkpoint_tensors(&c, true));
    let bytes = std::fs::read(&path).unwrap();

    std::fs::write(&path, &bytes[..bytes.len() - 100]).unwrap();
    let err = Weights::load(&dir.0, &c).err().unwrap().to_string();
    assert!(
        err.contains("model.safetensors") && err.contains("not a valid safetensors file"),
        "{err}"
    );

    let mut corrupt = bytes.clone();
    corrupt[8..16].copy_from_slice(b"garbage!");
    std::fs::write(&path, &corrupt).unwrap();
    let err = Weights::load(&dir.0, &c).err().unwrap().to_string();
    assert!(err.contains("not a valid safetensors file"), "{err}");

    std::fs::write(&path, [1u8, 2, 3]).unwrap();
    assert!(Weights::load(&dir.0, &c).is_err());

    std::fs::remove_file(&path).unwrap();
    let err = Weights::load(&dir.0, &c).err().unwrap().to_string();
    assert!(err.contains("no weights found"), "{err}");
}

/// The tensors the official FP8 release stores in e4m3: every 2-D (or fused 3-D) projection
/// except embeddings, lm_head, the router, shared_expert_gate and GDN's in_proj_a / in_proj_b.
fn is_fp8_in_release(name: &str) -> bool {
    let keep_bf16 = [
        "embed_tokens",
        "lm_head",
        "mlp.gate.",
        "shared_expert_gate",
        "in_proj_a",
        "in_proj_b",
        "conv1d",
    ];
    ((name.contains("proj") && name.ends_with(".weight"))
        || name.ends_with("experts.gate_up_proj")
        || name.ends_with("experts.down_proj"))
        && !keep_bf16.iter().any(|k| name.contains(k))
}

/// Turns the release's FP8 tensors of `specs` into F8_E4M3 with F32 scales in blocks of `block`.
fn to_fp8(specs: &mut Vec<Spec>, block: [usize; 2]) {
    let mut scales = Vec::new();
    for s in specs.iter_mut().filter(|s| is_fp8_in_release(&s.name)) {
        s.dtype = "F8_E4M3";
        scales.push(Spec {
            name: format!("{}_scale_inv", s.name),
            shape: lily_model::tensor::scale_shape(&s.shape, block),
            dtype: "F32",
        });
    }
    specs.extend(scales);
}

fn fp8_config(block: [usize; 2]) -> Config {
    let mut c = config();
    c.quantization = Some(Fp8Quantization { block });
    c
}

/// A one-file FP8 checkpoint (blocks of `block`) after `edit`, loaded with `config`.
fn load_fp8(
    tag: &str,
    fused: bool,
    block: [usize; 2],
    config: &Config,
    edit: impl FnOnce(&mut Vec<Spec>),
) -> Result<Weights, ModelError> {
    let dir = TempDir::new(tag);
    let mut specs = checkpoint_tensors(config, fused);
    to_fp8(&mut specs, block);
    edit(&mut specs);
    write_safetensors(&dir.0.join("model.safetensors"), &specs);
    Weights::load(&dir.0, config)
}

/// Per-expert and fused FP8 checkpoints with ragged blocks load; each expert view reads its own
/// bytes times its own block's scale (element k of a file tensor is byte k, scale k has bits k).
#[test]
fn fp8_checkpoints_load_with_their_block_scales() {
    let (im, h) = (32usize, 64usize);
    for (fused, block, scale_dtype) in [
        (false, [20, 24], "F32"),
        (true, [16, 24], "BF16"),
        (true, [32, 128], "F32"),
    ] {
        let c = fp8_config(block);
        let w = load_fp8("fp8", fused, block, &c, |specs| {
            for s in specs.iter_mut().filter(|s| s.name.ends_with("_scale_inv")) {
                s.dtype = scale_dtype;
            }
        })
        .unwrap_or_else(|e| panic!("{e}"));
        let layer = &w.layers[0];
        assert_eq!(w.embed_tokens.dtype(), DType::F32);
        assert_eq!(layer.moe.router.dtype(), DType::F32);
        assert!(layer.moe.router.block_scale().is_none());
        let up = &layer.moe.experts[3].up_proj;
        assert_eq!(up.dtype(), DType::F8E4M3);
        let scale = up.block_scale().unwrap();
        assert_eq!(scale.block, block);
        assert_eq!(
            scale.scale_inv.shape(),
            &[im.div_ceil(block[0]), h.div_ceil(block[1])]
        );
        let got = up.to_f32_vec();
        for (r, col) in [(0, 0), (5, 23), (17, 24), (31, 63)] {
            // Where expert 3's up rows sit in the file tensor and in its scales.
            let (byte, scale_at) = if fused {
                let (sr, sc) = ((2 * im).div_ceil(block[0]), h.div_ceil(block[1]));
                (
                    3 * 2 * im * h + (im + r) * h + col,
                    (3 * sr + (im + r) / block[0]) * sc + col / block[1],
                )
            } else {
                (
                    r * h + col,
                    (r / block[0]) * h.div_ceil(block[1]) + col / block[1],
                )
            };
            let scale = match scale_dtype {
                "F32" => f32::from_bits(scale_at as u32),
                _ => bf16_to_f32(scale_at as u16),
            };
            let want = e4m3_to_f32(byte as u8) * scale;
            assert_eq!(
                got[r * h + col].to_bits(),
                want.to_bits(),
                "fused {fused} ({r}, {col})"
            );
        }
        let qkv = match &layer.mixer {
            lily_model::weights::MixerWeights::LinearAttention(g) => g,
            _ => unreachable!("layer 0 is GDN"),
        };
        assert_eq!(qkv.in_proj_qkv.dtype(), DType::F8E4M3);
        assert_eq!(qkv.in_proj_a.dtype(), DType::F32);
    }
}

fn fp8_error(
    tag: &str,
    fused: bool,
    block: [usize; 2],
    edit: impl FnOnce(&mut Vec<Spec>),
) -> String {
    load_fp8(tag, fused, block, &fp8_config(block), edit)
        .err()
        .expect("must be refused")
        .to_string()
}

#[test]
fn broken_fp8_checkpoints_are_refused_naming_the_tensor() {
    let w = "model.layers.1.linear_attn.out_proj.weight";
    let scale = "model.layers.1.linear_attn.out_proj.weight_scale_inv";
    let err = fp8_error("fp8-noscale", false, [16, 16], |s| {
        s.retain(|t| t.name != scale)
    });
    assert!(
        err.contains(w) && err.contains(scale) && err.contains("missing"),
        "{err}"
    );

    let err = fp8_error("fp8-scaleshape", false, [16, 16], |s| {
        s.iter_mut().find(|t| t.name == scale).unwrap().shape = vec![4, 3];
    });
    assert!(
        err.contains(w) && err.contains("[4, 3]") && err.contains("expected [4, 4]"),
        "{err}"
    );

    let err = fp8_error("fp8-scaledtype", false, [16, 16], |s| {
        s.iter_mut().find(|t| t.name == scale).unwrap().dtype = "F16";
    });
    assert!(
        err.contains(scale) && err.contains("F16") && err.contains("F32 or BF16"),
        "{err}"
    );

    let err = fp8_error("fp8-scaledtype-i32", false, [16, 16], |s| {
        s.iter_mut().find(|t| t.name == scale).unwrap().dtype = "I32";
    });
    assert!(err.contains(scale) && err.contains("I32"), "{err}");

    // Scales beside a weight that is not FP8.
    let router = "model.layers.2.mlp.gate.weight";
    let err = fp8_error("fp8-orphan", false, [16, 16], |s| {
        s.push(Spec {
            name: format!("{router}_scale_inv"),
            shape: vec![1, 4],
            dtype: "F32",
        })
    });
    assert!(
        err.contains(&format!("{router}_scale_inv")) && err.contains("is F32"),
        "{err}"
    );

    let err = fp8_error("fp8-e5m2", false, [16, 16], |s| {
        s.iter_mut().find(|t| t.name == w).unwrap().dtype = "F8_E5M2";
    });
    assert!(
        err.contains(w) && err.contains("F8_E5M2") && err.contains("not supported"),
        "{err}"
    );

    // Fused gate|up whose up half would start inside a block of scales.
    let err = fp8_error("fp8-fusedcut", true, [24, 16], |_| {});
    assert!(
        err.contains("experts.gate_up_proj") && err.contains("multiple of the block rows (24)"),
        "{err}"
    );

    // FP8 tensors in a checkpoint whose config declares no quantisation.
    let dir = TempDir::new("fp8-noconfig");
    let c = config();
    let mut specs = checkpoint_tensors(&c, false);
    to_fp8(&mut specs, [16, 16]);
    write_safetensors(&dir.0.join("model.safetensors"), &specs);
    let err = Weights::load(&dir.0, &c).err().unwrap().to_string();
    assert!(
        err.contains("F8_E4M3") && err.contains("no quantization_config"),
        "{err}"
    );
}

#[test]
fn quantization_config_is_validated_by_field() {
    let with = |q: serde_json::Value| {
        let mut v: serde_json::Value = serde_json::from_str(TEXT_ONLY).unwrap();
        v["quantization_config"] = q;
        Config::from_json(&v.to_string(), Path::new("config.json"))
    };
    let official = serde_json::json!({"quant_method": "fp8", "fmt": "e4m3", "activation_scheme": "dynamic",
        "weight_block_size": [128, 128], "modules_to_not_convert": ["lm_head"]});
    assert_eq!(
        with(official.clone()).unwrap().quantization,
        Some(Fp8Quantization { block: [128, 128] })
    );
    assert_eq!(config().quantization, None);
    for (field, value, expected) in [
        ("quant_method", serde_json::json!("gptq"), "\"fp8\""),
        (
            "fmt",
            serde_json::json!("e5m2"),
            "e5m2 weights are not supported",
        ),
        (
            "activation_scheme",
            serde_json::json!("static"),
            "\"dynamic\"",
        ),
        (
            "weight_block_size",
            serde_json::json!([128]),
            "two positive block sizes",
        ),
        (
            "weight_block_size",
            serde_json::json!([0, 128]),
            "two positive block sizes",
        ),
        (
            "weight_block_size",
            serde_json::Value::Null,
            "per-tensor FP8 is not supported",
        ),
    ] {
        let mut q = official.clone();
        q[field] = value;
        let err = with(q).err().unwrap().to_string();
        assert!(
            err.contains(&format!("quantization_config.{field}")) && err.contains(expected),
            "{field}: {err}"
        );
    }
}
