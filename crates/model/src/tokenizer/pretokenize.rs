//! The Qwen3.5/3.6 pre-tokenizer, written out by hand.
//!
//! The reference splits text with this regex (leftmost-first alternation):
//!
//! ```text
//! (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//! ```
//!
//! The `\s+(?!\S)` branch needs a lookahead, which the `regex` crate does not have; a
//! backtracking engine (what tiktoken and HF tokenizers use) is several times slower than this
//! scanner, which decides every branch by looking at most two characters ahead. The character
//! classes come from `regex-syntax`, the same tables the reference regex engines are built on.

use std::sync::OnceLock;

/// The exact pattern this module implements; a tokenizer.json with any other is refused.
pub const QWEN3_5_PATTERN: &str = r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+";

const LETTER: u8 = 1;
const MARK: u8 = 2;
const NUMBER: u8 = 4;
const SPACE: u8 = 8;

/// One flag byte per code point (1.1 MB): a single indexed load per character is what makes
/// the scanner fast, and the table is built once per process.
struct CharClasses {
    flags: Box<[u8]>,
}

impl CharClasses {
    fn get() -> &'static CharClasses {
        static TABLE: OnceLock<CharClasses> = OnceLock::new();
        TABLE.get_or_init(|| {
            let mut flags = vec![0u8; 0x11_0000].into_boxed_slice();
            for (class, flag) in [(r"\p{L}", LETTER), (r"\p{M}", MARK), (r"\p{N}", NUMBER), (r"\s", SPACE)] {
                for (lo, hi) in unicode_class_ranges(class) {
                    for cp in lo..=hi {
                        flags[cp as usize] |= flag;
                    }
                }
            }
            CharClasses { flags }
        })
    }

    #[inline]
    fn of(&self, c: char) -> u8 {
        self.flags[c as usize]
    }
}

fn unicode_class_ranges(class: &str) -> Vec<(u32, u32)> {
    use regex_syntax::hir::{Class, HirKind};
    // The class strings are constants above; regex-syntax accepts them on every version.
    let hir = regex_syntax::Parser::new().parse(class).expect("constant Unicode class parses");
    match hir.kind() {
        HirKind::Class(Class::Unicode(cls)) => cls.ranges().iter().map(|r| (r.start() as u32, r.end() as u32)).collect(),
        other => unreachable!("{class} parsed to {other:?}, not a Unicode class"),
    }
}

/// The pieces of `text`, in order, covering it exactly.
pub fn pieces(text: &str) -> Pieces<'_> {
    Pieces { text, pos: 0, classes: CharClasses::get() }
}

pub struct Pieces<'a> {
    text: &'a str,
    pos: usize,
    classes: &'static CharClasses,
}

impl<'a> Iterator for Pieces<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        if self.pos >= self.text.len() {
            return None;
        }
        let start = self.pos;
        let end = start + self.piece_len(&self.text[start..]);
        self.pos = end;
        Some(&self.text[start..end])
    }
}

