//! The Rust feature extraction must match the Python one the models were trained with, string
//! for string. The fixture is written by `python scripts/gate/features.py FILE`.

use lily_gate::learned::features::{name_features, tokenize, topic_features, Gazetteers};
use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    text: String,
    tokens: Vec<[usize; 2]>,
    name_features: Vec<Vec<String>>,
    topic_features: Vec<String>,
}

#[test]
fn rust_features_match_the_training_features() {
    let cases: Vec<Case> = serde_json::from_str(include_str!("learned_features.json")).unwrap();
    assert!(cases.len() >= 5);
    let gaz = Gazetteers::builtin();
    for case in cases {
        let tokens = tokenize(&case.text);
        let offsets: Vec<[usize; 2]> = tokens.iter().map(|t| [t.start, t.end]).collect();
        assert_eq!(offsets, case.tokens, "tokens of {:?}", case.text);
        assert_eq!(
            name_features(&tokens, &gaz),
            case.name_features,
            "name features of {:?}",
            case.text
        );
        assert_eq!(
            topic_features(&tokens),
            case.topic_features,
            "topic features of {:?}",
            case.text
        );
    }
}
