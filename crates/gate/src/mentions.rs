//! The second pass over what the tiers found: every other mention of a person they found, and
//! the name written next to a contact identifier.
//!
//! - **Coreference**: once "Maria Smith" is a person, "Smith", "SMITH", "Maria" and "smith"
//!   elsewhere in the text are the same person (Russian case forms too: "Петров" ->
//!   "Петрова", "Петрову"; a Turkish case suffix: "Ahmet'e"). A part that is also a common
//!   word ("Will", "Rose", "Hope") counts only capitalised inside a sentence; a lowercase
//!   mention counts for parts on the name lists and for family names (the last word of a name
//!   of two words or more). In Chinese, Japanese and Korean, written without
//!   spaces, the whole name anywhere and its surname or given name before an honorific or title
//!   ("田中さん" after "田中太郎", "王先生" after "王伟", "민준 씨" after "김민준") count.
//!   `refers_to` is the same test for the vault, which gives a later mention the placeholder of
//!   the full name.
//! - **Beside an identifier**: "Contact: Ana Souza, ana.souza@gmail.com", "Tel. Ivan Petrov
//!   +7 916 ...", "联系人：王伟 13912345678": two or three capitalised words (or a CJK name with a
//!   listed surname) right before or after an e-mail address or phone number, with only a comma,
//!   colon, dash or bracket between, are the person it belongs to. One word counts when the
//!   e-mail address contains it or it is a listed name.
//!
//! Spans are whole words (never part of a neighbouring word) and never overlap a finding of the
//! first pass, so this pass only adds to what is masked.

use std::collections::{HashMap, HashSet};

use crate::cues::is_name_word;
use crate::learned::{
    is_common_word_name, is_given_name, is_public_name, is_surname, is_title, tokenize, Token,
};
use crate::names_scripts::{
    after_unmarked, before_apostrophe, cjk_surname_len, is_arabic_mark, is_devanagari, is_han,
    is_hangul, is_kana, is_ru_given, AR_PROCLITICS, JA_HONORIFICS, KO_HONORIFICS, ZH_AFTER,
};
use crate::{Category, Span};

/// Persons less sure than this are not followed to their other mentions.
const MIN_SEED_CONFIDENCE: f32 = 0.5;
/// Distinct Chinese, Japanese or Korean names followed through a text (each is a substring
/// search of the whole text).
const MAX_CJK_NAMES: usize = 64;
/// A name beside a contact identifier.
const BESIDE_IDENTIFIER_CONFIDENCE: f32 = 0.7;
/// Characters allowed between a name and the identifier beside it.
const BESIDE_GAP: &[char] = &[
    ' ', ',', ':', '：', '，', '-', '–', '(', ')', '<', '>', '|', '/', '\t',
];
/// Labels in front of contact details, which are capitalised but are not names.
#[rustfmt::skip]
const CONTACT_LABELS: &[&str] = &[
    "contact", "kontakt", "contacto", "contatto", "contato", "tel", "tél", "phone", "telefon", "telefone", "teléfono",
    "telefono", "telefoon", "mobile", "mobil", "móvil", "cell", "handy", "fax", "email", "e-mail", "mail", "call",
    "ring", "text", "write", "reach", "whatsapp", "signal", "телефон", "тел", "почта", "iletişim", "cep", "name",
    "nome", "nombre", "nom", "naam", "имя", "ad", "from", "to", "cc", "von", "an", "de", "para", "van", "aan",
];
/// Particles inside names that say nothing about who is meant on their own.
#[rustfmt::skip]
const PARTICLES: &[&str] = &[
    "von", "van", "de", "der", "den", "da", "di", "del", "della", "dos", "das", "du", "le", "la", "bin", "ibn", "bint",
    "abu", "al", "el", "ben", "y", "e", "ter", "ten", "zu", "mc", "st",
];
/// Surnames that are also everyday words: a lowercase "baker" is not Ms Baker.
#[rustfmt::skip]
const COMMON_WORD_SURNAMES: &[&str] = &[
    "baker", "cook", "white", "black", "brown", "green", "young", "king", "wood", "hill", "long", "little", "bishop",
    "rich", "fox", "wolf", "frost", "day", "hall", "moon", "stone", "bell", "lang", "klein", "koch", "fuchs", "weiss",
    "schwarz", "braun", "blanc", "petit", "roux", "blanco", "rojo", "cruz", "leon", "sommer", "winter", "bauer",
    "becker", "fischer", "meyer", "vogel", "jung", "alt", "groot", "visser", "bakker", "smit", "de", "mann", "wise",
    "price", "rice", "page", "cole", "park", "lee", "may", "rose",
];

