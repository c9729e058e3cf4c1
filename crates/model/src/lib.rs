//! What Qwen3.6-35B-A3B is: its configuration, its weights as they sit in a checkpoint,
//! its tokenizer and chat format, and the `Backend` seam that every way of running it implements.
//! No GPU code lives here.
//!
//! - `config`: `config.json` (+ `generation_config.json` stop ids), strictly validated.
//! - `tensor`: a tensor view into a memory-mapped shard (dtype, shape, bytes, f32 reads; FP8
//!   with its block scales, dequantised on read).
//! - `weights`: the checkpoint's tensors by name (`Checkpoint`) and the model's weights by role
//!   (`Weights`), shape-checked against the config.
//! - `error`: `ModelError`, naming the file, field or tensor at fault.
//! - `fp8`: the FP8 release's format (which tensors are e4m3, block quantisation).
//! - `writer`: safetensors files written one tensor at a time (`lily quantize`, tests).
//! - `backend`: the `Backend` trait.
//! - `pick`: `PickRule`, the choice of the next token from logits, as a backend may apply it.
//! - `tokenizer`: the Qwen3.5/3.6 byte-level BPE (`Tokenizer`, `StreamDecoder`).
//! - `chat`: OpenAI-style messages rendered by the checkpoint's chat template (`ChatTemplate`).
//! - `text`: a checkpoint's tokenizer, chat template and stop ids, found and checked together
//!   (`ChatText`).
//! - `PROGRESS`: the tracing target of long start-up steps (weights, kernels, benchmark contexts).

pub mod backend;
pub mod chat;
pub mod config;
pub mod error;
pub mod fp8;
pub mod pick;
pub mod tensor;
pub mod text;
pub mod tokenizer;
pub mod weights;
pub mod writer;

/// The tracing target of an event reporting progress through a long step: fields `stage` (what
/// is under way: "weights", "kernels", "contexts"), `done` and `total` (its steps so far and in
/// all), and a message for plain logs. The `lily` binary draws these as progress bars on a
/// terminal; elsewhere they are ordinary log lines.
pub const PROGRESS: &str = "lily::progress";

pub use backend::Backend;
pub use chat::{ChatError, ChatOptions, ChatTemplate, Message};
pub use config::{Config, LayerKind};
pub use error::ModelError;
pub use pick::PickRule;
pub use tensor::{BlockScale, DType, Tensor};
pub use text::{ChatText, TextError};
pub use tokenizer::{StreamDecoder, Tokenizer, TokenizerError};
pub use weights::{Checkpoint, Weights};
