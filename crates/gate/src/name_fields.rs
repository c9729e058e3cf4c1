//! Names in labelled positions: the value of a form field that only a person fills ("Name:",
//! "Empfänger:", "收件人", "氏名：", "이름은", "ФИО:", "الاسم", "नाम:", "Ad Soyad:") and the name
//! after a self-introduction ("my name is", "je m'appelle", "меня зовут", "मेरा नाम"). The label
//! is the cue, so the name need not be on any list; what follows is read by its script:
//!
//! - Latin and Cyrillic: one to three capitalised words, one of them a listed name, or two
//!   that end at a form's separator ("Name Jordan Whitaker / DOB ..."). A field label must
//!   itself be capitalised ("Name: Katrin", never a YAML key "name: Build and test"), and
//!   without a colon takes two words; a role label ("Recipient:", "Patient:") needs its colon.
//! - Chinese: a listed surname and one or two characters ("收件人王秀兰，").
//! - Japanese: a run from a listed surname, and a given name after a space ("氏名：佐藤 美咲").
//! - Korean: one word of two to four syllables starting with a listed surname, its particle or
//!   copula cut ("이름은 김지훈이야" -> "김지훈").
//! - Arabic: up to three words, the first a listed name or the run at least two words long,
//!   never a word with the article (a trade name, "الاسم التجاري").
//! - Devanagari: up to three words before a postposition, verb or question word, one listed.
//!
//! The span is the name alone, never the label, the colon or a following word.

use std::sync::LazyLock;

use aho_corasick::{AhoCorasick, MatchKind};

use crate::cues::is_name_word;
use crate::learned::{is_given_name, is_public_name, is_surname, tokenize};
use crate::mentions::is_place;
use crate::names_scripts::{
    cjk_surname_len, is_ar_name, is_arabic, is_cjk_surname, is_devanagari, is_han, is_hangul,
    is_hi_name, is_kana, is_katakana, is_ru_given, is_ru_surname, is_tr_given, strip_particle,
    SCRIPT_CUE_CONFIDENCE,
};
use crate::{Category, Span};

/// What a label says about the words after it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Label {
    /// A name field: the name may follow without a colon when it has two words or more.
    Field,
    /// A role only a person fills: the name follows a colon.
    Role,
    /// A self-introduction: the name follows in running text, lowercase label included.
    Intro,
}

#[rustfmt::skip]
const FIELDS: &[&str] = &[
    "name", "full name", "first name", "last name", "surname", "given name", "nome", "nome completo", "cognome",
    "nome e cognome", "vorname", "nachname", "vollständiger name", "nom", "prénom", "nom complet", "nom et prénom",
    "nombre", "nombre completo", "apellidos", "nombre y apellidos", "naam", "volledige naam", "voornaam",
    "achternaam", "ad", "adı", "ad soyad", "adı soyadı", "ad-soyad", "isim", "soyad", "soyadı", "имя", "фио",
    "ф.и.о.", "фамилия", "имя и фамилия", "полное имя",
    "الاسم", "الإسم", "الاسم الكامل", "الإسم الكامل", "नाम", "पूरा नाम",
    "姓名", "名字", "氏名", "お名前", "名前", "宛名", "이름", "성명",
];
#[rustfmt::skip]
const ROLES: &[&str] = &[
    "recipient", "beneficiary", "account holder", "cardholder", "payee", "guest", "patient", "passenger", "applicant",
    "tenant", "insured", "contact person", "attn", "empfänger", "empfängerin", "kontoinhaber", "kontoinhaberin",
    "begünstigter", "gast", "patientin", "antragsteller", "antragstellerin", "mieter", "mieterin",
    "ansprechpartner", "ansprechpartnerin", "destinataire", "bénéficiaire", "titulaire", "invité", "passager",
    "locataire", "demandeur", "destinatario", "destinataria", "beneficiario", "beneficiaria", "titular", "huésped",
    "paciente", "pasajero", "solicitante", "inquilino", "intestatario", "titolare", "ospite", "paziente",
    "passeggero", "richiedente", "destinatário", "beneficiário", "hóspede", "passageiro", "requerente", "ontvanger",
    "begunstigde", "rekeninghouder", "patiënt", "passagier", "aanvrager", "huurder", "alıcı", "hasta", "yolcu",
    "misafir", "hesap sahibi", "başvuran", "получатель", "гость", "пациент", "пациентка", "пассажир", "заявитель",
    "плательщик", "владелец", "المستلم", "المستفيد", "المريض", "المريضة", "الضيف", "المسافر", "صاحب الحساب",
    "मरीज", "मरीज़", "प्राप्तकर्ता", "यात्री", "आवेदक", "खाताधारक",
    "收件人", "收货人", "收貨人", "寄件人", "联系人", "聯繫人", "聯絡人", "联络人", "患者", "乘客", "申请人", "申請人",
    "持卡人", "户名", "戶名", "开户名", "收款人", "付款人", "住客", "入住人", "受取人", "送り主", "担当者", "申請者",
    "口座名義", "名義人", "받는 사람", "받는사람", "보내는 사람", "보내는사람", "수취인", "수령인", "예금주", "신청인",
    "투숙객", "탑승객",
];
#[rustfmt::skip]
const INTROS: &[&str] = &[
    "my name is", "my name's", "mein name ist", "ich heiße", "je m'appelle", "mon nom est", "me llamo",
    "mi nombre es", "mi chiamo", "il mio nome è", "meu nome é", "me chamo", "ik heet", "mijn naam is",
    "меня зовут", "benim adım", "adım", "اسمي", "मेरा नाम", "私の名前は", "제 이름은", "내 이름은",
];

