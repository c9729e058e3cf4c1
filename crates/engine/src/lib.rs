//! Sequences, sampling and the generation loop, generic over a `Backend`.

pub mod generate;
pub use generate::{argmax, generate, GenerateOptions, GenerateStats, StopReason};
