//! E-mail addresses and phone numbers.

use std::sync::LazyLock;

use regex::Regex;

use super::checksum::isbn;
use super::context::{
    after, ascii_digits, before, char_after, char_before, digit_bounded, looks_like_reference,
    near, span,
};
use crate::span::{Category, Span};

static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    // Internationalised local parts and domains ("solène@exemple.fr") included.
    Regex::new(r"[\p{L}\p{N}][\p{L}\p{N}._%+\-]*@[\p{L}\p{N}](?:[\p{L}\p{N}\-]*[\p{L}\p{N}])?(?:\.[\p{L}\p{N}](?:[\p{L}\p{N}\-]*[\p{L}\p{N}])?)*\.\p{L}{2,24}").expect("email regex")
});
/// Image names like `icon@2x.png` share the shape of an address.
static RETINA: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"@[1-4]x\.[a-z]+$").expect("retina regex"));

pub fn scan_email(text: &str, out: &mut Vec<Span>) {
    for m in EMAIL.find_iter(text) {
        let (s, glued_particle) = without_glued_particle(m.as_str());
        let end = m.start() + s.len();
        if char_before(text, m.start()).is_some_and(|c| c.is_alphanumeric() || c == '.')
            || (!glued_particle
                && char_after(text, end).is_some_and(|c| c.is_alphanumeric() || c == '@'))
            || RETINA.is_match(s)
            // An SSH remote (git@github.com:org/repo) is not a person's address.
            || (s.starts_with("git@") && char_after(text, m.end()) == Some(':'))
            // "https://token@host": URL user information, not a mailbox (secrets.rs and
            // network.rs judge it).
            || before(text, m.start(), 3) == "://"
        {
            continue;
        }
        // Reserved documentation domains (RFC 2606, RFC 6761) name nobody: reported, but
        // below the policy's `ignore_below`, so never held back.
        let (detector, confidence) = if example_domain(s) {
            ("email_example_domain", 0.1)
        } else {
            ("email", 0.99)
        };
        out.push(span(m.start(), end, Category::Email, detector, confidence));
    }
}

/// Korean and Japanese write particles straight after an address ("qa@example.com으로",
/// "bob@mail.jpに"): an ASCII top-level domain ends where the other script begins.
fn without_glued_particle(address: &str) -> (&str, bool) {
    let tld_start = address.rfind('.').map_or(0, |i| i + 1);
    let tld = &address[tld_start..];
    match tld.find(|c: char| !c.is_ascii()) {
        Some(cut) if cut >= 2 && tld.is_char_boundary(cut) => (&address[..tld_start + cut], true),
        _ => (address, false),
    }
}

/// example.com/.org/.net and their subdomains, and the reserved top-level domains.
fn example_domain(address: &str) -> bool {
    let domain = address
        .rsplit_once('@')
        .map_or("", |(_, d)| d)
        .to_ascii_lowercase();
    let under = |base: &str| domain == base || domain.ends_with(&format!(".{base}"));
    ["example.com", "example.org", "example.net"]
        .iter()
        .any(|b| under(b))
        || [".example", ".test", ".invalid", ".localhost"]
            .iter()
            .any(|t| domain.ends_with(t))
}