impl Pieces<'_> {
    /// Byte length of the piece the regex matches at the start of `rest` (never 0: every
    /// character is a letter, mark, number, whitespace or "other", and each has a branch).
    fn piece_len(&self, rest: &str) -> usize {
        let cls = self.classes;
        let mut chars = rest.chars();
        let c = chars.next().expect("piece_len is called on non-empty text");
        let flags = cls.of(c);
        let after = &rest[c.len_utf8()..];
        let next_flags = after.chars().next().map(|n| cls.of(n));

        // (?i:'s|'t|'re|'ve|'m|'ll|'d)
        if c == '\'' {
            if let Some(len) = contraction_len(after) {
                return 1 + len;
            }
        }
        // [^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+ — a mark can be the optional char or the run's
        // first; either way the match is the whole letter/mark run.
        if flags & (LETTER | MARK) != 0 {
            return self.run_len(rest, |f| f & (LETTER | MARK) != 0);
        }
        if c != '\r' && c != '\n' && flags & NUMBER == 0 && next_flags.is_some_and(|f| f & (LETTER | MARK) != 0) {
            return c.len_utf8() + self.run_len(after, |f| f & (LETTER | MARK) != 0);
        }
        // \p{N}
        if flags & NUMBER != 0 {
            return c.len_utf8();
        }
        // ` ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*`
        if flags & SPACE == 0 {
            return self.other_len(rest);
        }
        if c == ' ' && next_flags.is_some_and(|f| f & (SPACE | LETTER | MARK | NUMBER) == 0) {
            return 1 + self.other_len(after);
        }
        // Whitespace. `\s*[\r\n]+`: the greedy `\s*` backs off to the run's last line break.
        let mut run_end = 0;
        let mut after_last_break = None;
        let mut last_char_len = 0;
        let mut run_chars = 0;
        for ch in rest.chars() {
            if cls.of(ch) & SPACE == 0 {
                break;
            }
            run_end += ch.len_utf8();
            last_char_len = ch.len_utf8();
            run_chars += 1;
            if ch == '\r' || ch == '\n' {
                after_last_break = Some(run_end);
            }
        }
        if let Some(end) = after_last_break {
            return end;
        }
        // `\s+(?!\S)`: at the end of the text the whole run; before a non-space the run less
        // its last character (which then joins the next piece), if that leaves anything.
        if run_end == rest.len() || run_chars < 2 {
            return run_end; // the first case is `\s+(?!\S)`, the second `\s+`
        }
        run_end - last_char_len
    }

    /// Byte length of the longest prefix of `s` whose characters' flags satisfy `keep`.
    fn run_len(&self, s: &str, keep: impl Fn(u8) -> bool) -> usize {
        s.char_indices().find(|&(_, ch)| !keep(self.classes.of(ch))).map_or(s.len(), |(i, _)| i)
    }

    /// `[^\s\p{L}\p{M}\p{N}]+[\r\n]*` at the start of `s` (whose first char is such an "other").
    fn other_len(&self, s: &str) -> usize {
        let others = self.run_len(s, |f| f & (SPACE | LETTER | MARK | NUMBER) == 0);
        let breaks = s[others..].bytes().take_while(|&b| b == b'\r' || b == b'\n').count();
        others + breaks
    }
}

/// Length after the apostrophe of `s|t|re|ve|m|ll|d`, case-insensitively. Under Unicode simple
/// case folding `s` also matches U+017F LATIN SMALL LETTER LONG S, as it does in the reference.
fn contraction_len(s: &str) -> Option<usize> {
    let mut it = s.chars();
    let first = it.next()?;
    let second = it.next();
    let is = |c: Option<char>, ascii: char| c.is_some_and(|c| c.eq_ignore_ascii_case(&ascii));
    match first.to_ascii_lowercase() {
        's' | 't' | 'm' | 'd' => Some(1),
        '\u{17F}' => Some('\u{17F}'.len_utf8()),
        'r' | 'v' if is(second, 'e') => Some(2),
        'l' if is(second, 'l') => Some(2),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(s: &str) -> Vec<&str> {
        pieces(s).collect()
    }

    #[test]
    fn splits_like_the_reference_regex() {
        assert_eq!(split("Hello world"), ["Hello", " world"]);
        assert_eq!(split("I'm  fine\n\n  ok"), ["I", "'m", " ", " fine", "\n\n", " ", " ok"]);
        assert_eq!(split("x   "), ["x", "   "]);
        assert_eq!(split("a 1"), ["a", " ", "1"]);
        assert_eq!(split("123"), ["1", "2", "3"]);
        assert_eq!(split(" (hi)\n\nx"), [" (", "hi", ")\n\n", "x"]);
        assert_eq!(split("'sun 'Re 'rx"), ["'s", "un", " '", "Re", " '", "rx"]);
        // "\t\n \tz": `\s*[\r\n]+` takes "\t\n"; of " \t" before "z", "\t" joins the letters
        // as the letter branch's optional leading character.
        assert_eq!(split("\t\n \tz"), ["\t\n", " ", "\tz"]);
    }
}
