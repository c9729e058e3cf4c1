//! Text arrives a token at a time, so a marker (a stop string, `</think>`, `<tool_call>`) can
//! be split across tokens. These helpers find markers in a growing buffer and say how much of
//! its end must be held back because it might be the start of one.

/// Length of the longest suffix of `text` that is a proper prefix of `marker`, rounded so
/// that the split stays on a char boundary.
pub fn partial_marker_len(text: &str, marker: &str) -> usize {
    let max = marker.len().saturating_sub(1).min(text.len());
    (1..=max)
        .rev()
        .find(|&n| text.is_char_boundary(text.len() - n) && marker.starts_with(&text[text.len() - n..]))
        .unwrap_or(0)
}

/// Turns token bytes into text without ever splitting a UTF-8 character: an incomplete
/// sequence at the end waits for the next token; invalid bytes become U+FFFD.
#[derive(Debug, Default)]
pub struct Utf8Stream {
    pending: Vec<u8>,
}

impl Utf8Stream {
    pub fn push(&mut self, bytes: &[u8]) -> String {
        self.pending.extend_from_slice(bytes);
        let mut out = String::new();
        loop {
            match std::str::from_utf8(&self.pending) {
                Ok(s) => {
                    out.push_str(s);
                    self.pending.clear();
                    return out;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    out.push_str(std::str::from_utf8(&self.pending[..valid]).unwrap_or_default());
                    match e.error_len() {
                        // Incomplete at the end: keep the tail for the next token.
                        None => {
                            self.pending.drain(..valid);
                            return out;
                        }
                        Some(bad) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            self.pending.drain(..valid + bad);
                        }
                    }
                }
            }
        }
    }

    /// Whatever is left at the end of generation, lossily.
    pub fn finish(&mut self) -> String {
        let out = String::from_utf8_lossy(&self.pending).into_owned();
        self.pending.clear();
        out
    }
}

/// Result of feeding text to a `StopMatcher`.
#[derive(Debug, PartialEq, Eq)]
pub enum StopScan {
    /// No stop string yet; this text is safe to emit.
    Continue(String),
    /// A stop string matched; this is the text before it. Nothing after may be emitted.
    Stopped(String),
}

/// Matches OpenAI `stop` strings in generated text across token boundaries. The matched
/// string is never emitted, nor is anything after it.
#[derive(Debug)]
pub struct StopMatcher {
    stops: Vec<String>,
    pending: String,
}

impl StopMatcher {
    /// Empty stop strings are ignored (they would match before any text).
    pub fn new(stops: Vec<String>) -> Self {
        Self { stops: stops.into_iter().filter(|s| !s.is_empty()).collect(), pending: String::new() }
    }

    pub fn push(&mut self, text: &str) -> StopScan {
        self.pending.push_str(text);
        let first = self.stops.iter().filter_map(|s| self.pending.find(s.as_str())).min();
        if let Some(at) = first {
            let before = self.pending[..at].to_string();
            self.pending.clear();
            return StopScan::Stopped(before);
        }
        let hold = self.stops.iter().map(|s| partial_marker_len(&self.pending, s)).max().unwrap_or(0);
        let emit = self.pending.len() - hold;
        StopScan::Continue(self.pending.drain(..emit).collect())
    }

    /// Text held back because it might have begun a stop string; at the end it did not.
    pub fn finish(&mut self) -> String {
        std::mem::take(&mut self.pending)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partial_markers_respect_char_boundaries() {
        assert_eq!(partial_marker_len("abc</th", "</think>"), 4);
        assert_eq!(partial_marker_len("abc", "</think>"), 0);
        assert_eq!(partial_marker_len("x<", "<"), 0, "a whole marker is not a partial one");
        assert_eq!(partial_marker_len("é", "\u{e9}x"), 2);
    }

    #[test]
    fn utf8_waits_for_the_rest_of_a_character() {
        let mut u = Utf8Stream::default();
        let bytes = "né😀".as_bytes();
        assert_eq!(u.push(&bytes[..2]), "n");
        assert_eq!(u.push(&bytes[2..4]), "é");
        assert_eq!(u.push(&bytes[4..6]), "");
        assert_eq!(u.push(&bytes[6..]), "😀");
        assert_eq!(u.push(&[0xff, b'a']), "\u{fffd}a");
        assert_eq!(u.push(&[0xe2]), "");
        assert_eq!(u.finish(), "\u{fffd}");
    }

    #[test]
    fn stop_strings_match_across_tokens_and_are_not_emitted() {
        let mut m = StopMatcher::new(vec!["END".into(), "\n\n".into()]);
        assert_eq!(m.push("hello E"), StopScan::Continue("hello ".into()));
        assert_eq!(m.push("N"), StopScan::Continue(String::new()));
        assert_eq!(m.push("Dless"), StopScan::Stopped(String::new()));
        let mut m = StopMatcher::new(vec!["\n\n".into()]);
        assert_eq!(m.push("one\n"), StopScan::Continue("one".into()));
        assert_eq!(m.push("\ntwo"), StopScan::Stopped(String::new()));
    }

    #[test]
    fn stop_string_split_over_three_tokens() {
        let mut m = StopMatcher::new(vec!["STOP".into()]);
        assert_eq!(m.push("abS"), StopScan::Continue("ab".into()));
        assert_eq!(m.push("T"), StopScan::Continue(String::new()));
        assert_eq!(m.push("OPzz"), StopScan::Stopped("".into()));
    }

    #[test]
    fn a_false_start_is_released() {
        let mut m = StopMatcher::new(vec!["STOP".into()]);
        assert_eq!(m.push("ST"), StopScan::Continue(String::new()));
        assert_eq!(m.push("AR"), StopScan::Continue("STAR".into()));
        assert_eq!(m.push("S"), StopScan::Continue(String::new()));
        assert_eq!(m.finish(), "S");
    }

    #[test]
    fn earliest_stop_wins() {
        let mut m = StopMatcher::new(vec!["b".into(), "a".into()]);
        assert_eq!(m.push("xxab"), StopScan::Stopped("xx".into()));
    }
}
