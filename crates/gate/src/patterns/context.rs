//! Helpers every detector shares: boundaries, bounded context windows, keyword checks.
//! Windows have a fixed size, so context checks cost O(1) per candidate and the tier stays
//! linear in the input.

use regex::Regex;

use crate::span::{Category, Span};

pub fn span(start: usize, end: usize, category: Category, detector: &str, confidence: f32) -> Span {
    Span {
        start,
        end,
        category,
        detector: detector.to_string(),
        confidence,
    }
}

fn floor_boundary(text: &str, mut i: usize) -> usize {
    while i > 0 && !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(text: &str, mut i: usize) -> usize {
    i = i.min(text.len());
    while i < text.len() && !text.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// Up to `n` bytes of text just before `start`.
pub fn before(text: &str, start: usize, n: usize) -> &str {
    let from = ceil_boundary(text, start.saturating_sub(n));
    &text[from..start]
}

/// Up to `n` bytes of text just after `end`.
pub fn after(text: &str, end: usize, n: usize) -> &str {
    let to = floor_boundary(text, (end + n).min(text.len()));
    &text[end..to.max(end)]
}

pub fn char_before(text: &str, start: usize) -> Option<char> {
    text[..start].chars().next_back()
}

pub fn char_after(text: &str, end: usize) -> Option<char> {
    text[end..].chars().next()
}

/// The candidate is not glued to letters or digits on either side.
pub fn word_bounded(text: &str, start: usize, end: usize) -> bool {
    !char_before(text, start).is_some_and(|c| c.is_alphanumeric() || c == '_')
        && !char_after(text, end).is_some_and(|c| c.is_alphanumeric() || c == '_')
}

/// Not glued to other digits (letters are fine: "tel:5551234567").
pub fn digit_bounded(text: &str, start: usize, end: usize) -> bool {
    !char_before(text, start).is_some_and(|c| c.is_ascii_digit())
        && !char_after(text, end).is_some_and(|c| c.is_ascii_digit())
}

/// `re` matches within `n_before` bytes before or `n_after` bytes after the candidate.
pub fn near(
    text: &str,
    start: usize,
    end: usize,
    re: &Regex,
    n_before: usize,
    n_after: usize,
) -> bool {
    re.is_match(before(text, start, n_before))
        || (n_after > 0 && re.is_match(after(text, end, n_after)))
}

pub fn ascii_digits(s: &str) -> String {
    s.chars().filter(|c| c.is_ascii_digit()).collect()
}

pub fn ascii_alnum_upper(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// Shannon entropy in bits per character.
pub fn entropy(s: &str) -> f32 {
    let mut counts = [0u32; 256];
    for b in s.bytes() {
        counts[b as usize] += 1;
    }
    let n = s.len() as f32;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f32 / n;
            -p * p.log2()
        })
        .sum()
}

/// A value that stands for a secret in documentation or a template, not a secret:
/// "changeme", "your-api-key-here", "<password>", "${DB_PASSWORD}", "***", "xxxx".
pub fn placeholder_value(v: &str) -> bool {
    let lower = v.to_ascii_lowercase();
    let trimmed = lower.trim_matches(|c: char| matches!(c, '"' | '\'' | '`'));
    trimmed.starts_with(['$', '<', '{', '%', '[', '(', '*', '&'])
        || trimmed.ends_with(['>', '}'])
        || trimmed
            .chars()
            .all(|c| matches!(c, '*' | 'x' | '.' | '-' | '_' | '•' | '…' | '0'))
        || [
            "your",
            "example",
            "redacted",
            "placeholder",
            "changeme",
            "change_me",
            "change-me",
            "changeit",
            "replace",
            "insert",
            "dummy",
            "xxxx",
            "todo",
            "fixme",
            "secret_here",
        ]
        .iter()
        .any(|w| trimmed.contains(w))
        || matches!(
            trimmed,
            "password"
                | "passwort"
                | "pass"
                | "passwd"
                | "pwd"
                | "secret"
                | "none"
                | "null"
                | "nil"
                | "required"
                | "optional"
                | "true"
                | "false"
                | "hidden"
                | "test"
                | "token"
                | "apikey"
                | "api_key"
                | "key"
                | "value"
                | "string"
                | "foo"
                | "bar"
                | "foobar"
                | "empty"
                | "unset"
                | "undefined"
                | "mypassword"
                | "mysecret"
                | "secret123"
                | "password123"
                | "pass123"
                | "..."
                | "str"
                | "text"
                | "varchar"
                | "bytes"
                | "secretstr"
        )
}

/// Words that say a number is a reference, not a person's: order, invoice, tracking...
pub fn looks_like_reference(text: &str, start: usize) -> bool {
    static REFERENCE: std::sync::LazyLock<Regex> = std::sync::LazyLock::new(|| {
        Regex::new(r"(?i)(?:order|invoice|ref(?:erence)?|tracking|sku|serial|part|model|isbn|issn|ticket|case|item|product|article|art\.|po|build|version|doi|arxiv|patent|commit|sha)\s*(?:no\.?|nr\.?|number|num|id|#)?\s*[:#]?\s*$")
            .expect("reference regex")
    });
    REFERENCE.is_match(before(text, start, 32))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_respect_char_boundaries() {
        let t = "ééééé 123";
        assert_eq!(before(t, 10, 3), "é");
        assert_eq!(after("123 ééé", 3, 4), " é");
    }

    #[test]
    fn placeholders() {
        for v in [
            "changeme",
            "your-api-key-here",
            "<password>",
            "${DB_PASSWORD}",
            "{{ secret }}",
            "***",
            "xxxxxxxx",
            "YOUR_TOKEN",
            "'REPLACE_ME'",
            "%PASSWORD%",
        ] {
            assert!(placeholder_value(v), "{v}");
        }
        for v in ["hunter2!", "Sommer2024#", "wJalrXUtnFEMI/K7MDENG", "admin"] {
            assert!(!placeholder_value(v), "{v}");
        }
    }

    #[test]
    fn reference_words() {
        assert!(looks_like_reference("Order #", 7));
        assert!(looks_like_reference("see ISBN ", 9));
        assert!(!looks_like_reference("call me at ", 11));
    }
}
