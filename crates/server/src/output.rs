//! From generated token bytes to what the client sees: UTF-8 assembly, stop strings,
//! reasoning split off, tool calls cut out of the answer.

use lily_engine::reasoning::{Piece, ReasoningParser};
use lily_engine::text_stream::{StopMatcher, StopScan, Utf8Stream};
use lily_engine::tool_calls::{ContentPiece, ParameterTypes, ToolCallParser};

/// One token's logprob, ready to report.
#[derive(Debug, Clone)]
pub struct LogprobEntry {
    pub token: String,
    pub bytes: Vec<u8>,
    pub logprob: f32,
    pub top: Vec<(String, Vec<u8>, f32)>,
}

/// A tool call as it streams: a new call (its function's name), or more of the latest call's
/// arguments (JSON text).
#[derive(Debug, Clone, PartialEq)]
pub enum ToolCallDelta {
    Start(String),
    Arguments(String),
}

#[derive(Debug, Default, Clone)]
pub struct Delta {
    pub reasoning: String,
    pub content: String,
    pub tool_calls: Vec<ToolCallDelta>,
    pub logprobs: Vec<LogprobEntry>,
}

impl Delta {
    pub fn is_empty(&self) -> bool {
        self.reasoning.is_empty() && self.content.is_empty() && self.tool_calls.is_empty() && self.logprobs.is_empty()
    }
}

pub struct OutputPipeline {
    utf8: Utf8Stream,
    stop: StopMatcher,
    reasoning: Option<ReasoningParser>,
    tools: Option<ToolCallParser>,
    stopped: bool,
    pub tool_calls_emitted: usize,
}

impl OutputPipeline {
    /// `reasoning`: `Some(starts_inside_think)` to split reasoning off (chat), `None` to pass
    /// text through (completions). `tools`: parse tool calls with these parameter types.
    pub fn new(stop: Vec<String>, reasoning: Option<bool>, tools: Option<ParameterTypes>) -> Self {
        let tools = tools.map(ToolCallParser::new);
        Self {
            utf8: Utf8Stream::default(),
            stop: StopMatcher::new(stop),
            reasoning: reasoning.map(ReasoningParser::new),
            tools,
            stopped: false,
            tool_calls_emitted: 0,
        }
    }

    /// Whether the model is still writing its reasoning (structured output starts after it).
    pub fn in_reasoning(&self) -> bool {
        self.reasoning.as_ref().is_some_and(|r| r.in_reasoning())
    }

    /// Feeds one token's bytes; the bool says a stop string matched (generation must end).
    pub fn push(&mut self, bytes: &[u8]) -> (Delta, bool) {
        let mut delta = Delta::default();
        if self.stopped {
            return (delta, true);
        }
        let text = self.utf8.push(bytes);
        match self.stop.push(&text) {
            StopScan::Continue(t) => self.route(&t, &mut delta, false),
            StopScan::Stopped(t) => {
                self.stopped = true;
                self.route(&t, &mut delta, true);
            }
        }
        (delta, self.stopped)
    }

    /// Flushes everything held back, at the end of generation.
    pub fn finish(&mut self) -> Delta {
        let mut delta = Delta::default();
        if !self.stopped {
            let mut rest = self.utf8.finish();
            rest.push_str(&self.stop.finish());
            self.route(&rest, &mut delta, true);
        }
        delta
    }

    fn route(&mut self, text: &str, delta: &mut Delta, last: bool) {
        let pieces = match &mut self.reasoning {
            Some(r) => {
                let mut p = r.push(text);
                if last {
                    p.extend(r.finish());
                }
                p
            }
            None => vec![Piece::Content(text.to_string())],
        };
        for piece in pieces {
            match piece {
                Piece::Reasoning(t) => delta.reasoning.push_str(&t),
                Piece::Content(t) => self.content(&t, delta, false),
            }
        }
        if last {
            self.content("", delta, true);
        }
    }

    fn content(&mut self, text: &str, delta: &mut Delta, last: bool) {
        let Some(tools) = &mut self.tools else {
            delta.content.push_str(text);
            return;
        };
        let mut pieces = tools.push(text);
        if last {
            pieces.extend(tools.finish());
        }
        for piece in pieces {
            match piece {
                ContentPiece::Text(t) => delta.content.push_str(&t),
                ContentPiece::CallStart(name) => {
                    self.tool_calls_emitted += 1;
                    delta.tool_calls.push(ToolCallDelta::Start(name));
                }
                ContentPiece::CallArguments(arguments) => delta.tool_calls.push(ToolCallDelta::Arguments(arguments)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(p: &mut OutputPipeline, tokens: &[&str]) -> (Delta, bool) {
        let mut all = Delta::default();
        let mut stopped = false;
        for t in tokens {
            let (d, s) = p.push(t.as_bytes());
            all.reasoning += &d.reasoning;
            all.content += &d.content;
            all.tool_calls.extend(d.tool_calls);
            stopped |= s;
            if s {
                break;
            }
        }
        let d = p.finish();
        all.reasoning += &d.reasoning;
        all.content += &d.content;
        all.tool_calls.extend(d.tool_calls);
        (all, stopped)
    }

    #[test]
    fn reasoning_then_answer_then_a_tool_call() {
        let mut p = OutputPipeline::new(vec![], Some(true), Some(ParameterTypes::new()));
        let (d, stopped) = run(&mut p, &["hmm", "</think>", "\n\n", "Sure.", "<tool_call>", "\n<function=f>\n</function>\n", "</tool_call>"]);
        assert_eq!((d.reasoning.as_str(), d.content.as_str(), stopped), ("hmm", "Sure.", false));
        assert_eq!(d.tool_calls, vec![ToolCallDelta::Start("f".into()), ToolCallDelta::Arguments("{}".into())]);
        assert_eq!(p.tool_calls_emitted, 1);
    }

    #[test]
    fn a_stop_string_ends_the_output_and_is_not_emitted() {
        let mut p = OutputPipeline::new(vec!["##".into()], None, None);
        let (d, stopped) = run(&mut p, &["one #", "# two"]);
        assert_eq!((d.content.as_str(), stopped), ("one ", true));
        let mut p = OutputPipeline::new(vec!["##".into()], None, None);
        assert_eq!(run(&mut p, &["a #", "b"]).0.content, "a #b");
    }
}
