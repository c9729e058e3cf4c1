//! `lily generate`: generation from a prompt (CUDA or the CPU reference), greedy or sampled
//! (temperature, top-k, top-p, min-p, seed; on CUDA the draw runs on the GPU), streaming text
//! (or token ids) to stdout as tokens are produced and reporting prefill and decode speed on
//! stderr.
//!
//! A text prompt becomes one user message rendered through the checkpoint's chat template and
//! encoded with its tokenizer. A checkpoint without tokenizer files still runs from
//! `--prompt-ids`, printing ids.

use std::io::Write;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;
use lily_cpu::CpuModel;
use lily_cuda::CudaBackend;
use lily_engine::sampling::{Sampler, SamplingParams};
use lily_engine::{generate, GenerateOptions, Pick};
use lily_model::{Backend, ChatOptions, ChatTemplate, Config, Message, PickRule, Tokenizer, Weights};

use crate::backend_choice::{self, BackendKind, RunOn};

/// Embedding rows of the real Qwen3.6 checkpoints (248,077 token ids padded to 248,320). A
/// checkpoint of this vocabulary without a tokenizer.json is taken to be Qwen3.6, whose
/// tokenizer is committed; a smaller test checkpoint's ids mean something else.
const QWEN3_6_VOCAB_SIZE: usize = 248_320;

#[derive(Args)]
pub struct GenerateArgs {
    /// Checkpoint directory (config.json + safetensors; tokenizer.json for --prompt), or a
    /// Hugging Face repo id in the local hub cache.
    #[arg(long, env = "LILY_MODEL", value_parser = crate::hub::model_dir)]
    model: PathBuf,
    /// Prompt text, sent as one user chat message.
    #[arg(
        long,
        conflicts_with = "prompt_ids",
        required_unless_present = "prompt_ids"
    )]
    prompt: Option<String>,
    /// Prompt as comma-separated token ids, used as they are (no chat template).
    #[arg(long, value_delimiter = ',')]
    prompt_ids: Option<Vec<u32>>,
    /// Most tokens to generate.
    #[arg(long, default_value_t = 256)]
    max_tokens: usize,
    /// Turn thinking off in the chat template (only with --prompt).
    #[arg(long)]
    no_think: bool,
    /// Print generated token ids instead of text (stop id included).
    #[arg(long)]
    print_ids: bool,
    /// Which backend runs the model.
    #[arg(long, env = "LILY_BACKEND", value_enum, default_value_t = BackendKind::Auto)]
    backend: BackendKind,
    /// Sampling temperature; 0 is greedy.
    #[arg(long, default_value_t = 0.0)]
    temperature: f32,
    /// Keep the smallest set of tokens whose probability reaches this (1: off).
    #[arg(long, default_value_t = 1.0)]
    top_p: f32,
    /// Keep the k most likely tokens (0: off).
    #[arg(long, default_value_t = 0)]
    top_k: usize,
    /// Drop tokens less likely than this times the most likely one (0: off).
    #[arg(long, default_value_t = 0.0)]
    min_p: f32,
    /// Seed of the draws (the same seed gives the same tokens); default: from the clock.
    #[arg(long)]
    seed: Option<u64>,
}

impl GenerateArgs {
    fn sampling(&self) -> anyhow::Result<SamplingParams> {
        if !(self.temperature.is_finite() && self.temperature >= 0.0) {
            bail!("--temperature must be a number >= 0, got {}", self.temperature);
        }
        if !(self.top_p > 0.0 && self.top_p <= 1.0) {
            bail!("--top-p must be in (0, 1], got {}", self.top_p);
        }
        if !(0.0..=1.0).contains(&self.min_p) {
            bail!("--min-p must be in [0, 1], got {}", self.min_p);
        }
        Ok(SamplingParams {
            temperature: self.temperature,
            top_p: self.top_p,
            top_k: self.top_k,
            min_p: self.min_p,
            seed: self.seed,
            ..SamplingParams::default()
        })
    }
}

/// The CLI's token choice: every token under the sampler's rule, picked where the logits are.
struct Draw(Sampler);

