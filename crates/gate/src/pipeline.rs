//! The gate: runs every tier over the normalised input, maps findings back to the original
//! bytes, applies the policy and masks.
//!
//! Why the learned tiers can only make a decision stricter: the decision is the maximum
//! outcome over all findings, learned findings are only ever added to the rule findings (never
//! remove or shorten them), and when spans overlap for masking the union is masked. So adding
//! a tier can raise the maximum and widen the mask, never lower or narrow them.

use std::collections::BTreeSet;

use crate::cues::{GreetingNames, TopicCues};
use crate::learned::{LearnedError, NameTagger, TopicClassifier};
use crate::mask::Vault;
use crate::mentions::more_mentions;
use crate::names_scripts::ScriptNames;
use crate::normalize::Normalized;
use crate::patterns;
use crate::policy::{Destination, Policy};
use crate::span::{Span, Tier};
use crate::verdict::{Decision, Finding, Verdict};

/// A tier beyond the identifier patterns (names, topics): finds spans in normalised text,
/// byte offsets into the text it is given.
pub trait Detector: Send + Sync {
    fn name(&self) -> &str;
    fn detect(&self, text: &str) -> Vec<Span>;
}

pub struct Gate {
    policy: Policy,
    tiers: Vec<Box<dyn Detector>>,
    /// Whether the second pass runs: other mentions of the persons found, and names beside
    /// contact identifiers (`crate::mentions`).
    mentions: bool,
}

impl Detector for NameTagger {
    fn name(&self) -> &str {
        "names"
    }
    fn detect(&self, text: &str) -> Vec<Span> {
        self.tag(text)
    }
}

impl Detector for TopicClassifier {
    fn name(&self) -> &str {
        "topics"
    }
    fn detect(&self, text: &str) -> Vec<Span> {
        self.classify(text)
    }
}

/// Two tiers often find the same thing (the tagger and a greeting rule the same name, the
/// classifier and the topic lexicon the same topic). A topic (a document label) is kept once,
/// as its surest span, with the confidence of all its detectors combined; any other span is
/// dropped when a surer-or-equal span of its category contains it. The decision is the maximum
/// over findings, a combined confidence is at least that of each part and a higher confidence
/// is never a looser outcome, and the mask of the containing span covers the dropped one, so
/// this never loosens the verdict.
fn drop_redundant(mut spans: Vec<Span>) -> Vec<Span> {
    // Per category, covering spans before the spans they cover, the surer first; topics are
    // document labels, so only their confidence orders them.
    spans.sort_by(|a, b| {
        let key = |s: &Span| match s.category.tier() {
            Tier::Topic => (s.category, 0, std::cmp::Reverse(0)),
            _ => (s.category, s.start, std::cmp::Reverse(s.end)),
        };
        key(a)
            .cmp(&key(b))
            .then(b.confidence.total_cmp(&a.confidence))
    });
    let mut kept: Vec<Span> = Vec::with_capacity(spans.len());
    for s in spans {
        let Some(k) = kept.last_mut() else {
            kept.push(s);
            continue;
        };
        if k.category == s.category && s.category.tier() == Tier::Topic {
            if !k.detector.split('+').any(|d| d == s.detector) {
                // Two detectors of one topic (the classifier and the lexicon) each missing
                // it on their own is less likely than either alone: the evidence combines as
                // a noisy OR. Each alone is weak by design (a lexicon word asks for consent),
                // both together are surer and may cross the policy's `consent_below`.
                k.confidence = 1.0 - (1.0 - k.confidence) * (1.0 - s.confidence);
                k.detector = format!("{}+{}", k.detector, s.detector);
            }
        } else if !(k.category == s.category
            && k.confidence >= s.confidence
            && k.start <= s.start
            && s.end <= k.end)
        {
            kept.push(s);
        }
    }
    kept
}

impl Gate {
    /// The identifier tier, every learned tier built into the crate and their lexicon
    /// backstops. Fails rather than run without a tier: a gate silently missing names or
    /// topics would leak.
    pub fn new(policy: Policy) -> Result<Gate, LearnedError> {
        Ok(Gate::identifiers_only(policy)
            .with_tier(Box::new(NameTagger::load_default()?))
            .with_tier(Box::new(GreetingNames))
            .with_tier(Box::new(ScriptNames))
            .with_tier(Box::new(TopicClassifier::load_default()?))
            .with_tier(Box::new(TopicCues))
            .with_mentions())
    }

