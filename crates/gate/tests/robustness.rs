//! Bad input (issue 5, item 6): evasions by zero-width characters, homoglyphs, fullwidth and
//! spaced digits, base64; megabyte, binary and invalid UTF-8 inputs. The pattern tier alone,
//! so these tests need no model files and run fast.

use std::time::{Duration, Instant};

use lily_gate::{Category, Decision, Destination, Gate, Policy, Vault, Verdict};

fn gate() -> Gate {
    Gate::identifiers_only(Policy::default_policy())
}

fn inspect(text: &str) -> Verdict {
    gate().inspect(text, Destination::Cloud)
}

fn has(v: &Verdict, category: Category) -> bool {
    v.findings.iter().any(|f| f.span.category == category)
}

/// Generous bound: a linear scan of these inputs takes well under a second; a quadratic one
/// takes minutes. Not a latency measurement (that is `lily gate bench`).
const BOUNDED: Duration = Duration::from_secs(30);

#[test]
fn zero_width_characters_do_not_hide_an_email_or_card() {
    let text =
        "mail j\u{200B}ane@co\u{200C}rpmail.com, card 4111\u{200D}1111\u{2060}1111\u{FEFF}1111";
    let v = inspect(text);
    assert!(
        has(&v, Category::Email) && has(&v, Category::PaymentCard),
        "{:?}",
        v.findings
    );
    let email = v
        .findings
        .iter()
        .find(|f| f.span.category == Category::Email)
        .unwrap();
    assert_eq!(
        &text[email.span.start..email.span.end],
        "j\u{200B}ane@co\u{200C}rpmail.com"
    );
    assert_eq!(
        v.masked_text.as_deref(),
        Some("mail <EMAIL_1>, card <CARD_1>")
    );
}

#[test]
fn homoglyph_api_key_is_refused() {
    // Cyrillic ѕ, р, о inside an OpenAI-style key.
    let v = inspect("use ѕk-рrоj-4fT9xQ2mL8vN3bR7kW1zY6hJ0cD5sA2e for the call");
    assert_eq!(v.decision, Decision::Refuse, "{:?}", v.trace);
}

#[test]
fn fullwidth_and_spaced_digits_are_read_as_a_card() {
    for text in [
        "カード ４１１１ １１１１ １１１１ １１１１ です",
        "card: 4 1 1 1 - 1 1 1 1 - 1 1 1 1 - 1 1 1 1",
        "card 4111.1111.1111.1111",
        "card 4\u{00A0}111\u{2009}1111\u{2212}1111\u{2013}1111",
    ] {
        let v = inspect(text);
        assert!(has(&v, Category::PaymentCard), "{text}: {:?}", v.findings);
        assert_eq!(v.decision, Decision::Mask);
    }
}

#[test]
fn base64_encoded_secret_is_refused() {
    // base64 of "token ghp_1a2B3c4D5e6F7g8H9i0J1k2L3m4N5o6P7q8R please"
    let v = inspect(
        "config: dG9rZW4gZ2hwXzFhMkIzYzRENWU2RjdnOEg5aTBKMWsyTDNtNE41bzZQN3E4UiBwbGVhc2U= end",
    );
    assert_eq!(v.decision, Decision::Refuse, "{:?}", v.trace);
    assert!(v.findings[0].span.detector.starts_with("base64:"));
    // Ordinary base64 data (an image header) is not a finding.
    assert_eq!(inspect("img: iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==").decision, Decision::Allow);
}

#[test]
fn invalid_utf8_and_binary_are_inspected_with_original_offsets() {
    // Deterministic pseudo-random bytes with an e-mail and a key inside.
    let mut state: u32 = 12345;
    let mut input: Vec<u8> = (0..200_000)
        .map(|_| {
            state = state.wrapping_mul(1_103_515_245).wrapping_add(12345);
            (state >> 16) as u8
        })
        .collect();
    let email = b" carol@acme.net ";
    input.splice(100_000..100_000, email.iter().copied());
    let start = Instant::now();
    let v = gate().inspect_bytes(&input, Destination::Cloud, &mut Vault::new());
    assert!(start.elapsed() < BOUNDED);
    let f = v
        .findings
        .iter()
        .find(|f| f.span.category == Category::Email)
        .expect("email in binary");
    assert_eq!(&input[f.span.start..f.span.end], b"carol@acme.net");
    assert!(v.trace[0].contains("not valid UTF-8"));
}