impl Pick for Draw {
    fn rule(&mut self) -> Option<PickRule> {
        self.0.backend_rule()
    }
    fn pick(&mut self, logits: &[f32]) -> u32 {
        self.0.pick(logits, None)
    }
}

pub fn run(args: GenerateArgs) -> anyhow::Result<()> {
    let sampling = args.sampling()?;
    let dir = &args.model;
    let config = Config::load(dir).with_context(|| format!("loading {}", dir.display()))?;
    // The tokenizer is found before the weights load, so that a missing one fails at once.
    let tokenizer = if args.prompt.is_some() || !args.print_ids {
        find_tokenizer(dir, &config)?
    } else {
        None
    };
    let prompt = match (&args.prompt, &args.prompt_ids) {
        (_, Some(ids)) => {
            if args.no_think {
                tracing::warn!(
                    "--no-think only applies to --prompt; --prompt-ids are used as given"
                );
            }
            ids.clone()
        }
        (Some(text), None) => {
            let Some(tokenizer) = &tokenizer else {
                bail!(
                    "--prompt needs a tokenizer: {} does not exist, and the checkpoint's vocabulary \
                     ({} ids) is not Qwen3.6's ({QWEN3_6_VOCAB_SIZE}), so the built-in Qwen3.6 \
                     tokenizer does not apply; pass token ids with --prompt-ids",
                    dir.join("tokenizer.json").display(),
                    config.vocab_size
                );
            };
            let template = find_chat_template(dir)?;
            chat_prompt(tokenizer, &template, text, !args.no_think)?
        }
        (None, None) => bail!("give --prompt or --prompt-ids"),
    };
    if prompt.is_empty() {
        bail!("the prompt is empty");
    }
    if let Some(&bad) = prompt.iter().find(|&&t| t as usize >= config.vocab_size) {
        bail!(
            "prompt token {bad} is outside the vocabulary (size {})",
            config.vocab_size
        );
    }
    let text_tokenizer = match (&tokenizer, args.print_ids) {
        (Some(t), false) => Some(t),
        (None, false) => {
            tracing::warn!(
                "{} has no tokenizer.json: printing token ids",
                dir.display()
            );
            None
        }
        (_, true) => None,
    };

    let backend = backend_choice::resolve(args.backend, &config)?;
    let weights =
        Weights::load(dir, &config).with_context(|| format!("loading {}", dir.display()))?;
    match backend {
        RunOn::Cuda(gpu) => {
            let model = CudaBackend::from_weights(gpu, &config, &weights)
                .with_context(|| format!("loading {} onto the GPU", dir.display()))?;
            stream_generation(&model, &config, &prompt, text_tokenizer, args.max_tokens, sampling)
        }
        RunOn::Cpu => {
            let model = CpuModel::new(config.clone(), weights);
            stream_generation(&model, &config, &prompt, text_tokenizer, args.max_tokens, sampling)
        }
    }
}

/// Generates on `model` under `sampling`, writing each token (as text or as its id) as it comes.
fn stream_generation<B: Backend>(
    model: &B,
    config: &Config,
    prompt: &[u32],
    text_tokenizer: Option<&Tokenizer>,
    max_tokens: usize,
    sampling: SamplingParams,
) -> anyhow::Result<()>
where
    B::Error: Send + Sync + 'static,
{
    let max_seq = (prompt.len() + max_tokens).min(config.max_position_embeddings.max(prompt.len()));
    let options = GenerateOptions {
        max_tokens,
        stop_ids: config.eos_token_ids.clone(),
    };
    tracing::info!(
        "prompt {} tokens, up to {} new, stop ids {:?}",
        prompt.len(),
        max_tokens,
        options.stop_ids
    );

    let mut seq = model.new_sequence(max_seq)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut decoder = text_tokenizer.map(Tokenizer::stream_decoder);
    let mut stream_error: Option<anyhow::Error> = None;
    let stats = generate(
        model,
        &mut seq,
        prompt,
        max_seq,
        &options,
        &mut Draw(Sampler::new(sampling)),
        |token| {
            let written = match &mut decoder {
                // The stop token ends the answer; it is not part of its text.
                Some(_) if options.stop_ids.contains(&token) => Ok(()),
                Some(decoder) => decoder
                    .push(token)
                    .with_context(|| format!("decoding generated token {token}"))
                    .and_then(|text| Ok(write!(out, "{text}")?)),
                None => write!(out, "{token} ").context("writing to stdout"),
            };
            match written.and_then(|()| Ok(out.flush()?)) {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    stream_error = Some(e);
                    ControlFlow::Break(())
                }
            }
        },
    )?;
    if let Some(e) = stream_error {
        return Err(e);
    }
    if let Some(decoder) = decoder {
        write!(out, "{}", decoder.finish())?;
    }
    writeln!(out)?;
    eprintln!(
        "prefill: {} tokens in {:.3}s ({:.1} tok/s); decode: {} tokens in {:.3}s ({:.1} tok/s); stop: {:?}",
        stats.prompt_tokens,
        stats.prefill_time.as_secs_f64(),
        stats.prefill_tokens_per_s(),
        stats.generated_tokens.saturating_sub(1),
        stats.decode_time.as_secs_f64(),
        stats.decode_tokens_per_s(),
        stats.stop,
    );
    Ok(())
}

