//! Names of people, places and organisations: a token tagger (BIO labels, per-token softmax,
//! Viterbi under the BIO constraint) plus a gazetteer detector for what the tagger misses.

use std::collections::HashSet;
use std::sync::OnceLock;

use super::features::{
    name_feature_hashes, tokenize, GazFlags, Gazetteers, Token, NAME_FEATURE_VERSION,
};
use super::model::LinearModel;
use super::LearnedError;
use crate::public_context::is_public_context;
use crate::{Category, Span};

const MODEL_FILE: &str = "models/names.lgm";
const LABELS: [&str; 7] = ["O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG"];
const ENTITIES: [Category; 3] = [Category::Person, Category::Location, Category::Organization];

/// Spans whose mean token probability is lower than this are dropped: below it the tagger is
/// mostly wrong on the held-out set (`scripts/gate/train_names.py` prints the curve).
const MIN_CONFIDENCE: f32 = 0.5;
/// Confidence of a gazetteer-only hit: two listed name parts in a row, or a name followed by a
/// legal form, are usually right but carry no context evidence.
const GAZETTEER_CONFIDENCE: f32 = 0.75;
/// A listed given name before a capitalised word that is on no list: usually a surname, but in
/// German the word may be any noun.
const UNLISTED_SURNAME_CONFIDENCE: f32 = 0.6;
/// Legal forms that end a company name; unlike "University" or "Bank" they never start one.
const LEGAL_FORMS: [&str; 20] = [
    "inc", "ltd", "llc", "llp", "plc", "corp", "gmbh", "ag", "kg", "ug", "se", "sa", "sas", "sarl",
    "spa", "srl", "bv", "nv", "lda", "sl",
];

/// The entries of a gazetteer list, lowercased: one per line, `#` starts a comment line.
fn word_set(list: &str) -> HashSet<String> {
    list.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_lowercase)
        .collect()
}

/// Whether a lowercased word is a given name of `gazetteers/first_names.txt`.
pub fn is_given_name(lower: &str) -> bool {
    static WORDS: OnceLock<HashSet<String>> = OnceLock::new();
    WORDS
        .get_or_init(|| word_set(include_str!("gazetteers/first_names.txt")))
        .contains(lower)
}

/// Given names that are also common words ("Will", "Hope", "Mark", "Rose", Italian "Mia" my,
/// Portuguese "Sem" without, Spanish "Luz" light): names only in a name position (after a
/// greeting or title, before a surname or a person's verb), never on their own.
#[rustfmt::skip]
const COMMON_WORD_NAMES: &[&str] = &[
    "will", "bill", "hope", "rose", "mark", "grace", "hunter", "iris", "summer", "may", "june", "april", "faith",
    "joy", "dawn", "ivy", "holly", "daisy", "ruby", "amber", "pearl", "jack", "frank", "rob", "sue", "pat", "ray",
    "sky", "autumn", "robin", "jade", "crystal", "violet", "lily", "patience", "honey", "rosa", "luz", "sol",
    "mar", "pilar", "paz", "angel", "ángel", "cruz", "victor", "mia", "sem", "dolores", "soledad", "consuelo",
    "mercedes", "rocío", "blanca", "nieves", "socorro", "camino", "milagros", "esperanza", "luna", "estrella",
    "paloma", "aurora", "alba", "clara", "vera", "gloria", "amor", "flor", "bianca", "serena", "felicity",
    "prudence", "constance", "earnest", "chance", "rich", "guy", "art", "bob", "don", "gene", "carol", "mercy",
];

/// Whether a lowercased given name is also a common word; see `COMMON_WORD_NAMES`.
pub fn is_common_word_name(lower: &str) -> bool {
    COMMON_WORD_NAMES.contains(&lower)
}

/// Whether a lowercased token is an honorific written after a name, with or without a case
/// suffix: Turkish "Ahmet Bey", "Ayşe Hanım'a".
fn is_honorific_after(lower: &str) -> bool {
    let word = lower.split(['\'', '’']).next().unwrap_or(lower);
    matches!(word, "bey" | "hanım" | "beyefendi" | "hanımefendi")
}

