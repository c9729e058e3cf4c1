//! `lily quantize --fp8 IN OUT`: a BF16 (or F32/F16) checkpoint in, the official FP8 layout out
//! (docs/DESIGN.md §1 "FP8"): the tensors `lily_model::fp8` names in e4m3 with one F32
//! `weight_scale_inv` per 128 x 128 block, fused experts split into one tensor per expert as
//! the release stores them, everything else copied as it is; config.json gains
//! `quantization_config` (with `modules_to_not_convert`: every weight left unconverted), the
//! other files (tokenizer, chat template, generation config) are copied, and large outputs are
//! sharded with a `model.safetensors.index.json`.
//!
//! Streaming: the input is memory-mapped, each output shard's header is planned up front, and
//! tensors are converted and written one at a time, so memory stays at one tensor.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use lily_model::fp8::{converted_in_release, quantize_blocks};
use lily_model::tensor::scale_shape;
use lily_model::weights::{Checkpoint, SCALE_SUFFIX};
use lily_model::writer::{SafetensorsWriter, TensorEntry};
use lily_model::{Config, DType, Tensor};

#[derive(ClapArgs)]
pub struct Args {
    /// Write FP8 (e4m3 weights with block scales, the official release's format); the only
    /// target format, spelled out so that the command says what it makes.
    #[arg(long, required = true)]
    fp8: bool,
    /// Checkpoint directory to read (BF16, F32 or F16 weights).
    input: PathBuf,
    /// Directory to write; must not exist or be empty.
    output: PathBuf,
    /// Block of weights sharing one scale, ROWSxCOLS (the release uses 128x128).
    #[arg(long, default_value = "128x128", value_parser = parse_block)]
    block: [usize; 2],
    /// Largest shard, in bytes; a larger output is split into shards with an index.
    #[arg(long, default_value_t = 4_000_000_000)]
    max_shard_bytes: usize,
}

fn parse_block(text: &str) -> Result<[usize; 2], String> {
    let sizes: Option<Vec<usize>> = text
        .split('x')
        .map(|s| s.parse().ok().filter(|&n| n > 0))
        .collect();
    match sizes.as_deref() {
        Some(&[rows, cols]) => Ok([rows, cols]),
        _ => Err(format!(
            "expected ROWSxCOLS with positive sizes, e.g. 128x128, found {text:?}"
        )),
    }
}

/// One tensor of the input, as it goes out: copied, or converted to e4m3 plus its scales.
struct Item {
    name: String,
    tensor: Tensor,
    convert: bool,
}

impl Item {
    fn entries(&self, block: [usize; 2]) -> Vec<TensorEntry> {
        let shape = self.tensor.shape().to_vec();
        if !self.convert {
            return vec![TensorEntry {
                name: self.name.clone(),
                dtype: self.tensor.dtype(),
                shape,
            }];
        }
        vec![
            TensorEntry {
                name: format!("{}{SCALE_SUFFIX}", self.name),
                dtype: DType::F32,
                shape: scale_shape(&shape, block),
            },
            TensorEntry {
                name: self.name.clone(),
                dtype: DType::F8E4M3,
                shape,
            },
        ]
    }

    fn byte_len(&self, block: [usize; 2]) -> usize {
        self.entries(block).iter().map(TensorEntry::byte_len).sum()
    }

    fn write(&self, out: &mut SafetensorsWriter, block: [usize; 2]) -> anyhow::Result<()> {
        if !self.convert {
            out.write(&self.name, self.tensor.bytes())?;
            return Ok(());
        }
        let values = self.tensor.to_f32_vec();
        let (rows, cols) = (self.tensor.rows(), self.tensor.cols());
        let (quantized, scales) = quantize_blocks(&values, rows, cols, block).map_err(|i| {
            anyhow::anyhow!(
                "tensor `{}`: element ({}, {}) is {}, which FP8 cannot hold",
                self.name,
                i / cols,
                i % cols,
                values[i]
            )
        })?;
        let scale_bytes: Vec<u8> = scales.iter().flat_map(|s| s.to_le_bytes()).collect();
        out.write(&format!("{}{SCALE_SUFFIX}", self.name), &scale_bytes)?;
        out.write(&self.name, &quantized)?;
        Ok(())
    }
}