/// `+` and a country code, any grouping: "+44 20 7946 0958", "+1 (415) 555-0132", "+4915112345678".
static INTERNATIONAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:\+|(?-u:\b)00)[1-9](?:[ .\-/]{0,3}\(?[0-9]\)?){6,14}").expect("phone regex")
});
/// North American formatted: "(415) 555-0132", "415-555-0132", "415.555.0132".
static NANP: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:(?-u:\b)1[ .\-])?(?:\([2-9][0-9]{2}\) ?|(?-u:\b)[2-9][0-9]{2}[ .\-])[2-9][0-9]{2}[ .\-][0-9]{4}(?-u:\b)").expect("phone regex")
});
/// National styles with a trunk 0: "020 7946 0958", "(020) 7946 0958", "030 12345678", "06 12 34 56 78", "0171/1234567".
static TRUNK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?:\(0[1-9][0-9]{0,3}\)|(?-u:\b)0[1-9][0-9]{0,3})(?:[ .\-/][0-9]{2,8}){1,4}(?-u:\b)",
    )
    .expect("phone regex")
});
/// Bare digits, only taken when a phone word is near.
static BARE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?-u:\b)[0-9]{7,15}(?-u:\b)").expect("phone regex"));
static PHONE_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b(?:phone|tel|telephone|mobile|mob|cell|call|text|sms|fax|whatsapp|signal|number|ring|num[ée]ro|n[úu]mero|nummer|contacto|contato|{PHONE_LATIN}|{CALL_LATIN})\b|{PHONE_OTHER_SCRIPTS}|{NUMBER_OTHER_SCRIPTS}"
    ))
    .expect("phone word regex")
});
/// Phone words that say "phone" and nothing else ("number" and "call" do not): the cue that
/// lets weaker shapes (local groupings without a trunk prefix) count as phone numbers.
static PHONE_CUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(&format!(
        r"(?i)\b(?:phone|tel|telephone|mobile|mob|cell|fax|whatsapp|{PHONE_LATIN})\b|{PHONE_OTHER_SCRIPTS}"
    ))
    .expect("phone cue regex")
});
/// The phone words of the Latin-script locales (de, fr, es, it, pt, nl, tr).
/// Unicode word boundaries: these only ever run on a short window before a candidate.
const PHONE_LATIN: &str = "telefon\\w{0,4}|rufnummer|handy(?:nummer)?|mobil(?:nummer|e)?|festnetz|anrufen|t[ée]l[ée]phone|portable|tel[ée]fono|m[óo]vil|celular|cellulare|telefone|telem[óo]vel|telefoonnummer|mobiel(?:tje)?|gsm|numara\\w{0,6}";
/// Verbs of calling and messaging (de, fr, es, it, pt, nl, tr): a number they take is a phone
/// number, before or after them ("Llama a doña Remedios al 34655318402", "unter ...
/// zurückrufen", "... numarasından arayıp").
const CALL_LATIN: &str = "(?:zur[üu]ck)?rufen?|ruf|simse|appelle[rz]?|rappelle[rz]?|llam[ae]\\w{0,4}|ll[áa]mame|chiam[ai]\\w{0,4}|richiam\\w{0,4}|lig[ae]\\w{0,3}|telefona\\w{0,3}|bel(?:len)?|appje|appen|ara(?:y[ıi]p|yın|yabilir\\w*)|mesaj";
/// Phone words in scripts without ASCII word boundaries: zh, ja, ko, ar, ru, hi.
const PHONE_OTHER_SCRIPTS: &str = "电话|電話|手机|手機|联系|聯絡|微信|短信|打给|携帯|ケータイ|連絡先|ショートメール|전화|휴대폰|핸드폰|연락처|문자|هاتف|الهاتف|جوال|الجوال|موبايل|اتصل|واتساب|телефон|тел\\.|моб\\.|мобильн|сотов|звон|смс|फ़ोन|फोन|मोबाइल|संपर्क|कॉल|मैसेज";
/// "Number" in those scripts: enough next to a phone shape, not for a weak one.
const NUMBER_OTHER_SCRIPTS: &str = "号码|號碼|番号|번호|رقم|номер|नंबर|नम्बर";
static DATE_LIKE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[0-9]{1,2}[./\-][0-9]{1,2}[./\-][0-9]{2,4}|[0-9]{4}[./\-][0-9]{1,2}[./\-][0-9]{1,2})$").expect("date regex")
});

