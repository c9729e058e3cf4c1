//! The identifier tier: patterns plus validation (checksums, issuer ranges, dates, context
//! words). Runs on normalised text; every detector is linear in the input (regex crate, no
//! backtracking, fixed-size context windows).

mod address;
mod checksum;
mod contact;
mod context;
mod credentials;
mod crypto;
mod encoded;
mod financial;
mod hash;
mod national_id;
mod network;
mod personal;
mod secrets;
mod spaced;

use std::collections::BTreeMap;
use std::sync::LazyLock;

use regex::Regex;

use crate::span::{Category, Span};

/// One detector family: appends what it finds in the text.
type Detect = fn(&str, &mut Vec<Span>);

/// Every detector family of the tier.
const DETECTORS: &[Detect] = &[
    contact::scan_email,
    contact::scan_phone,
    financial::scan_card,
    financial::scan_iban,
    national_id::scan,
    network::scan_ip,
    network::scan_mac,
    network::scan_url_credentials,
    secrets::scan,
    credentials::scan,
    crypto::scan,
    personal::scan_contextual_ids,
    personal::scan_date_of_birth,
    address::scan,
];

/// All identifier findings in `text`, overlaps resolved (see `resolve`), sorted by start.
/// Placeholders (see `placeholder`) are kept below the policy's `ignore_below`, like example
/// e-mail domains: reported, never held back.
pub fn scan(text: &str) -> Vec<Span> {
    let mut found = scan_plain_unresolved(text);
    encoded::scan(text, &mut found, scan_plain);
    spaced::scan(text, &mut found, scan_plain);
    let mut found = resolve(found);
    // Where the text presents something as a sample: one pass, and only when it may matter.
    let mut samples: Option<Vec<usize>> = None;
    for s in &mut found {
        if !may_be_placeholder(s.category) {
            continue;
        }
        let samples =
            samples.get_or_insert_with(|| SAMPLE_WORD.find_iter(text).map(|m| m.end()).collect());
        if placeholder(text, s, samples) {
            s.confidence = PLACEHOLDER_CONFIDENCE;
            s.detector.push_str("_placeholder");
        }
    }
    found
}

/// Confidence of an identifier that is a placeholder: below any sensible `ignore_below`.
const PLACEHOLDER_CONFIDENCE: f32 = 0.1;

/// Words that present a value as a sample ("the example form", "DNI de ejemplo", "modulo di
/// esempio", "örnek", "образец", "示例", "サンプル", "예시").
static SAMPLE_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)\b(?:example|sample|dummy|fictitious|fictional|made-up|beispiel\w*|muster\w*|fiktiv\w*|exemple|fictif|fictive|ejemplo|ficticio|ficticia|esempio|fittizio|fittizia|exemplo|fict[íi]cio|fict[íi]cia|voorbeeld\w*|fictief|örnek|пример\w*|образ[е]?ц\w*|مثال|نموذج تجريبي|उदाहरण)\b",
        r"|示例|样例|範例|例えば|サンプル|記入例|예시|샘플",
    ))
    .expect("sample word regex")
});
/// First-person words: "an example of my ..." is the writer's own value.
static OWN_WORD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)\b(?:my|mine|mein\w*|mon|ma|mes|mi|mis|mio|mia|meu|minha|mijn|benim|мой|моя|мои|мое|моё|мне|मेरा|मेरी|मेरे)\b|我的|私の|僕の|제 |내 |나의")
        .expect("own word regex")
});

/// Identifiers a form or a textbook shows with placeholder values.
fn may_be_placeholder(category: Category) -> bool {
    matches!(
        category,
        Category::NationalId
            | Category::Passport
            | Category::DriversLicence
            | Category::Phone
            | Category::Iban
            | Category::InsuranceNumber
            | Category::MedicalRecord
    )
}

/// How far before an identifier the word that presents it as a sample may stand.
const SAMPLE_WINDOW: usize = 64;