pub fn run(args: Args) -> anyhow::Result<()> {
    debug_assert!(args.fp8, "clap requires --fp8");
    let (input, output, block) = (&args.input, &args.output, args.block);
    if !input.is_dir() {
        bail!("{}: not a checkpoint directory", input.display());
    }
    let config =
        Config::load(input).with_context(|| format!("{}: reading the config", input.display()))?;
    if config.quantization.is_some() {
        bail!(
            "{}: already quantised (config.json has quantization_config); give a BF16 checkpoint",
            input.display()
        );
    }
    check_output(input, output)?;
    let checkpoint = Checkpoint::open_with_vision(input)?;
    if let Some((name, dtype)) = checkpoint.unsupported().first() {
        bail!(
            "{}: tensor `{name}` has dtype {dtype}; `lily quantize` reads F32, BF16 and F16 checkpoints",
            input.display()
        );
    }
    let items = plan(&checkpoint)?;
    let shards = split_into_shards(&items, block, args.max_shard_bytes);

    std::fs::create_dir_all(output).with_context(|| format!("creating {}", output.display()))?;
    let total: usize = items.iter().map(|i| i.byte_len(block)).sum();
    let converted = items.iter().filter(|i| i.convert).count();
    eprintln!(
        "quantize: {} tensors ({converted} to FP8 in blocks of {}x{}), {:.2} GB in {} shard(s)",
        items.len(),
        block[0],
        block[1],
        total as f64 / 1e9,
        shards.len()
    );
    let mut weight_map = BTreeMap::new();
    let mut progress = Progress::new(total);
    for (number, shard) in shards.iter().enumerate() {
        let file = if shards.len() == 1 {
            "model.safetensors".to_string()
        } else {
            format!("model-{:05}-of-{:05}.safetensors", number + 1, shards.len())
        };
        let entries: Vec<TensorEntry> = shard.iter().flat_map(|i| i.entries(block)).collect();
        let mut writer = SafetensorsWriter::create(&output.join(&file), &entries)?;
        for item in shard {
            item.write(&mut writer, block)?;
            progress.advance(item.byte_len(block), &item.name);
        }
        writer.finish()?;
        for e in entries {
            weight_map.insert(e.name, file.clone());
        }
    }
    if shards.len() > 1 {
        let index = serde_json::json!({
            "metadata": { "total_size": total },
            "weight_map": weight_map,
        });
        write_json(&output.join("model.safetensors.index.json"), &index)?;
    }
    write_config(input, output, &items, block)?;
    copy_other_files(input, output)?;
    eprintln!("quantize: wrote {}", output.display());
    Ok(())
}

/// OUT must be new or an empty directory, and not IN.
fn check_output(input: &Path, output: &Path) -> anyhow::Result<()> {
    if !output.exists() {
        return Ok(());
    }
    if !output.is_dir() {
        bail!("{}: exists and is not a directory", output.display());
    }
    let same = std::fs::canonicalize(input)? == std::fs::canonicalize(output)?;
    let empty = std::fs::read_dir(output)?.next().is_none();
    if same || !empty {
        bail!(
            "{}: exists and is not empty; give a new or empty directory",
            output.display()
        );
    }
    Ok(())
}

