//! `lily tokenize`: text (or a chat conversation) on stdin, a JSON array of token ids on stdout.

use std::io::Read;
use std::path::PathBuf;

use anyhow::{bail, Context};
use lily_model::chat::{ChatOptions, ChatTemplate, Message};
use lily_model::Tokenizer;

#[derive(clap::Args)]
pub struct Args {
    /// Checkpoint directory (or a Hugging Face repo id in the local hub cache): its
    /// tokenizer.json and chat template.
    #[arg(long, conflicts_with = "vocab", value_parser = crate::hub::model_dir)]
    pub model: Option<PathBuf>,
    /// A vocabulary file: a tokenizer.json, or a tiktoken rank file (the Qwen3.5 special tokens
    /// follow its last rank). Default: the committed Qwen3.6 vocabulary.
    #[arg(long)]
    pub vocab: Option<PathBuf>,
    /// Read a JSON array of OpenAI-style chat messages (or {"messages": [...], "tools": [...]})
    /// and print the ids of the rendered prompt, ready for the assistant's turn.
    #[arg(long)]
    pub chat: bool,
    /// With --chat: thinking off (the assistant's turn opens with an empty think block).
    #[arg(long, requires = "chat")]
    pub no_think: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let tokenizer = load_tokenizer(args.model.as_ref(), args.vocab.as_ref())?;
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).context("reading stdin (expected UTF-8 text)")?;
    let text = if args.chat {
        let template = match &args.model {
            Some(dir) => ChatTemplate::from_model_dir(dir)?,
            None => ChatTemplate::qwen3_6(),
        };
        let (messages, tools) = parse_conversation(&input)?;
        let options = ChatOptions { enable_thinking: !args.no_think, ..ChatOptions::default() };
        template.render(&messages, &tools, &options)?
    } else {
        input
    };
    let ids = tokenizer.encode(&text);
    println!("{}", serde_json::to_string(&ids)?);
    Ok(())
}

/// The tokenizer named by `--model` or `--vocab`, or the committed default.
pub fn load_tokenizer(model: Option<&PathBuf>, vocab: Option<&PathBuf>) -> anyhow::Result<Tokenizer> {
    Ok(match (model, vocab) {
        (Some(dir), _) => Tokenizer::from_model_dir(dir)?,
        (None, Some(file)) if file.extension().is_some_and(|e| e == "json") => Tokenizer::from_tokenizer_json(file)?,
        (None, Some(file)) => Tokenizer::from_tiktoken(file)?,
        (None, None) => Tokenizer::qwen3_6(),
    })
}

fn parse_conversation(input: &str) -> anyhow::Result<(Vec<Message>, Vec<serde_json::Value>)> {
    use serde_json::Value;
    const EXPECTED: &str = "expected a JSON array of messages [{\"role\": \"user\", \"content\": \"...\"}, ...] \
                            or {\"messages\": [...], \"tools\": [...]}";
    let value: Value = serde_json::from_str(input).with_context(|| format!("stdin is not JSON: {EXPECTED}"))?;
    let (messages, tools) = match value {
        Value::Array(messages) => (messages, Vec::new()),
        Value::Object(mut object) => {
            let messages = match object.remove("messages") {
                Some(Value::Array(m)) => m,
                _ => bail!("stdin has no \"messages\" array: {EXPECTED}"),
            };
            let tools = match object.remove("tools") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(t)) => t,
                Some(other) => bail!("\"tools\" must be an array of tool definitions, found {other}"),
            };
            (messages, tools)
        }
        other => bail!("stdin holds {other}: {EXPECTED}"),
    };
    if messages.is_empty() {
        bail!("the conversation has no messages");
    }
    let messages = messages
        .into_iter()
        .enumerate()
        .map(|(i, m)| serde_json::from_value(m).with_context(|| format!("messages[{i}] is not a chat message")))
        .collect::<anyhow::Result<Vec<Message>>>()?;
    Ok((messages, tools))
}

#[cfg(test)]
mod tests {
    use super::parse_conversation;

    #[test]
    fn accepts_a_message_array_or_an_object_with_tools() {
        let (m, t) = parse_conversation(r#"[{"role":"user","content":[{"type":"text","text":"hi"}]}]"#).unwrap();
        assert_eq!((m.len(), t.len()), (1, 0));
        let (m, t) = parse_conversation(r#"{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function"}]}"#).unwrap();
        assert_eq!((m.len(), t.len()), (1, 1));
    }

    #[test]
    fn rejects_bad_input_naming_the_message() {
        let err = |s: &str| format!("{:#}", parse_conversation(s).unwrap_err());
        assert!(err(r#"[{"role":"user"},{"content":"x"}]"#).starts_with("messages[1] is not a chat message"));
        assert!(err("[]").contains("no messages"));
        assert!(err("not json").starts_with("stdin is not JSON"));
        assert!(err(r#"{"messages":[{"role":"user","content":"x"}],"tools":{}}"#).contains("\"tools\" must be an array"));
    }
}
