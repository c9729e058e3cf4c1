//! The policy: for each destination, which outcome each category of finding has.
//!
//! The file is JSON rather than TOML: the gate already depends on serde_json for verdicts and
//! chat requests, so it costs no extra dependency, and serde_json errors carry the line and
//! column while `deny_unknown_fields` names a misspelt field. A safe default is embedded in
//! the binary (`policy/default.json`).
//!
//! Schema (every field required unless marked optional; unknown fields are errors):
//! ```json
//! { "about": "optional free text",
//!   "ignore_below": 0.2,            // findings less sure than this are ignored
//!   "consent_below": 0.5,           // less sure than this: `local`/`refuse` become `consent`
//!   "mask_alongside": ["location"], // optional: allowed alone, masked next to other masks
//!   "max_input_bytes": 16777216,    // larger inputs are refused unread
//!   "unreadable": "local",          // optional: a request part the gate cannot read (an
//!                                   // image, audio, a file) for the cloud: `local` or `refuse`
//!   "destinations": {
//!     "cloud": { "default": "mask", "categories": { "secret": "refuse", "health": "local" } },
//!     "local": { "default": "allow" } } }
//! ```
//! Outcomes: `allow`, `mask`, `consent`, `local`, `refuse`; categories are the snake_case
//! names of `Category` (`email`, `payment_card`, `mental_health`, ...).

use std::collections::BTreeMap;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::span::{Category, Span};
use crate::verdict::Decision;

/// Where the inspected text would go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Destination {
    /// A model run by someone else (off the machine).
    Cloud,
    /// The on-device model.
    Local,
}

impl Destination {
    pub const ALL: [Destination; 2] = [Destination::Cloud, Destination::Local];

    pub fn as_str(self) -> &'static str {
        match self {
            Destination::Cloud => "cloud",
            Destination::Local => "local",
        }
    }
}

