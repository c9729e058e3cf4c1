//! Config parsing and validation: both checkpoint layouts are read, and each way of being the
//! wrong architecture is refused with the offending field named.

use std::path::Path;

use lily_model::config::{CheckpointLayout, Config, LayerKind};
use serde_json::Value;

const OFFICIAL: &str = include_str!("data/qwen3_6_35b_a3b_config.json");
const TEXT_ONLY: &str = include_str!("data/tiny_text_only_config.json");

fn parse(text: &str) -> Result<Config, String> {
    Config::from_json(text, Path::new("config.json")).map_err(|e| e.to_string())
}

/// Edits a parsed config, re-serialises it and returns the parse error.
fn rejected(base: &str, edit: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(base).unwrap();
    edit(&mut v);
    parse(&v.to_string()).expect_err("config should be rejected")
}

#[test]
fn official_wrapper_config_gives_the_35b_shapes() {
    let c = parse(OFFICIAL).unwrap();
    assert_eq!(c.layout, CheckpointLayout::VisionLanguage);
    assert_eq!(
        (c.vocab_size, c.hidden_size, c.num_layers()),
        (248320, 2048, 40)
    );
    let full: Vec<usize> = (0..40)
        .filter(|&i| c.layer_kinds[i] == LayerKind::FullAttention)
        .collect();
    assert_eq!(full, (0..10).map(|i| 4 * i + 3).collect::<Vec<_>>());
    assert_eq!(
        (
            c.attention.num_heads,
            c.attention.num_kv_heads,
            c.attention.head_dim
        ),
        (16, 2, 256)
    );
    assert_eq!(c.attention.rotary_dim, 64);
    assert_eq!(c.attention.rope_theta, 1e7);
    assert_eq!(c.linear.conv_dim(), 8192);
    assert_eq!(
        (
            c.moe.num_experts,
            c.moe.experts_per_token,
            c.moe.expert_intermediate
        ),
        (256, 8, 512)
    );
    assert!(!c.tie_word_embeddings);
    assert_eq!(c.eos_token_ids, vec![248044]);
}

#[test]
fn generation_config_stop_ids_come_first_and_merge() {
    let dir = std::env::temp_dir().join(format!("lily-config-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("config.json"), OFFICIAL).unwrap();
    std::fs::write(
        dir.join("generation_config.json"),
        include_str!("data/qwen3_6_35b_a3b_generation_config.json"),
    )
    .unwrap();
    let c = Config::load(&dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(c.eos_token_ids, vec![248046, 248044]);
}

#[test]
fn text_only_save_is_read_with_the_model_prefix() {
    let c = parse(TEXT_ONLY).unwrap();
    assert_eq!(c.layout, CheckpointLayout::TextOnly);
    assert_eq!(c.layout.text_prefix(), "model.");
    assert_eq!(c.layer_kinds[3], LayerKind::FullAttention);
    assert_eq!(c.attention.rotary_dim, 8);
    assert_eq!(c.linear.conv_dim(), 2 * 32 + 64);
    assert!(c.eos_token_ids.is_empty());
}

#[test]
fn missing_layer_types_fall_back_to_every_fourth_layer() {
    let mut v: Value = serde_json::from_str(TEXT_ONLY).unwrap();
    v.as_object_mut().unwrap().remove("layer_types");
    v["num_hidden_layers"] = 8.into();
    let c = parse(&v.to_string()).unwrap();
    let full: Vec<usize> = (0..8)
        .filter(|&i| c.layer_kinds[i] == LayerKind::FullAttention)
        .collect();
    assert_eq!(full, vec![3, 7]);
}

#[test]
fn wrong_architectures_are_refused_naming_the_field() {
    type Edit = Box<dyn FnOnce(&mut Value)>;
    let cases: Vec<(&str, Edit)> = vec![
        (
            "model_type",
            Box::new(|v| v["model_type"] = "qwen3_next".into()),
        ),
        ("hidden_act", Box::new(|v| v["hidden_act"] = "gelu".into())),
        (
            "layer_types[1]",
            Box::new(|v| v["layer_types"][1] = "sliding_attention".into()),
        ),
        (
            "layer_types",
            Box::new(|v| v["num_hidden_layers"] = 5.into()),
        ),
        (
            "rope_parameters.mrope_section",
            Box::new(|v| v["rope_parameters"]["mrope_section"] = serde_json::json!([2, 2, 1])),
        ),
        (
            "rope_parameters.rope_type",
            Box::new(|v| v["rope_parameters"]["rope_type"] = "yarn".into()),
        ),
        (
            "num_experts_per_tok",
            Box::new(|v| v["num_experts_per_tok"] = 9.into()),
        ),
        (
            "num_attention_heads",
            Box::new(|v| v["num_key_value_heads"] = 3.into()),
        ),
        (
            "linear_num_value_heads",
            Box::new(|v| v["linear_num_value_heads"] = 3.into()),
        ),
        (
            "hidden_size",
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("hidden_size");
            }),
        ),
        ("head_dim", Box::new(|v| v["head_dim"] = (-4).into())),
        (
            "attention_bias",
            Box::new(|v| v["attention_bias"] = true.into()),
        ),
    ];
    for (field, edit) in cases {
        let err = rejected(TEXT_ONLY, edit);
        assert!(err.contains(&format!("field `{field}`")), "{field}: {err}");
    }
    let err = rejected(OFFICIAL, |v| {
        v["text_config"]["layer_types"][0] = "mamba".into()
    });
    assert!(
        err.contains("field `text_config.layer_types[0]`") && err.contains("\"mamba\""),
        "{err}"
    );
    let err = rejected(OFFICIAL, |v| {
        v["text_config"]["rope_parameters"]["partial_rotary_factor"] = 1.5.into()
    });
    assert!(
        err.contains("text_config.rope_parameters.partial_rotary_factor"),
        "{err}"
    );
}
