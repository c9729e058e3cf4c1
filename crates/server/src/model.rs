//! What the server needs from a tokenizer and chat template. The `lily serve` command
//! implements it over the real Qwen3.6 tokenizer; tests implement it over a byte-level one.

use lily_engine::json_constraint::VocabIndex;
use serde_json::Value;

use crate::request::ChatMessage;

pub trait TextModel: Send + Sync + 'static {
    /// Token ids of `text`; the text of a special token (`<|im_start|>`) becomes its id.
    fn encode(&self, text: &str) -> Vec<u32>;
    /// A token's bytes (a special token's are its text); `None` for ids that are no token
    /// (the padding rows of the vocabulary).
    fn token_bytes(&self, id: u32) -> Option<Vec<u8>>;
    fn is_special(&self, id: u32) -> bool;
    /// Ids that end generation (`<|im_end|>`, `<|endoftext|>`).
    fn stop_ids(&self) -> Vec<u32>;
    /// The chat prompt for `messages`, ending with the assistant's turn opened (and, with
    /// thinking on, `<think>\n`). An error message names the problem in the conversation.
    fn render_chat(&self, messages: &[ChatMessage], tools: &[Value], enable_thinking: bool) -> Result<String, String>;
}

/// Every token's bytes, looked up once at start-up: the server turns ids into text and the
/// constraints need all of them every step.
pub struct TokenTable {
    /// Bytes per id; empty for ids that are no token.
    pub bytes: Vec<Vec<u8>>,
    /// `bytes` prepared for masking: a forced tool-call opening may use special tokens
    /// (`<tool_call>` is one in Qwen's vocabulary).
    pub index: VocabIndex,
    /// The same, with special tokens empty: structured output may not contain them.
    pub constraint_bytes: Vec<Vec<u8>>,
    /// `constraint_bytes` prepared for fast masking.
    pub constraint_index: VocabIndex,
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
        let index = VocabIndex::new(&bytes);
        Self { bytes, index, constraint_bytes, constraint_index }
    }

    pub fn bytes(&self, id: u32) -> &[u8] {
        self.bytes.get(id as usize).map_or(&[], Vec::as_slice)
    }
}
