//! Tokeniser and feature extraction of the learned tiers.
//!
//! This is the Rust twin of `scripts/gate/features.py`, which the training scripts use. A model
//! is only valid when both sides produce identical feature strings for the same text;
//! `tests/learned_features.rs` checks this against a fixture written by the Python side.
//! Bump `NAME_FEATURE_VERSION` or `TOPIC_FEATURE_VERSION` in both files on any change to that
//! model's features (the tokeniser is shared: a change to it bumps both); models record the
//! version they were trained with and refuse to load under another.

use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

/// FNV-1a as a `Hasher` for the word lists: their keys are short words looked up once per
/// token, where SipHash's setup costs more than the lookup.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01B3);
        }
        self.0 = h;
    }
}

type WordSet = HashSet<String, BuildHasherDefault<Fnv>>;

/// Version of the names tagger's features (`name_features`).
pub const NAME_FEATURE_VERSION: u32 = 4;
/// Version of the topic classifier's features (`topic_features`). One version per model, so
/// that a change to one model's features does not invalidate the other's weights.
pub const TOPIC_FEATURE_VERSION: u32 = 5;

/// One token: byte offsets into the text it came from, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token<'a> {
    pub start: usize,
    pub end: usize,
    pub text: &'a str,
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Word runs (letters, digits, `_`, with an inner `'`, `’` or `-` joining two runs, as in
/// "O'Brien" or "Jean-Pierre") and single punctuation characters. Whitespace separates.
pub fn tokenize(text: &str) -> Vec<Token<'_>> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let byte_at = |i: usize| chars.get(i).map_or(text.len(), |&(b, _)| b);
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i].1;
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        if is_word_char(c) {
            while j < chars.len() {
                let d = chars[j].1;
                if is_word_char(d) {
                    j += 1;
                } else if matches!(d, '\'' | '’' | '-')
                    && chars.get(j + 1).is_some_and(|&(_, e)| is_word_char(e))
                {
                    j += 2;
                } else {
                    break;
                }
            }
        }
        let (start, end) = (byte_at(i), byte_at(j));
        out.push(Token {
            start,
            end,
            text: &text[start..end],
        });
        i = j;
    }
    out
}

/// Character classes of a token with repeats collapsed: "Müller" -> "Xx", "AB-12" -> "X-d".
pub fn shape(token: &str) -> String {
    let mut s = String::new();
    for c in token.chars() {
        let class = if c.is_uppercase() {
            'X'
        } else if c.is_lowercase() {
            'x'
        } else if c.is_numeric() {
            'd'
        } else {
            '-'
        };
        if !s.ends_with(class) {
            s.push(class);
        }
    }
    s
}

/// 32-bit FNV-1a: tiny, fast on short strings, and trivially identical in Python.
pub fn fnv1a(s: &str) -> u32 {
    fnv1a_parts(&[s])
}

fn entries(list: &str) -> impl Iterator<Item = &str> {
    list.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

/// Word lists the tagger uses as features and the gazetteer detector uses directly.
pub struct Gazetteers {
    first: WordSet,
    last: WordSet,
    org: WordSet,
    titles: WordSet,
    places: SeqSet,
    public: SeqSet,
    org_names: SeqSet,
}

/// Token sequences, indexed by their first token, matched longest first.
struct SeqSet {
    by_first: HashMap<String, Vec<Vec<String>>, BuildHasherDefault<Fnv>>,
}

impl SeqSet {
    fn new(list: &str) -> Self {
        let mut by_first: HashMap<String, Vec<Vec<String>>, BuildHasherDefault<Fnv>> =
            HashMap::default();
        for e in entries(list) {
            let seq: Vec<String> = tokenize(e).iter().map(|t| t.text.to_lowercase()).collect();
            if let Some(first) = seq.first() {
                by_first.entry(first.clone()).or_default().push(seq);
            }
        }
        for seqs in by_first.values_mut() {
            seqs.sort_by_key(|s| std::cmp::Reverse(s.len()));
        }
        SeqSet { by_first }
    }

    /// Marks every token covered by a longest match.
    fn flags(&self, lower: &[&str]) -> Vec<bool> {
        let mut flags = vec![false; lower.len()];
        let mut i = 0;
        while i < lower.len() {
            let len = self.by_first.get(lower[i]).and_then(|seqs| {
                seqs.iter()
                    .find(|s| {
                        lower.len() - i >= s.len() && lower[i..i + s.len()].iter().eq(s.iter())
                    })
                    .map(Vec::len)
            });
            match len {
                Some(len) => {
                    flags[i..i + len].iter_mut().for_each(|f| *f = true);
                    i += len;
                }
                None => i += 1,
            }
        }
        flags
    }
}

/// Which lists a token is on, in the fixed order the feature strings use.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct GazFlags {
    pub first_name: bool,
    pub surname: bool,
    pub org_word: bool,
    pub place: bool,
    pub public: bool,
    pub title: bool,
    pub org_name: bool,
}

