//! The whole gate on the committed evaluation corpus. Targets from the issue that are reached
//! are asserted as they are; where a set is short of one, it is held at the level measured so
//! that a regression fails here too. Measured numbers: crates/gate/data/README.md.

use std::collections::BTreeSet;

use lily_gate::eval::{default_corpus, evaluate, Report, DECISIONS};
use lily_gate::{Decision, Gate, Policy, Tier};

fn report() -> Report {
    let gate = Gate::new(Policy::default_policy()).expect("learned tiers load");
    evaluate(&gate, &default_corpus())
}

#[test]
fn corpus_has_the_promised_shape() {
    let items = default_corpus();
    let count = |source: &str| items.iter().filter(|i| i.source == source).count();
    assert!(count("handwritten") >= 150, "hand-written items");
    assert!(count("blind2") >= 120, "items in the second blind set");
    assert!(
        count("first_person") >= 130,
        "items in the first-person set"
    );
    assert!(count("blind3") >= 120, "items in the third blind set");
    assert!(count("blind4") >= 100, "items in the fourth blind set");
    assert!(
        count("dev_multilingual") >= 150,
        "items in the multilingual development set"
    );
    let dev_locales: BTreeSet<&str> = items
        .iter()
        .filter(|i| i.source == "dev_multilingual")
        .map(|i| i.locale.as_str())
        .collect();
    assert_eq!(dev_locales.len(), 14, "{dev_locales:?}");
    let locales: BTreeSet<&str> = items
        .iter()
        .filter(|i| i.source == "generated")
        .map(|i| i.locale.as_str())
        .collect();
    assert_eq!(locales.len(), 7, "{locales:?}");
    let ids: BTreeSet<&str> = items.iter().map(|i| i.id.as_str()).collect();
    assert_eq!(ids.len(), items.len(), "ids are unique");
}

/// Per source: the highest leak rate and friction allowed. The targets are leak <= 2%
/// and friction <= 5%. A set within a target is held there, or at its measured level plus about
/// one item where that is tighter; a set short of a target is held at its measured count, so
/// that it cannot get worse unnoticed. Measured (gate-lang branch): generated 10/682 leaks, 0/158
/// held; handwritten 1/133, 1/67; blind 0/32, 0/12; blind2 1/89, 2/46; first_person 0/30, 4/108;
/// blind3 1/44, 4/87; blind4 2/40, 4/65; dev_multilingual 0/88, 2/68 (the set the multilingual
/// lexicons were tuned on: a regression guard, not a measure of generalisation).
const BOUNDS: [(&str, f64, f64); 8] = [
    ("generated", 0.016, 0.01),
    ("handwritten", 0.016, 0.031),
    // Small sets: one item of 32, 89, 30 or 44 is 3.1%, 1.1%, 3.3% or 2.3% on its own.
    ("blind", 0.032, 0.05),
    ("blind2", 0.023, 0.05),
    ("first_person", 0.034, 0.05),
    ("blind3", 0.046, 0.05),
    // Short of both targets: private names the gate does not know before verbs no rule lists,
    // and benign text the classifier or the tagger reads as sensitive (README, "Measured").
    ("blind4", 0.051, 0.062),
    // One item of 88 sensitive is 1.1%, of 68 benign 1.5%. Its two held-back items are benign
    // text the names tagger reads as a person ("Drucker", a Turkish sentence-initial word).
    ("dev_multilingual", 0.012, 0.045),
];

#[test]
fn gate_meets_its_targets_on_the_corpus() {
    let r = report();
    let ids = r.tier(Tier::Identifier, None);
    let names = r.tier(Tier::Name, Some("generated"));
    let summary = format!(
        "identifiers P {:.3} R {:.3}; names F1 (generated) {:.3}; leak {:.4}; friction {:.4}",
        ids.precision(),
        ids.recall(),
        names.f1(),
        r.leak_rate(),
        r.friction()
    );
    assert!(ids.precision() >= 0.98, "{summary}");
    assert!(ids.recall() >= 0.98, "{summary}");
    assert!(names.f1() >= 0.90, "{summary}");
    // Whole corpus: 1.32% leak (15 of 1138), 2.78% friction (17 of 611).
    assert!(r.leak_rate() <= 0.0141, "{summary}");
    assert!(r.friction() <= 0.03, "{summary}");
    // Special categories are kept local by the gate itself, not only asked about: 318 of the
    // 399 gold-`local` items (242 of 311 before the gate-lang round, without its sets).
    let local = DECISIONS
        .iter()
        .position(|&d| d == Decision::Local)
        .expect("a decision");
    let outcomes: Vec<[usize; 5]> = r.local_outcomes_by_source.values().copied().collect();
    let gold_local: usize = outcomes.iter().flatten().sum();
    let kept_local: usize = outcomes.iter().map(|o| o[local]).sum();
    assert!(
        kept_local as f64 >= 0.79 * gold_local as f64,
        "{kept_local} of {gold_local} gold-local items kept local; {summary}"
    );
    for (source, max_leak, max_friction) in BOUNDS {
        let [sensitive, leaks, benign, held] = r.rates_by_source[source];
        assert!(
            leaks as f64 <= max_leak * sensitive as f64,
            "{source}: {leaks} leaks of {sensitive}; {summary}"
        );
        assert!(
            held as f64 <= max_friction * benign as f64,
            "{source}: {held} of {benign} benign held back; {summary}"
        );
    }
}
