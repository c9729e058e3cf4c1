//! Names by structure and context, in the scripts the names tagger was never trained on and in
//! positions its training sentences do not show. Each rule needs a cue besides the name lists,
//! because in every script many given names are also ordinary words (Arabic "أمل" hope, Hindi
//! "पूजा" worship, Russian "Вера" faith, English "Will", "Hope", "Rose"):
//!
//! - Chinese: a listed surname (one character, or a two-character one) and one or two
//!   characters of given names, next to a cue: a title or verb after it ("王伟先生", "李娜老师",
//!   "张伟说"), a word before it that names a person ("同事王伟", "我叫张小明") or a greeting
//!   ("你好，王伟");
//!   a weak cue ("和", "给") only with a three-character name.
//! - Japanese (text with kana): the kanji or katakana run before an honorific (さん, 様, 先生,
//!   君, ちゃん, 氏, ...), from a listed surname on ("営業部の田中さん"), or an unlisted run of
//!   2-4 characters after a particle ("お医者さん" and other trade words are left out); a listed
//!   surname followed by a listed given name ("田中太郎").
//! - Korean: a name before 씨/님/선생님/과장님 (attached or spaced), or a listed surname and a
//!   listed two-syllable given name, with a particle stripped ("김민준에게").
//! - Cyrillic: a patronymic (-ович, -евна, ... in any case) with the capitalised words around
//!   it, a listed given name (inflected: "Ивану", "Марией") next to a surname-shaped word
//!   (-ов, -ева, -ин, -ский, ... in any case), or a capitalised word after a title.
//! - Arabic: the words after a title (السيد, الدكتورة, الأستاذ, ...), a given name with the
//!   particles بن/ابن/بنت ("علي بن أحمد") or after أبو, a frequent given name next to another
//!   listed name ("أحمد حسن"), or a listed name after a greeting or a word for colleague,
//!   friend, neighbour ("زميلي خالد").
//! - Devanagari: the words after श्री, श्रीमती, डॉ., ..., a listed name before जी ("शर्मा जी"),
//!   a listed given name and surname ("राहुल शर्मा"), or a listed name after a greeting or a
//!   word for friend or colleague. Deities after श्री ("श्री राम") are not people of the user.
//! - Latin script, every language: capitalised words after a title ("Mr Hunter", "Sayın
//!   Yılmaz"), before Turkish Bey/Hanım ("Ahmet Bey"), after a word of relation with a possessive
//!   ("my colleague Will", "mi amiga Rosa", "arkadaşım Elif"; after German nouns, which are
//!   capitalised anyway, only a listed given name), and a given name that is also a common word
//!   ("Hope", "Summer", "Hunter") before a listed surname. Those words lowercase ("I hope", "a
//!   rose bush") are never names here.
//!
//! Spans never include the title, honorific or particle that served as the cue. Names of
//! `public_names.txt` (heads of state, writers, characters, in these scripts too) are skipped.
//! Lists: `learned/gazetteers/names_<script>.txt`, built from the `faker` package's person
//! providers by `scripts/gate/script_names.py`.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::OnceLock;

use crate::cues::is_name_word;
use crate::learned::{
    is_common_word_name, is_given_name, is_public_name, is_surname, is_title, tokenize,
};
use crate::name_fields::labelled_names;
use crate::pipeline::Detector;
use crate::public_context::is_public_context;
use crate::{Category, Span};

/// A name found next to a cue that only people take (a title, an honorific, a word of relation).
pub const SCRIPT_CUE_CONFIDENCE: f32 = 0.75;
/// A name found by its lists and shape alone (a listed surname and given name, a patronymic).
pub const SCRIPT_SHAPE_CONFIDENCE: f32 = 0.65;

/// The `[section]` of a `names_<script>.txt` list as a set of entries.
fn section(list: &str, name: &str) -> HashSet<String> {
    let header = format!("[{name}]");
    list.lines()
        .map(str::trim)
        .skip_while(|l| *l != header)
        .skip(1)
        .take_while(|l| !l.starts_with('['))
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_lowercase)
        .collect()
}

struct Lists {
    zh_surname: HashSet<String>,
    zh_given: HashSet<char>,
    ja_surname: HashSet<String>,
    ja_given: HashSet<String>,
    ko_surname: HashSet<String>,
    ko_given: HashSet<String>,
    ru_given: HashSet<String>,
    ru_surname: HashSet<String>,
    ar_common: HashSet<String>,
    ar_name: HashSet<String>,
    hi_given: HashSet<String>,
    hi_surname: HashSet<String>,
    tr_given: HashSet<String>,
    tr_surname: HashSet<String>,
}

fn lists() -> &'static Lists {
    static LISTS: OnceLock<Lists> = OnceLock::new();
    LISTS.get_or_init(|| {
        let zh = include_str!("learned/gazetteers/names_zh.txt");
        let ja = include_str!("learned/gazetteers/names_ja.txt");
        let ko = include_str!("learned/gazetteers/names_ko.txt");
        let ru = include_str!("learned/gazetteers/names_ru.txt");
        let ar = include_str!("learned/gazetteers/names_ar.txt");
        let hi = include_str!("learned/gazetteers/names_hi.txt");
        let tr = include_str!("learned/gazetteers/names_tr.txt");
        let mut ar_name = section(ar, "given");
        ar_name.extend(section(ar, "surname"));
        ar_name.extend(section(ar, "common"));
        Lists {
            zh_surname: section(zh, "surname"),
            zh_given: section(zh, "given")
                .iter()
                .filter_map(|g| g.chars().next())
                .collect(),
            ja_surname: section(ja, "surname"),
            ja_given: section(ja, "given"),
            ko_surname: section(ko, "surname"),
            ko_given: section(ko, "given"),
            ru_given: section(ru, "given"),
            ru_surname: section(ru, "surname"),
            ar_common: section(ar, "common"),
            ar_name,
            hi_given: section(hi, "given"),
            hi_surname: section(hi, "surname"),
            tr_given: section(tr, "given"),
            tr_surname: section(tr, "surname"),
        }
    })
}

fn person(start: usize, end: usize, confidence: f32) -> Span {
    Span {
        start,
        end,
        category: Category::Person,
        detector: "script-names".to_string(),
        confidence,
    }
}

// ---------------------------------------------------------------------------------------------
// Character classes

pub(crate) fn is_han(c: char) -> bool {
    matches!(c, '\u{4E00}'..='\u{9FFF}' | '\u{3400}'..='\u{4DBF}' | '々')
}
pub(crate) fn is_kana(c: char) -> bool {
    matches!(c, '\u{3041}'..='\u{3096}' | '\u{30A1}'..='\u{30FA}' | 'ー')
}
pub(crate) fn is_katakana(c: char) -> bool {
    matches!(c, '\u{30A1}'..='\u{30FA}' | 'ー')
}
pub(crate) fn is_hangul(c: char) -> bool {
    matches!(c, '\u{AC00}'..='\u{D7A3}')
}
pub(crate) fn is_arabic(c: char) -> bool {
    matches!(c, '\u{0620}'..='\u{065F}' | '\u{0670}'..='\u{06D3}')
}
/// Arabic diacritics and the tatweel, which people rarely write and the lists leave out.
pub(crate) fn is_arabic_mark(c: char) -> bool {
    matches!(c, '\u{064B}'..='\u{065F}' | '\u{0670}' | '\u{0640}')
}
pub(crate) fn is_devanagari(c: char) -> bool {
    matches!(c, '\u{0900}'..='\u{0963}' | '\u{0971}'..='\u{097F}')
}

