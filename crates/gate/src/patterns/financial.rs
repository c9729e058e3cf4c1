//! Payment cards (Luhn plus issuer ranges) and IBANs (per-country length plus mod 97).

use std::sync::LazyLock;

use regex::Regex;

use super::checksum::{iban_mod97, isbn, luhn};
use super::context::{char_after, char_before, looks_like_reference, near, span};
use crate::span::{Category, Span};

/// Digits with up to three separator characters between them: "4111 1111 1111 1111",
/// "4111-1111-1111-1111", "4111/1111/1111/1111", "4 1 1 1 - 1 1 1 1 ...". A card may sit anywhere inside such a run
/// (between other numbers), so candidates start and end at group edges.
static DIGIT_RUN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[0-9](?:[ .\-/]{0,3}[0-9])*").expect("digit run regex"));
static CARD_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)(?:card|credit|debit|visa|mastercard|amex|american express|cc|pan|karte|kreditkarte|carte|tarjeta|carta)(?-u:\b)").expect("card word regex")
});

/// Test numbers published by payment gateways (Stripe, Braintree, Adyen, PayPal, Worldpay)
/// and card networks for integration testing.
#[rustfmt::skip]
const TEST_CARDS: &[&str] = &[
    "4111111111111111", "4242424242424242", "4000056655665556", "4012888888881881",
    "4222222222222", "4000000000000002", "4000000000009995", "4000000000000069",
    "4000000000000127", "4000000000000119", "4000002500003155", "4000002760003184",
    "4000003800000446", "4000000000003220", "4000000760000002", "4000001240000000",
    "4005519200000004", "4009348888881881", "4012000033330026", "4012000077777777",
    "4217651111111119", "4500600000000061", "4917610000000000", "5555555555554444",
    "5200828282828210", "5105105105105100", "5500000000000004", "5454545454545454",
    "2223003122003222", "2223000048400011", "2222400070000005", "378282246310005",
    "371449635398431", "378734493671000", "340000000000009", "6011111111111117",
    "6011000990139424", "6011000400000000", "6011981111111113", "3056930009020004",
    "36227206271667", "30569309025904", "38520000023237", "3566002020360505",
    "3530111333300000", "3566111111111113", "6200000000000005", "6205500000000000004",
    "6759649826438453", "6304000000000000",
];
/// Words of a testing or development context, in the gate's locales.
static TEST_CUE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)(?-u:\b)(?:test|sandbox|stripe|braintree|adyen|checkout\.com|dummy|fake|sample|mock|fixture|staging|demo|luhn|validat|qa(?-u:\b)|prueba|teste|prova|essai|deneme)|测试|測試|テスト|테스트|тест|परीक्षण|اختبار|تجريب").expect("test cue regex")
});

/// Issuer ranges and lengths of the major networks.
fn card_network(d: &str) -> Option<&'static str> {
    let n = d.len();
    let prefix = |k: usize| d[..k].parse::<u32>().unwrap_or(0);
    let network = match d.as_bytes()[0] {
        b'4' if matches!(n, 13 | 16 | 19) => "visa",
        b'5' if (51..=55).contains(&prefix(2)) && n == 16 => "mastercard",
        b'2' if (2221..=2720).contains(&prefix(4)) && n == 16 => "mastercard",
        b'2' if (2200..=2204).contains(&prefix(4)) && (16..=19).contains(&n) => "mir",
        b'3' if matches!(prefix(2), 34 | 37) && n == 15 => "amex",
        b'3' if (3528..=3589).contains(&prefix(4)) && (16..=19).contains(&n) => "jcb",
        b'3' if ((300..=305).contains(&prefix(3)) || matches!(prefix(2), 36 | 38 | 39))
            && (14..=19).contains(&n) =>
        {
            "diners"
        }
        b'6' if (prefix(4) == 6011 || (644..=649).contains(&prefix(3)) || prefix(2) == 65)
            && (16..=19).contains(&n) =>
        {
            "discover"
        }
        b'6' if prefix(2) == 62 && (16..=19).contains(&n) => "unionpay",
        b'6' if (prefix(4) == 6304 || prefix(2) == 67) && (13..=19).contains(&n) => "maestro",
        b'6' if prefix(2) == 60 && n == 16 => "rupay",
        b'5' if (prefix(2) == 50 || (56..=58).contains(&prefix(2))) && (13..=19).contains(&n) => {
            "maestro"
        }
        _ => return None,
    };
    Some(network)
}

