//! Secrets and identifiers hidden in base64: plausible base64 runs are decoded and, when the
//! result reads as text, scanned by the other detectors (one level deep, bounded budget).

use std::sync::LazyLock;

use regex::Regex;

use super::context::span;
use crate::span::{Category, Span};

static RUN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"[A-Za-z0-9+/_\-]{24,}={0,2}").expect("base64 regex"));
/// Runs longer than this are data (images, archives), not a hidden secret.
const MAX_RUN_BYTES: usize = 64 * 1024;
/// Total decoded bytes scanned per input: keeps megabyte inputs of base64 linear and cheap.
const BUDGET_BYTES: usize = 1024 * 1024;

/// Standard or URL-safe alphabet, padding optional. `None` if it is not base64.
pub fn decode_base64(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=');
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc: u32 = 0;
    let mut bits = 0;
    for b in s.bytes() {
        let v = match b {
            b'A'..=b'Z' => b - b'A',
            b'a'..=b'z' => b - b'a' + 26,
            b'0'..=b'9' => b - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    if s.len() % 4 == 1 {
        return None;
    }
    Some(out)
}

/// Decoded bytes that read as text: valid UTF-8, almost all printable.
fn reads_as_text(bytes: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(bytes).ok()?;
    let printable = text
        .chars()
        .filter(|c| !c.is_control() || c.is_whitespace())
        .count();
    (printable * 100 >= text.chars().count() * 95).then_some(text)
}

/// `inner` is the scan of the plain detectors (so this cannot recurse).
pub fn scan(text: &str, out: &mut Vec<Span>, inner: fn(&str) -> Vec<Span>) {
    let mut budget = BUDGET_BYTES;
    for m in RUN.find_iter(text) {
        if m.len() > MAX_RUN_BYTES || budget == 0 {
            continue;
        }
        // A run of one character class is an identifier or a word, not base64.
        let s = m.as_str();
        if !(s.bytes().any(|b| b.is_ascii_uppercase()) && s.bytes().any(|b| b.is_ascii_lowercase()))
        {
            continue;
        }
        let Some(decoded) = decode_base64(s) else {
            continue;
        };
        budget = budget.saturating_sub(decoded.len());
        let Some(decoded) = reads_as_text(&decoded) else {
            continue;
        };
        let mut seen: Vec<Category> = Vec::new();
        for found in inner(decoded) {
            if !seen.contains(&found.category) {
                seen.push(found.category);
                let detector = format!("base64:{}", found.detector);
                out.push(span(
                    m.start(),
                    m.end(),
                    found.category,
                    &detector,
                    found.confidence * 0.95,
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_both_alphabets() {
        assert_eq!(decode_base64("aGVsbG8gd29ybGQ=").unwrap(), b"hello world");
        assert_eq!(decode_base64("aGVsbG8gd29ybGQ").unwrap(), b"hello world");
        assert_eq!(decode_base64("-_-_").unwrap(), [0xfb, 0xff, 0xbf]);
        assert!(decode_base64("a$b").is_none());
    }
}
