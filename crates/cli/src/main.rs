//! `lily`: one binary, one subcommand per job. Each subcommand lives in its own module with
//! its clap `Args` struct and a `run` function.

mod bench;
mod detokenize;
mod gate;
mod generate;
mod hub;
mod progress;
mod plot;
mod ptx;
mod quantize;
mod score;
mod serve;
mod tokenize;

use clap::{Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(
    name = "lily",
    version,
    about = "A specialist runtime for Qwen3.6-35B-A3B on NVIDIA Hopper",
    after_help = "Every flag of `lily serve`, and --model, --backend and --log-format everywhere, can also \
                  be set from the environment: LILY_ and the flag's name in capitals (--max-model-len: \
                  LILY_MAX_MODEL_LEN); the command line wins. --help shows each one's variable. \
                  RUST_LOG sets what is logged (default: info)."
)]
struct Cli {
    /// How log lines (on stderr) are written: text, or one JSON object per line (with the
    /// request id of every line written for a request).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text, env = "LILY_LOG_FORMAT")]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Measure prefill and decode speed on the GPU (docs/DESIGN.md §3).
    Bench(bench::Args),
    /// Generate from a prompt on the GPU or the CPU reference, greedy or sampled, streaming the
    /// text to stdout and the speed to stderr.
    Generate(generate::GenerateArgs),
    /// Text (or, with --chat, a JSON conversation) on stdin; JSON token ids on stdout.
    Tokenize(tokenize::Args),
    /// JSON token ids on stdin; their text on stdout.
    Detokenize(detokenize::Args),
    /// Privacy gate: inspect text or a chat request on stdin and decide what may leave the machine.
    Gate(gate::GateArgs),
    /// Write a checkpoint in another weight format: `--fp8` gives the official FP8 layout (e4m3
    /// weights with 128x128 block scales) from a BF16 checkpoint.
    Quantize(quantize::Args),
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
    let cli = Cli::parse();
    progress::init_logging(cli.log_format);
    match cli.command {
        Command::Bench(args) => bench::run(args),
        Command::Generate(args) => generate::run(args),
        Command::Tokenize(args) => tokenize::run(args),
        Command::Detokenize(args) => detokenize::run(args),
        Command::Gate(args) => gate::run(args),
        Command::Quantize(args) => quantize::run(args),
        Command::Score(args) => score::run(args),
        Command::Serve(args) => serve::run(args),
        Command::Ptx(args) => ptx::run(args),
    }
}
