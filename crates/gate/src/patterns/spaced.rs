//! Identifiers typed one character at a time ("5 3 6 - 2 2 - 1 2 3 4", "D E 8 9 3 7 ..."):
//! each such run is collapsed (separators removed) together with a little context on both
//! sides, scanned by the other detectors, and what they find inside the run is mapped back to
//! the original characters. Cost: one small scan per run, so linear in the input.

use std::sync::LazyLock;

use regex::Regex;

use super::context::{after, before};
use crate::span::Span;

/// Single characters with 1-3 separators between them, at least seven characters.
static SPACED: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"(?:[0-9A-Z][ .\-/]{1,3}){6,}[0-9A-Z]").expect("spaced regex"));
/// Context kept around a run so that keyword-gated detectors still see their keyword.
const CONTEXT: usize = 48;

pub fn scan(text: &str, out: &mut Vec<Span>, inner: fn(&str) -> Vec<Span>) {
    for run in SPACED.find_iter(text) {
        let s = run.as_str();
        // Single characters must really stand alone: "A-B-C" inside a word is not a run.
        let glued = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric());
        if glued(text[..run.start()].chars().next_back())
            || glued(text[run.end()..].chars().next())
            || s.bytes().filter(u8::is_ascii_digit).count() < 4
        {
            continue;
        }
        let head = before(text, run.start(), CONTEXT);
        let tail = after(text, run.end(), CONTEXT);
        // Collapsed snippet and, for each of its bytes inside the run, the original offset.
        let mut snippet = String::with_capacity(head.len() + s.len() + tail.len());
        snippet.push_str(head);
        let run_from = snippet.len();
        let mut origin: Vec<usize> = Vec::new();
        for (i, c) in s.char_indices().filter(|(_, c)| c.is_ascii_alphanumeric()) {
            snippet.push(c);
            origin.push(run.start() + i);
        }
        let run_to = snippet.len();
        snippet.push_str(tail);
        for found in inner(&snippet) {
            if found.start < run_from || found.end > run_to || found.start >= found.end {
                continue;
            }
            let start = origin[found.start - run_from];
            let end = origin[found.end - 1 - run_from] + 1;
            let detector = format!("spaced:{}", found.detector);
            out.push(Span {
                start,
                end,
                detector,
                ..found
            });
        }
    }
}