pub fn scan_card(text: &str, out: &mut Vec<Span>) {
    for run in DIGIT_RUN.find_iter(text) {
        if char_before(text, run.start()).is_some_and(|c| c.is_ascii_alphanumeric())
            || char_after(text, run.end()).is_some_and(|c| c.is_ascii_alphanumeric())
        {
            continue;
        }
        // (byte offset, digit) of every digit, and where groups start and end.
        let digits: Vec<(usize, u8)> = run
            .as_str()
            .bytes()
            .enumerate()
            .filter(|(_, b)| b.is_ascii_digit())
            .map(|(i, b)| (run.start() + i, b))
            .collect();
        if digits.len() < 13 {
            continue;
        }
        let group_start: Vec<bool> = (0..digits.len())
            .map(|i| i == 0 || digits[i].0 != digits[i - 1].0 + 1)
            .collect();
        let group_end: Vec<bool> = (0..digits.len())
            .map(|i| i + 1 == digits.len() || group_start[i + 1])
            .collect();
        let mut i = 0;
        while i < digits.len() {
            let mut taken = false;
            if group_start[i] {
                for len in (13..=19).rev() {
                    let j = i + len;
                    if j > digits.len() || !group_end[j - 1] {
                        continue;
                    }
                    // Printed cards are one block or three to five groups (4-6-5, 4-4-4-4,
                    // spaced digits); "2.718281828459045" is a decimal, not a card.
                    let groups = (i..j).filter(|&k| group_start[k]).count();
                    if groups == 2 {
                        continue;
                    }
                    let number: String = digits[i..j].iter().map(|&(_, b)| b as char).collect();
                    let (start, end) = (digits[i].0, digits[j - 1].0 + 1);
                    let Some(network) = card_network(&number) else {
                        continue;
                    };
                    if !luhn(&number) || isbn(&number) || looks_like_reference(text, start) {
                        continue;
                    }
                    let card_word = near(text, start, end, &CARD_WORD, 40, 20);
                    // 17 to 19 digits in one block are far more often big numbers in code
                    // and data than one of the rare long card numbers.
                    if groups == 1 && len > 16 && !card_word {
                        continue;
                    }
                    let confidence = if card_word { 0.99 } else { 0.93 };
                    // A payment gateway's published test number in a testing context is
                    // nobody's card: reported below the policy's `ignore_below`. Without such
                    // a context ("my card 4111 ...") it is treated as the card it claims to be.
                    let (detector, confidence) = if TEST_CARDS.contains(&number.as_str())
                        && near(text, start, end, &TEST_CUE, 64, 48)
                    {
                        ("card_test_number".to_string(), 0.1)
                    } else {
                        (format!("card_luhn_{network}"), confidence)
                    };
                    out.push(span(
                        start,
                        end,
                        Category::PaymentCard,
                        &detector,
                        confidence,
                    ));
                    i = j;
                    taken = true;
                    break;
                }
            }
            if !taken {
                i += 1;
            }
        }
    }
}

static IBAN: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?-u:\b)[A-Za-z]{2}[0-9]{2}(?:[ \-]{0,2}[A-Za-z0-9]){11,32}").expect("iban regex")
});

/// Length of the IBAN for each country (ISO 13616 registry).
#[rustfmt::skip]
fn iban_length(country: &str) -> Option<usize> {
    const LENGTHS: &[(&str, usize)] = &[
        ("AD", 24), ("AE", 23), ("AL", 28), ("AT", 20), ("AZ", 28), ("BA", 20), ("BE", 16), ("BG", 22), ("BH", 22),
        ("BR", 29), ("BY", 28), ("CH", 21), ("CR", 22), ("CY", 28), ("CZ", 24), ("DE", 22), ("DK", 18), ("DO", 28),
        ("EE", 20), ("EG", 29), ("ES", 24), ("FI", 18), ("FO", 18), ("FR", 27), ("GB", 22), ("GE", 22), ("GI", 23),
        ("GL", 18), ("GR", 27), ("GT", 28), ("HR", 21), ("HU", 28), ("IE", 22), ("IL", 23), ("IQ", 23), ("IS", 26),
        ("IT", 27), ("JO", 30), ("KW", 30), ("KZ", 20), ("LB", 28), ("LC", 32), ("LI", 21), ("LT", 20), ("LU", 20),
        ("LV", 21), ("MC", 27), ("MD", 24), ("ME", 22), ("MK", 19), ("MR", 27), ("MT", 31), ("MU", 30), ("NL", 18),
        ("NO", 15), ("PK", 24), ("PL", 28), ("PS", 29), ("PT", 25), ("QA", 29), ("RO", 24), ("RS", 22), ("SA", 24),
        ("SC", 31), ("SE", 24), ("SI", 19), ("SK", 24), ("SM", 27), ("ST", 25), ("SV", 28), ("TL", 23), ("TN", 24),
        ("TR", 26), ("UA", 29), ("VA", 22), ("VG", 24), ("XK", 20),
    ];
    LENGTHS.iter().find(|(c, _)| *c == country).map(|&(_, n)| n)
}