/// Runs of characters of one script, as byte ranges.
fn runs(text: &str, of_script: fn(char) -> bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in text.char_indices() {
        match (of_script(c), start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, text.len()));
    }
    out
}

/// Which scripts a text uses beyond ASCII: one pass, so that most text skips every rule here.
#[derive(Default)]
struct Scripts {
    han: bool,
    kana: bool,
    hangul: bool,
    arabic: bool,
    devanagari: bool,
}

impl Scripts {
    fn of(text: &str) -> Scripts {
        let mut s = Scripts::default();
        if text.is_ascii() {
            return s;
        }
        for c in text.chars().filter(|c| !c.is_ascii()) {
            s.han |= is_han(c);
            s.kana |= is_kana(c);
            s.hangul |= is_hangul(c);
            s.arabic |= is_arabic(c);
            s.devanagari |= is_devanagari(c);
        }
        s
    }
}

/// The detector of this module; see the module documentation.
pub struct ScriptNames;

impl Detector for ScriptNames {
    fn name(&self) -> &str {
        "script-names"
    }

    fn detect(&self, text: &str) -> Vec<Span> {
        let scripts = Scripts::of(text);
        let mut out = latin_and_cyrillic(text);
        if scripts.kana {
            out.extend(japanese(text));
        } else if scripts.han {
            out.extend(chinese(text));
        }
        if scripts.hangul {
            out.extend(korean(text));
        }
        if scripts.arabic {
            out.extend(arabic(text));
        }
        if scripts.devanagari {
            out.extend(devanagari(text));
        }
        out.extend(labelled_names(text));
        out.retain(|s| !is_public_context(text, s.start, s.end));
        out
    }
}

/// Whether a word (without diacritics) is a listed Arabic name.
pub(crate) fn is_ar_name(word: &str) -> bool {
    lists().ar_name.contains(word)
}

/// Whether a Devanagari word is a listed given name or surname.
pub(crate) fn is_hi_name(word: &str) -> bool {
    let l = lists();
    l.hi_given.contains(word) || l.hi_surname.contains(word)
}

/// Whether a lowercased Cyrillic word has a Russian surname's shape or is listed.
pub(crate) fn is_ru_surname(lower: &str) -> bool {
    is_cyrillic_lower(lower) && is_surname_shape(lower)
}

/// Whether a lowercased word is a listed Turkish given name.
pub(crate) fn is_tr_given(lower: &str) -> bool {
    lists().tr_given.contains(lower)
}

/// Whether a word is a listed Chinese, Japanese or Korean surname.
pub(crate) fn is_cjk_surname(word: &str) -> bool {
    let l = lists();
    l.zh_surname.contains(word) || l.ja_surname.contains(word) || l.ko_surname.contains(word)
}

/// The listed surname a CJK name starts with, in bytes: "田中太郎" -> 6 ("田中"), "王伟" -> 3,
/// "김민준" -> 3. Longest first; `None` when none is listed or nothing follows it.
pub(crate) fn cjk_surname_len(name: &str) -> Option<usize> {
    let l = lists();
    name.char_indices()
        .skip(1)
        .map(|(b, _)| b)
        .filter(|&b| {
            let head = &name[..b];
            l.zh_surname.contains(head)
                || l.ja_surname.contains(head)
                || l.ko_surname.contains(head)
        })
        .max()
}

// ---------------------------------------------------------------------------------------------
// Chinese

/// Titles and roles after a name: "王伟先生", "李娜老师", "陈经理".
#[rustfmt::skip]
pub(crate) const ZH_AFTER: &[&str] = &[
    "先生", "女士", "小姐", "老师", "经理", "医生", "大夫", "同学", "同事", "教授", "律师", "主任", "师傅", "阿姨",
    "叔叔", "总监", "院长", "部长", "科长", "处长", "老師", "經理", "醫生", "同學", "律師", "師傅", "總監",
];
/// Verbs after a sentence-initial name or one after a weak cue: "张伟说", "和李娜商量".
#[rustfmt::skip]
const ZH_VERBS: &[&str] = &[
    "说", "說", "告诉", "告訴", "打电话", "打電話", "发来", "發來", "来了", "來了", "明天", "昨天", "今天", "问", "問",
    "回复", "回覆", "让我", "讓我", "要我", "的电话", "的電話", "的邮箱", "的郵箱", "的生日",
];
/// Words before a name that make it a person: "同事王伟", "我叫张小明", "联系李娜".
#[rustfmt::skip]
const ZH_BEFORE: &[&str] = &[
    "同事", "朋友", "邻居", "鄰居", "老板", "老闆", "室友", "同学", "同學", "叫", "名叫", "联系", "聯繫", "告诉", "告訴",
    "通知", "邀请", "邀請", "转告", "轉告", "客户", "客戶", "男朋友", "女朋友", "丈夫", "妻子", "老公", "老婆",
];
/// Greetings before a name, a comma or colon between allowed: "你好，王伟".
const ZH_GREETINGS: &[&str] = &["你好", "您好", "亲爱的", "親愛的", "嗨", "哈喽", "尊敬的"];
/// Weaker words before a name ("and", "to", "please"): only with a full three-character name.
const ZH_WEAK_BEFORE: &[&str] = &[
    "给", "給", "和", "跟", "与", "與", "请", "請", "让", "讓", "找", "问", "問", "帮", "幫", "替",
    "向", "约", "約",
];

fn starts_with_any<'a>(s: &str, words: &[&'a str]) -> Option<&'a str> {
    words.iter().copied().find(|w| s.starts_with(w))
}
fn ends_with_any(s: &str, words: &[&str]) -> bool {
    words.iter().any(|w| s.ends_with(w))
}