/// Words after a Devanagari name label that end the name: verbs, postpositions, question words.
#[rustfmt::skip]
const HI_END: &[&str] = &[
    "है", "हैं", "था", "थी", "का", "की", "के", "को", "ने", "से", "में", "पर", "और", "या", "भी", "तो", "ही", "जी", "क्या",
    "कैसे", "कौन", "लिखें", "लिखो", "बताओ", "बताइए", "नहीं",
];
/// Arabic words that end a name: prepositions, "number", "and", pronouns.
#[rustfmt::skip]
const AR_END: &[&str] = &[
    "في", "من", "على", "إلى", "الى", "عن", "مع", "هو", "هي", "رقم", "و", "أو", "او", "هذا", "هذه", "ما", "غير",
];
/// Korean copulas and endings after a name, besides the particles: "김지훈이야", "김지훈입니다".
const KO_COPULAS: &[&str] = &[
    "입니다",
    "이에요",
    "이예요",
    "이야",
    "예요",
    "라고",
    "이라고",
    "야",
];

struct Labels {
    automaton: AhoCorasick,
    kinds: Vec<Label>,
}

/// Each label as written lowercase, capitalised and in capitals: the automaton matches case
/// exactly, so that a lowercase YAML key is told apart from a form's label.
static LABELS: LazyLock<Labels> = LazyLock::new(|| {
    let mut patterns = Vec::new();
    let mut kinds = Vec::new();
    for (kind, list) in [
        (Label::Field, FIELDS),
        (Label::Role, ROLES),
        (Label::Intro, INTROS),
    ] {
        for entry in list {
            let mut chars = entry.chars();
            let capitalised: String = chars
                .next()
                .map(|c| c.to_uppercase().chain(chars).collect())
                .unwrap_or_default();
            let mut forms = vec![entry.to_string(), capitalised, entry.to_uppercase()];
            forms.dedup();
            for form in forms {
                if !patterns.contains(&form) {
                    patterns.push(form);
                    kinds.push(kind);
                }
            }
        }
    }
    Labels {
        // The lists are compile-time constants; a failure is a build defect caught by tests.
        automaton: AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .build(&patterns)
            .expect("the label lists build"),
        kinds,
    }
});

fn person(start: usize, end: usize) -> Span {
    Span {
        start,
        end,
        category: Category::Person,
        detector: "name-field".to_string(),
        confidence: SCRIPT_CUE_CONFIDENCE,
    }
}

