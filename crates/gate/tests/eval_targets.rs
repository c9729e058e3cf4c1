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
    for (set, at_least) in [
        ("blind5", 170),
        ("blind6", 150),
        ("blind7", 200),
        ("blind8", 130),
        ("blind8_adv", 110),
    ] {
        assert!(count(set) >= at_least, "items in {set}");
    }
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
/// and friction <= 5% (everyday prompts), leak <= 5% and friction <= 8% (adversarial ones). A
/// set within a target is held there, or at its measured level plus about one item where that
/// is tighter; a set short of a target is held at its measured count, so that it cannot get
/// worse unnoticed. Measured with the rule round and the multilingual topic classifier together
/// (data/README.md, "Measured"): generated 5/682 leaks, 0/158 held; handwritten 3/133, 0/67;
/// blind 2/32, 0/12; blind2 3/89, 5/46; first_person 0/30, 2/108; blind3 2/44, 4/87; blind4
/// 2/40, 6/65; blind5 0/74, 5/101; blind6 4/98, 2/56; blind7 11/102, 4/100; blind8 6/69, 2/61;
/// blind8_adv 15/66, 4/44; dev_multilingual 0/88, 7/68; dev_identifiers 0/52, 0/15; dev_names
/// 1/61, 0/57. blind8 and blind8_adv were measured once, on this gate, before any change made
/// for them; from now on they too are regression guards, not measures of generalisation.
const BOUNDS: [(&str, f64, f64); 15] = [
    ("generated", 0.009, 0.01),
    // Three special-category statements without a word the classifier weighs (back pain, a
    // thyroid value in a message to a doctor, two women adopting).
    ("handwritten", 0.023, 0.016),
    // Small sets: one item of 32, 89, 30 or 44 is 3.1%, 1.1%, 3.3% or 2.3% on its own.
    ("blind", 0.063, 0.05),
    // Short of the friction target: general questions on chemotherapy, denominations and
    // custody that the classifier reads as personal (README, "Measured").
    ("blind2", 0.034, 0.109),
    ("first_person", 0.034, 0.05),
    ("blind3", 0.046, 0.05),
    // Short of both targets: private names the gate does not know before verbs no rule lists,
    // and benign text the classifier or the tagger reads as sensitive (README, "Measured").
    ("blind4", 0.051, 0.093),
    ("blind5", 0.014, 0.05),
    ("blind6", 0.041, 0.054),
    // Short of the leak target: disclosures in words neither the classifier nor the lexicon
    // knows (README, "Measured").
    ("blind7", 0.108, 0.05),
    // Short of the everyday leak target at its one measurement: names, a phone, an e-mail and
    // disclosures the gate let through (README, "Measured").
    ("blind8", 0.087, 0.05),
    // Short of both adversarial targets at its one measurement: disguised national ids and an
    // IBAN, secrets, names and indirect disclosures (README, "Measured").
    ("blind8_adv", 0.228, 0.091),
    // General questions on asylum procedures, chemotherapy and GLP-1 drugs read as personal.
    ("dev_multilingual", 0.012, 0.103),
    ("dev_identifiers", 0.02, 0.05),
    ("dev_names", 0.017, 0.02),
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
    // Identifier recall 0.978 since blind8_adv joined (disguised national ids and an IBAN it
    // missed at its one measurement); held there.
    assert!(ids.precision() >= 0.98, "{summary}");
    assert!(ids.recall() >= 0.975, "{summary}");
    assert!(names.f1() >= 0.90, "{summary}");
    // Whole corpus: 3.25% leak (54 of 1660; 32 of them in blind7, blind8 and blind8_adv),
    // 3.92% friction (41 of 1045).
    assert!(r.leak_rate() <= 0.033, "{summary}");
    assert!(r.friction() <= 0.040, "{summary}");
    // Special categories are kept local by the gate itself, not only asked about: 425 of the
    // 557 gold-`local` items (blind6, blind8 and dev_multilingual answer more of theirs with
    // `consent`).
    let local = DECISIONS
        .iter()
        .position(|&d| d == Decision::Local)
        .expect("a decision");
    let outcomes: Vec<[usize; 5]> = r.local_outcomes_by_source.values().copied().collect();
    let gold_local: usize = outcomes.iter().flatten().sum();
    let kept_local: usize = outcomes.iter().map(|o| o[local]).sum();
    assert!(
        kept_local as f64 >= 0.76 * gold_local as f64,
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
