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
        let s = m.as_str();
        if char_before(text, m.start()).is_some_and(|c| c.is_alphanumeric() || c == '.')
            || char_after(text, m.end()).is_some_and(|c| c.is_alphanumeric() || c == '@')
            || RETINA.is_match(s)
            // An SSH remote (git@github.com:org/repo) is not a person's address.
            || (s.starts_with("git@") && char_after(text, m.end()) == Some(':'))
        {
            continue;
        }
        out.push(span(m.start(), m.end(), Category::Email, "email", 0.99));
    }
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
    Regex::new(r"(?i)(?-u:\b)(?:phone|tel|telephone|mobile|mob|cell|call|text|sms|fax|whatsapp|signal|telefon|telefonnummer|handy|mobil|téléphone|portable|teléfono|móvil|celular|telefono|cellulare|numéro|number|ring)(?-u:\b)")
        .expect("phone word regex")
});
static DATE_LIKE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(?:[0-9]{1,2}[./\-][0-9]{1,2}[./\-][0-9]{2,4}|[0-9]{4}[./\-][0-9]{1,2}[./\-][0-9]{1,2})$").expect("date regex")
});

pub fn scan_phone(text: &str, out: &mut Vec<Span>) {
    let mut push =
        |start: usize, end: usize, detector: &str, confidence: f32, min_digits: usize| {
            let s = &text[start..end];
            let digits = ascii_digits(s);
            if digits.len() < min_digits
                || digits.len() > 15
                || !digit_bounded(text, start, end)
                || inside_digit_groups(text, start, end)
                || DATE_LIKE.is_match(s)
                || isbn(&digits)
            {
                return;
            }
            let phone_word = near(text, start, end, &PHONE_WORD, 40, 0);
            if !phone_word && (looks_like_reference(text, start) || before(text, start, 1) == "v") {
                return;
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
        };
    for m in INTERNATIONAL.find_iter(text) {
        let end = trim_closing(text, m.start(), m.end());
        push(m.start(), end, "phone_international", 0.95, 8);
    }
    for m in NANP.find_iter(text) {
        push(m.start(), m.end(), "phone_nanp", 0.9, 10);
    }
    for m in TRUNK.find_iter(text) {
        if m.as_str().contains([' ', '.', '-', '/']) {
            push(m.start(), m.end(), "phone_national", 0.85, 9);
        }
    }
    for m in BARE.find_iter(text) {
        if near(text, m.start(), m.end(), &PHONE_WORD, 30, 0) {
            push(m.start(), m.end(), "phone_in_context", 0.85, 7);
        }
    }
}

/// "8 045 311 447": the candidate continues a longer grouped number on either side.
fn inside_digit_groups(text: &str, start: usize, end: usize) -> bool {
    static BEFORE: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"[0-9][ .\-/]$").expect("group regex"));
    static AFTER: LazyLock<Regex> =
        LazyLock::new(|| Regex::new(r"^[ .\-/][0-9]").expect("group regex"));
    BEFORE.is_match(before(text, start, 2)) || AFTER.is_match(after(text, end, 2))
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
    }

    #[test]
    fn phones_found() {
        assert_eq!(phones("call +44 20 7946 0958 today"), ["+44 20 7946 0958"]);
        assert_eq!(phones("+1 (415) 555-0132"), ["+1 (415) 555-0132"]);
        assert_eq!(phones("E.164: +4915112345678"), ["+4915112345678"]);
        assert!(phones("office (415) 555-0132").contains(&"(415) 555-0132"));
        assert_eq!(phones("Tel. 030 12345678"), ["030 12345678"]);
        assert_eq!(phones("appelle le 06 12 34 56 78"), ["06 12 34 56 78"]);
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
            phones("see 978-0-306-40615-7 for details").is_empty(),
            "a valid ISBN-13"
        );
    }
}
