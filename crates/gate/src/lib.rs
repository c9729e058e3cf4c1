//! The privacy gate: decides what may leave the machine. Depends on nothing of the engine.

pub mod span;
pub use span::{Category, Span, Tier};
