//! `tool_choice` "required" or a named function: the answer is forced to be a tool call in
//! Qwen's format, the function one of the allowed tools and its parameters those of the
//! tool's JSON schema:
//!
//! ```text
//! <tool_call>
//! <function=NAME>
//! <parameter=KEY>
//! VALUE
//! </parameter>
//! </function>
//! </tool_call>
//! ```
//!
//! Each parameter is a declared property not written yet (all of them when the schema
//! declares none), and `</function>` comes only once every required one is there. A value
//! whose schema is a string (or an enum of strings) is raw text (one of the enum's); any other
//! is JSON under the property's schema (`json_constraint`, leniently: value keywords such as
//! `minimum` or `format` are not enforced, and what cannot be enforced at all is free JSON). A
//! value may not contain `</parameter>` or `</tool_call>`, which would end it for the parser.
//! One call is forced; after `</tool_call>` only the end of the turn may come.
//!
//! The automaton is masked with the same sorted-vocabulary walk as JSON output; special
//! tokens (`<tool_call>` is one in Qwen's vocabulary) are allowed only where the format, not a
//! value, has their text.

use std::sync::Arc;

use serde_json::Value;

use crate::json_constraint::{compile_schema_lenient, mask_accepted_tokens, ByteAutomaton, JsonMachine, Node, VocabIndex};
use crate::tool_calls::{written_raw, TOOL_CALL_START};

/// Newlines allowed before `<tool_call>`: the model writes `</think>\n\n` before its answer,
/// and forcing `<` straight after `</think>` would push it off its own format.
const MAX_LEADING_NEWLINES: u8 = 2;
const CLOSE_CALL: &[u8] = b"</function>\n</tool_call>";
const PARAMETER: &[u8] = b"<parameter=";
const CLOSE_PARAMETER: &[u8] = b"\n</parameter>\n";
/// Texts a value may not hold: the parser would take them for the end of the value or call.
const FORBIDDEN_IN_VALUE: [&[u8]; 2] = [b"</parameter>", b"</tool_call>"];

/// How a parameter's value is written.
#[derive(Debug)]
enum ValueKind {
    /// Any text.
    Raw,
    /// One of these texts (an enum of strings).
    RawOneOf(Arc<Vec<Vec<u8>>>),
    Json(Arc<Node>),
}

/// One function the call may name.
#[derive(Debug)]
struct Function {
    /// `<tool_call>\n<function=NAME>\n`.
    opening: Vec<u8>,
    /// Declared parameters: `<parameter=KEY>\n` and how the value is written.
    params: Vec<(Vec<u8>, ValueKind)>,
    required: Vec<bool>,
    /// No properties declared: any key, any value.
    open: bool,
}

impl Function {
    fn new(name: &str, parameters: Option<&Value>) -> Self {
        let props = parameters.and_then(|p| p.get("properties")).and_then(Value::as_object);
        let required: Vec<&str> =
            parameters.and_then(|p| p.get("required")).and_then(Value::as_array).map(|r| r.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
        let params: Vec<(Vec<u8>, ValueKind)> = props
            .into_iter()
            .flatten()
            .map(|(key, schema)| (format!("<parameter={key}>\n").into_bytes(), value_kind(schema)))
            .collect();
        let required = props.into_iter().flatten().map(|(key, _)| required.contains(&key.as_str())).collect();
        let open = params.is_empty();
        Function { opening: format!("{TOOL_CALL_START}\n<function={name}>\n").into_bytes(), params, required, open }
    }
}

fn value_kind(schema: &Value) -> ValueKind {
    if !written_raw(schema) {
        return ValueKind::Json(compile_schema_lenient(schema));
    }
    let options: Option<Vec<Vec<u8>>> = match (schema.get("enum"), schema.get("const")) {
        (Some(Value::Array(values)), _) => values.iter().map(|v| v.as_str().map(|s| s.as_bytes().to_vec())).collect(),
        (None, Some(Value::String(c))) => Some(vec![c.as_bytes().to_vec()]),
        _ => None,
    };
    match options {
        Some(options) if !options.is_empty() => ValueKind::RawOneOf(Arc::new(options)),
        _ => ValueKind::Raw,
    }
}

/// The last bytes of a value, to see a forbidden text or the closing coming.
#[derive(Debug, Clone, Copy, Default)]
struct Tail {
    bytes: [u8; 16],
    len: u8,
}

impl Tail {
    fn push(&mut self, b: u8) {
        if self.len as usize == self.bytes.len() {
            self.bytes.copy_within(1.., 0);
            self.len -= 1;
        }
        self.bytes[self.len as usize] = b;
        self.len += 1;
    }