pub fn scan_phone(text: &str, out: &mut Vec<Span>) {
    // `whole`: the candidate is a whole match, so a digit group right after it means it is
    // part of a longer number; a candidate cut shorter at a space is followed by one by design.
    let mut push = |start: usize,
                    end: usize,
                    detector: &str,
                    confidence: f32,
                    min_digits: usize,
                    whole: bool| {
        let s = &text[start..end];
        let digits = ascii_digits(s);
        let phone_word =
            near(text, start, end, &PHONE_WORD, CUE_WINDOW, 0) || call_after(text, end);
        // One ten-digit number in eleven passes the ISBN-10 check: only without a phone
        // word does that make it a book.
        if digits.len() < min_digits
            || digits.len() > 15
            || !digit_bounded(text, start, end)
            || continues_before(text, start)
            || (whole && continues_after(text, end))
            || DATE_LIKE.is_match(s)
            || (isbn(&digits) && !phone_word)
        {
            return false;
        }
        if !phone_word && (looks_like_reference(text, start) || before(text, start, 1) == "v") {
            return false;
        }
        out.push(span(
            start,
            end,
            Category::Phone,
            detector,
            if phone_word {
                confidence.max(0.95)
            } else {
                confidence
            },
        ));
        true
    };
    for m in INTERNATIONAL.find_iter(text) {
        let mut end = trim_closing(text, m.start(), m.end());
        let mut whole = true;
        // No numbering plan ends in a one-digit group: "+49 30 1234567 8 times".
        if let Some(last_space) = text[m.start()..end].rfind(' ') {
            if end - (m.start() + last_space) == 2 {
                end = trim_closing(text, m.start(), m.start() + last_space);
                whole = false;
            }
        }
        if push(m.start(), end, "phone_international", 0.95, 8, whole) {
            continue;
        }
        // Up to fifteen digits may run into a number after the phone number ("+49 30 1234567
        // 8 times", "... 0958 2024"): the longest prefix that ends at a space and is valid.
        let cuts: Vec<usize> = text[m.start()..end]
            .match_indices(' ')
            .map(|(i, _)| m.start() + i)
            .collect();
        for &cut in cuts.iter().rev() {
            let cut = trim_closing(text, m.start(), cut);
            if push(m.start(), cut, "phone_international", 0.95, 8, false) {
                break;
            }
        }
    }
    for m in NANP.find_iter(text) {
        push(m.start(), m.end(), "phone_nanp", 0.9, 10, true);
    }
    for m in TRUNK.find_iter(text) {
        if m.as_str().contains([' ', '.', '-', '/']) {
            push(m.start(), m.end(), "phone_national", 0.85, 9, true);
        }
    }
    for m in BARE.find_iter(text) {
        if near(text, m.start(), m.end(), &PHONE_WORD, CUE_WINDOW, 0) || call_after(text, m.end()) {
            push(m.start(), m.end(), "phone_in_context", 0.85, 7, true);
        } else if e164_mobile(m.as_str()) && !looks_like_reference(text, m.start()) {
            // A mobile number written in international form without its "+".
            push(
                m.start(),
                m.end(),
                "phone_international_bare",
                0.8,
                11,
                true,
            );
        }
    }
    for m in CN_MOBILE.find_iter(text) {
        // Grouped 3-4-4 it is a mobile number on its own; eleven bare digits need a cue.
        let grouped = m.as_str().len() > 11;
        if grouped
            || near(text, m.start(), m.end(), &PHONE_CUE, CUE_WINDOW, 0)
            || near(text, m.start(), m.end(), &CONTACT_WORD, CUE_WINDOW, 0)
        {
            push(m.start(), m.end(), "phone_cn_mobile", 0.85, 11, true);
        }
    }
    for (re, detector) in [
        (&*RU_TRUNK, "phone_ru_trunk"),
        (&*AREA_IN_PARENS, "phone_area_code"),
    ] {
        for m in re.find_iter(text) {
            push(m.start(), m.end(), detector, 0.85, 10, true);
        }
    }
    for m in LOCAL.find_iter(text) {
        // A word that only says "number" is enough when the digits are a national mobile
        // number ("उनका नंबर 98291 47362").
        let cue = near(text, m.start(), m.end(), &PHONE_CUE, CUE_WINDOW, 0)
            || (national_mobile(&ascii_digits(m.as_str()))
                && (near(text, m.start(), m.end(), &PHONE_WORD, CUE_WINDOW, 0)
                    || call_after(text, m.end())));
        if cue {
            push(m.start(), m.end(), "phone_local_in_context", 0.85, 8, true);
        }
    }
}

/// A verb of calling or a phone word just after the number, in the languages that put it
/// there ("... 0171 4829356 zurückrufen", "... numarasından arayıp", "...に電話", "... पर कॉल
/// करो"). Not "number", "text" or "call": after a number those are ordinary words ("80070005
/// when I call the API").
fn call_after(text: &str, end: usize) -> bool {
    static CALL_AFTER: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"(?i)(?:zur[üu]ck|an)?rufen|bellen|appen|numara\w*|ara(?:y[ıi]p|yın|yabilir)|電話|电话|전화|연락|문자|कॉल|फ़ोन|फोन|звони|позвони|اتصل|هاتف")
            .expect("call regex")
    });
    CALL_AFTER.is_match(after(text, end, AFTER_WINDOW))
}

/// How far after a number a calling verb may stand.
/// 48 bytes: sixteen Devanagari characters ("98214 67350 पर शाम को कॉल").
const AFTER_WINDOW: usize = 48;