/// Word runs in any script (marks of Devanagari and Arabic kept inside words, an inner
/// apostrophe or hyphen joining two runs), as byte ranges. Han, kana and Hangul are left out:
/// those names are found by substring.
fn words(text: &str) -> Vec<(usize, usize)> {
    let in_word = |c: char| {
        (c.is_alphanumeric() || is_devanagari(c) || is_arabic_mark(c))
            && !is_han(c)
            && !is_kana(c)
            && !is_hangul(c)
    };
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !in_word(chars[i].1) {
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < chars.len() {
            if in_word(chars[j].1) {
                j += 1;
            } else if matches!(chars[j].1, '\'' | '’' | '-')
                && chars.get(j + 1).is_some_and(|&(_, c)| in_word(c))
            {
                j += 2;
            } else {
                break;
            }
        }
        out.push((chars[i].0, chars.get(j).map_or(text.len(), |&(b, _)| b)));
        i = j;
    }
    out
}

fn is_cjk(s: &str) -> bool {
    s.chars().any(|c| is_han(c) || is_kana(c) || is_hangul(c))
}

fn is_cyrillic(s: &str) -> bool {
    s.chars().any(|c| matches!(c, '\u{0400}'..='\u{04FF}'))
}

/// The parts of a name that identify its person on their own: its words of two letters or
/// more, lowercased, without titles and particles; a Turkish case suffix cut off.
fn name_parts(name: &str) -> Vec<String> {
    words(name)
        .into_iter()
        .map(|(s, e)| before_apostrophe(&name[s..e]).to_lowercase())
        .filter(|w| w.chars().count() >= 2 && !PARTICLES.contains(&w.as_str()) && !is_title(w))
        .collect()
}

/// The stem of a lowercased Cyrillic name part: without a case ending and a final й or ь
/// ("петрову" -> "петров", "марии" -> "мари", "мария" -> "мари").
fn cyrillic_stem(w: &str) -> &str {
    const ENDINGS: &[&str] = &[
        "а", "у", "ом", "ым", "им", "е", "ой", "ы", "и", "ю", "ем", "ей", "я", "ого", "ому", "ую",
    ];
    let n = w.chars().count();
    let cut = ENDINGS
        .iter()
        .filter(|e| w.ends_with(**e) && n > e.chars().count() + 2)
        .max_by_key(|e| e.len())
        .map_or(w, |e| &w[..w.len() - e.len()]);
    cut.trim_end_matches(['й', 'ь'])
}

/// Whether word `w` (lowercased) is a form of the name part `part`: the same, or in Cyrillic
/// the part with a case ending ("петрова", "ивану", "марии").
fn same_part(w: &str, part: &str) -> bool {
    w == part
        || (is_cyrillic(part)
            && cyrillic_stem(w).chars().count() >= 3
            && cyrillic_stem(w) == cyrillic_stem(part)
            && is_ru_given(part) == is_ru_given(w))
}

/// Whether a mention (lowercased, as the vault keeps it) names the same person as a fuller
/// name: all its parts are parts of the full name ("smith" of "maria smith"), or in CJK the full
/// name starts with it (the surname) or ends with it (the given name).
pub fn refers_to(mention: &str, full: &str) -> bool {
    if mention == full {
        return true;
    }
    if is_cjk(mention) && !mention.contains(' ') {
        let full = full.replace(' ', "");
        return full.len() > mention.len()
            && (full.starts_with(mention) || full.ends_with(mention));
    }
    let parts = name_parts(mention);
    let of_full = name_parts(full);
    !parts.is_empty()
        && parts.len() < of_full.len()
        && parts
            .iter()
            .all(|p| of_full.iter().any(|f| same_part(p, f)))
}