/// Words after a sentence-initial "Mark", "Will", "Hope" that make it a verb: "Mark the date",
/// "Will you ...", "Hope you are well".
#[rustfmt::skip]
const AFTER_A_VERB: &[&str] = &[
    "the", "a", "an", "this", "that", "these", "those", "my", "your", "our", "his", "her", "their", "all", "some", "it",
    "them", "him", "up", "down", "out", "off", "as", "you", "me", "us", "we", "i", "they", "he", "she", "there", "not",
    "everyone", "everything", "each", "every", "both", "one", "two", "and", "or", "is", "be",
];

/// Whether a lowercased word is a surname of `gazetteers/surnames.txt`.
pub fn is_surname(lower: &str) -> bool {
    static WORDS: OnceLock<HashSet<String>> = OnceLock::new();
    WORDS
        .get_or_init(|| word_set(include_str!("gazetteers/surnames.txt")))
        .contains(lower)
}

/// Whether a lowercased token is a title of `gazetteers/titles.txt` ("dr", "frau", "señora").
pub fn is_title(lower: &str) -> bool {
    static WORDS: OnceLock<HashSet<String>> = OnceLock::new();
    WORDS
        .get_or_init(|| word_set(include_str!("gazetteers/titles.txt")))
        .contains(lower)
}

/// Whether a lowercased name, written whole ("angela merkel", "пушкин", "孔子"), is a public
/// figure or fictional character of `gazetteers/public_names.txt`.
pub fn is_public_name(lower: &str) -> bool {
    static WORDS: OnceLock<HashSet<String>> = OnceLock::new();
    WORDS
        .get_or_init(|| word_set(include_str!("gazetteers/public_names.txt")))
        .contains(lower)
}

/// Whether a lowercased word is on `gazetteers/not_names.txt`: computing terms, grammar terms,
/// school subjects, weekdays, months and holidays, which are capitalised like names ("Bash",
/// "Dativ", "Freitag") but never name a private person.
pub fn is_never_a_name(lower: &str) -> bool {
    static WORDS: OnceLock<HashSet<String>> = OnceLock::new();
    WORDS
        .get_or_init(|| word_set(include_str!("gazetteers/not_names.txt")))
        .contains(lower)
}

/// One token's probability of each of `LABELS`.
type Probs = [f32; LABELS.len()];

pub struct NameTagger {
    model: LinearModel,
    gaz: Gazetteers,
}

/// Label index -> (entity index, is-begin). `None` for O.
fn decode_label(label: usize) -> Option<(usize, bool)> {
    (label > 0).then(|| ((label - 1) / 2, (label - 1).is_multiple_of(2)))
}

fn allowed(prev: Option<usize>, label: usize) -> bool {
    match decode_label(label) {
        Some((entity, false)) => prev
            .and_then(decode_label)
            .is_some_and(|(e, _)| e == entity),
        _ => true,
    }
}

fn is_word(s: &str) -> bool {
    s.chars()
        .all(|c| c.is_alphabetic() || matches!(c, '\'' | '’' | '-'))
}

fn is_capitalised(s: &str) -> bool {
    s.chars().next().is_some_and(char::is_uppercase)
}

impl NameTagger {
    pub fn load_default() -> Result<Self, LearnedError> {
        let bytes = include_bytes!("../../models/names.lgm");
        Ok(NameTagger {
            model: LinearModel::parse(bytes, MODEL_FILE, b"LGNM", NAME_FEATURE_VERSION, &LABELS)?,
            gaz: Gazetteers::builtin(),
        })
    }

