//! Loading weights: both expert storage formats, single file and sharded, and every way a
//! checkpoint can be broken, each refused with an error naming the file and the tensor.

use std::path::{Path, PathBuf};

use lily_model::config::{Config, LayerKind};
use lily_model::{ModelError, Weights};

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
