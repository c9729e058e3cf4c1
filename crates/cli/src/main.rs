//! `lily`: one binary, one subcommand per job. Each subcommand lives in its own module with
//! its clap `Args` struct and a `run` function.

mod backend_choice;
mod bench;
mod detokenize;
mod gate;
mod generate;
mod plot;
mod ptx;
mod score;
mod serve;
mod tokenize;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "lily",
    version,
    about = "A specialist runtime for Qwen3.6-35B-A3B on NVIDIA Hopper"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Measure prefill and decode speed on the GPU (docs/DESIGN.md §3).
    Bench(bench::Args),
    /// Greedy generation from a prompt (CPU reference).
    Generate(generate::GenerateArgs),
    /// Text (or, with --chat, a JSON conversation) on stdin; JSON token ids on stdout.
    Tokenize(tokenize::Args),
    /// JSON token ids on stdin; their text on stdout.
    Detokenize(detokenize::Args),
    /// Privacy gate: inspect text or a chat request on stdin and decide what may leave the machine.
    Gate(gate::GateArgs),
    /// Teacher-forced scoring of token ids: per position the greedy pick and the next token's
    /// log-probability (checks a backend against transformers on the same weights).
    Score(score::Args),
    /// OpenAI-compatible HTTP server (chat completions, completions, models, health, metrics).
    Serve(serve::ServeArgs),
    /// Write the PTX of every kernel family (developer check: compare two builds with
    /// scripts/profile/ptx_diff.py to see whether a change leaves the GPU code alone).
    Ptx(ptx::Args),
}

fn main() -> anyhow::Result<()> {
    // Logs go to stderr so that stdout stays clean for generated text and JSON.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Bench(args) => bench::run(args),
        Command::Generate(args) => generate::run(args),
        Command::Tokenize(args) => tokenize::run(args),
        Command::Detokenize(args) => detokenize::run(args),
        Command::Gate(args) => gate::run(args),
        Command::Score(args) => score::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Ptx(args) => ptx::run(args),
    }
}