/// Person spans of other mentions of found persons, and of names beside contact identifiers.
/// Offsets are into `text`, as are those of `found`.
pub fn more_mentions(text: &str, found: &[Span]) -> Vec<Span> {
    let first: Vec<(usize, usize)> = found
        .iter()
        .filter(|s| s.category.tier() != crate::Tier::Topic)
        .map(|s| (s.start, s.end))
        .collect();
    let taken = merged(first.clone());
    let mut out = beside_identifiers(text, found, &taken);
    let taken = merged(
        first
            .into_iter()
            .chain(out.iter().map(|s| (s.start, s.end)))
            .collect(),
    );
    let completed = completions(text, found.iter().chain(&out));
    out.extend(completed);
    let seeds: Vec<&Span> = found
        .iter()
        .chain(&out)
        .filter(|s| s.category == Category::Person && s.confidence >= MIN_SEED_CONFIDENCE)
        .collect();
    if seeds.is_empty() {
        return out;
    }
    let corefs = coreference(text, &seeds, &taken);
    out.extend(corefs);
    out
}

/// Honorifics written after a name, which are not its surname: "Ahmet Bey", "Ayşe Hanım'a".
const HONORIFICS_AFTER: &[&str] = &["bey", "hanım", "beyefendi", "hanımefendi", "san", "sensei"];

/// German function words: in German text every noun is capitalised, so a capitalised word after
/// a name says nothing about being its surname ("Anna Bescheid sagen").
const GERMAN_WORDS: &[&str] = &[
    " der ", " die ", " das ", " und ", " ich ", " nicht ", " ist ", " mit ",
];

/// Whether a lowercased word is a place of `gazetteers/places.txt`.
pub(crate) fn is_place(lower: &str) -> bool {
    static PLACES: std::sync::OnceLock<HashSet<String>> = std::sync::OnceLock::new();
    PLACES
        .get_or_init(|| {
            include_str!("learned/gazetteers/places.txt")
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(str::to_lowercase)
                .collect()
        })
        .contains(lower)
}

/// A person found without the capitalised word right after it, which is its surname ("Please
/// call [Sipho] Ndlovu on ..."): the whole name, so that the surname is not left in clear.
/// Only one word, joined by one space, that is no place, public name or word that is never a
/// name; not in German text.
fn completions<'a>(text: &str, found: impl Iterator<Item = &'a Span>) -> Vec<Span> {
    let mut out = Vec::new();
    let mut german = None;
    for s in found.filter(|s| s.category == Category::Person) {
        let Some(rest) = text[s.end..].strip_prefix(' ') else {
            continue;
        };
        let name = &text[s.start..s.end];
        if is_cjk(name) || !name.chars().next().is_some_and(char::is_uppercase) {
            continue;
        }
        let at = text.len() - rest.len();
        let end = rest
            .char_indices()
            .find(|&(_, c)| !(c.is_alphabetic() || c == '-' || c == '\'' || c == '’'))
            .map_or(text.len(), |(i, _)| at + i);
        let token = Token {
            start: at,
            end,
            text: &text[at..end],
        };
        let lower = token.text.to_lowercase();
        if end == at
            || !is_name_word(&token)
            || is_place(&lower)
            || is_public_name(&format!("{} {lower}", name.to_lowercase()))
            || is_common_word_name(&lower)
            || is_title(&lower)
            || HONORIFICS_AFTER.contains(&before_apostrophe(&lower))
        {
            continue;
        }
        let german = *german.get_or_insert_with(|| {
            let lower = text.to_lowercase();
            GERMAN_WORDS.iter().filter(|w| lower.contains(**w)).count() >= 2
        });
        if !german {
            out.push(mention(s.start, end, s.confidence, "name-completion"));
        }
    }
    out
}

