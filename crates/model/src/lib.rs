//! What Qwen3.6-35B-A3B is: its configuration, its weights as they sit in a checkpoint,
//! its tokenizer and chat format, and the `Backend` seam that every way of running it implements.
//! No GPU code lives here.

pub mod backend;
pub use backend::Backend;

pub mod chat;
pub use chat::{ChatError, ChatOptions, ChatTemplate, Message};

pub mod tokenizer;
pub use tokenizer::{StreamDecoder, Tokenizer, TokenizerError};