/// Letters (and the vowel signs of Devanagari) of scripts written with spaces between words,
/// where a label is a whole word.
fn spaced_letter(c: char) -> bool {
    (c.is_alphanumeric() || is_devanagari(c)) && !is_han(c) && !is_kana(c)
}

/// Person spans after the labels of `text`; see the module documentation.
pub fn labelled_names(text: &str) -> Vec<Span> {
    let labels = &*LABELS;
    let mut out = Vec::new();
    for m in labels.automaton.find_iter(text) {
        let (s, e) = (m.start(), m.end());
        let label = &text[s..e];
        let before = text[..s].chars().next_back();
        let first = label.chars().next().unwrap_or(' ');
        let last = label.chars().next_back().unwrap_or(' ');
        if spaced_letter(first) && before.is_some_and(spaced_letter) {
            continue;
        }
        let kind = labels.kinds[m.pattern().as_usize()];
        // Korean labels take a particle: "이름은", "이름이".
        let mut rest_at = e;
        if is_hangul(last) {
            if let Some(p) = ["은", "는", "이", "가"]
                .iter()
                .find(|p| text[e..].starts_with(**p))
            {
                rest_at += p.len();
            }
        }
        if spaced_letter(last) && text[rest_at..].chars().next().is_some_and(spaced_letter) {
            continue;
        }
        let after = &text[rest_at..];
        let gap = after.len()
            - after
                .trim_start_matches([' ', '\t', ':', '：', '-', '–', '=', '\u{a0}'])
                .len();
        let colon = after[..gap].contains([':', '：', '=']);
        // The name stays on the label's line.
        if after[..gap].contains('\n') {
            continue;
        }
        let at = rest_at + gap;
        let Some(c) = text[at..].chars().next() else {
            continue;
        };
        // A field label of a cased script is capitalised: a YAML key or a word in running text
        // is not a form's label.
        let cased_label = first.is_uppercase() || !first.is_lowercase();
        let found = if is_han(c) || is_kana(c) {
            cjk_name(text, at)
        } else if is_hangul(c) {
            korean_name(text, at)
        } else if is_arabic(c) {
            arabic_name(text, at)
        } else if is_devanagari(c) {
            devanagari_name(text, at)
        } else if c.is_uppercase() && (kind == Label::Intro || cased_label) {
            cased_name(text, at, kind, colon)
        } else {
            None
        };
        if let Some((a, b)) = found {
            if !is_public_name(&text[a..b].to_lowercase()) {
                out.push(person(a, b));
            }
        }
    }
    out
}

/// One to three capitalised words at `at`; see the module documentation.
fn cased_name(text: &str, at: usize, kind: Label, colon: bool) -> Option<(usize, usize)> {
    let mut end = text.len().min(at + 160);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let window = &text[at..end];
    let tokens = tokenize(window);
    let mut n = 0;
    while n < tokens.len().min(3)
        && is_name_word(&tokens[n])
        && (n == 0 || &window[tokens[n - 1].end..tokens[n].start] == " ")
    {
        n += 1;
    }
    if n == 0 {
        return None;
    }
    // A field or role may hold a title, an office or a company ("Name: Build And Test",
    // "Empfänger: Finanzamt Berlin"): one of its words must be a listed name.
    let listed = tokens[..n].iter().any(|t| {
        let lower = t.text.to_lowercase();
        let lower = crate::names_scripts::before_apostrophe(&lower);
        is_given_name(lower)
            || is_surname(lower)
            || is_ru_given(lower)
            || is_tr_given(lower)
            || is_ru_surname(lower)
    });
    // Or, in a form's layout (the value ends at a separator or the line), a given name and a
    // surname the lists do not know ("Name Jordan Whitaker / DOB ..."), neither a place.
    let rest = window[tokens[n - 1].end..].trim_start_matches([' ', '\t']);
    let form_layout = rest.is_empty() || rest.starts_with(['/', '|', ',', ';', '\n', '\r']);
    let two_words =
        n == 2 && form_layout && !tokens[..n].iter().any(|t| is_place(&t.text.to_lowercase()));
    let ok = match kind {
        Label::Intro => true,
        Label::Field => (colon || n >= 2) && (listed || two_words),
        Label::Role => colon && (listed || two_words),
    };
    ok.then(|| (at + tokens[0].start, at + tokens[n - 1].end))
}

