//! Splits generated text into reasoning (between `<think>` and `</think>`) and the answer.
//! Qwen3.6 with thinking on starts generating already inside `<think>` (the prompt ends with
//! `<think>\n`), so the parser is told which side it starts on.

use crate::text_stream::partial_marker_len;

pub const THINK_START: &str = "<think>";
pub const THINK_END: &str = "</think>";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    Reasoning(String),
    Content(String),
}

#[derive(Debug)]
pub struct ReasoningParser {
    in_reasoning: bool,
    /// The answer has not produced any text yet: its leading newlines (the `\n\n` after
    /// `</think>`) are dropped.
    content_started: bool,
    pending: String,
}

impl ReasoningParser {
    pub fn new(starts_in_reasoning: bool) -> Self {
        Self { in_reasoning: starts_in_reasoning, content_started: false, pending: String::new() }
    }

    pub fn in_reasoning(&self) -> bool {
        self.in_reasoning
    }

    pub fn push(&mut self, text: &str) -> Vec<Piece> {
        self.pending.push_str(text);
        let mut out = Vec::new();
        loop {
            if self.in_reasoning {
                if let Some(at) = self.pending.find(THINK_END) {
                    let before: String = self.pending.drain(..at + THINK_END.len()).take(at).collect();
                    // The newline before </think> is format, not thought (the chat template
                    // writes `reasoning\n</think>` and trims it when reading history back).
                    self.emit(before.trim_end_matches('\n').to_string(), &mut out);
                    self.in_reasoning = false;
                    continue;
                }
                // Hold back a possible start of </think> and the newlines before it.
                let partial = partial_marker_len(&self.pending, THINK_END);
                let body = &self.pending[..self.pending.len() - partial];
                let hold = partial + body.len() - body.trim_end_matches('\n').len();
                let ready: String = self.pending.drain(..self.pending.len() - hold).collect();
                self.emit(ready, &mut out);
                return out;
            }
            // A `<think>` only opens reasoning before the answer has begun.
            if !self.content_started {
                let lead = self.pending.len() - self.pending.trim_start().len();
                let rest = &self.pending[lead..];
                if rest.starts_with(THINK_START) {
                    self.pending.drain(..lead + THINK_START.len());
                    self.in_reasoning = true;
                    continue;
                }
                if THINK_START.starts_with(rest) {
                    return out;
                }
            }
            let ready = std::mem::take(&mut self.pending);
            self.emit(ready, &mut out);
            return out;
        }
    }

    pub fn finish(&mut self) -> Vec<Piece> {
        let mut out = Vec::new();
        let rest = std::mem::take(&mut self.pending);
        self.emit(rest, &mut out);
        out
    }

    fn emit(&mut self, text: String, out: &mut Vec<Piece>) {
        if self.in_reasoning {
            if !text.is_empty() {
                out.push(Piece::Reasoning(text));
            }
            return;
        }
        let text = if self.content_started { text } else { text.trim_start_matches('\n').to_string() };
        if !text.is_empty() {
            self.content_started = true;
            out.push(Piece::Content(text));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(starts_in_reasoning: bool, chunks: &[&str]) -> (String, String) {
        let mut p = ReasoningParser::new(starts_in_reasoning);
        let mut pieces: Vec<Piece> = chunks.iter().flat_map(|c| p.push(c)).collect();
        pieces.extend(p.finish());
        let mut reasoning = String::new();
        let mut content = String::new();
        for piece in pieces {
            match piece {
                Piece::Reasoning(t) => reasoning += &t,
                Piece::Content(t) => content += &t,
            }
        }
        (reasoning, content)
    }

    #[test]
    fn splits_reasoning_from_the_answer_across_chunks() {
        let (r, c) = run(true, &["Let me th", "ink.\n", "\nmore\n</th", "ink>\n\nHel", "lo"]);
        assert_eq!(r, "Let me think.\n\nmore");
        assert_eq!(c, "Hello");
    }

    #[test]
    fn thinking_off_is_all_content_and_an_explicit_think_block_is_still_parsed() {
        assert_eq!(run(false, &["plain <b>answer</b>"]), (String::new(), "plain <b>answer</b>".into()));
        assert_eq!(run(false, &["<think>hm</think>\n\nok"]), ("hm".into(), "ok".into()));
        // Once the answer has begun, a literal <think> is just text.
        assert_eq!(run(false, &["a <think> b"]), (String::new(), "a <think> b".into()));
    }

    #[test]
    fn unfinished_reasoning_stays_reasoning() {
        assert_eq!(run(true, &["still thinking\n", "</thi"]), ("still thinking\n</thi".into(), String::new()));
    }
}
