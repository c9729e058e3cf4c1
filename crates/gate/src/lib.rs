//! The privacy gate: decides what may leave the machine. Depends on nothing of the engine.
//!
//! `Gate::inspect` normalises the input (`normalize`), runs the identifier tier (`patterns`),
//! the learned tiers and their lexicon backstops (`cues`), the name rules for every script
//! (`names_scripts`, with the names after form labels of `name_fields`) and a second pass for other mentions of the persons found (`mentions`),
//! applies the `policy` per finding and destination, and masks (`mask`) what the policy says to
//! mask, one placeholder per person; `request` does the same for an OpenAI chat request.

pub mod cues;
pub mod eval;
pub mod learned;
pub mod mask;
pub mod mentions;
pub mod name_fields;
pub mod names_scripts;
pub mod normalize;
pub mod patterns;
pub mod pipeline;
pub mod policy;
pub mod public_context;
pub mod request;
pub mod span;
pub mod topic_cues;
pub mod verdict;

pub use mask::{StreamUnmasker, Vault};
pub use pipeline::{Detector, Gate};
pub use policy::{Destination, Policy, PolicyError};
pub use request::{inspect_request, is_chat_request, RequestError, RequestVerdict};
pub use span::{Category, Span, Tier};
pub use verdict::{Decision, Finding, Verdict};