/// A Chinese or Japanese name at `at`: in Japanese text a run of two to five characters, in
/// Chinese a listed surname and one or two given characters; in both a given name may follow
/// after one space when it ends the line or clause ("佐藤 美咲").
fn cjk_name(text: &str, at: usize) -> Option<(usize, usize)> {
    let run_end = |from: usize| {
        text[from..]
            .char_indices()
            .find(|&(_, c)| !(is_han(c) || is_katakana(c)))
            .map_or(text.len(), |(i, _)| from + i)
    };
    let end = run_end(at);
    let run = &text[at..end];
    let spaced_given = || {
        let given = text[end..].strip_prefix([' ', '\u{3000}'])?;
        let gs = text.len() - given.len();
        let ge = run_end(gs);
        let clause_ends = text[ge..]
            .chars()
            .next()
            .is_none_or(|c| matches!(c, '\n' | '、' | '。' | ',' | '，' | ' ' | '（' | '('));
        ((1..=4).contains(&text[gs..ge].chars().count()) && clause_ends).then_some(ge)
    };
    if is_cjk_surname(run) {
        return spaced_given().map(|ge| (at, ge));
    }
    let head: String = run.chars().take(4).collect();
    let surname = cjk_surname_len(&head)?;
    if text.chars().any(is_kana) {
        // Japanese: the run from a listed surname, two to five characters ("ファイル名" is not).
        return (2..=5)
            .contains(&run.chars().count())
            .then(|| (at, spaced_given().unwrap_or(end)));
    }
    let given = run[surname..]
        .chars()
        .take(2)
        .map(char::len_utf8)
        .sum::<usize>();
    Some((at, at + surname + given))
}

/// A Korean name at `at`: one word, its particle or copula cut, starting with a listed surname.
fn korean_name(text: &str, at: usize) -> Option<(usize, usize)> {
    let end = text[at..]
        .char_indices()
        .find(|&(_, c)| !is_hangul(c))
        .map_or(text.len(), |(i, _)| at + i);
    let word = &text[at..end];
    let word = KO_COPULAS
        .iter()
        .find_map(|c| word.strip_suffix(c).filter(|w| w.chars().count() >= 2))
        .unwrap_or(word);
    let name = strip_particle(word);
    let n = name.chars().count();
    ((2..=4).contains(&n) && cjk_surname_len(name).is_some()).then_some((at, at + name.len()))
}

/// Words of one script from `at`, separated by single spaces, up to three (the scripts'
/// ranges hold their vowel signs and diacritics, so a word is one run).
fn script_words(text: &str, at: usize, of_script: fn(char) -> bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut pos = at;
    while out.len() < 3 {
        let end = text[pos..]
            .char_indices()
            .find(|&(_, c)| !of_script(c))
            .map_or(text.len(), |(i, _)| pos + i);
        if end == pos {
            break;
        }
        out.push((pos, end));
        match text[end..].strip_prefix(' ') {
            Some(rest) if rest.chars().next().is_some_and(of_script) => {
                pos = text.len() - rest.len()
            }
            _ => break,
        }
    }
    out
}

/// An Arabic name at `at`; see the module documentation.
fn arabic_name(text: &str, at: usize) -> Option<(usize, usize)> {
    // A word with an attached "and" that is not itself a name starts the next clause:
    // "اسمي ليلى حداد ورقمي ..." (and my number) ends before it.
    let mut words: Vec<(usize, usize)> = Vec::new();
    for (s, e) in script_words(text, at, is_arabic) {
        let w = &text[s..e];
        if AR_END.contains(&w) || (!words.is_empty() && w.starts_with('و') && !is_ar_name(w)) {
            break;
        }
        words.push((s, e));
    }
    let (&(s, e0), &(_, e)) = (words.first()?, words.last()?);
    let first = &text[s..e0];
    let ok = !first.starts_with("ال") && (is_ar_name(first) || words.len() >= 2);
    ok.then_some((s, e))
}