    fn ends_with(&self, text: &[u8]) -> bool {
        self.bytes[..self.len as usize].ends_with(text)
    }
}

#[derive(Debug, Clone)]
enum ValueState {
    Raw,
    RawOneOf { options: Arc<Vec<Vec<u8>>>, alive: Vec<usize>, pos: usize },
    Json(JsonMachine),
}

#[derive(Debug, Clone)]
enum Phase {
    /// `<tool_call>\n<function=NAME>\n`, NAME among the functions still `alive`.
    Opening { alive: Vec<usize>, pos: usize, leading_newlines: u8 },
    /// Between parameters: `<parameter=KEY>\n` for a key not written yet, or the closing of
    /// the call. `alive`: the declared keys still matching (`None`: the closing); `open_key`:
    /// an open function's `<parameter=` still matching.
    Slot { alive: Vec<Option<usize>>, pos: usize, open_key: bool },
    /// An open function's key, `len` bytes so far, up to `>`.
    FreeKey { len: usize },
    /// The newline after an open function's `<parameter=KEY>`.
    KeyNewline,
    /// A parameter's value.
    Value { state: ValueState, tail: Tail },
    /// `\n</parameter>\n` from `pos`.
    CloseValue { pos: usize },
    Done,
}

/// Where the answer is in the forced tool call. Cheap to clone (definitions are shared).
#[derive(Debug, Clone)]
pub struct ForcedToolCall {
    functions: Arc<Vec<Function>>,
    /// The function being called, once its name is written.
    function: usize,
    seen: Vec<bool>,
    phase: Phase,
}

impl ForcedToolCall {
    /// `names`: the functions the call may name (one for a named `tool_choice`); `tools`: the
    /// request's OpenAI tool definitions, where their parameter schemas are.
    pub fn new<S: AsRef<str>>(names: &[S], tools: &[Value]) -> Self {
        let functions: Vec<Function> = names
            .iter()
            .map(|n| {
                let n = n.as_ref();
                let tool = tools.iter().find(|t| t.pointer("/function/name").and_then(Value::as_str) == Some(n));
                Function::new(n, tool.and_then(|t| t.pointer("/function/parameters")))
            })
            .collect();
        let alive = (0..functions.len()).collect();
        Self { functions: Arc::new(functions), function: 0, seen: vec![], phase: Phase::Opening { alive, pos: 0, leading_newlines: 0 } }
    }

    /// The call is closed: only the end of the turn may follow.
    pub fn is_complete(&self) -> bool {
        matches!(self.phase, Phase::Done)
    }

    /// Feeds generated bytes; false on the first byte the call does not allow.
    pub fn feed(&mut self, bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| self.step(b))
    }

    /// Inside a parameter's value, where special tokens may not appear.
    fn in_value(&self) -> bool {
        matches!(self.phase, Phase::Value { .. })
    }

    /// For each token, whether it may come next. `ordinary`/`index`: every token's bytes with
    /// special tokens empty; `specials`: the special tokens' ids and texts, allowed where the
    /// format (not a value) has their text; `end_ids` once the call is closed.
    pub fn allowed_tokens(&self, ordinary: &[Vec<u8>], index: &VocabIndex, specials: &[(u32, Vec<u8>)], end_ids: &[u32]) -> Vec<bool> {
        let mut mask = vec![false; ordinary.len()];
        if let Phase::Value { state: ValueState::Raw, .. } = self.phase {
            // Raw text takes almost any token: only one with a `>` can finish a forbidden text
            // or the closing, so only those are simulated.
            for (id, bytes) in ordinary.iter().enumerate() {
                mask[id] = !bytes.is_empty() && (!index.has_gt[id] || self.clone().feed(bytes));
            }
        } else {
            mask_accepted_tokens(self, ordinary, index, &mut mask);
        }
        if !self.in_value() {
            for (id, bytes) in specials {
                if let Some(m) = mask.get_mut(*id as usize) {
                    *m = self.clone().feed(bytes);
                }
            }
        }
        if self.is_complete() {
            for &id in end_ids {
                if let Some(m) = mask.get_mut(id as usize) {
                    *m = true;
                }
            }
        }
        mask
    }