impl GazFlags {
    fn names(self) -> impl Iterator<Item = &'static str> {
        [
            (self.first_name, "fn"),
            (self.surname, "sn"),
            (self.org_word, "org"),
            (self.place, "pl"),
            (self.public, "pub"),
            (self.title, "title"),
            (self.org_name, "orgn"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
    }
}

impl Gazetteers {
    /// The lists committed under `src/learned/gazetteers/`, compiled into the binary.
    pub fn builtin() -> Self {
        Self::from_lists(
            include_str!("gazetteers/first_names.txt"),
            include_str!("gazetteers/surnames.txt"),
            include_str!("gazetteers/org_suffixes.txt"),
            include_str!("gazetteers/places.txt"),
            include_str!("gazetteers/public_names.txt"),
            include_str!("gazetteers/titles.txt"),
            include_str!("gazetteers/organisations.txt"),
        )
    }

    fn from_lists(
        first: &str,
        last: &str,
        org: &str,
        places: &str,
        public: &str,
        titles: &str,
        org_names: &str,
    ) -> Self {
        // Multi-word given names and surnames ("de Jong") contribute their capitalised words only,
        // so that particles like "de" or "van" do not look like names.
        let token_set = |list: &str| -> WordSet {
            entries(list)
                .flat_map(tokenize)
                .filter(|t| t.text.chars().next().is_some_and(char::is_uppercase))
                .map(|t| t.text.to_lowercase())
                .collect()
        };
        Gazetteers {
            first: token_set(first),
            last: token_set(last),
            org: entries(org).map(str::to_lowercase).collect(),
            titles: entries(titles).map(str::to_lowercase).collect(),
            places: SeqSet::new(places),
            public: SeqSet::new(public),
            org_names: SeqSet::new(org_names),
        }
    }

