//! What the gate concludes about one text: the decision, the findings that led to it, and a
//! trace a person can read.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::span::{Category, Span};

/// The four outcomes of the gate plus `Allow`. Variants are declared from loosest to strictest,
/// so the derived `Ord` is the strictness order and a verdict is the `max` over its findings:
/// refuse > local > consent > mask > allow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Send as is.
    Allow,
    /// Send with the masked spans replaced by placeholders; unmask the reply.
    Mask,
    /// Ask the user before sending (the masked text is what would be sent).
    Consent,
    /// Do not send anywhere off the machine; answer with the local model.
    Local,
    /// Do not send at all.
    Refuse,
}

impl Decision {
    pub fn as_str(self) -> &'static str {
        match self {
            Decision::Allow => "allow",
            Decision::Mask => "mask",
            Decision::Consent => "consent",
            Decision::Local => "local",
            Decision::Refuse => "refuse",
        }
    }
}

impl std::fmt::Display for Decision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One detected span and what the policy says about it for the destination asked.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    #[serde(flatten)]
    pub span: Span,
    pub outcome: Decision,
}

#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    pub decision: Decision,
    /// Sorted by start offset; offsets index the original input bytes.
    #[serde(rename = "spans")]
    pub findings: Vec<Finding>,
    pub categories: BTreeSet<Category>,
    /// The text with every `mask` finding replaced by its placeholder; present when the
    /// decision is `mask` or `consent` and something was masked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub masked_text: Option<String>,
    /// Why, one line per finding plus the conclusion. Never contains the sensitive values.
    pub trace: Vec<String>,
}

impl Verdict {
    pub fn spans(&self) -> impl Iterator<Item = &Span> {
        self.findings.iter().map(|f| &f.span)
    }
}
