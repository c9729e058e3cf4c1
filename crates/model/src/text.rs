//! A checkpoint's text side: its tokenizer, its chat template and the ids that end an answer,
//! found in the checkpoint directory (with the committed Qwen3.6 files where the checkpoint
//! has none and its vocabulary is Qwen3.6's). Everything that turns a conversation into prompt
//! ids and generated ids back into text starts here: the server, the CLI and embedders.

use std::path::{Path, PathBuf};

use crate::chat::{ChatError, ChatOptions, ChatTemplate, Message};
use crate::config::Config;
use crate::tokenizer::{Tokenizer, TokenizerError};

/// Embedding rows of the real Qwen3.6 checkpoints (248,077 token ids padded to 248,320). A
/// checkpoint of this vocabulary without a tokenizer.json is taken to be Qwen3.6, whose
/// tokenizer is committed; a smaller test checkpoint's ids mean something else.
pub const QWEN3_6_VOCAB_SIZE: usize = 248_320;

/// Files a checkpoint may carry its chat template in, in the order they are tried.
const TEMPLATE_FILES: [&str; 2] = ["chat_template.jinja", "tokenizer_config.json"];

#[derive(Debug, thiserror::Error)]
pub enum TextError {
    #[error(transparent)]
    Tokenizer(#[from] TokenizerError),
    #[error("{dir}: no tokenizer.json, and the checkpoint's vocabulary ({vocab_size} ids) is not Qwen3.6's ({QWEN3_6_VOCAB_SIZE}), so the built-in Qwen3.6 tokenizer does not apply")]
    NoTokenizer { dir: PathBuf, vocab_size: usize },
    #[error("{dir}: the tokenizer has {tokenizer} ids but the model's vocab_size is {model}: they do not belong together")]
    VocabMismatch {
        dir: PathBuf,
        tokenizer: usize,
        model: usize,
    },
    #[error("chat template {path}: {source}")]
    Template { path: PathBuf, source: ChatError },
    #[error("chat template {path}: {source}")]
    TemplateRead {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("chat template {path}: {reason}")]
    TemplateTrial { path: PathBuf, reason: String },
    #[error("rendering the chat: {0}")]
    Render(#[from] ChatError),
}

/// The checkpoint's `tokenizer.json`; without one, the committed Qwen3.6 tokenizer when the
/// checkpoint has Qwen3.6's vocabulary; otherwise none (the model then runs from token ids).
pub fn find_tokenizer(dir: &Path, config: &Config) -> Result<Option<Tokenizer>, TextError> {
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
pub fn find_chat_template(dir: &Path) -> Result<ChatTemplate, TextError> {
    if TEMPLATE_FILES.iter().any(|f| dir.join(f).exists()) {
        return ChatTemplate::from_model_dir(dir).map_err(|source| TextError::Template {
            path: dir.to_path_buf(),
            source,
        });
    }
    tracing::info!(
        "{} has neither {}; using the built-in Qwen3.6 chat template",
        dir.display(),
        TEMPLATE_FILES.join(" nor ")
    );
    Ok(ChatTemplate::qwen3_6())
}

/// A chat template file (Jinja), parsed and tried on a short conversation so that a template
/// that parses but cannot render (an unknown filter, a missing variable) fails when loaded,
/// not on the first request.
pub fn chat_template_file(path: &Path) -> Result<ChatTemplate, TextError> {
    let source = std::fs::read_to_string(path).map_err(|source| TextError::TemplateRead {
        path: path.to_path_buf(),
        source,
    })?;
    let template =
        ChatTemplate::from_source(source, &path.display().to_string()).map_err(|source| {
            TextError::Template {
                path: path.to_path_buf(),
                source,
            }
        })?;
    let trial = [
        Message::new("system", "You are helpful."),
        Message::new("user", "Hello"),
    ];
    let prompt = template
        .render(&trial, &[], &ChatOptions::default())
        .map_err(|e| TextError::TemplateTrial {
            path: path.to_path_buf(),
            reason: format!("rendering a system and a user message: {e}"),
        })?;
    if !prompt.contains("Hello") {
        return Err(TextError::TemplateTrial {
            path: path.to_path_buf(),
            reason: "a rendered conversation does not contain its user message".into(),
        });
    }
    Ok(template)
}

/// A checkpoint's tokenizer, chat template and stop ids, checked to belong to its model.
pub struct ChatText {
    pub tokenizer: Tokenizer,
    pub template: ChatTemplate,
    /// The config's end-of-sequence ids plus the chat format's `<|im_end|>` and `<|endoftext|>`.
    pub stop_ids: Vec<u32>,
}

impl ChatText {
    /// The text side of the checkpoint in `dir`; `template` replaces the checkpoint's chat
    /// template with a file (checked by rendering a trial conversation).
    pub fn load(
        dir: &Path,
        config: &Config,
        template: Option<&Path>,
    ) -> Result<ChatText, TextError> {
        let tokenizer = find_tokenizer(dir, config)?.ok_or_else(|| TextError::NoTokenizer {
            dir: dir.to_path_buf(),
            vocab_size: config.vocab_size,
        })?;
        if tokenizer.vocab_size() > config.vocab_size {
            return Err(TextError::VocabMismatch {
                dir: dir.to_path_buf(),
                tokenizer: tokenizer.vocab_size(),
                model: config.vocab_size,
            });
        }
        let template = match template {
            Some(path) => chat_template_file(path)?,
            None => find_chat_template(dir)?,
        };
        let mut stop_ids = config.eos_token_ids.clone();
        for special in ["<|im_end|>", "<|endoftext|>"] {
            if let Some(id) = tokenizer.special_token_id(special) {
                if !stop_ids.contains(&id) {
                    stop_ids.push(id);
                }
            }
        }
        Ok(ChatText {
            tokenizer,
            template,
            stop_ids,
        })
    }

    /// The prompt ids of `messages` (and `tools`) through this checkpoint's `chat_prompt`.
    pub fn chat_prompt(
        &self,
        messages: &[Message],
        tools: &[serde_json::Value],
        options: &ChatOptions,
    ) -> Result<Vec<u32>, TextError> {
        chat_prompt(&self.tokenizer, &self.template, messages, tools, options)
    }
}

/// The prompt ids of `messages` (and `tools`), rendered through `template` and ready for the
/// assistant's turn. The messages are the caller's own: special-token text in them stays
/// special (a server escapes a client's text first).
pub fn chat_prompt(
    tokenizer: &Tokenizer,
    template: &ChatTemplate,
    messages: &[Message],
    tools: &[serde_json::Value],
    options: &ChatOptions,
) -> Result<Vec<u32>, TextError> {
    let rendered = template.render(messages, tools, options)?;
    Ok(tokenizer.encode(&rendered))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// transformers' `apply_chat_template` ids for this message with the real tokenizer
    /// (thinking on: the known ids of docs/DESIGN.md §1).
    #[test]
    fn chat_prompt_matches_the_reference_ids() {
        let text = ChatText {
            tokenizer: Tokenizer::qwen3_6(),
            template: ChatTemplate::qwen3_6(),
            stop_ids: Vec::new(),
        };
        let message = [Message::new("user", "Name the two colors of a chessboard.")];
        let user = [
            248045, 846, 198, 657, 279, 1330, 7736, 314, 264, 31634, 2402, 13, 248046, 198,
        ];
        let assistant = [248045, 74455, 198];
        let think = text
            .chat_prompt(&message, &[], &ChatOptions::default())
            .unwrap();
        assert_eq!(think, [&user[..], &assistant, &[248068, 198]].concat());
        let options = ChatOptions {
            enable_thinking: false,
            ..ChatOptions::default()
        };
        let no_think = text.chat_prompt(&message, &[], &options).unwrap();
        assert_eq!(
            no_think,
            [&user[..], &assistant, &[248068, 271, 248069, 271]].concat()
        );
    }
}