/// Mobile ranges of the numbering plans of the gate's locales and their neighbours, written
/// with the country code and without "+": (country code, first digits of the national number,
/// national number lengths). Numbers of other shapes (orders, timestamps) rarely start with
/// a country code and a mobile prefix and have exactly the plan's length.
const MOBILE_PLANS: &[(&str, &[&str], &[usize])] = &[
    ("49", &["15", "16", "17"], &[10, 11]),
    ("44", &["7"], &[10]),
    ("33", &["6", "7"], &[9]),
    ("34", &["6", "7"], &[9]),
    ("39", &["3"], &[9, 10]),
    ("351", &["91", "92", "93", "96"], &[9]),
    ("31", &["6"], &[9]),
    ("32", &["45", "46", "47", "48", "49"], &[9]),
    ("41", &["75", "76", "77", "78", "79"], &[9]),
    ("43", &["65", "66", "67", "68", "69"], &[10, 11, 12]),
    ("48", &["45", "5", "6", "7", "88"], &[9]),
    ("90", &["5"], &[10]),
    ("7", &["9"], &[10]),
    ("86", &["13", "14", "15", "16", "17", "18", "19"], &[11]),
    ("81", &["70", "80", "90"], &[10]),
    ("82", &["10"], &[9, 10]),
    ("91", &["6", "7", "8", "9"], &[10]),
    ("966", &["5"], &[9]),
    ("971", &["5"], &[9]),
    ("20", &["10", "11", "12", "15"], &[10]),
    ("212", &["6", "7"], &[9]),
    (
        "55",
        &[
            "119", "219", "319", "419", "519", "619", "719", "819", "919",
        ],
        &[11],
    ),
    ("61", &["4"], &[9]),
];

fn e164_mobile(digits: &str) -> bool {
    MOBILE_PLANS.iter().any(|(cc, prefixes, lengths)| {
        digits.strip_prefix(cc).is_some_and(|national| {
            lengths.contains(&national.len()) && prefixes.iter().any(|p| national.starts_with(p))
        })
    })
}

/// National mobile numbers written without a trunk 0: India (ten digits from 6 to 9),
/// Spain (nine from 6 or 7), Italy (ten from 3), Portugal (nine from 91/92/93/96), Turkey
/// (ten from 5), Russia (ten from 9).
fn national_mobile(digits: &str) -> bool {
    let starts = |set: &[&str]| set.iter().any(|p| digits.starts_with(p));
    match digits.len() {
        9 => starts(&["6", "7", "91", "92", "93", "96"]),
        10 => starts(&["3", "5", "6", "7", "8", "9"]),
        _ => false,
    }
}

/// How far before a number its phone word may stand (bytes: a CJK word is 6 to 12).
const CUE_WINDOW: usize = 48;
/// Chinese mobiles: 1[3-9] and nine digits, bare or 3-4-4.
static CN_MOBILE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)1[3-9][0-9](?:[0-9]{8}|[ \-][0-9]{4}[ \-][0-9]{4})(?-u:\b)")
        .expect("phone regex")
});
/// Words for a contact in the gate's languages: with eleven digits of a Chinese mobile's
/// shape after them, a phone number ("Kontakt: Wang Fang, 13800138000").
static CONTACT_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:contact|kontakt|contacto|contato|contatto|contacter|iletişim|контакт\w*|связ\w*|تواصل|للتواصل)\b|联系|聯繫|联络|聯絡|連絡|연락|संपर्क")
        .expect("contact word regex")
});
/// Russian trunk prefix 8 and the 3-2-2 tail: "8 (495) 123-45-67", "8 916 123 45 67".
static RU_TRUNK: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"(?-u:\b)8[ \-]?(?:\([0-9]{3}\)|[0-9]{3})[ \-]?[0-9]{3}[ \-][0-9]{2}[ \-][0-9]{2}(?-u:\b)",
    )
    .expect("phone regex")
});
/// A two-digit area code in parentheses (Brazil, Argentina...): "(11) 91234-5678".
static AREA_IN_PARENS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\([1-9][0-9]\) ?9?[0-9]{4}[ \-][0-9]{4}(?-u:\b)").expect("phone regex")
});
/// Local groupings without `+` or trunk 0 ("612 34 56 78", "347 123 4567", "98765 43210",
/// "(0532) 123 45 67"): only near a phone word.
static LOCAL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?:\([0-9]{2,5}\)|(?-u:\b)[0-9]{2,5})(?:[ .\-/]{1,2}[0-9]{2,5}){1,4}(?-u:\b)")
        .expect("phone regex")
});

/// "8 045 311 447": the candidate continues a longer grouped number before it...
fn continues_before(text: &str, start: usize) -> bool {
    static BEFORE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[0-9][ .\-/]$").expect("group regex"));
    BEFORE.is_match(before(text, start, 2))
}

