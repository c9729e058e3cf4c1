//! Lily embedded in a program: load the built-in demo checkpoint on the CPU reference, ask it
//! one question through its chat template, and print the greedy answer as it is generated.
//!
//! `cargo run --release -p lily-runtime --example generate -- [CHECKPOINT_DIR] [MAX_TOKENS]`

use std::io::Write;
use std::path::PathBuf;

use lily_runtime::{BackendKind, ChatOptions, Lily, Message, SamplingParams};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let dir = args.next().map_or_else(
        || PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../assets/demo")),
        PathBuf::from,
    );
    let max_tokens = args.next().map_or(Ok(48), |n| n.parse())?;

    let lily = Lily::load(&dir, BackendKind::Cpu)?;
    let options = ChatOptions {
        enable_thinking: false,
        ..ChatOptions::default()
    };
    let prompt = lily.chat_prompt(&[Message::new("user", "Tell me about the cat.")], &options)?;
    let greedy = SamplingParams {
        temperature: 0.0,
        ..SamplingParams::default()
    };
    let mut out = std::io::stdout().lock();
    let stats = lily.generate_text(&prompt, max_tokens, greedy, |text| {
        // A closed stdout (`| head`) ends the printing, not the program.
        let _ = write!(out, "{text}").and_then(|()| out.flush());
    })?;
    writeln!(out)?;
    eprintln!(
        "{} prompt tokens, {} generated, stop: {:?}",
        stats.prompt_tokens, stats.generated_tokens, stats.stop
    );
    Ok(())
}
