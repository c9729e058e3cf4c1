//! What the server needs from a tokenizer and chat template. A checkpoint's `ChatText` (the
//! real Qwen3.6 tokenizer and template) implements it; tests implement it over a byte-level one.

use lily_engine::json_constraint::VocabIndex;
use lily_model::chat::{Content, FunctionCall, ToolCall};
use lily_model::{ChatOptions, ChatText, Message};
use serde_json::{Map, Value};

use crate::request::{ChatMessage, HistoryToolCall};

pub trait TextModel: Send + Sync + 'static {
    /// Token ids of `text`; the text of a special token (`<|im_start|>`) becomes its id.
    fn encode(&self, text: &str) -> Vec<u32>;
    /// `text` from a client with any special-token text in it marked, so that `encode_chat`
    /// keeps it as plain text (lily_model::tokenizer::escape).
    fn escape(&self, text: &str) -> String;
    /// Token ids of a prompt rendered from escaped strings: special tokens only where the
    /// template wrote them.
    fn encode_chat(&self, prompt: &str) -> Vec<u32>;
    /// A token's bytes (a special token's are its text); `None` for ids that are no token
    /// (the padding rows of the vocabulary).
    fn token_bytes(&self, id: u32) -> Option<Vec<u8>>;
    fn is_special(&self, id: u32) -> bool;
    /// Ids that end generation (`<|im_end|>`, `<|endoftext|>`).
    fn stop_ids(&self) -> Vec<u32>;
    /// The chat prompt for `messages`; with `add_generation_prompt`, ending with the
    /// assistant's turn opened (and, with thinking on, `<think>\n`). An error message names the
    /// problem in the conversation.
    fn render_chat(
        &self,
        messages: &[ChatMessage],
        tools: &[Value],
        options: &ChatOptions,
    ) -> Result<String, String>;
}

/// A request's message as the chat template sees it.
fn template_message(m: &ChatMessage) -> Message {
    let tool_calls = (!m.tool_calls.is_empty()).then(|| {
        m.tool_calls
            .iter()
            .map(|c| ToolCall {
                id: Some(c.id.clone()),
                kind: Some("function".into()),
                function: FunctionCall { name: c.name.clone(), arguments: c.arguments.clone() },
            })
            .collect()
    });
    Message {
        role: m.role.as_str().to_string(),
        content: Some(Content::Text(m.content.clone())),
        reasoning_content: m.reasoning_content.clone(),
        tool_calls,
        tool_call_id: m.tool_call_id.clone(),
        name: m.name.clone(),
    }
}

impl TextModel for ChatText {
    fn encode(&self, text: &str) -> Vec<u32> {
        self.tokenizer.encode(text)
    }
    fn escape(&self, text: &str) -> String {
        self.tokenizer.escape_specials(text).into_owned()
    }
    fn encode_chat(&self, prompt: &str) -> Vec<u32> {
        self.tokenizer.encode_escaped(prompt)
    }
    fn token_bytes(&self, id: u32) -> Option<Vec<u8>> {
        self.tokenizer.token_bytes(id).filter(|b| !b.is_empty()).map(<[u8]>::to_vec)
    }
    fn is_special(&self, id: u32) -> bool {
        self.tokenizer.is_special(id)
    }
    fn stop_ids(&self) -> Vec<u32> {
        self.stop_ids.clone()
    }
    fn render_chat(&self, messages: &[ChatMessage], tools: &[Value], options: &ChatOptions) -> Result<String, String> {
        let messages: Vec<Message> = messages.iter().map(template_message).collect();
        self.template.render(&messages, tools, options).map_err(|e| e.to_string())
    }
}

/// The conversation as the template may see it: every string the client wrote escaped, so
/// that only the template's own structure becomes special tokens (`encode_chat`).
pub fn escape_conversation(
    model: &dyn TextModel,
    messages: &[ChatMessage],
    tools: &[Value],
) -> (Vec<ChatMessage>, Vec<Value>) {
    let text = |s: &str| model.escape(s);
    let messages = messages
        .iter()
        .map(|m| ChatMessage {
            role: m.role,
            content: text(&m.content),
            reasoning_content: m.reasoning_content.as_deref().map(text),
            tool_calls: m
                .tool_calls
                .iter()
                .map(|c| HistoryToolCall {
                    id: text(&c.id),
                    name: text(&c.name),
                    arguments: escape_json(model, &c.arguments),
                })
                .collect(),
            tool_call_id: m.tool_call_id.as_deref().map(text),
            name: m.name.as_deref().map(text),
        })
        .collect();
    (
        messages,
        tools.iter().map(|t| escape_json(model, t)).collect(),
    )
}

/// Every string and key of a JSON value escaped (tool definitions and arguments are rendered
/// into the prompt).
fn escape_json(model: &dyn TextModel, value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(model.escape(s)),
        Value::Array(items) => Value::Array(items.iter().map(|v| escape_json(model, v)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (model.escape(k), escape_json(model, v)))
                .collect::<Map<_, _>>(),
        ),
        other => other.clone(),
    }
}

/// Every token's bytes, looked up once at start-up: the server turns ids into text and the
/// constraints need all of them every step.
pub struct TokenTable {
    /// Bytes per id; empty for ids that are no token.
    pub bytes: Vec<Vec<u8>>,
    /// The same, with special tokens empty: structured output may not contain them.
    pub constraint_bytes: Vec<Vec<u8>>,
    /// `constraint_bytes` prepared for fast masking.
    pub constraint_index: VocabIndex,
    /// The special tokens' ids and texts: a forced tool call's format has some
    /// (`<tool_call>` is one in Qwen's vocabulary).
    pub specials: Vec<(u32, Vec<u8>)>,
}

impl TokenTable {
    pub fn new(model: &dyn TextModel, vocab_size: usize) -> Self {
        let bytes: Vec<Vec<u8>> = (0..vocab_size as u32).map(|id| model.token_bytes(id).unwrap_or_default()).collect();
        let constraint_bytes = bytes
            .iter()
            .enumerate()
            .map(|(id, b)| if model.is_special(id as u32) { Vec::new() } else { b.clone() })
            .collect::<Vec<_>>();
        let constraint_index = VocabIndex::new(&constraint_bytes);
        let specials = (0..vocab_size as u32).filter(|&id| model.is_special(id) && !bytes[id as usize].is_empty()).map(|id| (id, bytes[id as usize].clone())).collect();
        Self { bytes, constraint_bytes, constraint_index, specials }
    }

    pub fn bytes(&self, id: u32) -> &[u8] {
        self.bytes.get(id as usize).map_or(&[], Vec::as_slice)
    }
}