    /// Person, Location and Organization spans with byte offsets into `text`.
    pub fn tag(&self, text: &str) -> Vec<Span> {
        let tokens = tokenize(text);
        if tokens.is_empty() {
            return Vec::new();
        }
        let lower: Vec<String> = tokens.iter().map(|t| t.text.to_lowercase()).collect();
        let flags = self.gaz.flags(&lower);
        let probs = self.token_probs(&tokens, &lower, &flags);
        let labels = viterbi(&probs);

        let mut spans = Vec::new();
        let mut i = 0;
        while i < labels.len() {
            let Some((entity, _)) = decode_label(labels[i]) else {
                i += 1;
                continue;
            };
            let mut j = i + 1;
            while j < labels.len() && decode_label(labels[j]) == Some((entity, false)) {
                j += 1;
            }
            let confidence = (i..j).map(|k| probs[k][labels[k]]).sum::<f32>() / (j - i) as f32;
            // Public and fictional names are not reported under any label: a span made of one
            // is a person the tagger may have mistaken for a place or company.
            let public = (i..j).all(|k| flags[k].public);
            let person_word = ENTITIES[entity] == Category::Person && j == i + 1;
            // "Mark the date", "Will you check": a common word that is a name, used as a verb.
            let opens = i == 0
                || matches!(tokens[i - 1].text, "." | "!" | "?" | ":" | ";" | "\"" | "(")
                || text[tokens[i - 1].end..tokens[i].start].contains('\n');
            let verb = person_word
                && opens
                && is_common_word_name(&lower[i])
                && lower
                    .get(j)
                    .is_some_and(|n| AFTER_A_VERB.contains(&n.as_str()));
            let never = person_word && (is_never_a_name(&lower[i]) || verb);
            if confidence >= MIN_CONFIDENCE && !public && !never {
                // Titles and honorifics are not part of a person's span ("Ahmet Bey" -> "Ahmet").
                let (mut a, mut b) = (i, j);
                if ENTITIES[entity] == Category::Person {
                    while b - a > 1 && is_honorific_after(&lower[b - 1]) {
                        b -= 1;
                    }
                    while b - a > 1 && (is_title(&lower[a]) || lower[a] == ".") {
                        a += 1;
                    }
                }
                spans.push(span(&tokens, a, b, ENTITIES[entity], "ner", confidence));
            }
            i = j;
        }
        for g in self.gazetteer_spans(&tokens, &lower, &flags) {
            let overlaps = |s: &Span| s.start < g.end && g.start < s.end;
            // A gazetteer span may widen what the tagger found ("Markus" -> "Markus Feldhaus")
            // but never override a different reading of the same words.
            let widens = spans
                .iter()
                .filter(|s| overlaps(s))
                .all(|s| s.category == g.category && g.start <= s.start && s.end <= g.end);
            if widens {
                spans.retain(|s| !overlaps(s));
                spans.push(g);
            }
        }
        // Persons in a who-was question or a sentence about a novel are public or fictional.
        spans
            .retain(|s| s.category != Category::Person || !is_public_context(text, s.start, s.end));
        spans.sort_by_key(|s| s.start);
        spans
    }

