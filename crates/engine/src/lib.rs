//! Sequences, sampling and the generation loop, generic over a `Backend`.

pub mod generate;
pub mod json_constraint;
pub mod prefix_cache;
pub mod reasoning;
pub mod sampling;
pub mod text_stream;
pub mod tool_calls;
pub mod tool_choice;
pub use generate::{argmax, generate, GenerateOptions, GenerateStats, Greedy, Pick, StopReason};