pub fn scan_iban(text: &str, out: &mut Vec<Span>) {
    for m in IBAN.find_iter(text) {
        let country = m.as_str()[..2].to_ascii_uppercase();
        let Some(length) = iban_length(&country) else {
            continue;
        };
        // The match may run into following words; keep exactly `length` characters.
        let mut compact = String::with_capacity(length);
        let mut end = m.start();
        for (i, c) in m.as_str().char_indices() {
            if c.is_ascii_alphanumeric() {
                compact.push(c.to_ascii_uppercase());
                end = m.start() + i + 1;
                if compact.len() == length {
                    break;
                }
            }
        }
        if compact.len() != length
            || char_after(text, end).is_some_and(|c| c.is_ascii_alphanumeric())
        {
            continue;
        }
        if iban_mod97(&compact) {
            let lowercase = m.as_str().bytes().any(|b| b.is_ascii_lowercase());
            out.push(span(
                m.start(),
                end,
                Category::Iban,
                "iban_mod97",
                if lowercase { 0.9 } else { 0.99 },
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cards(t: &str) -> Vec<&str> {
        let mut out = Vec::new();
        scan_card(t, &mut out);
        out.iter().map(|s| &t[s.start..s.end]).collect()
    }

    fn ibans(t: &str) -> Vec<&str> {
        let mut out = Vec::new();
        scan_iban(t, &mut out);
        out.iter().map(|s| &t[s.start..s.end]).collect()
    }

    #[test]
    fn cards_found() {
        assert_eq!(
            cards("visa 4111 1111 1111 1111 exp 12/27"),
            ["4111 1111 1111 1111"]
        );
        assert_eq!(cards("5500-0000-0000-0004"), ["5500-0000-0000-0004"]);
        assert_eq!(cards("amex 378282246310005."), ["378282246310005"]);
        assert_eq!(
            cards("4 1 1 1 - 1 1 1 1 - 1 1 1 1 - 1 1 1 1"),
            ["4 1 1 1 - 1 1 1 1 - 1 1 1 1 - 1 1 1 1"]
        );
        assert_eq!(
            cards("paid 25.00 with 4111 1111 1111 1111 2027"),
            ["4111 1111 1111 1111"]
        );
        assert_eq!(cards("mc 2223003122003222"), ["2223003122003222"]);
        assert_eq!(
            cards("visa card 4222222222222222224"),
            ["4222222222222222224"]
        );
    }

    #[test]
    fn gateway_test_numbers_are_weak_only_in_a_testing_context() {
        let confidence = |t: &str| {
            let mut out = Vec::new();
            scan_card(t, &mut out);
            out.iter().map(|s| s.confidence).fold(0.0, f32::max)
        };
        for t in [
            "Stripe test card 4242 4242 4242 4242 is declined in my checkout",
            "use 4111111111111111 in the sandbox",
            "Tarjeta de prueba 5555 5555 5555 4444",
            "テスト用カード 378282246310005",
        ] {
            assert!(confidence(t) < 0.2, "{t}");
        }
        for t in [
            "My card 4111 1111 1111 1111 was charged twice",
            "Use the card ending 5555 5555 5555 4444 for the hotel booking.",
            "test with my real card 4556 7375 8689 9855",
        ] {
            assert!(confidence(t) > 0.9, "{t}");
        }
    }

    #[test]
    fn card_hard_negatives() {
        assert!(cards("4111 1111 1111 1112").is_empty(), "Luhn fails");
        assert!(cards("ISBN 978-0-306-40615-7").is_empty());
        assert!(cards("9780306406157").is_empty());
        assert!(cards("order #4111111111111111").is_empty());
        assert!(
            cards("1234567890123452").is_empty(),
            "no issuer starts with 1"
        );
        assert!(cards("sha 4111111111111111abc").is_empty());
        assert!(cards("e = 2.718281828459045").is_empty(), "a decimal");
        assert!(
            cards("const P: [u64; 2] = [4044404959645932768, 1];").is_empty(),
            "a 19-digit constant"
        );
    }

    #[test]
    fn ibans_found() {
        assert_eq!(
            ibans("IBAN: DE89 3704 0044 0532 0130 00, thanks"),
            ["DE89 3704 0044 0532 0130 00"]
        );
        // A double space inside, as a copy from a form leaves it.
        assert_eq!(
            ibans("IBAN: DE89  3704 0044 0532 0130 00"),
            ["DE89  3704 0044 0532 0130 00"]
        );
        assert_eq!(
            ibans("GB82WEST12345698765432 PLEASE"),
            ["GB82WEST12345698765432"]
        );
        assert_eq!(
            ibans("fr14 2004 1010 0505 0001 3m02 606"),
            ["fr14 2004 1010 0505 0001 3m02 606"]
        );
    }

    #[test]
    fn iban_hard_negatives() {
        assert!(
            ibans("DE89 3704 0044 0532 0130 01").is_empty(),
            "mod 97 fails"
        );
        assert!(
            ibans("DE89 3704 0044 0532 0130").is_empty(),
            "too short for DE"
        );
        assert!(
            ibans("XX89370400440532013000").is_empty(),
            "no such country"
        );
    }
}