/// A Devanagari name at `at`: up to three words before a postposition, verb or question word,
/// one of them listed ("नाम: फ़ाइल" is a file's name).
fn devanagari_name(text: &str, at: usize) -> Option<(usize, usize)> {
    let words: Vec<(usize, usize)> = script_words(text, at, is_devanagari)
        .into_iter()
        .take_while(|&(s, e)| !HI_END.contains(&&text[s..e]))
        .collect();
    words
        .iter()
        .any(|&(s, e)| is_hi_name(&text[s..e]))
        .then(|| {
            (
                words.first().map_or(at, |w| w.0),
                words.last().map_or(at, |w| w.1),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<&str> {
        labelled_names(text)
            .iter()
            .map(|s| &text[s.start..s.end])
            .collect()
    }

    #[test]
    fn field_labels_in_every_script() {
        assert_eq!(
            names("Empfänger: Katrin Möller\nIBAN: DE84"),
            ["Katrin Möller"]
        );
        assert_eq!(
            names("Nom : Dupont, Prénom : Camille"),
            ["Dupont", "Camille"]
        );
        assert_eq!(
            names("Name Jordan Whitaker / DOB 03/17/1991"),
            ["Jordan Whitaker"]
        );
        assert_eq!(names("Ad Soyad: Elif Kaya"), ["Elif Kaya"]);
        assert_eq!(
            names("ФИО: Кузнецова Анна Сергеевна"),
            ["Кузнецова Анна Сергеевна"]
        );
        assert_eq!(names("帮我填快递单：收件人王秀兰，电话见下"), ["王秀兰"]);
        assert_eq!(names("氏名：佐藤 美咲\n住所：東京都"), ["佐藤 美咲"]);
        assert_eq!(names("서류 확인해 줘. 이름은 김지훈이야."), ["김지훈"]);
        assert_eq!(names("الاسم مريم الحمادي، رقم الهوية"), ["مريم الحمادي"]);
        assert_eq!(names("اسمي ليلى حداد ورقمي 0501234567"), ["ليلى حداد"]);
        assert_eq!(names("फ़ॉर्म में नाम: रमेश यादव लिखें"), ["रमेश यादव"]);
        assert_eq!(names("Hi, my name is Tendai and I need help"), ["Tendai"]);
        assert_eq!(names("Меня зовут Артём."), ["Артём"]);
    }

    #[test]
    fn labels_that_are_not_a_form_field_find_nothing() {
        // A YAML key, a label with a lowercase value, a word that only starts like a label.
        assert!(names("- name: Build and test\n  run: cargo test").is_empty());
        assert!(names("Name: the file you want").is_empty());
        assert!(names("Namespace: Default").is_empty());
        assert!(names("Patient: Stable after surgery").is_empty());
        // Without a colon a field takes two name words; a role needs its colon.
        assert!(names("Name Tag printing").is_empty());
        assert!(names("Guest Wifi Network").is_empty());
        // Chinese without a listed surname, Korean without one, Arabic with the article.
        assert!(names("联系人电话：见附件").is_empty());
        assert!(names("이름은 모르겠어").is_empty());
        assert!(names("الاسم التجاري للشركة").is_empty());
        assert!(names("आपका नाम क्या है?").is_empty());
        // Field values that are titles, offices, companies or files.
        assert!(names("Name: Build And Test").is_empty());
        assert!(names("Name Tag Printer settings").is_empty());
        assert!(names("Empfänger: Finanzamt Berlin").is_empty());
        assert!(names("Имя: Файл Отчета за март").is_empty());
        assert!(names("名前：ファイル名").is_empty());
        assert!(names("नाम: फ़ाइल").is_empty());
    }
}
