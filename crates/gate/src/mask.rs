//! Reversible masking. Sensitive spans become typed, numbered placeholders (`<EMAIL_1>`,
//! `<PERSON_2>`) that stay the same for the same value through a conversation, and for a
//! person also for a shorter mention of a name masked in full ("Smith", "SMITH" or "Maria"
//! after "Maria Smith", "田中" after "田中太郎": `mentions::refers_to`; unmasking gives the
//! fuller name back); the `Vault`
//! remembers what each stands for so the reply can be unmasked, also when it arrives as a
//! stream that may split a placeholder across chunks.
//!
//! The vault never leaves the process: it implements neither `Serialize` nor `Clone`, its
//! `Debug` shows only counts, and its values are overwritten with zeros when it is dropped
//! (best effort: copies made by earlier reallocations are out of reach).
//!
//! Collisions: the user's own text may already contain something shaped like a placeholder.
//! Such a literal that the vault has not handed out is reserved (never handed out later), so a
//! reply that repeats it is left alone; one that equals a placeholder already handed out is
//! itself masked with a fresh placeholder standing for the literal, so unmasking restores it.

use std::collections::hash_map::RandomState;
use std::collections::{HashMap, HashSet};
use std::hash::BuildHasher;
use std::sync::LazyLock;

use regex::bytes::Regex as BytesRegex;
use regex::Regex;

use crate::mentions::refers_to;
use crate::span::{Category, Span, Tier};

/// How many distinct person names are compared with each other to find the fuller name a
/// mention belongs to (in one text, and among the latest placeholders of a conversation): the
/// comparison is pairwise, and a text or conversation naming more people than this is rare;
/// past it a mention may get a placeholder of its own.
const MAX_NAMES_COMPARED: usize = 256;
/// Longest placeholder the stream unmasker will wait for: `<` + label + `_` + number + `>`.
const MAX_PLACEHOLDER_LEN: usize = 40;

static PLACEHOLDER: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"<([A-Z]+(?:_[A-Z]+)*)_([0-9]{1,9})>").expect("placeholder regex")
});
static PLACEHOLDER_BYTES: LazyLock<BytesRegex> = LazyLock::new(|| {
    BytesRegex::new(r"<([A-Z]+(?:_[A-Z]+)*)_([0-9]{1,9})>").expect("placeholder regex")
});

fn label_of_person() -> &'static str {
    label(Category::Person)
}

/// The placeholder type for a category.
pub fn label(category: Category) -> &'static str {
    use Category::*;
    match category {
        Email => "EMAIL",
        Phone => "PHONE",
        PaymentCard => "CARD",
        Iban => "IBAN",
        NationalId => "NATIONAL_ID",
        Passport => "PASSPORT",
        DriversLicence => "DRIVERS_LICENCE",
        IpAddress => "IP",
        MacAddress => "MAC",
        UrlCredentials => "URL",
        Secret => "SECRET",
        CryptoWallet => "WALLET",
        DateOfBirth => "DOB",
        StreetAddress => "ADDRESS",
        MedicalRecord => "MEDICAL_RECORD",
        InsuranceNumber => "INSURANCE",
        Person => "PERSON",
        Location => "LOCATION",
        Organization => "ORG",
        Health => "HEALTH",
        MentalHealth => "MENTAL_HEALTH",
        Sexuality => "SEXUALITY",
        Religion => "RELIGION",
        Politics => "POLITICS",
        Ethnicity => "ETHNICITY",
        Finances => "FINANCES",
        Legal => "LEGAL",
        Children => "CHILDREN",
        Biometrics => "BIOMETRICS",
        Immigration => "IMMIGRATION",
        CriminalHistory => "CRIMINAL_HISTORY",
    }
}

struct Entry {
    label: String,
    /// The value as compared for "same value": e-mail case, spacing in numbers do not matter.
    canonical: String,
    original: String,
    placeholder: String,
}

