//! `lily score`: teacher-forced scoring of a token sequence, for checking a backend against
//! another implementation on the same weights (top-1 agreement, log-likelihood).
//!
//! The first `--prefill` tokens go through the backend's prefill, then every further token
//! through a decode step; each position from the last prefill token on yields its greedy pick
//! and the log-probability of the token that follows it. Both paths are exercised, and the
//! decode positions only come out right if the prefill left a correct cache and state.
//! Output: one JSON object per line `{"position", "argmax", "logprob_next"}` (the last
//! position has no next token: `logprob_next` is null), then a summary on stderr.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args as ClapArgs;
use lily_engine::argmax;
use lily_model::{Backend, Config};
use lily_runtime::{BackendKind, Model};

#[derive(ClapArgs)]
pub struct Args {
    /// Checkpoint directory, or a Hugging Face repo id in the local hub cache.
    #[arg(long, env = "LILY_MODEL", value_parser = crate::hub::model_dir)]
    model: PathBuf,
    /// Token ids: a file holding a JSON array, or whitespace- or comma-separated ids.
    #[arg(long)]
    ids: PathBuf,
    /// How many leading tokens go through prefill (the rest through decode steps).
    #[arg(long)]
    prefill: usize,
    /// Where the model runs.
    #[arg(long, env = "LILY_BACKEND", value_enum, default_value_t = BackendKind::Auto)]
    backend: BackendKind,
}

fn read_ids(path: &PathBuf) -> anyhow::Result<Vec<u32>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    text.split(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']'))
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<u32>()
                .with_context(|| format!("{}: {s:?} is not a token id", path.display()))
        })
        .collect()
}

/// log softmax(logits)[i], in f64.
fn log_prob(logits: &[f32], i: usize) -> f64 {
    let max = logits.iter().fold(f32::NEG_INFINITY, |m, &x| m.max(x)) as f64;
    let sum: f64 = logits.iter().map(|&x| (x as f64 - max).exp()).sum();
    logits[i] as f64 - max - sum.ln()
}

fn score<B: Backend>(model: &B, ids: &[u32], prefill: usize) -> anyhow::Result<()>
where
    B::Error: std::error::Error + Send + Sync + 'static,
{
    let vocab = model.vocab_size();
    if let Some(bad) = ids.iter().find(|&&t| t as usize >= vocab) {
        bail!("token id {bad} is outside the vocabulary of {vocab}");
    }
    let mut seq = model.new_sequence(ids.len())?;
    let started = std::time::Instant::now();
    let mut logits = model.prefill(&mut seq, &ids[..prefill])?;
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let (mut nll, mut scored) = (0.0f64, 0usize);
    for position in prefill - 1..ids.len() {
        if position >= prefill {
            logits = model.decode(&mut seq, ids[position])?;
        }
        let next = ids.get(position + 1).map(|&t| log_prob(&logits, t as usize));
        if let Some(lp) = next {
            nll -= lp;
            scored += 1;
        }
        let lp = next.map_or("null".to_string(), |v| format!("{v:.6}"));
        writeln!(
            out,
            "{{\"position\": {position}, \"argmax\": {}, \"logprob_next\": {lp}}}",
            argmax(&logits)
        )?;
        if (position + 1) % 1024 == 0 {
            tracing::info!(position, "scored");
        }
    }
    out.flush()?;
    let secs = started.elapsed().as_secs_f64();
    eprintln!(
        "scored {scored} positions in {secs:.1} s: mean negative log-likelihood {:.6}",
        nll / scored.max(1) as f64
    );
    Ok(())
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let ids = read_ids(&args.ids)?;
    if args.prefill == 0 || args.prefill > ids.len() {
        bail!(
            "--prefill must be between 1 and the number of ids ({}), got {}",
            ids.len(),
            args.prefill
        );
    }
    let dir = &args.model;
    let config = Config::load(dir).with_context(|| format!("loading {}", dir.display()))?;
    let run_on = lily_runtime::resolve(args.backend, &config).context("--backend")?;
    match Model::load(dir, &config, run_on)? {
        Model::Cuda(model) => score(&model, &ids, args.prefill),
        Model::Cpu(model) => score(&model, &ids, args.prefill),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_prob_is_a_normalised_log_softmax() {
        let logits = [1.0f32, 2.0, 3.0];
        let total: f64 = (0..3).map(|i| log_prob(&logits, i).exp()).sum();
        assert!((total - 1.0).abs() < 1e-12);
        assert!(log_prob(&logits, 2) > log_prob(&logits, 0));
    }

    #[test]
    fn ids_are_read_from_json_or_plain_lists_and_junk_is_named() {
        let dir = std::env::temp_dir().join(format!("lily-score-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("ids");
        std::fs::write(&f, "[1, 2,3]\n").unwrap();
        assert_eq!(read_ids(&f).unwrap(), vec![1, 2, 3]);
        std::fs::write(&f, "4 5\n6").unwrap();
        assert_eq!(read_ids(&f).unwrap(), vec![4, 5, 6]);
        std::fs::write(&f, "7 x").unwrap();
        let err = read_ids(&f).unwrap_err().to_string();
        assert!(err.contains("\"x\""), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