/// ... or after it.
fn continues_after(text: &str, end: usize) -> bool {
    static AFTER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^[ .\-/][0-9]").expect("group regex"));
    AFTER.is_match(after(text, end, 2))
}

/// A match may end in ")" from "(0)"-style groups; keep the span on the last digit.
fn trim_closing(text: &str, start: usize, mut end: usize) -> usize {
    while end > start && !text.as_bytes()[end - 1].is_ascii_digit() {
        end -= 1;
    }
    end
}

#[cfg(test)]
mod tests {
    use super::*;

    fn emails(t: &str) -> Vec<&str> {
        let mut out = Vec::new();
        scan_email(t, &mut out);
        out.iter().map(|s| &t[s.start..s.end]).collect()
    }

    fn phones(t: &str) -> Vec<&str> {
        let mut out = Vec::new();
        scan_phone(t, &mut out);
        let out = crate::patterns::resolve(out);
        out.iter().map(|s| &t[s.start..s.end]).collect()
    }

    #[test]
    fn emails_found() {
        assert_eq!(
            emails("write to jane.doe+news@mail.example.co.uk."),
            ["jane.doe+news@mail.example.co.uk"]
        );
        assert_eq!(emails("<ANN_LEE@Firma-GmbH.de>"), ["ANN_LEE@Firma-GmbH.de"]);
        assert_eq!(
            emails("à aurélie.devries65@libero.it, merci"),
            ["aurélie.devries65@libero.it"]
        );
    }

    #[test]
    fn email_hard_negatives() {
        assert!(emails("git clone git@github.com:rust-lang/rust.git").is_empty());
        assert!(emails("use logo@2x.png for retina").is_empty());
        assert!(emails("npm i @types/node and pkg@1.2.3").is_empty());
        assert!(emails("user@localhost").is_empty());
        assert!(emails("git clone https://ghp_abc123@github.com/o/r.git").is_empty());
    }

    #[test]
    fn phones_found() {
        assert_eq!(phones("call +44 20 7946 0958 today"), ["+44 20 7946 0958"]);
        assert_eq!(phones("+1 (415) 555-0132"), ["+1 (415) 555-0132"]);
        assert_eq!(phones("E.164: +4915112345678"), ["+4915112345678"]);
        assert!(phones("office (415) 555-0132").contains(&"(415) 555-0132"));
        assert_eq!(phones("Tel. 030 12345678"), ["030 12345678"]);
        assert_eq!(phones("appelle le 06 12 34 56 78"), ["06 12 34 56 78"]);
        // A Chinese mobile after a word for a contact, in German and English.
        assert_eq!(phones("Kontakt: Wang Fang, 13800138000"), ["13800138000"]);
        assert_eq!(phones("Contact: 13800138000 Wang Fang"), ["13800138000"]);
        assert!(phones("Order 13800138000 shipped").is_empty());
        // A calling verb a few Devanagari words after the number.
        assert_eq!(
            phones("उन्हें बोलो कि 98214 67350 पर शाम को कॉल कर लें"),
            ["98214 67350"]
        );
        assert_eq!(phones("my mobile is 5551234567"), ["5551234567"]);
        assert_eq!(phones("0049 30 1234567"), ["0049 30 1234567"]);
        for intl in [
            "+33 6 12 34 56 78",
            "+81 3-1234-5678",
            "+91 98765 43210",
            "+86 139 1234 5678",
            "+55 11 91234-5678",
            "+44 (0)20 7946 0958",
            "+1-212-555-0147",
            "+61 2 9374 4000",
        ] {
            assert_eq!(phones(&format!("reach me on {intl}.")), [intl]);
        }
        assert_eq!(phones("Tel (020) 7946 0958"), ["(020) 7946 0958"]);
    }

    #[test]
    fn a_phone_number_does_not_take_the_number_after_it() {
        assert_eq!(
            phones("call +44 20 7946 0958 2024 was the year"),
            ["+44 20 7946 0958"]
        );
        assert_eq!(phones("ruf +49 30 1234567 8 mal an"), ["+49 30 1234567"]);
    }

