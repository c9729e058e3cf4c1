//! `lily generate`: greedy generation from a prompt on the CPU reference, streaming token ids
//! to stdout as they are produced and reporting prefill and decode speed on stderr.

use std::io::Write;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;
use lily_cpu::CpuModel;
use lily_engine::{argmax, generate, GenerateOptions};

#[derive(Args)]
pub struct GenerateArgs {
    /// Checkpoint directory (config.json + safetensors).
    #[arg(long)]
    model: PathBuf,
    /// Prompt text, sent as a user chat message (needs the tokenizer files in --model).
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
    /// Print generated token ids (always the case until text decoding is wired in).
    #[arg(long)]
    print_ids: bool,
}

pub fn run(args: GenerateArgs) -> anyhow::Result<()> {
    let prompt = match (&args.prompt, &args.prompt_ids) {
        (_, Some(ids)) => {
            if args.no_think {
                tracing::warn!(
                    "--no-think only applies to --prompt; --prompt-ids are used as given"
                );
            }
            ids.clone()
        }
        (Some(text), None) => encode_chat_prompt(&args.model, text, !args.no_think)?,
        (None, None) => bail!("give --prompt or --prompt-ids"),
    };
    if prompt.is_empty() {
        bail!("the prompt is empty");
    }

    let model =
        CpuModel::load(&args.model).with_context(|| format!("loading {}", args.model.display()))?;
    let config = model.config();
    if let Some(&bad) = prompt.iter().find(|&&t| t as usize >= config.vocab_size) {
        bail!(
            "prompt token {bad} is outside the vocabulary (size {})",
            config.vocab_size
        );
    }
    let max_seq =
        (prompt.len() + args.max_tokens).min(config.max_position_embeddings.max(prompt.len()));
    let options = GenerateOptions {
        max_tokens: args.max_tokens,
        stop_ids: config.eos_token_ids.clone(),
    };
    tracing::info!(
        "prompt {} tokens, up to {} new, stop ids {:?}",
        prompt.len(),
        args.max_tokens,
        options.stop_ids
    );

    let mut seq = model.new_sequence(max_seq)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut write_error = None;
    let stats = generate(
        &model,
        &mut seq,
        &prompt,
        max_seq,
        &options,
        argmax,
        |token| {
            // Ids stream one per token; text decoding joins here once the tokenizer is wired in.
            match write!(out, "{token} ").and_then(|_| out.flush()) {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    write_error = Some(e);
                    ControlFlow::Break(())
                }
            }
        },
    )?;
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

/// The chat prompt for a user message. The tokenizer and chat template live in lily-model's
/// tokenizer/chat modules (branch `tok`); until they are wired in, text prompts are refused
/// with an explanation rather than guessed at.
fn encode_chat_prompt(model_dir: &Path, _text: &str, _think: bool) -> anyhow::Result<Vec<u32>> {
    if !model_dir.join("tokenizer.json").exists() {
        bail!(
            "--prompt needs a tokenizer, and {} has no tokenizer.json; pass token ids with --prompt-ids",
            model_dir.display()
        );
    }
    bail!("text prompts are not supported by this build yet; pass token ids with --prompt-ids")
}