    /// Label probabilities of every token; `lower` and `flags` as `tag` computes them.
    fn token_probs(
        &self,
        tokens: &[Token<'_>],
        lower: &[String],
        flags: &[GazFlags],
    ) -> Vec<Probs> {
        let mut probs = Vec::with_capacity(tokens.len());
        name_feature_hashes(tokens, lower, flags, |hashes| {
            let mut scores = [0.0; LABELS.len()];
            self.model.score_hashes(hashes.iter().copied(), &mut scores);
            softmax(&mut scores);
            probs.push(scores);
        });
        probs
    }

    /// "Given-name Surname" where the given name is listed and both are capitalised (the
    /// surname need not be listed unless it is a place, a title or an organisation word), and
    /// "Xxx GmbH"-style company names. Public and fictional names are skipped like in the tagger.
    fn gazetteer_spans(
        &self,
        tokens: &[Token<'_>],
        lower: &[String],
        flags: &[GazFlags],
    ) -> Vec<Span> {
        let mut out = Vec::new();
        for i in 0..tokens.len() {
            let cap = |k: usize| is_capitalised(tokens[k].text);
            if i + 1 < tokens.len()
                && flags[i].first_name
                && cap(i)
                && cap(i + 1)
                && is_word(tokens[i + 1].text)
                && !(flags[i].public && flags[i + 1].public)
            {
                let next = flags[i + 1];
                let honorific = is_honorific_after(&lower[i + 1]);
                let other_list = next.place
                    || next.title
                    || next.org_word
                    || next.org_name
                    || next.public
                    || honorific;
                if next.surname {
                    out.push(span(
                        tokens,
                        i,
                        i + 2,
                        Category::Person,
                        "gazetteer",
                        GAZETTEER_CONFIDENCE,
                    ));
                } else if !other_list {
                    out.push(span(
                        tokens,
                        i,
                        i + 2,
                        Category::Person,
                        "gazetteer",
                        UNLISTED_SURNAME_CONFIDENCE,
                    ));
                }
            }
            // Legal forms are written capitalised ("SE", "GmbH"); lowercase "se", "sa" or "sl"
            // are ordinary words in French, Spanish, Italian and Portuguese.
            let legal = cap(i) && LEGAL_FORMS.contains(&lower[i].trim_end_matches('.'));
            if legal && i > 0 && cap(i - 1) && !flags[i - 1].public {
                // Up to three capitalised words before the legal form name the company.
                let mut start = i - 1;
                while start > 0
                    && i - start < 3
                    && cap(start - 1)
                    && tokens[start - 1].text.len() > 1
                {
                    start -= 1;
                }
                out.push(span(
                    tokens,
                    start,
                    i + 1,
                    Category::Organization,
                    "gazetteer",
                    GAZETTEER_CONFIDENCE,
                ));
            }
        }
        out
    }
}

fn span(
    tokens: &[Token<'_>],
    i: usize,
    j: usize,
    category: Category,
    detector: &str,
    confidence: f32,
) -> Span {
    Span {
        start: tokens[i].start,
        end: tokens[j - 1].end,
        category,
        detector: detector.to_string(),
        confidence,
    }
}

fn softmax(x: &mut [f32]) {
    let max = x.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let mut sum = 0.0;
    for v in x.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    for v in x.iter_mut() {
        *v /= sum;
    }
}

/// Most probable label sequence in which every I-X continues a B-X or I-X.
fn viterbi(probs: &[Probs]) -> Vec<usize> {
    const N: usize = LABELS.len();
    let logp = |p: f32| p.max(1e-9).ln();
    let mut score: [f32; N] = std::array::from_fn(|l| {
        if allowed(None, l) {
            logp(probs[0][l])
        } else {
            f32::NEG_INFINITY
        }
    });
    let mut back = vec![[0usize; N]; probs.len()];
    for t in 1..probs.len() {
        let mut next = [f32::NEG_INFINITY; N];
        for l in 0..N {
            for (p, &prev) in score.iter().enumerate() {
                if prev > f32::NEG_INFINITY && allowed(Some(p), l) && prev > next[l] {
                    next[l] = prev;
                    back[t][l] = p;
                }
            }
            next[l] += logp(probs[t][l]);
        }
        score = next;
    }
    let mut best = (0..N)
        .max_by(|&a, &b| score[a].total_cmp(&score[b]))
        .unwrap_or(0);
    let mut path = vec![0; probs.len()];
    for t in (0..probs.len()).rev() {
        path[t] = best;
        best = back[t][best];
    }
    path
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inside_label_needs_a_begin_of_the_same_entity() {
        assert!(!allowed(None, 2));
        assert!(allowed(Some(1), 2));
        assert!(!allowed(Some(3), 2));
        assert!(allowed(Some(0), 3));
    }

    #[test]
    fn viterbi_repairs_an_orphan_inside_label() {
        // Token 1 prefers I-PER after O; the constrained path must start the entity with B-PER
        // or drop it, never emit I-PER after O.
        let p = |v: [f32; 7]| v;
        let probs = vec![
            p([0.9, 0.02, 0.02, 0.02, 0.02, 0.01, 0.01]),
            p([0.3, 0.2, 0.4, 0.025, 0.025, 0.025, 0.025]),
        ];
        let path = viterbi(&probs);
        assert_eq!(path, vec![0, 0]);
    }
}