    /// List membership of every token (lowercased by the caller).
    pub fn flags(&self, lower: &[String]) -> Vec<GazFlags> {
        // "Macron's" is looked up as "macron": the tokeniser keeps the possessive on the word.
        let keys: Vec<&str> = lower.iter().map(|w| strip_possessive(w)).collect();
        let places = self.places.flags(&keys);
        let public = self.public.flags(&keys);
        let org_names = self.org_names.flags(&keys);
        keys.iter()
            .enumerate()
            .map(|(i, &w)| GazFlags {
                first_name: self.first.contains(w),
                surname: self.last.contains(w),
                org_word: self.org.contains(w),
                place: places[i],
                public: public[i],
                title: self.titles.contains(w),
                org_name: org_names[i],
            })
            .collect()
    }
}

fn strip_possessive(w: &str) -> &str {
    ["'s", "’s"]
        .iter()
        .find_map(|suffix| w.strip_suffix(suffix).filter(|rest| !rest.is_empty()))
        .unwrap_or(w)
}

/// Tokens after which a capitalised word says nothing: the start of a sentence or quote.
fn starts_sentence(prev: &str) -> bool {
    matches!(
        prev,
        "." | "!" | "?" | ":" | ";" | "\"" | "«" | "»" | "“" | "„" | "¿" | "¡" | "(" | "\n"
    )
}

/// Feature strings of every token, for the names tagger (what the Python trainer computes;
/// the tagger itself uses `name_feature_hashes`, which builds no strings).
pub fn name_features(tokens: &[Token<'_>], gaz: &Gazetteers) -> Vec<Vec<String>> {
    let lower: Vec<String> = tokens.iter().map(|t| t.text.to_lowercase()).collect();
    let flags = gaz.flags(&lower);
    let mut out = vec![Vec::new(); tokens.len()];
    each_name_feature(tokens, &lower, &flags, |i, parts| {
        out[i].push(parts.concat())
    });
    out
}

/// The FNV-1a hashes of the name features of every token, token by token in order: the same
/// values as hashing the strings of `name_features`, computed over their parts as they are
/// produced. `lower` and `flags` are the tokens' lowercased texts and `Gazetteers::flags` of
/// them, which the tagger needs too and so computes once. `each_token` gets one token's hashes
/// at a time, from one reused buffer: the tagger scores them at once, so nothing per token is
/// allocated.
pub fn name_feature_hashes(
    tokens: &[Token<'_>],
    lower: &[String],
    flags: &[GazFlags],
    mut each_token: impl FnMut(&[u32]),
) {
    let mut hashes = Vec::with_capacity(64);
    let mut current = 0;
    // Every token has at least the bias feature, so the index steps by one.
    each_name_feature(tokens, lower, flags, |i, parts| {
        if i != current {
            each_token(&hashes);
            hashes.clear();
            current = i;
        }
        hashes.push(fnv1a_parts(parts));
    });
    if !tokens.is_empty() {
        each_token(&hashes);
    }
}

/// FNV-1a of the concatenation of `parts` (the hash is a byte stream, so no string is needed).
fn fnv1a_parts(parts: &[&str]) -> u32 {
    let mut h: u32 = 0x811C_9DC5;
    for p in parts {
        for &b in p.as_bytes() {
            h ^= u32::from(b);
            h = h.wrapping_mul(0x0100_0193);
        }
    }
    h
}

/// Calls `emit(token index, parts)` for every name feature, the feature being the
/// concatenation of the parts, token by token in order. `lower` and `flags` are per token, as
/// `name_features` computes them.
fn each_name_feature(
    tokens: &[Token<'_>],
    lower: &[String],
    flags: &[GazFlags],
    mut emit: impl FnMut(usize, &[&str]),
) {
    let shapes: Vec<String> = tokens.iter().map(|t| shape(t.text)).collect();
    let n = tokens.len() as isize;
    let w = |i: isize| -> &str {
        if i < 0 {
            "<s>"
        } else if i >= n {
            "</s>"
        } else {
            &lower[i as usize]
        }
    };
    let sh = |i: isize| -> &str {
        if (0..n).contains(&i) {
            &shapes[i as usize]
        } else {
            "_"
        }
    };
    let g = |i: isize| -> GazFlags {
        if (0..n).contains(&i) {
            flags[i as usize]
        } else {
            GazFlags::default()
        }
    };

    for i in 0..n {
        let t = i as usize;
        let mut emit = |parts: &[&str]| emit(t, parts);
        let word = w(i);
        let cap = tokens[t]
            .text
            .chars()
            .next()
            .is_some_and(char::is_uppercase);
        let first = i == 0 || starts_sentence(tokens[t - 1].text);
        emit(&["b"]);
        emit(&["w=", word]);
        emit(&["p3=", prefix(word, 3)]);
        emit(&["s3=", suffix(word, 3)]);
        emit(&["s2=", suffix(word, 2)]);
        emit(&["sh=", sh(i)]);
        emit(&["w-1=", w(i - 1)]);
        emit(&["w+1=", w(i + 1)]);
        emit(&["w-2=", w(i - 2)]);
        emit(&["w+2=", w(i + 2)]);
        emit(&["sh-1=", sh(i - 1)]);
        emit(&["sh+1=", sh(i + 1)]);
        emit(&["w-1|sh=", w(i - 1), "|", sh(i)]);
        emit(&["sh+1|w+1=", sh(i), "|", w(i + 1)]);
        emit(&["shs=", sh(i - 1), "|", sh(i), "|", sh(i + 1)]);
        emit(&["w-2|w-1=", w(i - 2), "|", w(i - 1)]);
        if first {
            emit(&["first|sh=", sh(i)]);
        }
        let cap_name = if cap { "True" } else { "False" };
        for x in g(i).names() {
            emit(&["g=", x]);
            emit(&["g=", x, "|cap=", cap_name]);
            if first {
                emit(&["g=", x, "|first"]);
            }
        }
        for (offset, key) in [(-1, "g-1="), (1, "g+1="), (-2, "g-2="), (2, "g+2=")] {
            for x in g(i + offset).names() {
                emit(&[key, x]);
            }
        }
    }
}

/// Feature strings of one text for the topic classifier: lowercased words, word bigrams,
/// 5-character prefixes (a cheap stem that carries across inflections in all locales) and
/// character n-grams (`each_char_ngram`). Sorted and deduplicated: the classifier sees
/// presence, not counts.
pub fn topic_features(tokens: &[Token<'_>]) -> Vec<String> {
    let mut f: Vec<String> = Vec::new();
    each_topic_feature(&topic_words(tokens), |parts| f.push(parts.concat()));
    f.sort();
    f.dedup();
    f
}

/// Whether the topic features read a token: those that start with a word character.
pub fn is_topic_word(token: &Token<'_>) -> bool {
    token.text.chars().next().is_some_and(is_word_char)
}

/// The lowercased words of `tokens` the topic features are made of.
pub fn topic_words(tokens: &[Token<'_>]) -> Vec<String> {
    tokens
        .iter()
        .filter(|t| is_topic_word(t))
        .map(|t| t.text.to_lowercase())
        .collect()
}

/// The FNV-1a hashes of `topic_features` of the text whose `topic_words` are `words`,
/// deduplicated (equal strings hash equal; two different features of one text with the same
/// 32-bit hash are merged, which is as rare as a random 32-bit collision). Taking the words
/// lets the classifier lowercase a text once for all its sentences.
pub fn topic_feature_hashes(words: &[String]) -> Vec<u32> {
    let mut f: Vec<u32> = Vec::with_capacity(words.len() * 8 + 1);
    each_topic_feature(words, |parts| f.push(fnv1a_parts(parts)));
    f.sort_unstable();
    f.dedup();
    f
}

/// Calls `emit(parts)` for every topic feature (with repeats), as the concatenation of parts.
fn each_topic_feature(words: &[String], mut emit: impl FnMut(&[&str])) {
    emit(&["b"]);
    let mut prev = "<s>";
    for w in words {
        emit(&["u=", w]);
        emit(&["bg=", prev, " ", w]);
        if w.chars().count() > 5 {
            emit(&["p5=", prefix(w, 5)]);
        }
        each_char_ngram(w, &mut emit);
        prev = w;
    }
}

/// Whether `c` belongs to a script written without spaces between words (Han, kana) or with
/// particles fused to its words (Hangul): there a token is a clause or a word with its
/// particles, and only its character bigrams and trigrams show the words inside.
fn is_unspaced(c: char) -> bool {
    matches!(c,
        '\u{1100}'..='\u{11FF}' // Hangul jamo
        | '\u{3040}'..='\u{30FF}' // hiragana, katakana
        | '\u{3130}'..='\u{318F}' // Hangul compatibility jamo
        | '\u{31F0}'..='\u{31FF}' // katakana extensions
        | '\u{3400}'..='\u{4DBF}' // Han extension A
        | '\u{4E00}'..='\u{9FFF}' // Han
        | '\u{AC00}'..='\u{D7AF}' // Hangul syllables
        | '\u{F900}'..='\u{FAFF}' // Han compatibility
        | '\u{FF66}'..='\u{FF9F}' // half-width katakana
        | '\u{20000}'..='\u{3134F}' // Han extensions B-G
    )
}

/// Character n-grams of a word: bigrams and trigrams of a word in an unspaced script
/// (`is_unspaced`: "我的签证过期了" gives 签证, 过期, ...), trigrams of any other word of four
/// characters or more, which carry a stem across inflection, attached articles and compounds
/// ("بالسرطان" and "السرطان", "диализа" and "диализе", "Chemotherapie" and "chemotherapy").
fn each_char_ngram(w: &str, emit: &mut impl FnMut(&[&str])) {
    let unspaced = w.chars().any(is_unspaced);
    if !unspaced && w.chars().nth(3).is_none() {
        return;
    }
    // The byte offsets of the last four character boundaries, as a ring: an n-gram ending at
    // boundary k starts at boundary k - n.
    let mut ring = [0usize; 4];
    let bounds = w
        .char_indices()
        .map(|(b, _)| b)
        .chain(std::iter::once(w.len()));
    for (k, b) in bounds.enumerate() {
        ring[k % 4] = b;
        if unspaced && k >= 2 {
            emit(&["c2=", &w[ring[(k - 2) % 4]..b]]);
        }
        if k >= 3 {
            emit(&["c3=", &w[ring[(k - 3) % 4]..b]]);
        }
    }
}

fn prefix(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or(s, |(b, _)| &s[..b])
}

fn suffix(s: &str, n: usize) -> &str {
    let count = s.chars().count();
    if count <= n {
        return s;
    }
    s.char_indices().nth(count - n).map_or(s, |(b, _)| &s[b..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_are_those_of_the_feature_strings() {
        let gaz = Gazetteers::builtin();
        let tokens = tokenize("Dear Anna Müller, meet Dr. Jean-Luc at Zürich's station. 123");
        let strings = name_features(&tokens, &gaz);
        let lower: Vec<String> = tokens.iter().map(|t| t.text.to_lowercase()).collect();
        let mut hashes: Vec<Vec<u32>> = Vec::new();
        name_feature_hashes(&tokens, &lower, &gaz.flags(&lower), |h| {
            hashes.push(h.to_vec())
        });
        assert_eq!(hashes.len(), tokens.len());
        for (s, h) in strings.iter().zip(&hashes) {
            assert_eq!(s.iter().map(|f| fnv1a(f)).collect::<Vec<_>>(), *h);
        }
        let mut topic: Vec<u32> = topic_features(&tokens).iter().map(|f| fnv1a(f)).collect();
        topic.sort_unstable();
        assert_eq!(topic, topic_feature_hashes(&topic_words(&tokens)));
    }

    #[test]
    fn tokens_keep_inner_apostrophes_and_hyphens() {
        let toks: Vec<&str> = tokenize("O'Brien-Smith, Jean-Pierre's car.")
            .iter()
            .map(|t| t.text)
            .collect();
        assert_eq!(toks, ["O'Brien-Smith", ",", "Jean-Pierre's", "car", "."]);
    }

    #[test]
    fn token_offsets_are_bytes() {
        let toks = tokenize("Grüße aus Köln");
        assert_eq!((toks[2].start, toks[2].end), (12, 17));
        assert_eq!(toks[2].text, "Köln");
    }

    #[test]
    fn shapes_collapse_repeats() {
        assert_eq!(shape("Müller"), "Xx");
        assert_eq!(shape("AB-12"), "X-d");
        assert_eq!(shape("iPhone"), "xXx");
    }

    #[test]
    fn places_match_longest_sequence() {
        let gaz = Gazetteers::builtin();
        let lower: Vec<String> = ["in", "new", "york", "new"].map(String::from).to_vec();
        let places: Vec<bool> = gaz.flags(&lower).iter().map(|f| f.place).collect();
        assert_eq!(places, [false, true, true, false]);
    }
}