/// Placeholders handed out in one conversation and what they stand for.
pub struct Vault {
    entries: Vec<Entry>,
    /// Hash of (label, canonical value) to entry indices; no value is kept as a map key.
    by_value: HashMap<u64, Vec<usize>>,
    by_placeholder: HashMap<String, usize>,
    last_number: HashMap<String, u32>,
    reserved: HashSet<String>,
    hasher: RandomState,
}

impl Default for Vault {
    fn default() -> Self {
        Vault::new()
    }
}

impl std::fmt::Debug for Vault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Vault")
            .field("placeholders", &self.entries.len())
            .field("reserved", &self.reserved.len())
            .finish()
    }
}

impl Drop for Vault {
    fn drop(&mut self) {
        for entry in &mut self.entries {
            for s in [&mut entry.canonical, &mut entry.original] {
                let mut bytes = std::mem::take(s).into_bytes();
                bytes.fill(0);
                std::hint::black_box(&bytes);
            }
        }
    }
}

impl Vault {
    pub fn new() -> Vault {
        Vault {
            entries: Vec::new(),
            by_value: HashMap::new(),
            by_placeholder: HashMap::new(),
            last_number: HashMap::new(),
            reserved: HashSet::new(),
            hasher: RandomState::new(),
        }
    }

    /// Number of placeholders handed out.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Replaces every span (byte offsets into `text`) with its placeholder.
    pub fn mask(&mut self, text: &str, spans: &[Span]) -> String {
        let masked = self.mask_bytes(text.as_bytes(), spans);
        // Spans start and end on character boundaries and placeholders are ASCII.
        String::from_utf8(masked)
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// Like `mask` for input that need not be UTF-8 (spans index the bytes).
    pub fn mask_bytes(&mut self, text: &[u8], spans: &[Span]) -> Vec<u8> {
        let mut pieces: Vec<(usize, usize, String)> = Vec::new();
        for m in PLACEHOLDER_BYTES.find_iter(text) {
            let literal = String::from_utf8_lossy(m.as_bytes()).into_owned();
            if self.by_placeholder.contains_key(&literal) {
                let caps = PLACEHOLDER_BYTES
                    .captures(m.as_bytes())
                    .expect("matched above");
                let label = String::from_utf8_lossy(&caps[1]).into_owned();
                let canonical = format!("\u{0}literal:{literal}");
                pieces.push((
                    m.start(),
                    m.end(),
                    self.placeholder_for(&label, canonical, literal),
                ));
            } else {
                self.reserved.insert(literal);
            }
        }
        let merged: Vec<(usize, usize, Category, String, String)> = merge(spans, text.len())
            .into_iter()
            .filter(|&(start, end, _)| !pieces.iter().any(|&(s, e, _)| s < end && start < e))
            .map(|(start, end, category)| {
                let original = String::from_utf8_lossy(&text[start..end]).into_owned();
                let canonical = canonical(category, &original);
                (start, end, category, canonical, original)
            })
            .collect();
        // A shorter mention of a person named in full in the same text ("Smith" before or
        // after "Maria Smith") takes its placeholder after the full name has one, so that
        // `placeholder_for` can find it; other spans are numbered in order of appearance.
        // Distinct names are compared pairwise, so only the first `MAX_NAMES_COMPARED` are.
        let mut seen = HashSet::new();
        let names: Vec<&str> = merged
            .iter()
            .filter(|m| m.2 == Category::Person && seen.insert(m.3.as_str()))
            .map(|m| m.3.as_str())
            .take(MAX_NAMES_COMPARED)
            .collect();
        let partial_names: HashSet<&str> = names
            .iter()
            .copied()
            .filter(|c| names.iter().any(|other| other != c && refers_to(c, other)))
            .collect();
        let (partial, whole): (Vec<_>, Vec<_>) = merged.iter().partition(|(_, _, cat, c, _)| {
            *cat == Category::Person && partial_names.contains(c.as_str())
        });
        for (start, end, category, canonical, original) in whole.into_iter().chain(partial) {
            let placeholder =
                self.placeholder_for(label(*category), canonical.clone(), original.clone());
            pieces.push((*start, *end, placeholder));
        }
        pieces.sort_by_key(|p| p.0);
        let mut out = Vec::with_capacity(text.len());
        let mut at = 0;
        for (start, end, placeholder) in pieces {
            out.extend_from_slice(&text[at..start]);
            out.extend_from_slice(placeholder.as_bytes());
            at = end;
        }
        out.extend_from_slice(&text[at..]);
        out
    }

    /// Restores every placeholder this vault handed out; anything else is left as is.
    pub fn unmask(&self, text: &str) -> String {
        PLACEHOLDER
            .replace_all(text, |caps: &regex::Captures| {
                match self.by_placeholder.get(&caps[0]) {
                    Some(&i) => self.entries[i].original.clone(),
                    None => caps[0].to_string(),
                }
            })
            .into_owned()
    }

    /// An unmasker for a reply that arrives in chunks.
    pub fn stream(&self) -> StreamUnmasker<'_> {
        StreamUnmasker {
            vault: self,
            held: String::new(),
        }
    }