#[test]
fn megabyte_inputs_are_linear() {
    let paragraph =
        "The quarterly report shows revenue of 4.2 million euros, up 12% on last year; \
        see ticket 4411-2231 and build 10.0.19041.1 for details. ";
    let mut text = paragraph.repeat(4 << 20 >> 7);
    text.push_str("Contact: dana@acme.io");
    let start = Instant::now();
    let v = inspect(&text);
    assert!(start.elapsed() < BOUNDED, "{:?}", start.elapsed());
    assert_eq!(v.decision, Decision::Mask);
    assert_eq!(
        v.findings.len(),
        1,
        "{:?}",
        &v.findings[..v.findings.len().min(3)]
    );
}

#[test]
fn adversarial_megabyte_inputs_stay_bounded() {
    let inputs = [
        "1 ".repeat(1 << 19),
        "-----BEGIN RSA PRIVATE KEY-----\n".repeat(1 << 15),
        "a@".repeat(1 << 19),
        "password: ".repeat(1 << 17),
        "Aa0+".repeat(1 << 18),
        "0x".repeat(1 << 19) + &"f".repeat(1 << 19),
        "<EMAIL_".repeat(1 << 17),
        "12 rue ".repeat(1 << 17),
    ];
    for input in &inputs {
        let start = Instant::now();
        let v = inspect(input);
        let took = start.elapsed();
        assert!(took < BOUNDED, "{:?}... took {took:?}", &input[..20]);
        assert!(v.trace.last().is_some());
    }
}

#[test]
fn oversized_input_is_refused_unread() {
    let mut policy = Policy::default_policy();
    policy.max_input_bytes = 1 << 20;
    let v = Gate::identifiers_only(policy).inspect(&"x".repeat((1 << 20) + 1), Destination::Cloud);
    assert_eq!(v.decision, Decision::Refuse);
    assert!(v.findings.is_empty());
}

#[test]
fn streamed_unmask_of_adversarial_reply_holds_little() {
    let mut vault = Vault::new();
    let text = "I am Ada Park";
    let start = text.find("Ada").unwrap();
    let span = lily_gate::Span {
        start,
        end: text.len(),
        category: Category::Person,
        detector: "t".into(),
        confidence: 1.0,
    };
    vault.mask(text, &[span]);
    let mut stream = vault.stream();
    let mut shown = 0;
    for _ in 0..10_000 {
        shown += stream.push("<PERSON_1> <<<PERS").len();
    }
    shown += stream.finish().len();
    assert_eq!(shown, 10_000 * "Ada Park <<<PERS".len());
}

#[test]
fn identifiers_typed_one_character_at_a_time_are_found() {
    for (text, category) in [
        (
            "my SSN is 5 3 6 - 2 2 - 1 2 3 4 thanks",
            Category::NationalId,
        ),
        (
            "IBAN: D E 8 9 3 7 0 4 0 0 4 4 0 5 3 2 0 1 3 0 0 0",
            Category::Iban,
        ),
        ("call + 4 4 2 0 7 9 4 6 0 9 5 8 tonight", Category::Phone),
        ("card 4111/1111/1111/1111", Category::PaymentCard),
    ] {
        let v = inspect(text);
        let f = v.findings.iter().find(|f| f.span.category == category);
        assert!(f.is_some(), "{text}: {:?}", v.findings);
        let f = f.unwrap();
        let found = &text[f.span.start..f.span.end];
        assert!(
            found.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '+')
                && found.ends_with(|c: char| c.is_ascii_alphanumeric()),
            "{found:?}"
        );
    }
    // Spaced capitals that spell nothing sensitive stay allowed.
    assert_eq!(
        inspect("N O T I C E: T H E  E N D 1 2 3 4").decision,
        Decision::Allow
    );
}

