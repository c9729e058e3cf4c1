//! `lily detokenize`: a JSON array of token ids on stdin, their text on stdout.

use std::io::{Read, Write};
use std::path::PathBuf;

use anyhow::Context;

#[derive(clap::Args)]
pub struct Args {
    /// Checkpoint directory (or a Hugging Face repo id in the local hub cache): its tokenizer.json.
    #[arg(long, conflicts_with = "vocab", value_parser = crate::hub::model_dir)]
    pub model: Option<PathBuf>,
    /// A vocabulary file: a tokenizer.json or a tiktoken rank file. Default: the committed
    /// Qwen3.6 vocabulary.
    #[arg(long)]
    pub vocab: Option<PathBuf>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let tokenizer = crate::tokenize::load_tokenizer(args.model.as_ref(), args.vocab.as_ref())?;
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).context("reading stdin")?;
    let ids: Vec<u32> = serde_json::from_str(&input)
        .with_context(|| "stdin is not a JSON array of token ids (non-negative integers), e.g. [9419, 1814]")?;
    let text = tokenizer.decode(&ids)?;
    let mut stdout = std::io::stdout().lock();
    stdout.write_all(text.as_bytes())?;
    stdout.flush()?;
    Ok(())
}