    fn placeholder_for(&mut self, label: &str, canonical: String, original: String) -> String {
        let hash = self.hasher.hash_one((label, &canonical));
        if let Some(indices) = self.by_value.get(&hash) {
            for &i in indices {
                let e = &self.entries[i];
                if e.label == label && e.canonical == canonical {
                    return e.placeholder.clone();
                }
            }
        }
        // Another mention of a person already masked: the placeholder of the fullest name it
        // is part of, the latest first ("Smith" after "Maria Smith", "田中" after "田中太郎").
        if label == label_of_person() {
            if let Some(e) = self
                .entries
                .iter()
                .rev()
                .take(MAX_NAMES_COMPARED)
                .find(|e| {
                    e.label == label
                        && !e.canonical.starts_with('\u{0}')
                        && refers_to(&canonical, &e.canonical)
                })
            {
                return e.placeholder.clone();
            }
        }
        let number = self.last_number.entry(label.to_string()).or_insert(0);
        let placeholder = loop {
            *number += 1;
            let candidate = format!("<{label}_{number}>");
            if !self.reserved.contains(&candidate) {
                break candidate;
            }
        };
        let index = self.entries.len();
        self.entries.push(Entry {
            label: label.to_string(),
            canonical,
            original,
            placeholder: placeholder.clone(),
        });
        self.by_value.entry(hash).or_default().push(index);
        self.by_placeholder.insert(placeholder.clone(), index);
        placeholder
    }
}

/// What makes two mentions "the same value": case never matters, nor do the spellings the
/// detectors read through (fullwidth or other-script digits, zero-width characters,
/// compatibility forms: see `normalize`); for identifiers neither do separators ("4111 1111"
/// and "4111-1111").
fn canonical(category: Category, original: &str) -> String {
    let lower = crate::normalize::Normalized::from_text(original.trim())
        .text
        .to_lowercase();
    match category.tier() {
        Tier::Identifier
            if category != Category::StreetAddress && category != Category::DateOfBirth =>
        {
            let compact: String = lower
                .chars()
                .filter(|c| c.is_alphanumeric() || matches!(c, '@' | '.' | '_' | '+'))
                .collect();
            if compact.is_empty() {
                lower
            } else {
                compact
            }
        }
        _ => lower.split_whitespace().collect::<Vec<_>>().join(" "),
    }
}

/// Overlapping spans become one, typed by the most specific tier (identifier over name);
/// topic spans describe a document and are never masked. Out-of-range spans are clipped.
fn merge(spans: &[Span], len: usize) -> Vec<(usize, usize, Category)> {
    let mut maskable: Vec<&Span> = spans
        .iter()
        .filter(|s| s.category.tier() != Tier::Topic && s.start < s.end.min(len))
        .collect();
    maskable.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
    let rank = |c: Category| match c.tier() {
        Tier::Identifier => 0,
        Tier::Name => 1,
        Tier::Topic => 2,
    };
    let mut merged: Vec<(usize, usize, Category)> = Vec::new();
    for s in maskable {
        let end = s.end.min(len);
        match merged.last_mut() {
            Some(last) if s.start < last.1 => {
                last.1 = last.1.max(end);
                if rank(s.category) < rank(last.2) {
                    last.2 = s.category;
                }
            }
            _ => merged.push((s.start, end, s.category)),
        }
    }
    merged
}

