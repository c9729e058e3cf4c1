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
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;
use lily_engine::sampling::{Sampler, SamplingParams};
use lily_engine::GenerateOptions;
use lily_model::text::{chat_prompt, find_chat_template, find_tokenizer, QWEN3_6_VOCAB_SIZE};
use lily_model::{ChatOptions, Config, Message};
use lily_runtime::{BackendKind, Model, Sampled};

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
            let options = ChatOptions {
                enable_thinking: !args.no_think,
                ..ChatOptions::default()
            };
            chat_prompt(
                tokenizer,
                &template,
                &[Message::new("user", text)],
                &[],
                &options,
            )?
        }
        (None, None) => bail!("give --prompt or --prompt-ids"),
    };
    lily_runtime::check_prompt(&config, &prompt)?;
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

    let run_on = lily_runtime::resolve(args.backend, &config).context("--backend")?;
    let model = Model::load(dir, &config, run_on)?;
    let options = GenerateOptions {
        max_tokens: args.max_tokens,
        stop_ids: config.eos_token_ids.clone(),
    };
    tracing::info!(
        "prompt {} tokens, up to {} new, stop ids {:?}",
        prompt.len(),
        options.max_tokens,
        options.stop_ids
    );

    let mut out = std::io::stdout().lock();
    let mut picker = Sampled(Sampler::new(sampling));
    let mut write_error: Option<std::io::Error> = None;
    // Each token (as text or as its id) is written as it comes; a failed write ends the run.
    let mut write =
        |piece: std::fmt::Arguments| match write!(out, "{piece}").and_then(|()| out.flush()) {
            Ok(()) => ControlFlow::Continue(()),
            Err(e) => {
                write_error = Some(e);
                ControlFlow::Break(())
            }
        };
    let stats = match text_tokenizer {
        Some(tokenizer) => {
            model.generate_text(&config, tokenizer, &prompt, &options, &mut picker, |text| {
                write(format_args!("{text}"))
            })?
        }
        None => model.generate(&config, &prompt, &options, &mut picker, |token| {
            write(format_args!("{token} "))
        })?,
    };
    if let Some(e) = write_error {
        return Err(e).context("writing to stdout");
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
