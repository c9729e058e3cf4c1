//! `lily quantize --fp8` against the independent reference quantiser
//! (scripts/fixtures/quantize_fp8.py, numpy + ml_dtypes) byte for byte, tensors and scales, on
//! the golden fixtures (per-expert and fused experts, f32 and bf16, one file and shards, ragged
//! blocks); the committed FP8 fixture is what the command writes today; the FP8 checkpoint
//! generates end to end; bad input is refused with a clear message.
//! The reference runs under `$LILY_TEST_PYTHON` (set by scripts/test.sh, which installs numpy and
//! ml_dtypes) or `python3`; without them the byte comparison says so and passes, except under
//! CI (`CI` set), where it fails.

use std::path::{Path, PathBuf};
use std::process::Command;

use lily_model::weights::Checkpoint;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../cpu/tests/fixtures")
        .join(name)
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A fresh temporary directory, removed when dropped.
struct TempDir(PathBuf);
impl TempDir {
    fn new(tag: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("lily-quantize-{tag}-{}", std::process::id()));
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

fn lily(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lily"))
        .args(args)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

fn quantize(input: &Path, output: &Path, extra: &[&str]) {
    let mut args = vec![
        "quantize",
        "--fp8",
        input.to_str().unwrap(),
        output.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let (ok, _, stderr) = lily(&args);
    assert!(ok, "{stderr}");
    assert!(stderr.contains("quantize: 100%"), "{stderr}");
}

/// The Python with numpy and ml_dtypes, or None (with a message) where there is none.
fn reference_python() -> Option<String> {
    let python = std::env::var("LILY_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let ok = Command::new(&python)
        .args(["-c", "import numpy, ml_dtypes"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must provide `{python}` with numpy and ml_dtypes (scripts/test-requirements.txt)"
        );
        eprintln!("skipping: `{python}` cannot import numpy and ml_dtypes (pip install ml_dtypes, or set LILY_TEST_PYTHON)");
        return None;
    }
    Some(python)
}

/// Every tensor of two checkpoint directories is the same: names, dtypes, shapes and bytes.
fn assert_same_tensors(ours: &Path, reference: &Path) {
    let (a, b) = (
        Checkpoint::open_with_vision(ours).unwrap(),
        Checkpoint::open_with_vision(reference).unwrap(),
    );
    assert_eq!(a.names(), b.names());
    for name in a.names() {
        let (x, y) = (a.get(name).unwrap(), b.get(name).unwrap());
        assert_eq!((x.dtype(), x.shape()), (y.dtype(), y.shape()), "{name}");
        assert!(x.bytes() == y.bytes(), "{name}: bytes differ");
    }
}

#[test]
fn matches_the_python_reference_byte_for_byte() {
    let Some(python) = reference_python() else {
        return;
    };
    for (name, block, shard_bytes) in [
        ("linear3_full1", "16x24", "200000"),
        ("full_first_official", "16x24", "4000000000"),
        ("two_full_bf16", "128x128", "4000000000"),
    ] {
        let out = TempDir::new(&format!("ours-{name}"));
        let ours = out.0.join("fp8");
        quantize(
            &fixture(name),
            &ours,
            &["--block", block, "--max-shard-bytes", shard_bytes],
        );
        let reference = TempDir::new(&format!("ref-{name}"));
        let status = Command::new(&python)
            .arg(root().join("scripts/fixtures/quantize_fp8.py"))
            .arg(fixture(name))
            .arg(reference.0.join("model.safetensors"))
            .args(["--block", block])
            .status()
            .unwrap();
        assert!(status.success(), "{name}: reference quantiser failed");
        assert_same_tensors(&ours, &reference.0);
        let ck = Checkpoint::open_with_vision(&ours).unwrap();
        let fp8 = ck
            .names()
            .iter()
            .filter(|n| ck.get(n).unwrap().dtype() == lily_model::DType::F8E4M3)
            .count();
        eprintln!(
            "{name}: {} tensors ({fp8} FP8) identical to the reference",
            ck.names().len()
        );
        assert!(fp8 > 0);
    }
}

/// config.json gains the release's `quantization_config`, `modules_to_not_convert` names every
/// weight left as it was, the other files are copied, and a sharded output has an index that
/// covers every tensor.
#[test]
fn writes_the_config_index_and_other_files() {
    let out = TempDir::new("layout");
    let dir = out.0.join("fp8");
    let src = fixture("linear3_full1");
    quantize(&src, &dir, &["--max-shard-bytes", "100000"]);
    let config: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("config.json")).unwrap()).unwrap();
    let q = &config["quantization_config"];
    assert_eq!(q["quant_method"], "fp8");
    assert_eq!(q["fmt"], "e4m3");
    assert_eq!(q["activation_scheme"], "dynamic");
    assert_eq!(q["weight_block_size"], serde_json::json!([128, 128]));
    let kept: Vec<&str> = q["modules_to_not_convert"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    for module in [
        "lm_head",
        "model.embed_tokens",
        "model.layers.0.mlp.gate",
        "model.layers.0.mlp.shared_expert_gate",
        "model.layers.0.linear_attn.in_proj_a",
        "model.layers.0.linear_attn.in_proj_b",
        "model.layers.0.linear_attn.conv1d",
        "model.norm",
    ] {
        assert!(kept.contains(&module), "{module} missing from {kept:?}");
    }
    assert!(!kept
        .iter()
        .any(|m| m.ends_with("_proj") || m.ends_with("in_proj_qkv")));
    assert_eq!(config["hidden_size"], 64);
    assert_eq!(
        std::fs::read(dir.join("generation_config.json")).unwrap(),
        std::fs::read(src.join("generation_config.json")).unwrap()
    );
    let index: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("model.safetensors.index.json")).unwrap(),
    )
    .unwrap();
    let map = index["weight_map"].as_object().unwrap();
    let shards: std::collections::BTreeSet<&str> =
        map.values().map(|v| v.as_str().unwrap()).collect();
    assert!(shards.len() > 1, "{shards:?}");
    let ck = Checkpoint::open(&dir).unwrap();
    assert_eq!(map.len(), ck.names().len());
    assert!(map.contains_key("model.layers.0.mlp.experts.3.up_proj.weight_scale_inv"));
}

/// The committed fixture (crates/cpu/tests/fixtures/linear3_full1_fp8) is what
/// `lily quantize --fp8` writes from linear3_full1 today.
#[test]
fn the_committed_fp8_fixture_is_current() {
    let out = TempDir::new("fixture");
    let dir = out.0.join("fp8");
    quantize(&fixture("linear3_full1"), &dir, &[]);
    let committed = fixture("linear3_full1_fp8");
    for file in ["model.safetensors", "config.json", "generation_config.json"] {
        assert!(
            std::fs::read(dir.join(file)).unwrap() == std::fs::read(committed.join(file)).unwrap(),
            "{file} differs: regenerate the fixture with `lily quantize --fp8 \
             crates/cpu/tests/fixtures/linear3_full1 crates/cpu/tests/fixtures/linear3_full1_fp8` \
             (then remove the copied golden.*)"
        );
    }
}

/// `lily generate` on the FP8 checkpoint streams the CPU reference's greedy continuation.
#[test]
fn generate_runs_on_the_fp8_checkpoint() {
    use lily_engine::{generate, GenerateOptions, Greedy};
    let dir = fixture("linear3_full1_fp8");
    let prompt = [5u32, 17, 99, 3, 200, 41];
    let ids: Vec<String> = prompt.iter().map(|t| t.to_string()).collect();
    let (ok, stdout, stderr) = lily(&[
        "generate",
        "--model",
        dir.to_str().unwrap(),
        "--prompt-ids",
        &ids.join(","),
        "--max-tokens",
        "12",
        "--print-ids",
        "--backend",
        "cpu",
    ]);
    assert!(ok, "{stderr}");
    let got: Vec<u32> = stdout
        .split_whitespace()
        .map(|s| s.parse().unwrap())
        .collect();

    let model = lily_cpu::CpuModel::load(&dir).unwrap();
    let stop_ids = model.config().eos_token_ids.clone();
    let mut seq = lily_model::Backend::new_sequence(&model, prompt.len() + 12).unwrap();
    let mut want = Vec::new();
    generate(
        &model,
        &mut seq,
        &prompt,
        prompt.len() + 12,
        &GenerateOptions {
            max_tokens: 12,
            stop_ids,
        },
        &mut Greedy,
        |t| {
            want.push(t);
            std::ops::ControlFlow::Continue(())
        },
    )
    .unwrap();
    assert!(!got.is_empty());
    assert_eq!(got, want);
}

#[test]
fn bad_input_is_refused_with_a_clear_message() {
    let out = TempDir::new("bad");
    let target = out.0.join("fp8");
    let target = target.to_str().unwrap();
    let src = fixture("linear3_full1");
    let src = src.to_str().unwrap();
    let refused = |args: &[&str], expected: &str| {
        let (ok, _, stderr) = lily(args);
        assert!(!ok && stderr.contains(expected), "{args:?}: {stderr}");
    };
    let missing = out.0.join("no-such-dir");
    refused(
        &["quantize", "--fp8", missing.to_str().unwrap(), target],
        "not a checkpoint directory",
    );
    let fp8 = fixture("linear3_full1_fp8");
    refused(
        &["quantize", "--fp8", fp8.to_str().unwrap(), target],
        "already quantised",
    );
    let busy = out.0.join("busy");
    std::fs::create_dir_all(&busy).unwrap();
    std::fs::write(busy.join("x"), "x").unwrap();
    refused(
        &["quantize", "--fp8", src, busy.to_str().unwrap()],
        "exists and is not empty",
    );
    refused(&["quantize", "--fp8", src, src], "exists and is not empty");
    refused(
        &["quantize", "--fp8", src, target, "--block", "0x128"],
        "ROWSxCOLS",
    );
    refused(&["quantize", src, target], "--fp8");
    assert!(!Path::new(target).exists());
}