#[test]
fn random_tricky_text_never_panics_and_spans_are_valid() {
    // Characters chosen to break byte arithmetic: multi-byte letters that case-fold to ASCII
    // (Kelvin sign, long s), combining marks, RTL marks, emoji, fullwidth and Arabic digits.
    const PIECES: &[&str] = &[
        "4",
        "1",
        "0",
        "9",
        " ",
        "-",
        ".",
        "/",
        "@",
        ":",
        "+",
        "=",
        "<",
        ">",
        "_",
        "\n",
        "K",
        "ſ",
        "é",
        "e\u{301}",
        "\u{200F}",
        "😀",
        "５",
        "٣",
        "A",
        "Z",
        "x",
        "sk-",
        "ghp_",
        "IBAN ",
        "DE",
        "born ",
        "passport ",
        "0x",
        "-----BEGIN PRIVATE KEY-----",
        "eyJ",
        "://u:p@h",
        "\u{200B}",
        "Ж",
        "ο",
        "р",
    ];
    let gate = gate();
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..300 {
        let mut text = String::new();
        for _ in 0..120 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            text.push_str(PIECES[(state % PIECES.len() as u64) as usize]);
        }
        let v = gate.inspect(&text, Destination::Cloud);
        for f in &v.findings {
            let s = &f.span;
            assert!(s.start < s.end && s.end <= text.len(), "{s:?} in {text:?}");
            assert!(
                text.is_char_boundary(s.start) && text.is_char_boundary(s.end),
                "{s:?} in {text:?}"
            );
        }
    }
}

#[test]
fn identifiers_in_other_scripts_digits_and_split_by_invisible_characters_are_masked_whole() {
    for (text, category, value) in [
        (
            "آدهار ٢٣٤١ ٢٣٤١ ٢٣٤٦ aadhaar",
            Category::NationalId,
            "٢٣٤١ ٢٣٤١ ٢٣٤٦",
        ),
        (
            "आधार २३४१ २३४१ २३४६",
            Category::NationalId,
            "२३४१ २३४१ २३४६",
        ),
        (
            "身份证 １１０１０５１９４９１２３１００２Ｘ",
            Category::NationalId,
            "１１０１０５１９４９１２３１００２Ｘ",
        ),
        (
            "CPF 529.982\u{00AD}.247-25",
            Category::NationalId,
            "529.982\u{00AD}.247-25",
        ),
        (
            // Shown reversed under a right-to-left override: reads "+44 20 7946 0958".
            "tel \u{202E}8590 \u{200B}6497 02 44+\u{202C}!",
            Category::Phone,
            "\u{202E}8590 \u{200B}6497 02 44+\u{202C}",
        ),
        (
            "手机 ①③⑨ １２３４ ５６７８",
            Category::Phone,
            "①③⑨ １２３４ ５６７８",
        ),
    ] {
        let v = inspect(text);
        let f = v
            .findings
            .iter()
            .find(|f| f.span.category == category)
            .unwrap_or_else(|| panic!("{text}: {:?}", v.findings));
        assert_eq!(&text[f.span.start..f.span.end], value, "{text}");
        assert!(v.masked_text.is_some_and(|m| !m.contains(value)), "{text}");
    }
}

#[test]
fn one_value_in_two_spellings_gets_one_placeholder() {
    let v = inspect(
        "call +44 20 7946 0958 or ＋４４ ２０ ７９４６ ０９５８ or +44 20 79\u{200B}46 0958",
    );
    assert_eq!(
        v.masked_text.as_deref(),
        Some("call <PHONE_1> or <PHONE_1> or <PHONE_1>")
    );
}

#[test]
fn cyrillic_words_stay_cyrillic_but_mixed_tokens_fold() {
    let n = lily_gate::normalize::Normalized::from_text("Сергей из Москвы, ключ ѕk-рrоj-abc");
    assert_eq!(n.text, "Сергей из Москвы, ключ sk-proj-abc");
}