    #[test]
    fn local_formats_in_many_languages() {
        for (t, value) in [
            ("我的手机号码是13812345678，请联系我", "13812345678"),
            ("联系 139 1234 5678", "139 1234 5678"),
            ("電話番号は090-1234-5678です", "090-1234-5678"),
            ("전화 010-1234-5678 으로 연락주세요", "010-1234-5678"),
            ("мой телефон 8 (495) 123-45-67", "8 (495) 123-45-67"),
            ("звоните 8 916 123 45 67", "8 916 123 45 67"),
            ("رقم هاتفي 050 123 4567", "050 123 4567"),
            ("मेरा मोबाइल नंबर 98765 43210 है", "98765 43210"),
            ("mi teléfono es 612 34 56 78", "612 34 56 78"),
            ("il mio cellulare è 347 123 4567", "347 123 4567"),
            ("meu celular (11) 91234-5678", "(11) 91234-5678"),
            ("cep telefonum 0532 123 45 67", "0532 123 45 67"),
            ("mijn mobiel 06-12345678", "06-12345678"),
            ("उनका नंबर 98291 47362 है", "98291 47362"),
        ] {
            assert_eq!(phones(t), [value], "{t}");
        }
    }

    #[test]
    fn international_numbers_without_plus() {
        for (t, value) in [
            (
                "Sie möchte mich unter 491726384915 zurückrufen",
                "491726384915",
            ),
            ("Llama a doña Remedios al 34655318402 y dile", "34655318402"),
            (
                "Chiama l'architetta allo 393471829365 e chiedile",
                "393471829365",
            ),
            (
                "Liga à Dona Conceição para o 351912483706 e diz-lhe",
                "351912483706",
            ),
            (
                "Stuur Joost een appje op 31651827394 dat ik later ben",
                "31651827394",
            ),
            (
                "Burak Bey'i 905426173985 numarasından arayıp",
                "905426173985",
            ),
            ("her number's 447946183520: the keys", "447946183520"),
            ("给他 8613912345678", "8613912345678"),
            // A calling verb after the number.
            ("Bitte 5551234567 zurückrufen", "5551234567"),
        ] {
            assert_eq!(phones(t), [value], "{t}");
        }
        for t in [
            "order 491726384915 shipped",
            "ticket 351912483706 closed",
            "invoice 34655318402 paid",
            "timestamp 1700000000123",
            "a total of 3934718293651 bytes",
            "Error 80070005 when I call the API",
            "it printed 1234567 text lines",
        ] {
            assert!(phones(t).is_empty(), "{t}: {:?}", phones(t));
        }
    }

    #[test]
    fn emails_at_documentation_domains_are_reported_weakly() {
        for t in [
            "mail bob@example.com",
            "a@mail.example.org",
            "x@foo.test",
            "y@corp.example",
            "z@host.invalid",
        ] {
            let mut out = Vec::new();
            scan_email(t, &mut out);
            assert!(out.len() == 1 && out[0].confidence < 0.2, "{t}: {out:?}");
        }
        let mut out = Vec::new();
        scan_email("jane@myexample.com and joe@examples.org", &mut out);
        assert!(out.iter().all(|s| s.confidence > 0.9), "{out:?}");
    }

    #[test]
    fn particles_glued_to_an_address_are_not_its_domain() {
        assert_eq!(emails("qa@example.com으로 보내고"), ["qa@example.com"]);
        assert_eq!(emails("taro@mail.jpに送って"), ["taro@mail.jp"]);
        let mut out = Vec::new();
        scan_email("테스트 메일은 qa@example.com으로", &mut out);
        assert!(out.len() == 1 && out[0].confidence < 0.2, "{out:?}");
        // An internationalised domain keeps its letters.
        assert_eq!(emails("écris à marie@exemple.рф"), ["marie@exemple.рф"]);
    }

    #[test]
    fn phone_hard_negatives() {
        assert!(phones("released 2024-01-15 10:30:00").is_empty());
        assert!(phones("timestamp 1700000000123").is_empty());
        assert!(phones("Order #415-555-0132 shipped").is_empty());
        assert!(phones("ISBN 0-306-40615-2").is_empty());
        assert!(phones("on 01.02.2024 we met").is_empty());
        assert!(phones("version 10.0.19041").is_empty());
        assert!(phones("it costs 1234567 dollars").is_empty());
        assert!(phones("population 8 045 311 447 in 2023").is_empty());
        assert!(
            phones("the sum is 612 34 56 78 units").is_empty(),
            "no phone word"
        );
        assert!(
            phones("ticket 13812345678 closed").is_empty(),
            "bare, no cue"
        );
        assert!(phones("订单号 13812345678").is_empty(), "an order number");
        assert!(phones("построено в 1985-1990 годах").is_empty());
        assert!(
            phones("see 978-0-306-40615-7 for details").is_empty(),
            "a valid ISBN-13"
        );
    }
}
