//! Sensitive topics with no identifier at all: a multi-label linear classifier over words,
//! bigrams, prefixes and character n-grams (which carry it into scripts written without spaces
//! and across inflection), with Platt-calibrated confidences.
//!
//! Each sentence is scored on its own, and a text of several sentences also as a whole (a topic
//! can need two sentences: "My son is seven. He still wets the bed."). A topic's confidence is
//! its best score over these units, and its span is the first unit that came close to that
//! (`SPAN_MARGIN`): the sentence that shows it, unless only the whole text does.

use super::features::{
    is_topic_word, tokenize, topic_feature_hashes, Token, TOPIC_FEATURE_VERSION,
};
use super::model::LinearModel;
use super::LearnedError;
use crate::{Category, Span};

const MODEL_FILE: &str = "models/topics.lgm";
const LABELS: [&str; 12] = [
    "health",
    "mental_health",
    "sexuality",
    "religion",
    "politics",
    "ethnicity",
    "finances",
    "legal",
    "children",
    "biometrics",
    "immigration",
    "criminal_history",
];
const CATEGORIES: [Category; 12] = [
    Category::Health,
    Category::MentalHealth,
    Category::Sexuality,
    Category::Religion,
    Category::Politics,
    Category::Ethnicity,
    Category::Finances,
    Category::Legal,
    Category::Children,
    Category::Biometrics,
    Category::Immigration,
    Category::CriminalHistory,
];

/// Topics with a calibrated confidence below this are not reported. Low on purpose: the policy
/// turns findings below its `consent_below` into a question to the user, so a weak topic asks
/// instead of leaking. Not lower: on the committed evaluation sets 0.3 would flag ten more
/// benign texts (general questions on a sensitive subject, such as how an asylum procedure
/// works) for nine more topics found (crates/gate/data/README.md, "Measured").
pub const MIN_CONFIDENCE: f32 = 0.35;

/// How much surer than the unit that found a topic first a later unit (a later sentence, the
/// whole text) must be to become the topic's span.
const SPAN_MARGIN: f32 = 0.01;

pub struct TopicClassifier {
    model: LinearModel,
}

/// Byte ranges of sentences: text up to and including `.`, `!`, `?`, their full-width forms
/// (`。`, `！`, `？`, which end Chinese and Japanese sentences) or a newline, trimmed.
pub fn sentences(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut push = |s: usize, e: usize| {
        let piece = &text[s..e];
        let lead = piece.len() - piece.trim_start().len();
        let trail = piece.len() - piece.trim_end().len();
        if s + lead < e - trail {
            out.push((s + lead, e - trail));
        }
    };
    for (i, c) in text.char_indices() {
        if matches!(c, '.' | '!' | '?' | '\n' | '。' | '！' | '？') {
            let end = i + c.len_utf8();
            // A dot inside a number or abbreviation ("3.5", "e.g.x") does not end a sentence.
            if c == '.'
                && text[end..]
                    .chars()
                    .next()
                    .is_some_and(|n| !n.is_whitespace())
            {
                continue;
            }
            push(start, end);
            start = end;
        }
    }
    push(start, text.len());
    out
}

impl TopicClassifier {
    pub fn load_default() -> Result<Self, LearnedError> {
        let bytes = include_bytes!("../../models/topics.lgm");
        Ok(TopicClassifier {
            model: LinearModel::parse(bytes, MODEL_FILE, b"LGTP", TOPIC_FEATURE_VERSION, &LABELS)?,
        })
    }

    /// Calibrated probability of every topic for one piece of text given by its lowercased
    /// words (`features::topic_words`), in `LABELS` order.
    fn probabilities(&self, words: &[String]) -> Vec<f32> {
        let features = topic_feature_hashes(words);
        let mut scores = vec![0.0; self.model.n_labels()];
        self.model.score_hashes(features, &mut scores);
        scores
            .iter()
            .enumerate()
            .map(|(l, &s)| {
                1.0 / (1.0 + (-(self.model.calib_a[l] * s + self.model.calib_b[l])).exp())
            })
            .collect()
    }

    /// One span per topic found, covering the sentence (or the whole text) that showed it.
    pub fn classify(&self, text: &str) -> Vec<Span> {
        let mut units = sentences(text);
        if units.len() > 1 {
            let whole = units[0].0..units[units.len() - 1].1;
            units.push((whole.start, whole.end));
        }
        // The text is tokenised and lowercased once: a sentence's tokens are those of the text
        // between its bounds, since a sentence ends at a character that also ends a token.
        let tokens: Vec<Token<'_>> = tokenize(text).into_iter().filter(is_topic_word).collect();
        let words: Vec<String> = tokens.iter().map(|t| t.text.to_lowercase()).collect();
        let mut best: Vec<Option<(f32, (usize, usize))>> = vec![None; CATEGORIES.len()];
        for &(s, e) in &units {
            let first = tokens.partition_point(|t| t.start < s);
            let end = tokens.partition_point(|t| t.end <= e).max(first);
            for (l, p) in self
                .probabilities(&words[first..end])
                .into_iter()
                .enumerate()
            {
                // Sentences come before the whole text. The confidence is the best of all units,
                // but a later unit takes the span only when it is surer by more than
                // SPAN_MARGIN: near certainty a sentence and the text around it score alike,
                // and the sentence is the evidence.
                match &mut best[l] {
                    Some((q, span)) if p > *q => {
                        if p > *q + SPAN_MARGIN {
                            *span = (s, e);
                        }
                        *q = p;
                    }
                    None if p >= MIN_CONFIDENCE => best[l] = Some((p, (s, e))),
                    _ => {}
                }
            }
        }
        best.iter()
            .zip(CATEGORIES)
            .filter_map(|(b, category)| {
                b.map(|(confidence, (start, end))| Span {
                    start,
                    end,
                    category,
                    detector: "topic".to_string(),
                    confidence,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::sentences;

    #[test]
    fn a_sentences_words_are_those_of_the_text_between_its_bounds() {
        use crate::learned::features::{is_topic_word, tokenize, topic_words};
        let t = "Ich bin krank!Jean-Luc's Ärztin sagt: 2.5 mg.\nO'Brien?  Ja-wohl。我很好";
        let tokens: Vec<_> = tokenize(t).into_iter().filter(is_topic_word).collect();
        for (s, e) in sentences(t) {
            let inside: Vec<String> = tokens
                .iter()
                .filter(|tok| s <= tok.start && tok.end <= e)
                .map(|tok| tok.text.to_lowercase())
                .collect();
            assert_eq!(inside, topic_words(&tokenize(&t[s..e])), "{}", &t[s..e]);
        }
    }

    #[test]
    fn sentences_split_at_terminators_but_not_inside_numbers() {
        let t = "I take 2.5 mg daily.  My son is 7!\nWhy?";
        let got: Vec<&str> = sentences(t).iter().map(|&(s, e)| &t[s..e]).collect();
        assert_eq!(got, ["I take 2.5 mg daily.", "My son is 7!", "Why?"]);
        let t = "我妈妈去医院了。她得了癌症！";
        let got: Vec<&str> = sentences(t).iter().map(|&(s, e)| &t[s..e]).collect();
        assert_eq!(got, ["我妈妈去医院了。", "她得了癌症！"]);
    }
}