impl FromStr for Destination {
    type Err = PolicyError;
    fn from_str(s: &str) -> Result<Self, PolicyError> {
        match s {
            "cloud" => Ok(Destination::Cloud),
            "local" => Ok(Destination::Local),
            other => Err(PolicyError::UnknownDestination(other.to_string())),
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    #[error("cannot read policy file {path}: {source}")]
    Io {
        path: String,
        source: std::io::Error,
    },
    #[error("policy {origin}, line {line}, column {column}: {message}")]
    Parse {
        origin: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("policy {origin}: field `{field}`: {message}")]
    Invalid {
        origin: String,
        field: String,
        message: String,
    },
    #[error("unknown destination `{0}` (expected `cloud` or `local`)")]
    UnknownDestination(String),
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DestinationRules {
    /// Outcome for any category not listed.
    pub default: Decision,
    #[serde(default)]
    pub categories: BTreeMap<Category, Decision>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Free text for the reader of the file; ignored.
    #[serde(default)]
    pub about: Option<String>,
    /// Findings with a confidence below this are ignored.
    pub ignore_below: f32,
    /// Findings with a confidence below this whose rule is stricter than `consent` (keep
    /// local, refuse) ask for consent instead: an unsure detector should not silently block.
    pub consent_below: f32,
    /// Categories that are allowed alone but masked too whenever something else in the same
    /// text is masked: a place or employer next to a person's name narrows down who it is.
    #[serde(default)]
    pub mask_alongside: Vec<Category>,
    /// Larger inputs are refused unread: inspecting them would cost unbounded time.
    pub max_input_bytes: usize,
    /// What a chat request for the cloud with a part the gate cannot read (an image, audio,
    /// a file, an unknown part type) becomes: `local` or `refuse`, never sent.
    #[serde(default = "unreadable_default")]
    pub unreadable: Decision,
    pub destinations: BTreeMap<Destination, DestinationRules>,
}

fn unreadable_default() -> Decision {
    Decision::Local
}

const DEFAULT_POLICY: &str = include_str!("../policy/default.json");

impl Policy {
    /// The policy embedded in the binary.
    pub fn default_policy() -> Policy {
        // The embedded file is checked by a test; failing here is a build defect.
        Policy::from_json(DEFAULT_POLICY, "policy/default.json")
            .expect("embedded default policy is valid")
    }

    pub fn load(path: &Path) -> Result<Policy, PolicyError> {
        let text = std::fs::read_to_string(path).map_err(|source| PolicyError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Policy::from_json(&text, &path.display().to_string())
    }

    /// Parses and validates; `origin` names the source in error messages.
    pub fn from_json(text: &str, origin: &str) -> Result<Policy, PolicyError> {
        let policy: Policy = serde_json::from_str(text).map_err(|e| PolicyError::Parse {
            origin: origin.to_string(),
            line: e.line(),
            column: e.column(),
            // serde_json appends " at line L column C"; the error already says where.
            message: {
                let m = e.to_string();
                m.rsplit_once(" at line ")
                    .map_or(m.clone(), |(head, _)| head.to_string())
            },
        })?;
        policy.validate(origin)?;
        Ok(policy)
    }

    fn validate(&self, origin: &str) -> Result<(), PolicyError> {
        let invalid = |field: &str, message: String| PolicyError::Invalid {
            origin: origin.to_string(),
            field: field.to_string(),
            message,
        };
        for (field, value) in [
            ("ignore_below", self.ignore_below),
            ("consent_below", self.consent_below),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(invalid(field, format!("must be within 0..=1, got {value}")));
            }
        }
        if self.consent_below < self.ignore_below {
            return Err(invalid(
                "consent_below",
                format!(
                    "must be >= ignore_below ({}), got {}",
                    self.ignore_below, self.consent_below
                ),
            ));
        }
        if !matches!(self.unreadable, Decision::Local | Decision::Refuse) {
            return Err(invalid(
                "unreadable",
                format!(
                    "must be `local` or `refuse` (what cannot be read is never sent), got `{}`",
                    self.unreadable
                ),
            ));
        }
        if self.max_input_bytes == 0 {
            return Err(invalid("max_input_bytes", "must be positive".to_string()));
        }
        for dest in Destination::ALL {
            if !self.destinations.contains_key(&dest) {
                return Err(invalid(
                    &format!("destinations.{}", dest.as_str()),
                    "missing: every destination needs rules".to_string(),
                ));
            }
        }
        Ok(())
    }

    /// The rule for a category, before confidence is considered.
    pub fn rule(&self, category: Category, dest: Destination) -> Decision {
        let rules = &self.destinations[&dest];
        rules
            .categories
            .get(&category)
            .copied()
            .unwrap_or(rules.default)
    }

    /// The outcome of one finding.
    pub fn outcome(&self, span: &Span, dest: Destination) -> Decision {
        if span.confidence < self.ignore_below {
            return Decision::Allow;
        }
        let rule = self.rule(span.category, dest);
        if span.confidence < self.consent_below && rule > Decision::Consent {
            Decision::Consent
        } else {
            rule
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(category: Category, confidence: f32) -> Span {
        Span {
            start: 0,
            end: 1,
            category,
            detector: "test".into(),
            confidence,
        }
    }

    #[test]
    fn default_policy_is_safe() {
        let p = Policy::default_policy();
        let cloud = Destination::Cloud;
        assert_eq!(
            p.outcome(&span(Category::Secret, 1.0), cloud),
            Decision::Refuse
        );
        assert_eq!(
            p.outcome(&span(Category::Email, 1.0), cloud),
            Decision::Mask
        );
        assert_eq!(
            p.outcome(&span(Category::Person, 0.9), cloud),
            Decision::Mask
        );
        assert_eq!(
            p.outcome(&span(Category::Location, 0.9), cloud),
            Decision::Allow
        );
        for special in [
            Category::Health,
            Category::MentalHealth,
            Category::Sexuality,
            Category::Religion,
            Category::Ethnicity,
            Category::Biometrics,
            Category::Politics,
            Category::Legal,
            Category::Immigration,
            Category::CriminalHistory,
        ] {
            assert_eq!(
                p.outcome(&span(special, 0.95), cloud),
                Decision::Local,
                "{special:?}"
            );
        }
        assert_eq!(
            p.outcome(&span(Category::Health, 0.45), cloud),
            Decision::Consent
        );
        assert_eq!(
            p.outcome(&span(Category::Health, 0.05), cloud),
            Decision::Allow
        );
        assert_eq!(
            p.outcome(&span(Category::Secret, 1.0), Destination::Local),
            Decision::Allow
        );
    }

    #[test]
    fn unknown_field_is_named() {
        let text = r#"{"ignore_below": 0.2, "consent_below": 0.6, "max_input_bytes": 10,
            "destinations": {"cloud": {"default": "mask", "categries": {}},
                             "local": {"default": "allow"}}}"#;
        let err = Policy::from_json(text, "p.json").unwrap_err().to_string();
        assert!(err.contains("categries") && err.contains("line 2"), "{err}");
    }

    #[test]
    fn unknown_category_and_outcome_are_named() {
        let text = r#"{"ignore_below": 0.2, "consent_below": 0.6, "max_input_bytes": 10,
            "destinations": {"cloud": {"default": "mask", "categories": {"emial": "mask"}},
                             "local": {"default": "allow"}}}"#;
        let err = Policy::from_json(text, "p.json").unwrap_err().to_string();
        assert!(err.contains("emial"), "{err}");
        let text = text.replace("\"emial\": \"mask\"", "\"email\": \"hide\"");
        let err = Policy::from_json(&text, "p.json").unwrap_err().to_string();
        assert!(err.contains("hide") && err.contains("line 2"), "{err}");
    }

    #[test]
    fn missing_destination_and_bad_threshold_are_named() {
        let text = r#"{"ignore_below": 0.2, "consent_below": 0.6, "max_input_bytes": 10,
            "destinations": {"cloud": {"default": "mask"}}}"#;
        let err = Policy::from_json(text, "p.json").unwrap_err().to_string();
        assert!(err.contains("destinations.local"), "{err}");
        let text = r#"{"ignore_below": 0.7, "consent_below": 0.6, "max_input_bytes": 10,
            "destinations": {"cloud": {"default": "mask"}, "local": {"default": "allow"}}}"#;
        let err = Policy::from_json(text, "p.json").unwrap_err().to_string();
        assert!(err.contains("consent_below"), "{err}");
    }

    #[test]
    fn unreadable_defaults_to_local_and_is_never_sent() {
        assert_eq!(Policy::default_policy().unreadable, Decision::Local);
        let text = r#"{"ignore_below": 0.2, "consent_below": 0.6, "max_input_bytes": 10,
            "unreadable": "mask",
            "destinations": {"cloud": {"default": "mask"}, "local": {"default": "allow"}}}"#;
        let err = Policy::from_json(text, "p.json").unwrap_err().to_string();
        assert!(err.contains("unreadable"), "{err}");
    }

    #[test]
    fn destination_parses() {
        assert_eq!("cloud".parse::<Destination>().unwrap(), Destination::Cloud);
        assert!("moon"
            .parse::<Destination>()
            .unwrap_err()
            .to_string()
            .contains("moon"));
    }
}
