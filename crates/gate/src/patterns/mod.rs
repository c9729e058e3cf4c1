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

use crate::span::Span;

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
pub fn scan(text: &str) -> Vec<Span> {
    let mut found = scan_plain_unresolved(text);
    encoded::scan(text, &mut found, scan_plain);
    spaced::scan(text, &mut found, scan_plain);
    resolve(found)
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
    fn overlaps_resolve_to_the_surer_finding() {
        let found = scan("card 4111 1111 1111 1111 and mail a@b.io");
        let cats: Vec<Category> = found.iter().map(|s| s.category).collect();
        assert_eq!(cats, [Category::PaymentCard, Category::Email]);
    }
}