fn chinese(text: &str) -> Vec<Span> {
    let l = lists();
    let mut out = Vec::new();
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let byte = |k: usize| chars.get(k).map_or(text.len(), |&(b, _)| b);
    let mut i = 0;
    while i < chars.len() {
        if !is_han(chars[i].1) {
            i += 1;
            continue;
        }
        let two = chars
            .get(i + 1)
            .filter(|c| is_han(c.1))
            .map(|_| &text[byte(i)..byte(i + 2)]);
        let surname_len = if two.is_some_and(|s| l.zh_surname.contains(s)) {
            2
        } else if l.zh_surname.contains(&text[byte(i)..byte(i + 1)]) {
            1
        } else {
            i += 1;
            continue;
        };
        let before = &text[..byte(i)];
        let opens = before
            .trim_end()
            .chars()
            .last()
            .is_none_or(|c| !is_han(c) && !c.is_alphanumeric());
        let greeted = ends_with_any(
            before.trim_end_matches([' ', '，', ',', '：', ':']),
            ZH_GREETINGS,
        );
        let strong_before = ends_with_any(before, ZH_BEFORE) || greeted;
        let weak_before = ends_with_any(before, ZH_WEAK_BEFORE) || opens;
        let mut found = None;
        // Longer given names first, so that "王小明说" is not cut to "王小".
        for given in [2, 1] {
            let end = i + surname_len + given;
            if end > chars.len()
                || !(i + surname_len..end).all(|k| l.zh_given.contains(&chars[k].1))
            {
                continue;
            }
            let name = &text[byte(i)..byte(end)];
            let after = &text[byte(end)..];
            let strong_after = starts_with_any(after, ZH_AFTER).is_some();
            let verb_after = starts_with_any(after, ZH_VERBS).is_some();
            let ok = strong_after
                || strong_before
                || (weak_before && verb_after)
                || (ends_with_any(before, ZH_WEAK_BEFORE)
                    && given == 2
                    && !after.starts_with(|c: char| is_han(c) && l.zh_given.contains(&c)));
            if ok && !is_public_name(name) {
                found = Some(end);
                break;
            }
        }
        match found {
            Some(end) => {
                let confidence =
                    if strong_before || starts_with_any(&text[byte(end)..], ZH_AFTER).is_some() {
                        SCRIPT_CUE_CONFIDENCE
                    } else {
                        SCRIPT_SHAPE_CONFIDENCE
                    };
                out.push(person(byte(i), byte(end), confidence));
                i = end;
            }
            None => i += 1,
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Japanese

/// Honorifics after a name, longest first.
#[rustfmt::skip]
pub(crate) const JA_HONORIFICS: &[&str] = &[
    "ちゃん", "さん", "さま", "くん", "先生", "先輩", "部長", "課長", "社長", "教授", "様", "君", "氏", "殿",
];
/// Honorifics that also follow ordinary nouns ("同様", "彼氏", "王様"): only a listed surname
/// or a katakana name before them counts.
const JA_STRICT_HONORIFICS: &[&str] = &["様", "さま", "氏", "殿", "君"];
/// Last characters of trade and role words that take さん ("お医者さん", "八百屋さん").
const JA_TRADE_ENDINGS: &[char] = &[
    '屋', '者', '師', '員', '手', '家', '主', '長', '官', '士', '生', '方',
];
/// Katakana words that take さん or ちゃん but name no one in particular.
const JA_NOT_NAMES: &[&str] = &["パパ", "ママ", "サンタ", "コック", "ウェイター", "ドクター"];

fn japanese(text: &str) -> Vec<Span> {
    let l = lists();
    let mut out = Vec::new();
    let mut seen_end = 0;
    for (s, e) in runs(text, |c| is_han(c) || is_katakana(c)) {
        // A kanji honorific is part of the run: "鈴木課長" is the name "鈴木" and "課長".
        let e = JA_HONORIFICS
            .iter()
            .filter(|h| h.chars().all(is_han))
            .find_map(|h| text[s..e].strip_suffix(h).filter(|n| !n.is_empty()))
            .map_or(e, |name| s + name.len());
        let run = &text[s..e];
        let after = &text[e..];
        let honorific = starts_with_any(after, JA_HONORIFICS);
        // 様 and 氏 begin kanji words of their own ("様子", "氏名").
        let honorific = honorific.filter(|h| {
            !after[h.len()..]
                .chars()
                .next()
                .is_some_and(|c| is_han(c) && matches!(h, &"様" | &"氏" | &"君" | &"殿"))
        });
        let katakana = run.chars().all(is_katakana);
        // The name starts at the leftmost listed surname whose rest is a short given name.
        let from_surname = run.char_indices().find_map(|(k, _)| {
            let rest = &run[k..];
            l.ja_surname
                .iter()
                .filter(|sn| rest.starts_with(sn.as_str()))
                .map(|sn| (k, rest[sn.len()..].chars().count(), sn.len()))
                .filter(|&(_, given, _)| given <= 3)
                .max_by_key(|&(_, _, len)| len)
        });
        let span = match (honorific, from_surname) {
            (Some(_), Some((k, _, _))) => Some((s + k, SCRIPT_CUE_CONFIDENCE)),
            (Some(h), None) => {
                let n = run.chars().count();
                let plain = !JA_STRICT_HONORIFICS.contains(&h)
                    && (2..=4).contains(&n)
                    && !run.ends_with(JA_TRADE_ENDINGS);
                let kata = katakana && n >= 2 && !JA_NOT_NAMES.contains(&run);
                (plain || kata).then_some((s, SCRIPT_SHAPE_CONFIDENCE))
            }
            // "田中太郎" without an honorific: a listed surname and a listed given name.
            (None, Some((k, _, len))) => l
                .ja_given
                .contains(&run[k + len..])
                .then_some((s + k, SCRIPT_SHAPE_CONFIDENCE)),
            (None, None) => None,
        };
        // "佐藤 美咲" (a signature, a form): a listed surname, a space and a listed given name.
        let (span, e) = match (span, from_surname) {
            (None, Some((k, 0, _))) => after
                .strip_prefix([' ', '\u{3000}'])
                .map(|g| {
                    let name = g.split(|c: char| !is_han(c) && !is_kana(c)).next();
                    (text.len() - g.len(), name.unwrap_or(""))
                })
                .filter(|(_, g)| !g.is_empty() && l.ja_given.contains(*g))
                .map_or((None, e), |(at, g)| {
                    (Some((s + k, SCRIPT_SHAPE_CONFIDENCE)), at + g.len())
                }),
            (span, _) => (span, e),
        };
        if let Some((start, confidence)) = span {
            if start >= seen_end && !is_public_name(&text[start..e]) {
                out.push(person(start, e, confidence));
                seen_end = e;
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Korean

/// Honorifics and job titles after a name, attached ("민준씨") or spaced ("김민준 씨").
#[rustfmt::skip]
pub(crate) const KO_HONORIFICS: &[&str] = &[
    "선생님", "교수님", "과장님", "부장님", "대리님", "팀장님", "사장님", "실장님", "박사님", "선배님", "씨", "님",
];
/// Job titles after a bare surname ("김 과장님").
const KO_JOB_TITLES: &[&str] = &[
    "선생님",
    "교수님",
    "과장님",
    "부장님",
    "대리님",
    "팀장님",
    "사장님",
    "실장님",
    "박사님",
];
/// Surnames that are not also everyday one-syllable words ("이" this, "정" affection, "조" group).
const KO_CLEAR_SURNAMES: &[&str] = &[
    "김", "박", "최", "윤", "임", "황", "권", "류", "홍", "배", "백", "허", "심", "곽", "엄", "강",
];
/// Particles after a name, longest first.
#[rustfmt::skip]
const KO_PARTICLES: &[&str] = &[
    "입니다", "이에요", "이예요", "에게서", "한테서", "께서는", "에게는", "이랑", "이야", "에게", "한테", "께서", "하고", "이가", "이는", "이를", "이도",
    "께", "이", "가", "은", "는", "을", "를", "와", "과", "의", "도", "랑", "만",
];

pub(crate) fn strip_particle(word: &str) -> &str {
    KO_PARTICLES
        .iter()
        .find_map(|p| {
            word.strip_suffix(p)
                .filter(|rest| rest.chars().count() >= 2)
        })
        .unwrap_or(word)
}

fn korean(text: &str) -> Vec<Span> {
    let l = lists();
    let words = runs(text, is_hangul);
    let mut out = Vec::new();
    let syllables = |w: &str| w.chars().count();
    let first = |w: &str| w.chars().next().map(String::from).unwrap_or_default();
    let full_name = |w: &str| {
        let head = first(w);
        syllables(w) == 3 && l.ko_surname.contains(&head) && l.ko_given.contains(&w[head.len()..])
    };
    for (k, &(s, e)) in words.iter().enumerate() {
        let word = &text[s..e];
        let spaced_next = words
            .get(k + 1)
            .filter(|&&(ns, _)| text[e..ns].chars().all(|c| c == ' '))
            .map(|&(ns, ne)| &text[ns..ne]);
        let base = strip_particle(word);
        // Attached honorific: "민준씨가" -> "민준".
        let attached = KO_HONORIFICS.iter().find_map(|h| {
            base.strip_suffix(h)
                .or_else(|| word.strip_suffix(h))
                .filter(|n| !n.is_empty())
                .map(|n| (n, *h))
        });
        let spaced =
            spaced_next.and_then(|n| KO_HONORIFICS.iter().find(|h| n.starts_with(**h)).copied());
        let (name, confidence) = if let Some((n, _)) = attached {
            let ok = full_name(n)
                || (syllables(n) == 2 && l.ko_given.contains(n))
                || (syllables(n) == 3 && l.ko_surname.contains(&first(n)));
            (ok.then_some(n), SCRIPT_CUE_CONFIDENCE)
        } else if let Some(h) = spaced {
            let n = base;
            let ok = match syllables(n) {
                1 => KO_CLEAR_SURNAMES.contains(&n) && (KO_JOB_TITLES.contains(&h) || h == "씨"),
                2 => true,
                3 => l.ko_surname.contains(&first(n)),
                _ => false,
            };
            (ok.then_some(n), SCRIPT_CUE_CONFIDENCE)
        } else {
            (full_name(base).then_some(base), SCRIPT_SHAPE_CONFIDENCE)
        };
        if let Some(n) = name {
            if !is_public_name(n) {
                out.push(person(s, s + n.len(), confidence));
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Arabic

#[rustfmt::skip]
const AR_TITLES: &[&str] = &[
    "السيد", "السيدة", "الدكتور", "الدكتورة", "الأستاذ", "الأستاذة", "الاستاذ", "الاستاذة", "المهندس", "المهندسة",
    "الآنسة", "الانسة", "الشيخ", "الحاج", "الحاجة", "د",
];
/// Greetings and words of relation before a listed name: "مرحبا خالد", "زميلي خالد".
#[rustfmt::skip]
const AR_CUES: &[&str] = &[
    "مرحبا", "مرحباً", "أهلا", "اهلا", "عزيزي", "عزيزتي", "زميلي", "زميلتي", "صديقي", "صديقتي", "أخي", "أختي", "جاري",
    "جارتي", "مديري", "مديرتي", "اسمي", "الأخ", "الأخت", "مع", "إلى", "الى", "يا", "باسم", "اسمه", "اسمها",
    "يدعى", "تدعى", "للسيد", "للسيدة",
];
/// Particles inside a name: "علي بن أحمد", "فاطمة بنت محمد", "أبو خالد", "آل سعود", "بنو شعبة".
const AR_PARTICLES: &[&str] = &["بن", "ابن", "بنت", "أبو", "ابو", "أبي", "آل", "بنو", "بني"];
/// The byte offset in a word after its first `n` bytes of letters (diacritics and the tatweel
/// not counted) and the marks that follow them: where a name starts after its proclitic.
pub(crate) fn after_unmarked(word: &str, n: usize) -> usize {
    let mut letters = 0;
    for (i, c) in word.char_indices() {
        if letters >= n && !is_arabic_mark(c) {
            return i;
        }
        if !is_arabic_mark(c) {
            letters += c.len_utf8();
        }
    }
    word.len()
}

/// Conjunctions and prepositions written attached to the next word, also doubled ("وب").
pub(crate) const AR_PROCLITICS: &[&str] = &["وب", "ول", "فب", "فل", "و", "ف", "ب", "ل", "ك"];
/// Words that end a name after a title: prepositions, pronouns, "who", "said".
#[rustfmt::skip]
const AR_STOP: &[&str] = &[
    "في", "من", "على", "إلى", "الى", "عن", "مع", "هو", "هي", "الذي", "التي", "قال", "قالت", "و", "أن", "إن", "لا",
    "ما", "هذا", "هذه", "كان", "كانت", "الرئيس", "المدير", "المعالج",
];
/// Words after أبو that make a place, not a father's name: "أبو ظبي" (Abu Dhabi).
const AR_PLACE_WORDS: &[&str] = &["ظبي"];
/// Words before a name that make it religious or historical: "النبي محمد", "سيدنا موسى".
const AR_REVERED: &[&str] = &[
    "النبي",
    "الرسول",
    "سيدنا",
    "سيدتنا",
    "الإمام",
    "الامام",
    "القديس",
    "الخليفة",
];

fn arabic(text: &str) -> Vec<Span> {
    let l = lists();
    let words: Vec<(usize, usize, String)> = runs(text, is_arabic)
        .into_iter()
        .map(|(s, e)| {
            (
                s,
                e,
                text[s..e].chars().filter(|c| !is_arabic_mark(*c)).collect(),
            )
        })
        .collect();
    // A listed name with a proclitic attached ("وخالد", "لخالد", "بمريم"): the name without it.
    let stem = |w: &str| -> Option<usize> {
        if l.ar_name.contains(w) {
            return Some(0);
        }
        AR_PROCLITICS
            .iter()
            .find(|p| w.strip_prefix(**p).is_some_and(|r| l.ar_name.contains(r)))
            .map(|p| p.len())
    };
    let listed = |w: &str| stem(w).is_some();
    let mut out = Vec::new();
    let mut k = 0;
    while k < words.len() {
        let w = words[k].2.as_str();
        let prev = k.checked_sub(1).map(|p| words[p].2.as_str());
        let revered = prev.is_some_and(|p| AR_REVERED.contains(&p));
        // A title may carry a conjunction or preposition: "والسيد", "بالسيد" (with Mr), "للسيد".
        let title = AR_TITLES.contains(&w)
            || ["و", "ب", "ل", "ف", "ك"]
                .iter()
                .any(|p| w.strip_prefix(p).is_some_and(|r| AR_TITLES.contains(&r)))
            || w.strip_prefix("لل")
                .is_some_and(|r| AR_TITLES.contains(&format!("ال{r}").as_str()));
        // Where the name starts and whether its first word needs to be listed.
        let start = if title
            && words
                .get(k + 1)
                .is_some_and(|n| !AR_STOP.contains(&n.2.as_str()) && !n.2.starts_with("ال"))
        {
            Some((k + 1, SCRIPT_CUE_CONFIDENCE))
        } else if AR_CUES.contains(&w) && words.get(k + 1).is_some_and(|n| l.ar_name.contains(&n.2))
        {
            let cue_confidence = if matches!(w, "مع" | "إلى" | "الى" | "يا") {
                l.ar_common.contains(&words[k + 1].2)
            } else {
                true
            };
            cue_confidence.then_some((k + 1, SCRIPT_CUE_CONFIDENCE))
        } else if !revered && listed(w) {
            let next = words.get(k + 1).map(|n| n.2.as_str());
            let particle = next.is_some_and(|n| matches!(n, "بن" | "ابن" | "بنت"))
                && words.get(k + 2).is_some();
            let pair = stem(w).is_some_and(|p| l.ar_common.contains(&w[p..]))
                && next.is_some_and(|n| {
                    l.ar_name.contains(n)
                        || (n.starts_with("ال") && n.ends_with('ي') && n.chars().count() >= 4)
                });
            (particle || pair).then_some((k, SCRIPT_SHAPE_CONFIDENCE))
        } else if matches!(w, "أبو" | "ابو")
            && !revered
            && words.get(k + 1).is_some_and(|n| {
                l.ar_name.contains(&n.2) && !AR_PLACE_WORDS.contains(&n.2.as_str())
            })
        {
            Some((k, SCRIPT_SHAPE_CONFIDENCE))
        } else {
            None
        };
        let Some((first, confidence)) = start else {
            k += 1;
            continue;
        };
        // Extend over listed names and particles, at most five words, only across spaces.
        let mut last = first;
        while last + 1 < words.len()
            && last + 1 - first < 5
            && text[words[last].1..words[last + 1].0].trim().is_empty()
        {
            let n = words[last + 1].2.as_str();
            let after_particle = AR_PARTICLES.contains(&words[last].2.as_str());
            // A family name of the nisba shape: "العلي", "المصري", "الحسيني".
            let nisba = n.starts_with("ال") && n.ends_with('ي') && n.chars().count() >= 4;
            if AR_PARTICLES.contains(&n) && last + 2 < words.len()
                || after_particle
                || l.ar_name.contains(n)
                || nisba
            {
                last += 1;
            } else {
                break;
            }
        }
        // A particle is never the last word of a name.
        while last > first && AR_PARTICLES.contains(&words[last].2.as_str()) {
            last -= 1;
        }
        let (s, e) = (words[first].0, words[last].1);
        // A proclitic stays outside the span: "وأحمد" -> "أحمد", "لـخالد" -> "خالد" (with the
        // tatweel the proclitic may carry).
        let s = match stem(&words[first].2) {
            Some(p) if p > 0 && !title => s + after_unmarked(&text[s..e], p),
            _ => s,
        };
        if !is_public_name(&text[s..e]) {
            out.push(person(s, e, confidence));
        }
        k = last + 1;
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Devanagari

#[rustfmt::skip]
const HI_TITLES: &[&str] = &["श्री", "श्रीमती", "सुश्री", "कुमारी", "डॉ", "डा", "डॉक्टर", "प्रोफेसर", "प्रोफ़ेसर", "श्रीमान"];
/// Greetings and words of relation before a listed name.
#[rustfmt::skip]
const HI_CUES: &[&str] = &[
    "नमस्ते", "नमस्कार", "प्रिय", "दोस्त", "सहकर्मी", "पड़ोसी", "पड़ोसन", "भाई", "बहन", "मित्र", "सहेली", "साथी",
];
/// Words that end a name after a title: postpositions, verbs, "and".
#[rustfmt::skip]
const HI_STOP: &[&str] = &[
    "है", "हैं", "था", "थी", "का", "की", "के", "को", "ने", "से", "में", "पर", "और", "या", "भी", "तो", "ही", "जी",
];
/// Deities and kin that take श्री or जी but are not people the user names.
#[rustfmt::skip]
const HI_NOT_PEOPLE: &[&str] = &[
    "राम", "कृष्ण", "गणेश", "हनुमान", "शिव", "विष्णु", "लक्ष्मी", "दुर्गा", "सरस्वती", "साईं", "गुरु", "माता", "पिता",
    "दादा", "दादी", "नाना", "नानी", "चाचा", "चाची", "मामा", "मामी", "बाबा", "भैया", "दीदी", "हाँ", "हां", "श्री",
];

fn devanagari(text: &str) -> Vec<Span> {
    let l = lists();
    let words: Vec<(usize, usize, &str)> = runs(text, is_devanagari)
        .into_iter()
        .map(|(s, e)| (s, e, &text[s..e]))
        .collect();
    let listed = |w: &str| {
        (l.hi_given.contains(w) || l.hi_surname.contains(w)) && !HI_NOT_PEOPLE.contains(&w)
    };
    let spaced = |a: usize, b: usize| {
        text[words[a].1..words[b].0]
            .chars()
            .all(|c| c == ' ' || c == '.')
    };
    let mut out = Vec::new();
    let mut k = 0;
    while k < words.len() {
        let w = words[k].2;
        let next = words.get(k + 1).map(|n| n.2);
        // After a title any word but a postposition; after a greeting a listed given name.
        let after_title = HI_TITLES.contains(&w)
            && next.is_some_and(|n| !HI_STOP.contains(&n) && !HI_NOT_PEOPLE.contains(&n))
            && spaced(k, k + 1);
        let after_cue = HI_CUES.contains(&w)
            && next.is_some_and(|n| l.hi_given.contains(n) && !HI_NOT_PEOPLE.contains(&n));
        let start = if after_title || after_cue {
            Some((k + 1, SCRIPT_CUE_CONFIDENCE))
        } else if l.hi_given.contains(w)
            && !HI_NOT_PEOPLE.contains(&w)
            && next.is_some_and(|n| l.hi_surname.contains(n))
        {
            Some((k, SCRIPT_SHAPE_CONFIDENCE))
        } else if listed(w) && next == Some("जी") {
            Some((k, SCRIPT_CUE_CONFIDENCE))
        } else {
            None
        };
        let Some((first, confidence)) = start else {
            k += 1;
            continue;
        };
        let mut last = first;
        while last + 1 < words.len()
            && last + 1 - first < 3
            && spaced(last, last + 1)
            && listed(words[last + 1].2)
        {
            last += 1;
        }
        let (s, e) = (words[first].0, words[last].1);
        if !is_public_name(&text[s..e]) {
            out.push(person(s, e, confidence));
        }
        k = last + 1;
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Latin and Cyrillic script (capitalised words)

/// Turkish honorifics after a name, with their case suffixes: "Ahmet Bey'e", "Ayşe Hanımın".
const TR_HONORIFICS: &[&str] = &["bey", "hanım", "beyefendi", "hanımefendi"];
/// Turkish case suffixes written after an apostrophe: dative, accusative, genitive, locative,
/// ablative, instrumental.
#[rustfmt::skip]
const TR_CASE_SUFFIXES: &[&str] = &[
    "e", "a", "ye", "ya", "i", "ı", "u", "ü", "yi", "yı", "yu", "yü", "in", "ın", "un", "ün", "nin", "nın", "nun", "nün",
    "de", "da", "te", "ta", "den", "dan", "ten", "tan", "le", "la", "yle", "yla", "nde", "nda", "ndan", "nden",
];
/// Titles before a name in Turkish and Russian (the other languages' are in `titles.txt`).
#[rustfmt::skip]
const MORE_TITLES: &[&str] = &[
    "sayın", "bay", "bayan", "господин", "госпожа", "господина", "господину", "господином", "госпоже", "госпожу",
    "госпожой", "г-н", "г-жа", "доктор", "доктора", "доктору", "профессор", "профессора", "профессору",
];
/// Words of relation before a name ("my colleague Will"); a possessive must come just before
/// them, except in Turkish and Russian where the word is possessive itself or commonly bare.
#[rustfmt::skip]
const RELATIONS: &[&str] = &[
    "colleague", "coworker", "co-worker", "friend", "neighbour", "neighbor", "boss", "manager", "landlord", "landlady",
    "flatmate", "roommate", "housemate", "classmate", "teammate", "partner", "boyfriend", "girlfriend", "husband",
    "wife", "fiancé", "fiancée", "brother", "sister", "cousin", "uncle", "aunt", "nephew", "niece", "son", "daughter",
    "tenant", "client", "assistant", "student", "tutor", "nanny", "babysitter", "plumber", "accountant", "dentist",
    "therapist", "mate", "buddy", "grandson", "granddaughter", "stepson", "stepdaughter",
    "collègue", "ami", "amie", "copain", "copine", "voisin", "voisine", "patron", "patronne", "chef", "propriétaire",
    "colocataire", "frère", "sœur", "soeur", "cousine", "oncle", "tante", "fils", "fille", "mari", "femme", "compagnon", "compagne",
    "colega", "compañero", "compañera", "amigo", "amiga", "vecino", "vecina", "jefe", "jefa", "casero", "casera",
    "hermano", "hermana", "primo", "prima", "tío", "tía", "hijo", "hija", "marido", "esposo", "esposa", "novio", "novia",
    "collega", "amico", "amica", "vicino", "vicina", "capo", "fratello", "sorella", "cugino", "cugina", "zio", "zia",
    "figlio", "figlia", "marito", "moglie", "fidanzato", "fidanzata", "coinquilino", "coinquilina",
    "vizinho", "vizinha", "chefe", "irmão", "irmã", "tio", "tia", "filho", "filha", "namorado", "namorada", "senhorio",
    "vriend", "vriendin", "buurman", "buurvrouw", "baas", "huisbaas", "broer", "zus", "neef", "nicht", "oom", "zoon",
    "dochter", "man", "vrouw",
];
/// German words of relation: capitalised like every German noun, so the word after them must be
/// a listed given name ("meine Kollegin Anna", not "meinem Chef Bescheid").
#[rustfmt::skip]
const RELATIONS_DE: &[&str] = &[
    "kollege", "kollegin", "kollegen", "freund", "freundin", "freunde", "nachbar", "nachbarin", "nachbarn", "chef",
    "chefin", "vermieter", "vermieterin", "mitbewohner", "mitbewohnerin", "bruder", "schwester", "cousine", "onkel",
    "sohn", "tochter", "mann", "frau", "partnerin", "enkel", "enkelin",
];
/// Lowercase particles inside a name: "Gerrit van Dam", "Ursula von der Heide".
#[rustfmt::skip]
const NAME_PARTICLES: &[&str] = &[
    "van", "von", "de", "der", "den", "da", "di", "del", "della", "dos", "das", "du", "la", "le", "ter", "ten", "zu",
];
/// Particles that are only ever part of a name.
const GERMANIC_PARTICLES: &[&str] = &["van", "von", "ter", "ten", "zu"];
/// German possessives, whose nouns are capitalised: "meinem Chef Bescheid".
const GERMAN_POSSESSIVE_STEMS: &[&str] = &["mein", "dein", "sein", "ihr", "unser", "eur"];
/// Relation words that carry their possessive (Turkish) or need none (Russian).
#[rustfmt::skip]
const RELATIONS_BARE: &[&str] = &[
    "arkadaşım", "arkadaşımız", "komşum", "patronum", "müdürüm", "kardeşim", "ablam", "abim", "kuzenim", "eşim",
    "kocam", "karım", "oğlum", "kızım", "meslektaşım", "коллега", "коллеге", "коллегу", "другу", "подруга",
    "подруге", "подругу", "сосед", "соседка", "соседу", "соседке", "начальник", "начальнику", "брату", "сестре",
];
#[rustfmt::skip]
const POSSESSIVES: &[&str] = &[
    "my", "our", "his", "her", "their", "your", "mein", "meine", "meinem", "meinen", "meiner", "unser", "unsere",
    "unserem", "unseren", "dein", "deine", "deinem", "deinen", "sein", "seine", "seinem", "seinen", "ihr", "ihre",
    "ihrem", "ihren", "mon", "ma", "mes", "notre", "ton", "ta", "son", "sa", "mi", "mis", "tu", "su", "nuestro",
    "nuestra", "mio", "mia", "suo", "sua", "meu", "minha", "seu", "teu", "tua", "mijn", "onze", "zijn", "haar", "je",
    "мой", "моя", "моему", "моей", "моего", "мою", "наш", "наша", "нашему", "нашей",
];
/// A capitalised Cyrillic word.
fn cyrillic_word(w: &str) -> bool {
    let mut chars = w.chars();
    chars
        .next()
        .is_some_and(|c| c.is_uppercase() && matches!(c, '\u{0400}'..='\u{04FF}'))
        && chars.all(|c| c.is_lowercase() || c == '-')
}

/// A patronymic in any case: "Сергеевич", "Ивановичу", "Петровна", "Ильиничной".
fn is_patronymic(lower: &str) -> bool {
    const FORMS: &[(&str, &[&str])] = &[
        ("ович", &["", "а", "у", "ем", "е"]),
        ("евич", &["", "а", "у", "ем", "е"]),
        ("ьич", &["", "а", "у", "ом", "е"]),
        ("овн", &["а", "ы", "е", "у", "ой"]),
        ("евн", &["а", "ы", "е", "у", "ой"]),
        ("ичн", &["а", "ы", "е", "у", "ой"]),
    ];
    FORMS.iter().any(|(stem, cases)| {
        cases.iter().any(|c| {
            lower
                .strip_suffix(c)
                .and_then(|w| w.strip_suffix(stem))
                .is_some_and(|root| root.chars().count() >= 2)
        })
    })
}

/// A Russian surname shape in any case: -ов/-ев/-ин/-ын, -ова/-ева/-ина, -ский/-ская, -цкий.
fn is_surname_shape(lower: &str) -> bool {
    #[rustfmt::skip]
    const ENDINGS: &[&str] = &[
        "ов", "ев", "ёв", "ин", "ын", "ова", "ева", "ёва", "ина", "ына", "ову", "еву", "ину", "ыну", "овым", "евым",
        "иным", "ыным", "ове", "еве", "ине", "овой", "евой", "иной", "ыной", "овых", "евых", "иных", "ский", "ская",
        "ского", "ской", "скому", "ским", "скую", "цкий", "цкая", "цкого", "цкой", "цкому", "цким",
    ];
    lower.chars().count() >= 4 && ENDINGS.iter().any(|e| lower.ends_with(e))
        || lists().ru_surname.contains(lower)
        || (lower.contains('ё') && lists().ru_surname.contains(&lower.replace('ё', "е")))
}

/// A listed Russian given name, also inflected: "Ивану" -> "Иван", "Марии" -> "Мария".
pub(crate) fn is_ru_given(lower: &str) -> bool {
    // The lists write "е" where people may write "ё" ("Артём", "Пётр").
    let folded;
    let lower = if lower.contains('ё') {
        folded = lower.replace('ё', "е");
        folded.as_str()
    } else {
        lower
    };
    let given = &lists().ru_given;
    if given.contains(lower) {
        return true;
    }
    const CASES: &[&str] = &["ом", "ем", "ой", "ей", "а", "у", "е", "ы", "и", "ю", "я"];
    const BASES: &[&str] = &["", "а", "я", "й", "ь", "ия"];
    CASES.iter().any(|c| {
        lower.strip_suffix(c).is_some_and(|stem| {
            stem.chars().count() >= 2 && BASES.iter().any(|b| given.contains(&format!("{stem}{b}")))
        })
    })
}

/// A public or fictional name, also in a Russian case form or with a Turkish suffix: "Онегине"
/// and "Пушкина" are "Онегин" and "Пушкин".
fn public_word(lower: &str) -> bool {
    let cut = |n: usize| {
        lower
            .char_indices()
            .rev()
            .nth(n - 1)
            .map(|(b, _)| &lower[..b])
    };
    is_public_name(lower)
        || is_public_name(before_apostrophe(lower))
        || (is_cyrillic_lower(lower) && [1, 2].iter().filter_map(|&n| cut(n)).any(is_public_name))
}

fn is_cyrillic_lower(w: &str) -> bool {
    w.chars().any(|c| matches!(c, '\u{0400}'..='\u{04FF}'))
}

/// A Turkish word with its case suffix cut at the apostrophe: "Ahmet'e" -> "Ahmet".
pub(crate) fn before_apostrophe(w: &str) -> &str {
    w.split(['\'', '’']).next().unwrap_or(w)
}

/// A token's lowercase form, borrowed when it is lowercase ASCII already (most tokens), so
/// that a text's tokens need no allocation each.
fn lowercase(word: &str) -> Cow<'_, str> {
    if word
        .bytes()
        .any(|b| !b.is_ascii() || b.is_ascii_uppercase())
    {
        Cow::Owned(word.to_lowercase())
    } else {
        Cow::Borrowed(word)
    }
}

fn latin_and_cyrillic(text: &str) -> Vec<Span> {
    let tokens = tokenize(text);
    let lower: Vec<Cow<'_, str>> = tokens.iter().map(|t| lowercase(t.text)).collect();
    let l = lists();
    let name = |k: usize| tokens.get(k).is_some_and(|t| is_name_word(t));
    let spaced = |a: usize| text[tokens[a - 1].end..tokens[a].start] == *" ";
    // Up to `max` name words from `k`, joined by single spaces only, with particles between
    // them ("Gerrit van Dam", "Maria de la Cruz"): the number of tokens.
    let run = |k: usize, max: usize| {
        let (mut n, mut words) = (0, 0);
        while words < max && name(k + n) && (n == 0 || spaced(k + n)) {
            n += 1;
            words += 1;
            let particles = (k + n..tokens.len())
                .take_while(|&p| NAME_PARTICLES.contains(&tokens[p].text) && spaced(p))
                .count();
            // Romance particles are also prepositions ("Ferreira da Sonae" is Ferreira of
            // Sonae): after them only a listed surname continues the name.
            let clear = particles > 0
                && (tokens[k + n..k + n + particles]
                    .iter()
                    .any(|t| GERMANIC_PARTICLES.contains(&t.text))
                    || lower.get(k + n + particles).is_some_and(|w| is_surname(w)));
            if clear && name(k + n + particles) && spaced(k + n + particles) {
                n += particles;
            }
        }
        n
    };
    let span_of = |a: usize, b: usize, confidence: f32| -> Option<Span> {
        let (start, end) = (tokens[a].start, tokens[b - 1].end);
        (!is_public_name(&text[start..end].to_lowercase())
            && !(a..b).any(|k| public_word(&lower[k])))
        .then(|| person(start, end, confidence))
    };
    let opens = |k: usize| {
        k == 0
            || matches!(tokens[k - 1].text, "." | "!" | "?" | ":" | "\"" | "\n")
            || text[tokens[k - 1].end..tokens[k].start].contains('\n')
    };
    let mut out: Vec<Span> = Vec::new();
    let mut k = 0;
    while k < tokens.len() {
        let w = lower[k].as_ref();
        let mut found: Option<(usize, usize, f32)> = None;
        // Title + name: "Mr Hunter", "Frau Dr. Albers", "Sayın Yılmaz", "господин Петров".
        if (is_title(w) || MORE_TITLES.contains(&w)) && (w.len() > 1 || tokens[k].text == "M") {
            let mut a = k + 1;
            while tokens
                .get(a)
                .is_some_and(|t| t.text == "." || is_title(&t.text.to_lowercase()))
            {
                a += 1;
            }
            let after_possessive = k > 0 && POSSESSIVES.contains(&lower[k - 1].as_ref());
            let n = run(a, 3);
            // "meine Frau Bescheid": a title after a possessive is a relation (wife, husband).
            // "Mr Darcy" is a character: the public list has some names with their title.
            let with_title: Vec<&str> = lower[k..a + n]
                .iter()
                .map(AsRef::as_ref)
                .filter(|t| *t != ".")
                .collect();
            let ok = n > 0
                && (!after_possessive || is_given_name(&lower[a]))
                && !is_public_name(&with_title.join(" "));
            if ok {
                found = Some((a, a + n, SCRIPT_CUE_CONFIDENCE));
            }
        }
        // Relation + name: "my colleague Will", "mi amiga Rosa", "arkadaşım Elif".
        let possessed = k > 0 && POSSESSIVES.contains(&lower[k - 1].as_ref());
        if found.is_none()
            && ((possessed && RELATIONS.contains(&w))
                || RELATIONS_BARE.contains(&w)
                || (possessed && RELATIONS_DE.contains(&w)))
        {
            // "Our plumber, Gerrit van Dam, ...": the name may stand after a comma.
            let german_possessive = possessed
                && GERMAN_POSSESSIVE_STEMS
                    .iter()
                    .any(|p| lower[k - 1].starts_with(p));
            let german =
                RELATIONS_DE.contains(&w) && (!RELATIONS.contains(&w) || german_possessive);
            let first = k + 1 + usize::from(tokens.get(k + 1).is_some_and(|t| t.text == ","));
            let n = run(first, 3);
            let listed = n > 0
                && (is_given_name(&lower[first])
                    || is_common_word_name(&lower[first])
                    || l.tr_given.contains(before_apostrophe(&lower[first]))
                    || is_ru_given(&lower[first]));
            if n > 0 && (!german || listed) {
                found = Some((first, first + n, SCRIPT_CUE_CONFIDENCE));
            }
        }
        // Name + Turkish honorific: "Ahmet Bey", "Ayşe Hanım'a", "Mehmet Ali Bey": the word
        // before it, and one more before that when it is a listed given name.
        if found.is_none() && name(k) && k + 1 < tokens.len() && !opens(k + 1) {
            let honorific = lower.get(k + 1).is_some_and(|h| {
                let h = before_apostrophe(h);
                TR_HONORIFICS
                    .iter()
                    .any(|t| h == *t || (h.starts_with(t) && h.len() <= t.len() + 3))
            }) && tokens[k + 1].text.starts_with(|c: char| c.is_uppercase())
                && spaced(k + 1);
            if honorific {
                let given_before = k > 0
                    && name(k - 1)
                    && spaced(k)
                    && (l.tr_given.contains(lower[k - 1].as_ref()) || is_given_name(&lower[k - 1]));
                let a = if given_before { k - 1 } else { k };
                // The word before may already be part of the last span ("Mehmet" of "Mehmet Ali").
                out.retain(|s| s.end <= tokens[a].start);
                found = Some((a, k + 1, SCRIPT_CUE_CONFIDENCE));
            }
        }
        // Cyrillic names: a patronymic, or a given name with a surname-shaped word.
        if found.is_none() && cyrillic_word(tokens[k].text) {
            let mut n = 0;
            while n < 3
                && tokens.get(k + n).is_some_and(|t| cyrillic_word(t.text))
                && (n == 0 || text[tokens[k + n - 1].end..tokens[k + n].start] == *" ")
            {
                n += 1;
            }
            // Only the words that look like name parts: not "Позвони" before "Ивану Петрову".
            let kinds: Vec<(bool, bool, bool)> = lower[k..k + n]
                .iter()
                .map(|w| (is_patronymic(w), is_ru_given(w), is_surname_shape(w)))
                .collect();
            let part = |x: &(bool, bool, bool)| x.0 || x.1 || x.2;
            if let (Some(a), Some(b)) = (kinds.iter().position(part), kinds.iter().rposition(part))
            {
                let inner = &kinds[a..=b];
                let patronymic = inner.iter().any(|x| x.0);
                let given = inner.iter().any(|x| x.1);
                let surname = inner.iter().any(|x| x.2);
                if b > a && (patronymic || (given && surname)) {
                    found = Some((k + a, k + b + 1, SCRIPT_SHAPE_CONFIDENCE));
                }
            }
        }
        // A Turkish given name with a surname: "Elif Şahin", "Mehmet Yılmaz'ın".
        if found.is_none() && name(k) && l.tr_given.contains(w) && !opens(k) {
            let next = lower.get(k + 1).map(|n| before_apostrophe(n));
            let turkish_letters = |s: &str| s.chars().any(|c| "çğışöüİ".contains(c));
            if run(k, 2) == 2
                && next.is_some_and(|n| {
                    l.tr_surname.contains(n) || (turkish_letters(n) && !is_given_name(n))
                })
            {
                found = Some((k, k + 2, SCRIPT_SHAPE_CONFIDENCE));
            }
        }
        // A listed given name with a Turkish case suffix after an apostrophe, which Turkish
        // writes only after proper nouns: "Mert'e söyle", "Ayşe'nin telefonu". The suffix stays
        // outside the span. Not after another capitalised word inside a sentence: that is a
        // longer proper noun, which the rules for full names judge; nor as the end of a public
        // name ("Mimar Sinan'ın eserleri").
        let after_capitalised = k > 0 && name(k - 1) && spaced(k) && !opens(k - 1);
        if found.is_none() && name(k) && !after_capitalised {
            if let Some((stem, suffix)) = w.split_once(['\'', '’']) {
                let public = k > 0 && is_public_name(&format!("{} {stem}", lower[k - 1]));
                let given = (l.tr_given.contains(stem) || is_given_name(stem))
                    && !is_common_word_name(stem)
                    && !public;
                if given && TR_CASE_SUFFIXES.contains(&suffix) && !public_word(stem) {
                    let start = tokens[k].start;
                    out.push(person(start, start + stem.len(), SCRIPT_SHAPE_CONFIDENCE));
                    k += 1;
                    continue;
                }
            }
        }
        // A given name that is a common word, before a listed surname: "Hope Gallagher".
        if found.is_none()
            && name(k)
            && is_common_word_name(w)
            && run(k, 2) == 2
            && is_surname(&lower[k + 1])
        {
            found = Some((k, k + 2, SCRIPT_SHAPE_CONFIDENCE));
        }
        match found.and_then(|(a, b, c)| span_of(a, b, c).map(|s| (b, s))) {
            Some((b, s)) => {
                out.push(s);
                k = b;
            }
            None => k += 1,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowercase_borrows_only_what_is_lowercase_already() {
        for word in [
            "anna",
            "Anna",
            "ÄRGER",
            "Петров",
            "o'neil",
            "İstanbul",
            "ǅemal",
        ] {
            assert_eq!(lowercase(word), word.to_lowercase(), "{word}");
        }
        assert!(matches!(lowercase("anna"), Cow::Borrowed(_)));
        assert!(matches!(lowercase("Anna"), Cow::Owned(_)));
    }

    fn people(text: &str) -> Vec<&str> {
        ScriptNames
            .detect(text)
            .iter()
            .map(|s| &text[s.start..s.end])
            .collect()
    }

    #[test]
    fn patronymics_and_inflected_given_names() {
        assert!(is_patronymic("сергеевич"));
        assert!(is_patronymic("ивановичу"));
        assert!(is_patronymic("петровной"));
        assert!(!is_patronymic("москвич"));
        assert!(is_ru_given("ивану"));
        assert!(is_ru_given("марии"));
        assert!(!is_ru_given("стол"));
    }

    #[test]
    fn suffixes_particles_and_proclitics_stay_outside_the_name() {
        // Turkish case suffixes after an apostrophe; not a place, not inside a longer name.
        assert_eq!(people("Yarın Mert'e söyler misin?"), ["Mert"]);
        assert_eq!(people("Ayşe'nin telefonu nerede?"), ["Ayşe"]);
        assert!(people("Yarın Ankara'ya gidiyorum.").is_empty());
        assert!(people("Mimar Sinan'ın eserleri neler?").is_empty());
        // A Korean copula, an Arabic proclitic with its tatweel.
        assert_eq!(people("보험 서류 봐줘. 김지훈이야."), ["김지훈"]);
        assert_eq!(people("أرسل لـخالد العتيبي رسالة"), ["خالد العتيبي"]);
        assert_eq!(people("اتصل بمريم الحمادي"), ["مريم الحمادي"]);
        // Japanese surname and given name apart; Russian "ё".
        assert_eq!(
            people("署名を整えてください：\n佐藤 美咲\n営業部"),
            ["佐藤 美咲"]
        );
        assert_eq!(
            people("Для брони: гость Артём Кузнецов, паспорт"),
            ["Артём Кузнецов"]
        );
    }

    #[test]
    fn one_example_per_script() {
        assert_eq!(people("请把报告发给同事王伟。"), ["王伟"]);
        assert_eq!(people("明日、田中さんに連絡します。"), ["田中"]);
        assert_eq!(people("김민준 씨에게 전화해 주세요."), ["김민준"]);
        assert_eq!(people("Позвони Ивану Петрову завтра."), ["Ивану Петрову"]);
        assert_eq!(
            people("أرسل التقرير إلى الدكتور أحمد حسن غدا."),
            ["أحمد حسن"]
        );
        assert_eq!(people("कृपया श्रीमती सुनीता शर्मा को ईमेल भेजें।"), ["सुनीता शर्मा"]);
        assert_eq!(people("Yarın Ahmet Bey ile görüşeceğim."), ["Ahmet"]);
    }
}