/// Every input tensor as it goes out, sorted by name; fused experts (`mlp.experts.gate_up_proj`
/// [E, 2I, H], `mlp.experts.down_proj` [E, H, I]) become `mlp.experts.{e}.{gate,up,down}_proj.weight`.
fn plan(checkpoint: &Checkpoint) -> anyhow::Result<Vec<Item>> {
    let mut items = Vec::new();
    for name in checkpoint.names() {
        let tensor = checkpoint.get(name).expect("listed by names()");
        if tensor.dtype() == DType::F8E4M3 || name.ends_with(SCALE_SUFFIX) {
            bail!("tensor `{name}` is already FP8 (or an FP8 scale); give a BF16 checkpoint");
        }
        let mut push = |name: String, tensor: Tensor| {
            let convert = converted_in_release(&name, tensor.shape());
            items.push(Item {
                name,
                tensor,
                convert,
            });
        };
        let fused = |suffix: &str| {
            name.strip_suffix(suffix)
                .filter(|_| tensor.shape().len() == 3)
        };
        if let Some(prefix) = fused("experts.gate_up_proj") {
            let inter = tensor.shape()[1] / 2;
            for e in 0..tensor.shape()[0] {
                let expert = tensor.index(e);
                push(
                    format!("{prefix}experts.{e}.gate_proj.weight"),
                    expert.slice_rows(0..inter),
                );
                push(
                    format!("{prefix}experts.{e}.up_proj.weight"),
                    expert.slice_rows(inter..2 * inter),
                );
            }
        } else if let Some(prefix) = fused("experts.down_proj") {
            for e in 0..tensor.shape()[0] {
                push(
                    format!("{prefix}experts.{e}.down_proj.weight"),
                    tensor.index(e),
                );
            }
        } else {
            push(name.to_string(), tensor.clone());
        }
    }
    Ok(items)
}

/// Consecutive items grouped into shards of at most `max_bytes` (an item larger than that gets
/// a shard of its own).
fn split_into_shards(items: &[Item], block: [usize; 2], max_bytes: usize) -> Vec<Vec<&Item>> {
    let mut shards: Vec<Vec<&Item>> = vec![Vec::new()];
    let mut size = 0;
    for item in items {
        let len = item.byte_len(block);
        if size + len > max_bytes && !shards.last().is_some_and(Vec::is_empty) {
            shards.push(Vec::new());
            size = 0;
        }
        shards.last_mut().expect("never empty").push(item);
        size += len;
    }
    shards
}

/// config.json with `quantization_config` added, as transformers writes it for fine-grained FP8.
/// `modules_to_not_convert` lists every module whose weight stays unconverted, by full name.
fn write_config(
    input: &Path,
    output: &Path,
    items: &[Item],
    block: [usize; 2],
) -> anyhow::Result<()> {
    let path = input.join("config.json");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let mut config: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: invalid JSON", path.display()))?;
    let not_converted: Vec<&str> = items
        .iter()
        .filter(|i| !i.convert)
        .filter_map(|i| i.name.strip_suffix(".weight"))
        .collect();
    config
        .as_object_mut()
        .with_context(|| format!("{}: not a JSON object", path.display()))?
        .insert(
            "quantization_config".into(),
            serde_json::json!({
                "activation_scheme": "dynamic",
                "fmt": "e4m3",
                "modules_to_not_convert": not_converted,
                "quant_method": "fp8",
                "weight_block_size": block,
            }),
        );
    write_json(&output.join("config.json"), &config)
}

/// Every other file of IN's top level (tokenizer, chat template, generation config, ...).
fn copy_other_files(input: &Path, output: &Path) -> anyhow::Result<()> {
    let weights: Vec<PathBuf> = Checkpoint::shard_files(input)?;
    for entry in std::fs::read_dir(input)? {
        let path = entry?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        let skip = matches!(name, "config.json" | "model.safetensors.index.json")
            || weights.contains(&path)
            || !path.is_file();
        if !skip {
            std::fs::copy(&path, output.join(name))
                .with_context(|| format!("copying {}", path.display()))?;
        }
    }
    Ok(())
}

fn write_json(path: &Path, value: &serde_json::Value) -> anyhow::Result<()> {
    let mut text = serde_json::to_string_pretty(value)?;
    text.push('\n');
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))
}

/// A stderr line each time another 5% of the output bytes is written.
struct Progress {
    total: usize,
    done: usize,
    next_percent: usize,
}

impl Progress {
    fn new(total: usize) -> Progress {
        Progress {
            total: total.max(1),
            done: 0,
            next_percent: 5,
        }
    }

    fn advance(&mut self, bytes: usize, name: &str) {
        self.done += bytes;
        let percent = self.done * 100 / self.total;
        if percent >= self.next_percent {
            eprintln!(
                "quantize: {percent:3}% ({:.2} / {:.2} GB) {name}",
                self.done as f64 / 1e9,
                self.total as f64 / 1e9
            );
            self.next_percent = (percent / 5 + 1) * 5;
        }
    }
}
