//! The CPU reference on an FP8 checkpoint (`tests/fixtures/linear3_full1_fp8`, written by
//! `lily quantize --fp8` from `linear3_full1`; crates/cli/tests/quantize.rs checks that it is
//! what the command writes today).
//!
//! The CPU backend reads FP8 weights through `Tensor::read_f32`, which dequantises each element
//! exactly (e4m3 * block scale, one f32 multiply) and then computes as for any other dtype. So
//! its forward pass must be bitwise the forward pass of the same checkpoint stored as the
//! dequantised f32 values: the same numbers reach the same code. Against the original f32
//! weights the difference is FP8's rounding, measured and bounded here.

use std::path::{Path, PathBuf};

use lily_cpu::{CpuModel, Outputs};
use lily_model::weights::Checkpoint;
use lily_model::writer::{SafetensorsWriter, TensorEntry};
use lily_model::{Backend, Config, DType};

fn fixture_dir(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

fn golden_prompt() -> Vec<u32> {
    let text = std::fs::read_to_string(fixture_dir("linear3_full1").join("golden.json")).unwrap();
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    json["prompt"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap() as u32)
        .collect()
}

fn everything(model: &CpuModel, prompt: &[u32]) -> lily_cpu::ForwardOutput {
    let mut seq = model.new_sequence(prompt.len()).unwrap();
    model
        .forward(&mut seq, prompt, Outputs::Everything)
        .unwrap()
}

/// The FP8 checkpoint in `src` written as f32 (each FP8 tensor dequantised, its scales dropped,
/// `quantization_config` removed) to a fresh directory.
fn dequantised_copy(src: &Path) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lily-fp8-dequantised-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let config = Config::load(src).unwrap();
    let mut ck = Checkpoint::open(src).unwrap();
    ck.attach_block_scales(config.quantization.as_ref())
        .unwrap();
    let names: Vec<String> = ck.names().into_iter().map(String::from).collect();
    let entries: Vec<TensorEntry> = names
        .iter()
        .map(|n| TensorEntry {
            name: n.clone(),
            dtype: DType::F32,
            shape: ck.get(n).unwrap().shape().to_vec(),
        })
        .collect();
    let mut out = SafetensorsWriter::create(&dir.join("model.safetensors"), &entries).unwrap();
    for n in &names {
        let bytes: Vec<u8> = ck
            .get(n)
            .unwrap()
            .to_f32_vec()
            .iter()
            .flat_map(|x| x.to_le_bytes())
            .collect();
        out.write(n, &bytes).unwrap();
    }
    out.finish().unwrap();
    let mut json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(src.join("config.json")).unwrap()).unwrap();
    json.as_object_mut().unwrap().remove("quantization_config");
    std::fs::write(dir.join("config.json"), json.to_string()).unwrap();
    std::fs::copy(
        src.join("generation_config.json"),
        dir.join("generation_config.json"),
    )
    .unwrap();
    dir
}

#[test]
fn fp8_forward_is_bitwise_the_forward_of_its_dequantised_weights() {
    let src = fixture_dir("linear3_full1_fp8");
    let fp8 = CpuModel::load(&src).unwrap();
    let w = fp8.weights();
    assert_eq!(w.layers[0].moe.experts[5].down_proj.dtype(), DType::F8E4M3);
    assert_eq!(w.layers[0].moe.router.dtype(), DType::F32);
    assert_eq!(fp8.config().quantization.unwrap().block, [128, 128]);
    let copy = dequantised_copy(&src);
    let f32_model = CpuModel::load(&copy).unwrap();
    let prompt = golden_prompt();
    let (a, b) = (everything(&fp8, &prompt), everything(&f32_model, &prompt));
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&a.logits), bits(&b.logits));
    for (i, (x, y)) in a.hidden.iter().zip(&b.hidden).enumerate() {
        assert_eq!(bits(x), bits(y), "layer {i}");
    }
    std::fs::remove_dir_all(&copy).unwrap();
}

/// FP8 (3 mantissa bits, 128 x 128 blocks) against the original f32 weights on the golden
/// prompt. Each FP8 matrix is within ~3% of the original (relative Frobenius norm), and the
/// first position's logits move by that order; later positions move more, because this tiny
/// random model amplifies small input changes: its router picks 2 of 8 experts from near-tied
/// logits and its GDN state carries every earlier difference forward, so at a few positions an
/// expert changes and the logits move by their own range (rounding the same weights to bf16,
/// 16 times finer, already moves a few positions by a quarter of their range). So the bounds
/// are on the first position and the median position, with a margin over what FP8 gives, and on
/// greedy agreement; a wrong scale or block moves every position by far more.
#[test]
fn fp8_forward_is_close_to_the_original() {
    let fp8 = CpuModel::load(&fixture_dir("linear3_full1_fp8")).unwrap();
    let original = CpuModel::load(&fixture_dir("linear3_full1")).unwrap();
    let prompt = golden_prompt();
    let (a, b) = (everything(&fp8, &prompt), everything(&original, &prompt));
    let vocab = fp8.vocab_size();
    let argmax = |v: &[f32]| {
        (0..v.len())
            .max_by(|&i, &j| v[i].total_cmp(&v[j]).then(j.cmp(&i)))
            .unwrap()
    };
    let positions = prompt.len();
    let mut agree = 0;
    let mut max_diff = 0.0f32;
    // Per position: max |logit difference| / max |original logit|.
    let mut rel: Vec<f32> = Vec::new();
    for p in 0..positions {
        let (x, y) = (
            &a.logits[p * vocab..(p + 1) * vocab],
            &b.logits[p * vocab..(p + 1) * vocab],
        );
        agree += usize::from(argmax(x) == argmax(y));
        let diff = x
            .iter()
            .zip(y)
            .fold(0.0f32, |m, (u, v)| m.max((u - v).abs()));
        max_diff = max_diff.max(diff);
        rel.push(diff / y.iter().fold(0.0f32, |m, v| m.max(v.abs())));
    }
    let first = rel[0];
    rel.sort_by(f32::total_cmp);
    let median = rel[positions / 2];
    eprintln!(
        "fp8 vs f32 original, {positions} positions: top-1 agreement {agree}/{positions}, \
         max |logit diff| {max_diff:.3}, relative logit error first position {first:.3}, \
         median {median:.3}, worst {:.3}",
        rel[positions - 1]
    );
    assert!(
        first <= 0.15,
        "first position: relative logit error {first}"
    );
    assert!(median <= 0.35, "median relative logit error {median}");
    assert!(
        agree * 5 >= positions * 3,
        "top-1 agreement {agree}/{positions}"
    );
}