    /// The slot after the opening or a value: every declared key not written yet, and the
    /// closing once every required one is there.
    fn slot(&self) -> Phase {
        let f = &self.functions[self.function];
        let mut alive: Vec<Option<usize>> = (0..f.params.len()).filter(|&i| !self.seen[i]).map(Some).collect();
        if f.required.iter().zip(&self.seen).all(|(&r, &s)| !r || s) {
            alive.push(None);
        }
        Phase::Slot { alive, pos: 0, open_key: f.open }
    }

    fn start_value(&self, param: Option<usize>) -> Phase {
        let state = match param.map(|i| &self.functions[self.function].params[i].1) {
            None | Some(ValueKind::Raw) => ValueState::Raw,
            Some(ValueKind::RawOneOf(options)) => ValueState::RawOneOf { options: options.clone(), alive: (0..options.len()).collect(), pos: 0 },
            Some(ValueKind::Json(node)) => ValueState::Json(JsonMachine::new(node.clone())),
        };
        Phase::Value { state, tail: Tail::default() }
    }
}

impl ByteAutomaton for ForcedToolCall {
    fn step(&mut self, b: u8) -> bool {
        let functions = self.functions.clone();
        match &mut self.phase {
            Phase::Opening { alive, pos, leading_newlines } => {
                if *pos == 0 && b == b'\n' && *leading_newlines < MAX_LEADING_NEWLINES {
                    *leading_newlines += 1;
                    return true;
                }
                let p = *pos;
                alive.retain(|&i| functions[i].opening.get(p) == Some(&b));
                let Some(&done) = alive.iter().find(|&&i| functions[i].opening.len() == p + 1) else {
                    *pos += 1;
                    return !alive.is_empty();
                };
                self.function = done;
                self.seen = vec![false; functions[done].params.len()];
                self.phase = self.slot();
                true
            }
            Phase::Slot { alive, pos, open_key } => {
                let f = &functions[self.function];
                let text = |c: &Option<usize>| c.map_or(CLOSE_CALL, |i| f.params[i].0.as_slice());
                let p = *pos;
                alive.retain(|c| text(c).get(p) == Some(&b));
                *open_key &= PARAMETER.get(p) == Some(&b);
                if alive.is_empty() && !*open_key {
                    return false;
                }
                *pos += 1;
                let finished = alive.iter().find(|c| text(c).len() == p + 1).copied();
                let open_key_done = *open_key && *pos == PARAMETER.len();
                match finished {
                    Some(None) => self.phase = Phase::Done,
                    Some(Some(i)) => {
                        self.seen[i] = true;
                        self.phase = self.start_value(Some(i));
                    }
                    None if open_key_done => self.phase = Phase::FreeKey { len: 0 },
                    None => {}
                }
                true
            }
            Phase::FreeKey { len } => match b {
                b'>' if *len > 0 => {
                    self.phase = Phase::KeyNewline;
                    true
                }
                b'>' | b'<' | b'\n' => false,
                _ => {
                    *len += 1;
                    true
                }
            },
            Phase::KeyNewline if b == b'\n' => {
                self.phase = self.start_value(None);
                true
            }
            Phase::KeyNewline => false,
            Phase::Value { state, tail } => {
                tail.push(b);
                if tail.ends_with(&CLOSE_PARAMETER[..CLOSE_PARAMETER.len() - 1]) && matches!(state, ValueState::Raw) {
                    self.phase = Phase::CloseValue { pos: CLOSE_PARAMETER.len() - 1 };
                    return true;
                }
                if FORBIDDEN_IN_VALUE.iter().any(|t| tail.ends_with(t)) {
                    return false;
                }
                match state {
                    ValueState::Raw => true,
                    ValueState::RawOneOf { options, alive, pos } => {
                        let p = *pos;
                        if b == b'\n' && alive.iter().any(|&i| options[i].len() == p) {
                            self.phase = Phase::CloseValue { pos: 1 };
                            return true;
                        }
                        alive.retain(|&i| options[i].get(p) == Some(&b));
                        *pos += 1;
                        !alive.is_empty()
                    }
                    ValueState::Json(machine) => {
                        if b == b'\n' && machine.is_complete() {
                            self.phase = Phase::CloseValue { pos: 1 };
                            return true;
                        }
                        machine.step(b)
                    }
                }
            }
            Phase::CloseValue { pos } => {
                if CLOSE_PARAMETER.get(*pos) != Some(&b) {
                    return false;
                }
                *pos += 1;
                if *pos == CLOSE_PARAMETER.len() {
                    self.phase = self.slot();
                }
                true
            }
            Phase::Done => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool_calls::{parameter_types, ContentPiece, ToolCallParser};
    use serde_json::json;

    /// Ordinary tokens by their text; ids past them are the specials `<tool_call>` and
    /// `<|im_end|>` (the end of the turn).
    struct Vocab {
        ordinary: Vec<Vec<u8>>,
        index: VocabIndex,
        specials: Vec<(u32, Vec<u8>)>,
    }

    const SPECIALS: [&str; 2] = ["<tool_call>", "<|im_end|>"];

    fn vocab(texts: &[&str]) -> Vocab {
        let mut ordinary: Vec<Vec<u8>> = texts.iter().map(|t| t.as_bytes().to_vec()).collect();
        let specials = SPECIALS.iter().enumerate().map(|(i, t)| ((texts.len() + i) as u32, t.as_bytes().to_vec())).collect();
        ordinary.extend(SPECIALS.iter().map(|_| vec![]));
        let index = VocabIndex::new(&ordinary);
        Vocab { ordinary, index, specials }
    }

    /// The allowed tokens' texts, ordinary ones first.
    fn allowed(m: &ForcedToolCall, v: &Vocab) -> Vec<String> {
        let end = [v.specials[1].0];
        let mask = m.allowed_tokens(&v.ordinary, &v.index, &v.specials, &end);
        let special = |id: usize| v.specials.iter().find(|s| s.0 as usize == id).map(|s| s.1.clone());
        let text = |id: usize| String::from_utf8(special(id).unwrap_or_else(|| v.ordinary[id].clone())).unwrap();
        (0..mask.len()).filter(|&id| mask[id]).map(text).collect()
    }

    fn weather() -> Vec<Value> {
        vec![json!({"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {
            "city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}, "unit": {"enum": ["c", "f"]}
        }, "required": ["city"]}}})]
    }

    #[test]
    fn only_tokens_that_follow_the_opening_are_allowed() {
        let v = vocab(&["<", "tool", "_call>", "<tool", "Hello", "\n", "\n\n", "<tool_call>\n<function="]);
        let mut m = ForcedToolCall::new(&["get_weather", "get_time"], &[]);
        assert_eq!(allowed(&m, &v), vec!["<", "<tool", "\n", "\n\n", "<tool_call>\n<function=", "<tool_call>"]);
        assert!(m.feed(b"\n\n"));
        // Only two leading newlines: then the opening must start.
        assert_eq!(allowed(&m, &v), vec!["<", "<tool", "<tool_call>\n<function=", "<tool_call>"]);
        assert!(m.feed(b"<tool"));
        assert_eq!(allowed(&m, &v), vec!["_call>"]);
        assert!(!m.clone().feed(b"Hello"));
    }

    #[test]
    fn the_name_is_one_of_the_allowed_functions() {
        let v = vocab(&["get", "_weather", "_time", "_w", "_t", "_x", "get_weather", "get_time>", "get_weather>", ">\n", ">"]);
        let mut m = ForcedToolCall::new(&["get_weather", "get_time"], &[]);
        assert!(m.feed(b"<tool_call>\n<function="));
        assert_eq!(allowed(&m, &v), vec!["get", "get_weather", "get_time>", "get_weather>"]);
        assert!(m.feed(b"get"));
        assert_eq!(allowed(&m, &v), vec!["_weather", "_time", "_w", "_t"]);
        let mut named = ForcedToolCall::new(&["get_time"], &[]);
        assert!(!named.clone().feed(b"<tool_call>\n<function=get_weather>"));
        assert!(named.feed(b"<tool_call>\n<function=get"));
        assert_eq!(allowed(&named, &v), vec!["_time", "_t"]);
    }

    #[test]
    fn parameters_follow_the_schema_and_required_ones_come_first() {
        let tools = weather();
        let mut m = ForcedToolCall::new(&["get_weather"], &tools);
        assert!(m.feed(b"<tool_call>\n<function=get_weather>\n"));
        let rejects = |m: &ForcedToolCall, text: &str| !m.clone().feed(text.as_bytes());
        assert!(rejects(&m, "</function>"), "city is required");
        assert!(rejects(&m, "<parameter=zip>"), "not declared");
        assert!(rejects(&m, "<parameter=days>\nthree"), "an integer");
        assert!(rejects(&m, "<parameter=days>\n3.5"), "an integer");
        assert!(rejects(&m, "<parameter=unit>\nk"), "one of the enum");
        assert!(rejects(&m, "<parameter=city>\nParis</parameter>"), "the value would end without its newline");
        assert!(rejects(&m, "<parameter=city>\nP</tool_call>"));
        assert!(m.feed(b"<parameter=days>\n3\n</parameter>\n"));
        assert!(rejects(&m, "<parameter=days>"), "written already");
        assert!(m.feed(b"<parameter=unit>\nc\n</parameter>\n<parameter=city>\nNew\nYork\n</parameter>\n"));
        assert!(!m.is_complete());
        assert!(m.feed(b"</function>\n</tool_call>") && m.is_complete());
        assert!(rejects(&m, "\n"), "one call, then the end of the turn");
        let mut parser = ToolCallParser::new(parameter_types(&tools));
        let text = "<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n<parameter=unit>\nc\n</parameter>\n<parameter=city>\nNew\nYork\n</parameter>\n</function>\n</tool_call>";
        let arguments: String = parser.push(text).into_iter().filter_map(|p| if let ContentPiece::CallArguments(a) = p { Some(a) } else { None }).collect();
        assert_eq!(serde_json::from_str::<Value>(&arguments).unwrap(), json!({"days": 3, "unit": "c", "city": "New\nYork"}));
    }

    #[test]
    fn the_mask_keeps_special_tokens_out_of_values_and_the_end_until_the_call_is_closed() {
        let v = vocab(&["Paris", "\n", "</parameter>", "\n</parameter>\n", "3", "x>", "</function>\n</tool_call>"]);
        let mut m = ForcedToolCall::new(&["get_weather"], &weather());
        assert!(m.feed(b"<tool_call>\n<function=get_weather>\n<parameter=city>\n"));
        assert_eq!(allowed(&m, &v), vec!["Paris", "\n", "\n</parameter>\n", "3", "x>"], "raw text (empty too), no special token");
        assert!(m.feed(b"Paris"));
        assert_eq!(allowed(&m, &v), vec!["Paris", "\n", "\n</parameter>\n", "3", "x>"]);
        assert!(m.feed(b"\n</parameter>\n"));
        assert_eq!(allowed(&m, &v), vec!["</function>\n</tool_call>"]);
        assert!(m.feed(b"</function>\n</tool_call>"));
        assert_eq!(allowed(&m, &v), vec!["<|im_end|>"]);
    }

    #[test]
    fn a_function_without_declared_parameters_takes_any() {
        let mut m = ForcedToolCall::new(&["f"], &[json!({"type": "function", "function": {"name": "f"}})]);
        assert!(m.feed(b"<tool_call>\n<function=f>\n<parameter=anything>\nfree <b>text</b>\n</parameter>\n"));
        assert!(!m.clone().feed(b"<parameter=>"), "a key is not empty");
        assert!(m.feed(b"</function>\n</tool_call>") && m.is_complete());
    }
}