/// The checkpoint's `tokenizer.json`; without one, the committed Qwen3.6 tokenizer when the
/// checkpoint has Qwen3.6's vocabulary; otherwise none.
fn find_tokenizer(dir: &Path, config: &Config) -> anyhow::Result<Option<Tokenizer>> {
    let path = dir.join("tokenizer.json");
    if path.exists() {
        return Ok(Some(Tokenizer::from_tokenizer_json(&path)?));
    }
    if config.vocab_size == QWEN3_6_VOCAB_SIZE {
        tracing::info!(
            "{} not found; using the built-in Qwen3.6 tokenizer (the checkpoint has its {QWEN3_6_VOCAB_SIZE}-id vocabulary)",
            path.display()
        );
        return Ok(Some(Tokenizer::qwen3_6()));
    }
    Ok(None)
}

/// The checkpoint's chat template (`chat_template.jinja`, else `tokenizer_config.json`); the
/// committed Qwen3.6 template when it has neither file.
fn find_chat_template(dir: &Path) -> anyhow::Result<ChatTemplate> {
    let files = ["chat_template.jinja", "tokenizer_config.json"];
    if files.iter().any(|f| dir.join(f).exists()) {
        return Ok(ChatTemplate::from_model_dir(dir)?);
    }
    tracing::info!(
        "{} has neither {}; using the built-in Qwen3.6 chat template",
        dir.display(),
        files.join(" nor ")
    );
    Ok(ChatTemplate::qwen3_6())
}

/// The ids of `text` as one user message, ready for the assistant's turn.
fn chat_prompt(
    tokenizer: &Tokenizer,
    template: &ChatTemplate,
    text: &str,
    think: bool,
) -> anyhow::Result<Vec<u32>> {
    let options = ChatOptions {
        enable_thinking: think,
        ..ChatOptions::default()
    };
    let rendered = template.render(&[Message::new("user", text)], &[], &options)?;
    Ok(tokenizer.encode(&rendered))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// transformers' `apply_chat_template` ids for this message with the real tokenizer
    /// (thinking on: the known ids of docs/DESIGN.md §1).
    #[test]
    fn chat_prompt_matches_the_reference_ids() {
        let tokenizer = Tokenizer::qwen3_6();
        let template = ChatTemplate::qwen3_6();
        let text = "Name the two colors of a chessboard.";
        let user = [
            248045, 846, 198, 657, 279, 1330, 7736, 314, 264, 31634, 2402, 13, 248046, 198,
        ];
        let assistant = [248045, 74455, 198];
        let think = chat_prompt(&tokenizer, &template, text, true).unwrap();
        assert_eq!(think, [&user[..], &assistant, &[248068, 198]].concat());
        let no_think = chat_prompt(&tokenizer, &template, text, false).unwrap();
        assert_eq!(
            no_think,
            [&user[..], &assistant, &[248068, 271, 248069, 271]].concat()
        );
    }
}
