//! What Qwen3.6-35B-A3B is: its configuration, its weights as they sit in a checkpoint,
//! its tokenizer and chat format, and the `Backend` seam that every way of running it implements.
//! No GPU code lives here.

pub mod backend;
pub mod config;
pub mod error;
pub mod tensor;
pub mod weights;

pub use backend::Backend;
pub use config::{Config, LayerKind};
pub use error::ModelError;
pub use tensor::{DType, Tensor};
pub use weights::{Checkpoint, Weights};

pub mod chat;
pub use chat::{ChatError, ChatOptions, ChatTemplate, Message};

pub mod tokenizer;
pub use tokenizer::{StreamDecoder, Tokenizer, TokenizerError};