/// Unmasks a streamed reply: text that might be the beginning of a placeholder is held back
/// until the next chunk shows whether it is one.
pub struct StreamUnmasker<'v> {
    vault: &'v Vault,
    held: String,
}

impl StreamUnmasker<'_> {
    /// Takes the next chunk; returns the text that can be shown now.
    pub fn push(&mut self, chunk: &str) -> String {
        self.held.push_str(chunk);
        let cut = possible_placeholder_start(&self.held);
        let ready: String = self.held.drain(..cut).collect();
        self.vault.unmask(&ready)
    }

    /// The end of the stream: whatever was held back.
    pub fn finish(self) -> String {
        self.vault.unmask(&self.held)
    }
}

/// Where an unfinished placeholder might start at the end of `s` (or `s.len()` if none).
fn possible_placeholder_start(s: &str) -> usize {
    let Some(i) = s.rfind('<') else {
        return s.len();
    };
    let tail = &s[i + 1..];
    let could_continue = s.len() - i < MAX_PLACEHOLDER_LEN
        && tail
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
    if could_continue {
        i
    } else {
        s.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(text: &str, needle: &str, category: Category) -> Span {
        let start = text.find(needle).unwrap();
        Span {
            start,
            end: start + needle.len(),
            category,
            detector: "test".into(),
            confidence: 1.0,
        }
    }

    #[test]
    fn same_value_same_placeholder_across_messages() {
        let mut vault = Vault::new();
        let a = "Mail Ann Lee at ann@example.com or ANN@example.com";
        let spans = [
            span(a, "Ann Lee", Category::Person),
            span(a, "ann@example.com", Category::Email),
            span(a, "ANN@example.com", Category::Email),
        ];
        assert_eq!(
            vault.mask(a, &spans),
            "Mail <PERSON_1> at <EMAIL_1> or <EMAIL_1>"
        );
        let b = "Did ann lee reply? Bob Ray did.";
        let spans = [
            span(b, "ann lee", Category::Person),
            span(b, "Bob Ray", Category::Person),
        ];
        assert_eq!(
            vault.mask(b, &spans),
            "Did <PERSON_1> reply? <PERSON_2> did."
        );
        assert_eq!(
            vault.unmask("<PERSON_2> wrote to <EMAIL_1>."),
            "Bob Ray wrote to ann@example.com."
        );
    }

    #[test]
    fn one_identifier_in_two_spellings_gets_one_placeholder() {
        let mut vault = Vault::new();
        let t = "card 4111 1111 1111 1111, again ４１１１-１１１１-１１１１-\u{200B}１１１１ and ٤١١١١١١١١١١١١١١١";
        let spans = [
            span(t, "4111 1111 1111 1111", Category::PaymentCard),
            span(
                t,
                "４１１１-１１１１-１１１１-\u{200B}１１１１",
                Category::PaymentCard,
            ),
            span(t, "٤١١١١١١١١١١١١١١١", Category::PaymentCard),
        ];
        assert_eq!(
            vault.mask(t, &spans),
            "card <CARD_1>, again <CARD_1> and <CARD_1>"
        );
    }

    #[test]
    fn every_mention_of_a_person_shares_the_full_name_placeholder() {
        let mut vault = Vault::new();
        let t = "SMITH called. Maria Smith wants the report; tell smith and Bob Ray.";
        let spans = [
            span(t, "SMITH", Category::Person),
            span(t, "Maria Smith", Category::Person),
            span(t, "smith", Category::Person),
            span(t, "Bob Ray", Category::Person),
        ];
        assert_eq!(
            vault.mask(t, &spans),
            "<PERSON_1> called. <PERSON_1> wants the report; tell <PERSON_1> and <PERSON_2>."
        );
        // A later message: the given name alone is the same person too.
        let t2 = "Did Maria reply?";
        assert_eq!(
            vault.mask(t2, &[span(t2, "Maria", Category::Person)]),
            "Did <PERSON_1> reply?"
        );
        // A different person with the same given name is not.
        let t3 = "Maria Lopez is new.";
        assert_eq!(
            vault.mask(t3, &[span(t3, "Maria Lopez", Category::Person)]),
            "<PERSON_3> is new."
        );
        let t4 = "田中太郎に連絡して。田中さんは明日来ます。";
        let later = t4.rfind("田中").unwrap();
        let surname = Span {
            start: later,
            end: later + "田中".len(),
            ..span(t4, "田中", Category::Person)
        };
        let masked = vault.mask(t4, &[span(t4, "田中太郎", Category::Person), surname]);
        assert_eq!(masked, "<PERSON_4>に連絡して。<PERSON_4>さんは明日来ます。");
    }

    #[test]
    fn overlapping_spans_merge_with_identifier_type() {
        let mut vault = Vault::new();
        let t = "write to john.smith@acme.com now";
        let spans = [
            span(t, "john.smith", Category::Person),
            span(t, "john.smith@acme.com", Category::Email),
        ];
        assert_eq!(vault.mask(t, &spans), "write to <EMAIL_1> now");
    }

    #[test]
    fn literal_placeholders_in_user_text_do_not_collide() {
        let mut vault = Vault::new();
        let t = "Template says <EMAIL_1>; mine is me@x.org";
        let masked = vault.mask(t, &[span(t, "me@x.org", Category::Email)]);
        assert_eq!(masked, "Template says <EMAIL_1>; mine is <EMAIL_2>");
        assert_eq!(
            vault.unmask("<EMAIL_1> vs <EMAIL_2>"),
            "<EMAIL_1> vs me@x.org"
        );
        // A later literal equal to a handed-out placeholder is escaped with a fresh one.
        let t2 = "what does <EMAIL_2> mean?";
        let masked2 = vault.mask(t2, &[]);
        assert_eq!(masked2, "what does <EMAIL_3> mean?");
        assert_eq!(
            vault.unmask("<EMAIL_3> is a tag, <EMAIL_2> your mail"),
            "<EMAIL_2> is a tag, me@x.org your mail"
        );
    }

    #[test]
    fn stream_unmasks_placeholders_split_across_chunks() {
        let mut vault = Vault::new();
        let t = "I am Zoë Brandt";
        vault.mask(t, &[span(t, "Zoë Brandt", Category::Person)]);
        let reply = "Hello <PERSON_1>, nice <b>day</b> <PERSON_1><PERSON_9> < 3 <PERS";
        for split in 1..8 {
            let mut stream = vault.stream();
            let mut out = String::new();
            let mut rest = reply;
            while !rest.is_empty() {
                let mut n = split.min(rest.len());
                while !rest.is_char_boundary(n) {
                    n += 1;
                }
                out.push_str(&stream.push(&rest[..n]));
                rest = &rest[n..];
            }
            out.push_str(&stream.finish());
            assert_eq!(
                out, "Hello Zoë Brandt, nice <b>day</b> Zoë Brandt<PERSON_9> < 3 <PERS",
                "chunk size {split}"
            );
        }
    }

    #[test]
    fn stream_does_not_hold_plain_text() {
        let vault = Vault::new();
        let mut stream = vault.stream();
        assert_eq!(stream.push("a < b and c"), "a < b and c");
        assert_eq!(stream.push(" <ABC"), " ");
        assert_eq!(stream.push("def>"), "<ABCdef>");
    }

    #[test]
    fn debug_never_shows_values() {
        let mut vault = Vault::new();
        let t = "secret person Quentin";
        vault.mask(t, &[span(t, "Quentin", Category::Person)]);
        assert!(!format!("{vault:?}").contains("Quentin"));
    }

    #[test]
    fn topic_spans_are_not_masked() {
        let mut vault = Vault::new();
        let t = "summarize my bloodwork";
        assert_eq!(vault.mask(t, &[span(t, t, Category::Health)]), t);
    }
}