/// Sorted, merged byte ranges, so that an overlap test is one binary search.
fn merged(mut ranges: Vec<(usize, usize)>) -> Vec<(usize, usize)> {
    ranges.sort_unstable();
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(ranges.len());
    for (s, e) in ranges {
        match out.last_mut() {
            Some(last) if s < last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Whether `s..e` overlaps one of the merged ranges: only the last one starting before `e` can.
fn overlaps(taken: &[(usize, usize)], s: usize, e: usize) -> bool {
    let upto = taken.partition_point(|&(ts, _)| ts < e);
    upto > 0 && taken[upto - 1].1 > s
}

fn mention(start: usize, end: usize, confidence: f32, detector: &str) -> Span {
    Span {
        start,
        end,
        category: Category::Person,
        detector: detector.to_string(),
        confidence,
    }
}

fn coreference(text: &str, seeds: &[&Span], taken: &[(usize, usize)]) -> Vec<Span> {
    // Part -> confidence of the surest seed it belongs to; CJK names kept whole.
    let mut parts: HashMap<String, f32> = HashMap::new();
    let mut cjk: HashMap<&str, f32> = HashMap::new();
    // Parts that end a name of two words or more: family names.
    let mut surnames: HashSet<String> = HashSet::new();
    for s in seeds {
        let name = &text[s.start..s.end];
        if is_cjk(name) {
            let c = cjk.entry(name).or_insert(0.0);
            *c = c.max(s.confidence);
        } else {
            let these = name_parts(name);
            if these.len() >= 2 {
                surnames.extend(these.last().cloned());
            }
            for p in these {
                let c = parts.entry(p).or_insert(0.0);
                *c = c.max(s.confidence);
            }
        }
    }
    // Cyrillic parts by stem, so that a case form is found with one lookup.
    let cyrillic_parts: HashMap<&str, (&str, f32)> = parts
        .iter()
        .filter(|(p, _)| is_cyrillic(p))
        .map(|(p, &c)| (cyrillic_stem(p), (p.as_str(), c)))
        .collect();
    let mut out = Vec::new();
    if !parts.is_empty() {
        let max_len = parts.keys().map(String::len).max().unwrap_or(0) + 8;
        let opens = |s: usize| {
            let before = text[..s].trim_end_matches([' ', '\t']);
            before.is_empty() || before.ends_with(['.', '!', '?', '\n', ':', '"'])
        };
        for (s, e) in words(text) {
            if e - s > max_len || overlaps(taken, s, e) {
                continue;
            }
            let word = &text[s..e];
            let mut lower = before_apostrophe(word).to_lowercase();
            // An Arabic mention with a proclitic attached ("لـخالد" after "خالد"): the name
            // without it, the span starting after it.
            let mut s = s;
            if !parts.contains_key(&lower) && word.starts_with(is_arabic_letter) {
                if let Some(p) = AR_PROCLITICS.iter().find(|p| {
                    lower
                        .strip_prefix(**p)
                        .is_some_and(|r| parts.contains_key(&strip_arabic_marks(r)))
                }) {
                    s += after_unmarked(word, p.len());
                    lower = strip_arabic_marks(&lower[p.len()..]);
                }
            }
            let word = &text[s..e];
            let hit = parts.get(&lower).map(|&c| (lower.clone(), c)).or_else(|| {
                is_cyrillic(&lower)
                    .then(|| {
                        cyrillic_parts
                            .get(cyrillic_stem(&lower))
                            .filter(|(p, _)| same_part(&lower, p))
                            .map(|(p, c)| (p.to_string(), *c))
                    })
                    .flatten()
            });
            let Some((part, confidence)) = hit else {
                continue;
            };
            let surname_position = surnames.contains(&part);
            let has_upper = word.chars().any(char::is_uppercase);
            let common =
                is_common_word_name(&part) || COMMON_WORD_SURNAMES.contains(&part.as_str());
            let listed = is_given_name(&part) || is_surname(&part) || is_ru_given(&part);
            let ok = if common {
                // "Will you ...", "a rose bush": only a capitalised word inside a sentence.
                has_upper && !opens(s)
            } else {
                // Lowercase: a listed name, or a family name the lists do not know ("lindqvist").
                has_upper
                    || listed
                    || (surname_position && part.chars().count() >= 4)
                    || is_devanagari_or_arabic(word)
            };
            if ok {
                out.push(mention(s, e, confidence, "coref"));
            }
        }
    }
    // Each CJK name is searched for through the whole text: a bounded number of them.
    let mut cjk: Vec<(&str, f32)> = cjk.into_iter().collect();
    cjk.sort_unstable_by(|a, b| a.0.cmp(b.0));
    for (name, confidence) in cjk.into_iter().take(MAX_CJK_NAMES) {
        out.extend(cjk_mentions(text, name, confidence, taken));
    }
    out
}

fn is_arabic_letter(c: char) -> bool {
    matches!(c, '\u{0620}'..='\u{064A}')
}

fn strip_arabic_marks(w: &str) -> String {
    w.chars().filter(|c| !is_arabic_mark(*c)).collect()
}

fn is_devanagari_or_arabic(w: &str) -> bool {
    w.chars()
        .any(|c| is_devanagari(c) || matches!(c, '\u{0600}'..='\u{06FF}'))
}

/// The whole CJK name anywhere, its surname before a title or honorific, its given name
/// before an honorific.
fn cjk_mentions(text: &str, name: &str, confidence: f32, taken: &[(usize, usize)]) -> Vec<Span> {
    let mut out = Vec::new();
    let push = |s: usize, e: usize, out: &mut Vec<Span>| {
        if !overlaps(taken, s, e) && !out.iter().any(|o: &Span| o.start < e && s < o.end) {
            out.push(mention(s, e, confidence, "coref"));
        }
    };
    for (s, m) in text.match_indices(name) {
        push(s, s + m.len(), &mut out);
    }
    let Some(cut) = cjk_surname_len(name) else {
        return out;
    };
    let honorific_after = |at: usize| {
        let after = text[at..].trim_start_matches(' ');
        [ZH_AFTER, JA_HONORIFICS, KO_HONORIFICS]
            .iter()
            .any(|list| list.iter().any(|h| after.starts_with(h)))
    };
    for part in [&name[..cut], &name[cut..]] {
        for (s, m) in text.match_indices(part) {
            let e = s + m.len();
            // Korean words are spaced: a Hangul character before is the inside of another word.
            // Chinese and Japanese are not, and a surname before a title is a name wherever.
            let clean_start = !text[..s].chars().last().is_some_and(is_hangul);
            if clean_start && honorific_after(e) {
                push(s, e, &mut out);
            }
        }
    }
    out
}

/// Names right before or after an e-mail address or phone number; see the module documentation.
fn beside_identifiers(text: &str, found: &[Span], taken: &[(usize, usize)]) -> Vec<Span> {
    let contacts: Vec<&Span> = found
        .iter()
        .filter(|s| matches!(s.category, Category::Email | Category::Phone))
        .collect();
    if contacts.is_empty() {
        return Vec::new();
    }
    let tokens = tokenize(text);
    let label = |t: &Token<'_>| CONTACT_LABELS.contains(&t.text.to_lowercase().as_str());
    let name_at = |k: usize| is_name_word(&tokens[k]) && !label(&tokens[k]);
    let spaced = |a: usize, b: usize| text[tokens[a].end..tokens[b].start] == *" ";
    let mut out: Vec<Span> = Vec::new();
    for c in contacts {
        let local_part = (c.category == Category::Email).then(|| {
            text[c.start..c.end]
                .split('@')
                .next()
                .unwrap_or("")
                .to_lowercase()
        });
        let one_word_ok = |k: usize| {
            let w = tokens[k].text.to_lowercase();
            w.chars().count() >= 3
                && (local_part.as_deref().is_some_and(|l| l.contains(&w))
                    || is_given_name(&w)
                    || is_surname(&w))
        };
        // Before: the last token ending before the identifier, over separators only.
        let first_after = tokens.partition_point(|t| t.start < c.start);
        let separator = |t: &Token<'_>| t.text.chars().all(|ch| BESIDE_GAP.contains(&ch));
        let gap_ok = |from: usize, to: usize| {
            to - from <= 6 && text[from..to].chars().all(|ch| BESIDE_GAP.contains(&ch))
        };
        let mut k = first_after;
        while k > 0 && first_after - k < 2 && separator(&tokens[k - 1]) {
            k -= 1;
        }
        if k > 0 && gap_ok(tokens[k - 1].end, c.start) {
            let end = k - 1;
            if name_at(end) {
                let mut start = end;
                while start > 0 && end - start < 2 && spaced(start - 1, start) && name_at(start - 1)
                {
                    start -= 1;
                }
                if end > start || one_word_ok(end) {
                    out.push(mention(
                        tokens[start].start,
                        tokens[end].end,
                        BESIDE_IDENTIFIER_CONFIDENCE,
                        "beside-identifier",
                    ));
                }
            } else if is_cjk(tokens[end].text) {
                out.extend(cjk_name_at_end(text, tokens[end].start, tokens[end].end));
            }
        }
        // After: "ana@x.org (Ana Souza)".
        let k = tokens.partition_point(|t| t.start < c.end);
        let mut a = k;
        while a < tokens.len() && separator(&tokens[a]) && a < k + 2 {
            a += 1;
        }
        if a < tokens.len() && gap_ok(c.end, tokens[a].start) && name_at(a) {
            let mut b = a;
            while b + 1 < tokens.len() && b - a < 2 && spaced(b, b + 1) && name_at(b + 1) {
                b += 1;
            }
            if b > a || one_word_ok(a) {
                out.push(mention(
                    tokens[a].start,
                    tokens[b].end,
                    BESIDE_IDENTIFIER_CONFIDENCE,
                    "beside-identifier",
                ));
            }
        }
    }
    out.retain(|s| !overlaps(taken, s.start, s.end));
    out
}

/// A Chinese, Japanese or Korean name at the end of token `start..end`: its last three or two
/// characters, starting with a listed surname ("联系人王伟" -> "王伟").
fn cjk_name_at_end(text: &str, start: usize, end: usize) -> Option<Span> {
    let token = &text[start..end];
    let tail: Vec<usize> = token
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_han(c) || is_hangul(c))
        .map(|(b, _)| b)
        .take(3)
        .collect();
    [3, 2]
        .iter()
        .filter_map(|&n| tail.get(n - 1))
        .find(|&&from| cjk_surname_len(&token[from..]).is_some())
        .map(|&from| {
            mention(
                start + from,
                end,
                BESIDE_IDENTIFIER_CONFIDENCE,
                "beside-identifier",
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mention_refers_to_the_fuller_name() {
        assert!(refers_to("smith", "maria smith"));
        assert!(refers_to("maria", "maria smith"));
        assert!(refers_to("петрова", "анна петрова"));
        assert!(refers_to("田中", "田中太郎"));
        assert!(!refers_to("john", "maria smith"));
        assert!(!refers_to("maria smith", "maria"));
        assert!(!refers_to("ann lee", "bob ray"));
    }

    fn person_at(text: &str, name: &str, nth: usize) -> Span {
        let start = text.match_indices(name).nth(nth).expect("name in text").0;
        mention(start, start + name.len(), 0.75, "test")
    }

    fn found_texts<'a>(text: &'a str, seeds: &[Span]) -> Vec<&'a str> {
        more_mentions(text, seeds)
            .iter()
            .map(|s| &text[s.start..s.end])
            .collect()
    }

    #[test]
    fn an_arabic_mention_with_a_proclitic_is_the_same_person() {
        let text = "اتصل بخالد الآن، خالد ينتظر";
        let more = found_texts(text, &[person_at(text, "خالد", 1)]);
        assert_eq!(more, ["خالد"]);
        let text = "أرسل لـخالد رسالة: احفظه يا خالد";
        assert_eq!(found_texts(text, &[person_at(text, "خالد", 1)]), ["خالد"]);
    }

    #[test]
    fn a_name_takes_its_surname_but_not_a_place_or_a_german_noun() {
        let text = "Please call Sipho Ndlovu on 082 555 0143.";
        let more = found_texts(text, &[person_at(text, "Sipho", 0)]);
        assert!(more.contains(&"Sipho Ndlovu"), "{more:?}");
        let text = "Yarın Ahmet Bey ile görüşeceğim.";
        assert!(found_texts(text, &[person_at(text, "Ahmet", 0)]).is_empty());
        let text = "Tell Anna London is lovely.";
        assert!(found_texts(text, &[person_at(text, "Anna", 0)]).is_empty());
        let text = "Ich muss Anna Bescheid sagen, dass die Sitzung und der Termin ausfallen.";
        assert!(found_texts(text, &[person_at(text, "Anna", 0)]).is_empty());
    }

    #[test]
    fn cyrillic_case_forms_are_one_part() {
        assert!(same_part("петрову", "петров"));
        assert!(same_part("ивану", "иван"));
        assert!(same_part("марии", "мария"));
        assert!(!same_part("петрович", "петров"));
    }
}