    /// Only the pattern tier: no model files, the fastest configuration.
    pub fn identifiers_only(policy: Policy) -> Gate {
        Gate {
            policy,
            tiers: Vec::new(),
            mentions: false,
        }
    }

    /// Adds the second pass: every other mention of a person found ("Smith" after "Maria
    /// Smith", "田中さん" after "田中太郎") and names beside e-mail addresses and phone numbers.
    /// It only adds person spans, so like a tier it can only make the verdict stricter.
    pub fn with_mentions(mut self) -> Gate {
        self.mentions = true;
        self
    }

    pub fn with_tier(mut self, tier: Box<dyn Detector>) -> Gate {
        self.tiers.push(tier);
        self
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// Names of the tiers that run, identifier patterns first.
    pub fn tier_names(&self) -> Vec<String> {
        std::iter::once("patterns".to_string())
            .chain(self.tiers.iter().map(|t| t.name().to_string()))
            .collect()
    }

    /// Inspects one text; placeholders are numbered in a fresh vault that is then dropped.
    pub fn inspect(&self, text: &str, dest: Destination) -> Verdict {
        self.inspect_bytes(text.as_bytes(), dest, &mut Vault::new())
    }

    /// Inspects one text of a conversation whose placeholders live in `vault`.
    pub fn inspect_in(&self, text: &str, dest: Destination, vault: &mut Vault) -> Verdict {
        self.inspect_bytes(text.as_bytes(), dest, vault)
    }

    /// Every finding of every tier, offsets into `input`, sorted by start. No policy applied.
    pub fn find(&self, input: &[u8]) -> Vec<Span> {
        let normalized = Normalized::from_bytes(input);
        self.find_normalized(&normalized)
    }

    fn find_normalized(&self, normalized: &Normalized) -> Vec<Span> {
        let mut spans = patterns::scan(&normalized.text);
        for tier in &self.tiers {
            spans.extend(tier.detect(&normalized.text));
        }
        if self.mentions {
            let more = more_mentions(&normalized.text, &spans);
            spans.extend(more);
        }
        for s in &mut spans {
            (s.start, s.end) = normalized.original_range(s.start, s.end);
        }
        let mut spans = drop_redundant(spans);
        spans.sort_by_key(|s| (s.start, s.end));
        spans
    }

    /// Inspects input that need not be UTF-8: invalid sequences are read as U+FFFD, offsets
    /// index the original bytes, and the masked text is the masked bytes decoded lossily.
    pub fn inspect_bytes(&self, input: &[u8], dest: Destination, vault: &mut Vault) -> Verdict {
        let mut trace = Vec::new();
        if input.len() > self.policy.max_input_bytes {
            trace.push(format!(
                "input of {} bytes exceeds the policy limit of {} bytes: refused unread",
                input.len(),
                self.policy.max_input_bytes
            ));
            return Verdict {
                decision: Decision::Refuse,
                findings: Vec::new(),
                categories: BTreeSet::new(),
                masked_text: None,
                trace,
            };
        }
        if std::str::from_utf8(input).is_err() {
            trace.push("input is not valid UTF-8: invalid bytes read as U+FFFD, offsets index the original bytes".to_string());
        }
        let normalized = Normalized::from_bytes(input);
        let findings: Vec<Finding> = self
            .find_normalized(&normalized)
            .into_iter()
            .map(|span| {
                let outcome = self.policy.outcome(&span, dest);
                Finding { span, outcome }
            })
            .collect();
        let mut categories = BTreeSet::new();
        let mut decision = Decision::Allow;
        for f in &findings {
            let s = &f.span;
            let rule = self.policy.rule(s.category, dest);
            let why = if s.confidence < self.policy.ignore_below {
                format!("ignored: confidence below {:.2}", self.policy.ignore_below)
            } else if f.outcome != rule {
                format!(
                    "rule says {rule}, but confidence is below {:.2}: ask",
                    self.policy.consent_below
                )
            } else {
                format!(
                    "rule for {} on {}",
                    crate::mask::label(s.category).to_lowercase(),
                    dest.as_str()
                )
            };
            trace.push(format!(
                "{:?} at bytes {}..{} ({}, confidence {:.2}) -> {} ({why})",
                s.category, s.start, s.end, s.detector, s.confidence, f.outcome
            ));
            if s.confidence >= self.policy.ignore_below {
                categories.insert(s.category);
            }
            decision = decision.max(f.outcome);
        }
        let alongside = |f: &Finding| {
            f.outcome == Decision::Allow
                && f.span.confidence >= self.policy.ignore_below
                && self.policy.mask_alongside.contains(&f.span.category)
        };
        let any_masked = findings.iter().any(|f| f.outcome == Decision::Mask);
        let to_mask: Vec<Span> = findings
            .iter()
            .filter(|f| f.outcome == Decision::Mask || (any_masked && alongside(f)))
            .map(|f| f.span.clone())
            .collect();
        let masked_text =
            if matches!(decision, Decision::Mask | Decision::Consent) && !to_mask.is_empty() {
                Some(String::from_utf8_lossy(&vault.mask_bytes(input, &to_mask)).into_owned())
            } else {
                None
            };
        trace.push(match findings.len() {
            0 => format!("nothing sensitive found: {decision}"),
            n => format!(
                "decision {decision}: the strictest outcome of {n} finding(s) for destination {}",
                dest.as_str()
            ),
        });
        Verdict {
            decision,
            findings,
            categories,
            masked_text,
            trace,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::Category;

    fn found(category: Category, start: usize, end: usize, confidence: f32) -> Span {
        Span {
            start,
            end,
            category,
            detector: "test".to_string(),
            confidence,
        }
    }

    #[test]
    fn a_finding_covered_by_a_surer_one_of_its_category_is_dropped() {
        let kept = drop_redundant(vec![
            found(Category::Person, 0, 5, 0.7),
            found(Category::Person, 0, 11, 0.9),
            found(Category::Location, 0, 5, 0.9),
            found(Category::Health, 20, 40, 0.45),
            found(Category::Health, 0, 19, 0.8),
            found(Category::Legal, 0, 19, 0.45),
        ]);
        let got: Vec<(Category, usize, usize)> =
            kept.iter().map(|s| (s.category, s.start, s.end)).collect();
        assert_eq!(
            got,
            [
                (Category::Person, 0, 11),
                (Category::Location, 0, 5),
                (Category::Health, 0, 19),
                (Category::Legal, 0, 19),
            ]
        );
        // A surer span inside a weaker one of its category stays: dropping it would loosen.
        let kept = drop_redundant(vec![
            found(Category::Person, 0, 11, 0.5),
            found(Category::Person, 0, 5, 0.9),
        ]);
        assert_eq!(kept.len(), 2);
    }

    #[test]
    fn a_topic_found_by_two_detectors_combines_their_confidence() {
        let by = |detector: &str, confidence: f32| Span {
            detector: detector.to_string(),
            ..found(Category::Health, 0, 19, confidence)
        };
        let kept = drop_redundant(vec![by("topic-cue", 0.45), by("topic", 0.4)]);
        assert_eq!(kept.len(), 1);
        assert!(
            (kept[0].confidence - 0.67).abs() < 1e-6,
            "{}",
            kept[0].confidence
        );
        assert_eq!(kept[0].detector, "topic-cue+topic");
        // One detector's findings do not reinforce each other.
        let kept = drop_redundant(vec![by("topic", 0.4), by("topic", 0.4)]);
        assert_eq!(kept[0].confidence, 0.4);
    }

    struct Fixed(Vec<Span>);
    impl Detector for Fixed {
        fn name(&self) -> &str {
            "fixed"
        }
        fn detect(&self, _text: &str) -> Vec<Span> {
            self.0.clone()
        }
    }

    fn gate() -> Gate {
        Gate::identifiers_only(Policy::default_policy())
    }

    #[test]
    fn harmless_text_is_allowed() {
        let v = gate().inspect(
            "How do I reverse a linked list in Rust?",
            Destination::Cloud,
        );
        assert_eq!(v.decision, Decision::Allow);
        assert!(v.findings.is_empty() && v.masked_text.is_none());
    }

    #[test]
    fn identifiers_are_masked_for_cloud_and_allowed_locally() {
        let text = "Email bob@acme.io about card 4111 1111 1111 1111";
        let v = gate().inspect(text, Destination::Cloud);
        assert_eq!(v.decision, Decision::Mask);
        assert_eq!(
            v.masked_text.as_deref(),
            Some("Email <EMAIL_1> about card <CARD_1>")
        );
        assert!(
            v.trace.iter().all(|line| !line.contains("bob@")),
            "trace must not leak values"
        );
        let local = gate().inspect(text, Destination::Local);
        assert_eq!(local.decision, Decision::Allow);
        assert_eq!(
            local.categories.len(),
            2,
            "found categories are reported whatever the outcome"
        );
    }

    #[test]
    fn learned_tiers_only_make_it_stricter() {
        let text = "Email bob@acme.io please";
        let base = gate().inspect(text, Destination::Cloud);
        let extra = [
            (Category::Person, 0.9, Decision::Mask),
            (Category::Health, 0.9, Decision::Local),
            (Category::Health, 0.45, Decision::Consent),
            (Category::Health, 0.1, Decision::Mask),
        ];
        for (category, confidence, expect) in extra {
            let tier = Fixed(vec![Span {
                start: 0,
                end: 5,
                category,
                detector: "fake".into(),
                confidence,
            }]);
            let v = gate()
                .with_tier(Box::new(tier))
                .inspect(text, Destination::Cloud);
            assert!(v.decision >= base.decision);
            assert_eq!(v.decision, expect, "{category:?} {confidence}");
            if expect == Decision::Consent {
                assert!(
                    v.trace
                        .iter()
                        .any(|l| l.contains("rule says local, but confidence is below")),
                    "{:?}",
                    v.trace
                );
            }
            // The rule finding is still there and still masked.
            assert!(v
                .findings
                .iter()
                .any(|f| f.span.category == Category::Email && f.outcome == Decision::Mask));
        }
    }

    #[test]
    fn all_tiers_load_and_run() {
        let gate = Gate::new(Policy::default_policy()).expect("embedded models load");
        assert_eq!(
            gate.tier_names(),
            [
                "patterns",
                "names",
                "greeting-names",
                "script-names",
                "topics",
                "topic-cues"
            ]
        );
        let v = gate.inspect(
            "Write to bob@acme.io about the invoice.",
            Destination::Cloud,
        );
        assert!(v
            .findings
            .iter()
            .any(|f| f.span.category == Category::Email));
    }

    #[test]
    fn places_are_masked_only_alongside_something_else() {
        let place = |text: &str, needle: &str| {
            let start = text.find(needle).unwrap();
            Fixed(vec![Span {
                start,
                end: start + needle.len(),
                category: Category::Location,
                detector: "fake".into(),
                confidence: 0.9,
            }])
        };
        let alone = "What is the weather like in Lisbon?";
        let v = gate()
            .with_tier(Box::new(place(alone, "Lisbon")))
            .inspect(alone, Destination::Cloud);
        assert_eq!(v.decision, Decision::Allow);
        let with_mail = "Mail ann@acme.io in Lisbon";
        let v = gate()
            .with_tier(Box::new(place(with_mail, "Lisbon")))
            .inspect(with_mail, Destination::Cloud);
        assert_eq!(
            v.masked_text.as_deref(),
            Some("Mail <EMAIL_1> in <LOCATION_1>")
        );
    }

    #[test]
    fn oversized_input_is_refused() {
        let mut policy = Policy::default_policy();
        policy.max_input_bytes = 10;
        let v = Gate::identifiers_only(policy).inspect("0123456789abc", Destination::Cloud);
        assert_eq!(v.decision, Decision::Refuse);
    }

    #[test]
    fn binary_input_offsets_index_original_bytes() {
        let input = b"\xff\x00\xfe mail eve@acme.org \x80\x81";
        let v = gate().inspect_bytes(input, Destination::Cloud, &mut Vault::new());
        let s = &v.findings[0].span;
        assert_eq!(&input[s.start..s.end], b"eve@acme.org");
        assert!(v.masked_text.unwrap().contains("<EMAIL_1>"));
    }
}
