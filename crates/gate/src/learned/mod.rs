//! The learned tiers of the gate: a names tagger (people, places, organisations) and a
//! document-level topic classifier (health, mental health, sexuality, religion, politics,
//! ethnicity, finances, legal trouble, children, biometrics, immigration status, criminal
//! history) trained in the gate's 14 languages. The lexicon backstops (`crate::cues`) run
//! beside both.
//!
//! Both are linear models over hashed features, trained by `scripts/gate/train_names.py` and
//! `scripts/gate/train_topics.py` on data from `scripts/gate/gen_data.py`. Their weights are
//! compiled into the binary from `crates/gate/models/`; nothing is fetched at run time.
//!
//! What the names tier reports (the labelling convention of the training and evaluation data):
//! - `Person`: names of people, except public figures and fictional characters ("Angela Merkel",
//!   "Harry Potter"): a question about them reveals nothing about the user or anyone they know.
//!   Titles ("Dr.", "Frau") are not part of the span.
//! - `Location`: named places (countries, regions, cities, towns, streets without a house number).
//!   A place alone rarely identifies anyone; the policy decides what it is worth.
//! - `Organization`: companies, schools, universities, hospitals, public bodies. Product names
//!   ("iPhone 15", "Galaxy S23") are not organisations.
//!
//! What the topic tier reports: text that says something sensitive about the writer or a
//! specific person ("summarize my bloodwork", "my son has ADHD"). General questions about the
//! same subjects ("how do vaccines work") are not reported.

pub mod features;
mod model;
mod names;
mod topics;

pub use features::{tokenize, Token, NAME_FEATURE_VERSION, TOPIC_FEATURE_VERSION};
pub use names::{
    is_common_word_name, is_given_name, is_never_a_name, is_public_name, is_surname, is_title,
    NameTagger,
};
pub use topics::{sentences, TopicClassifier};

#[derive(Debug, thiserror::Error)]
pub enum LearnedError {
    #[error("{file}: expected magic {expected:?}, found {found:?}: not a model file of this kind")]
    BadMagic {
        file: &'static str,
        expected: [u8; 4],
        found: Vec<u8>,
    },
    #[error("{file}: truncated while reading {field} at byte {offset} of {len}")]
    Truncated {
        file: &'static str,
        field: &'static str,
        offset: usize,
        len: usize,
    },
    #[error("{file}: {field} is {found}, expected {expected}")]
    Mismatch {
        file: &'static str,
        field: &'static str,
        expected: String,
        found: String,
    },
}