/// Whether an identifier finding is a placeholder: digits in a straight run ("12345678Z",
/// "123-45-6789", "987654321") or one digit repeated, or a value the text presents as a
/// sample (`sample_ends`: where the text's sample words end); in both cases not presented as
/// the writer's own in the same line ("Mi DNI es 12345678Z" is someone's DNI).
fn placeholder(text: &str, s: &Span, sample_ends: &[usize]) -> bool {
    let digits: Vec<u8> = text[s.start..s.end]
        .bytes()
        .filter(u8::is_ascii_digit)
        .collect();
    let step = |d: i8| {
        digits
            .windows(2)
            .all(|w| (w[1] as i8 - w[0] as i8).rem_euclid(10) == d.rem_euclid(10))
    };
    let run = digits.len() >= 6 && (step(1) || step(-1) || step(0));
    let window = context::before(text, s.start, SAMPLE_WINDOW);
    let line = window.rsplit('\n').next().unwrap_or(window);
    let from = s.start - line.len();
    let sample = sample_ends.iter().any(|&e| from < e && e <= s.start);
    (run || sample) && !OWN_WORD.is_match(line)
}

/// Every detector except the two that re-scan transformed text (decoded base64, collapsed
/// spaced characters): what runs inside them, so they cannot recurse.
fn scan_plain(text: &str) -> Vec<Span> {
    resolve(scan_plain_unresolved(text))
}

fn scan_plain_unresolved(text: &str) -> Vec<Span> {
    let mut found = Vec::new();
    for detect in DETECTORS {
        detect(text, &mut found);
    }
    found
}

/// Where detectors disagree about the same characters, the surer (then the longer) finding
/// wins: a card number is not also a phone number.
pub(crate) fn resolve(mut found: Vec<Span>) -> Vec<Span> {
    found.sort_by(|a, b| {
        b.confidence
            .total_cmp(&a.confidence)
            .then((b.end - b.start).cmp(&(a.end - a.start)))
            .then(a.start.cmp(&b.start))
    });
    let mut kept: Vec<Span> = Vec::with_capacity(found.len());
    // Kept spans never overlap, so only the last one starting before `s.end` can overlap
    // `s`: O(log n) per finding even for inputs with many findings.
    let mut taken: BTreeMap<usize, usize> = BTreeMap::new();
    for s in found {
        if taken
            .range(..s.end)
            .next_back()
            .is_some_and(|(_, &end)| end > s.start)
        {
            continue;
        }
        taken.insert(s.start, s.end);
        kept.push(s);
    }
    kept.sort_by_key(|s| (s.start, s.end));
    kept
}

/// (detector, matched text) of every span one pattern module's `scan` finds in `t`: what
/// the modules' tests compare against.
#[cfg(test)]
pub(crate) fn found_by(scan: Detect, t: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    scan(t, &mut out);
    out.iter()
        .map(|s| (s.detector.clone(), t[s.start..s.end].to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::span::Category;

    #[test]
    fn placeholders_are_reported_below_ignore() {
        let sure = |t: &str| {
            scan(t)
                .iter()
                .filter(|s| s.confidence > PLACEHOLDER_CONFIDENCE)
                .count()
        };
        let placeholders = |t: &str| {
            scan(t)
                .iter()
                .filter(|s| s.detector.ends_with("_placeholder"))
                .count()
        };
        for t in [
            // Digits in a run, in several id formats.
            "En el formulario pone DNI 12345678Z.",
            "Call 0123 456 789 to test the form",
            // A value shown as a sample, in Italian, Turkish and Chinese.
            "Nel modulo di esempio c'è il codice fiscale RSSMRA80A01H501U.",
            "Örnek form: TC Kimlik 10000000146",
            "示例：身份证号 11010519491231002X",
        ] {
            assert_eq!((sure(t), placeholders(t)), (0, 1), "{t}");
        }
        // The writer's own value stays, sample word or not.
        assert_eq!(sure("An example of my SSN: 524-71-9034"), 1);
        assert_eq!(sure("Mi DNI es 48392715W"), 1);
        assert_eq!(sure("Mi DNI es 12345678Z"), 1);
        assert_eq!(sure("Kimlik numaram 10000000146"), 1);
    }

    #[test]
    fn overlaps_resolve_to_the_surer_finding() {
        let found = scan("card 4111 1111 1111 1111 and mail a@b.io");
        let cats: Vec<Category> = found.iter().map(|s| s.category).collect();
        assert_eq!(cats, [Category::PaymentCard, Category::Email]);
    }
}
