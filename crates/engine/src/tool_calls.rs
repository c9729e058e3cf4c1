//! Parses the tool calls Qwen3.5/3.6 write in their answer:
//!
//! ```text
//! <tool_call>
//! <function=get_weather>
//! <parameter=city>
//! Paris
//! </parameter>
//! </function>
//! </tool_call>
//! ```
//!
//! Parameter values are text; they become JSON of the type the tool's schema declares (a
//! `string` parameter stays a string, anything else is parsed as JSON when it parses). A call
//! streams: its start once `<function=NAME>` is written, then its arguments as JSON text, a
//! piece per parameter as each closes (OpenAI's `delta.tool_calls[i].function.arguments`);
//! a call cut short ends with the parameters it has. The older Hermes form, a JSON object
//! `{"name": ..., "arguments": {...}}` inside `<tool_call>`, is accepted too (whole, at its end).

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::text_stream::partial_marker_len;

pub const TOOL_CALL_START: &str = "<tool_call>";
pub const TOOL_CALL_END: &str = "</tool_call>";

#[derive(Debug, Clone, PartialEq)]
pub struct ToolCall {
    pub name: String,
    /// The arguments as a JSON object.
    pub arguments: Map<String, Value>,
}

/// Content text, or a tool call as it streams: its start (the function's name), then its
/// arguments as pieces of JSON text that, put together, are the arguments object.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentPiece {
    Text(String),
    CallStart(String),
    CallArguments(String),
}

/// For each tool, for each parameter, its declared JSON type (`"string"`, `"integer"`, ...).
pub type ParameterTypes = HashMap<String, HashMap<String, String>>;

/// Reads the declared parameter types out of OpenAI `tools` entries
/// (`{"type": "function", "function": {"name", "parameters": {"properties": ...}}}`).
pub fn parameter_types(tools: &[Value]) -> ParameterTypes {
    let mut out = ParameterTypes::new();
    for tool in tools {
        let Some(f) = tool.get("function") else { continue };
        let Some(name) = f.get("name").and_then(Value::as_str) else { continue };
        let mut params = HashMap::new();
        if let Some(props) = f.pointer("/parameters/properties").and_then(Value::as_object) {
            for (param, schema) in props {
                let ty = match schema.get("type") {
                    _ if written_raw(schema) => "string".into(),
                    Some(Value::String(t)) => t.clone(),
                    _ => "any".into(),
                };
                params.insert(param.clone(), ty);
            }
        }
        out.insert(name.to_string(), params);
    }
    out
}

/// Whether a parameter of this schema is written as its raw text (a string), not as JSON:
/// `type` `string` (or a list with `string`: `["string", "null"]` stays a string), or an
/// `enum`/`const` of strings only.
pub fn written_raw(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "string",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "string"),
        _ => match (schema.get("enum"), schema.get("const")) {
            (Some(Value::Array(values)), _) => !values.is_empty() && values.iter().all(Value::is_string),
            (None, Some(c)) => c.is_string(),
            _ => false,
        },
    }
}

/// Streams content text through, cutting out `<tool_call>` blocks as calls. A call in
/// Qwen's XML form streams: its start as soon as `<function=NAME>` is written, then each
/// parameter as it closes; the Hermes JSON form comes whole at its end.
#[derive(Debug)]
pub struct ToolCallParser {
    types: ParameterTypes,
    in_call: bool,
    pending: String,
    /// The call being streamed: its name and how many parameters were sent.
    streaming: Option<(String, usize)>,
}

impl ToolCallParser {
    pub fn new(types: ParameterTypes) -> Self {
        Self { types, in_call: false, pending: String::new(), streaming: None }
    }

    pub fn push(&mut self, text: &str) -> Vec<ContentPiece> {
        self.pending.push_str(text);
        let mut out = Vec::new();
        loop {
            if self.in_call {
                let Some(at) = self.pending.find(TOOL_CALL_END) else {
                    let body = self.pending.clone();
                    self.stream(&body, false, &mut out);
                    return out;
                };
                let body: String = self.pending.drain(..at + TOOL_CALL_END.len()).take(at).collect();
                self.in_call = false;
                self.end_call(&body, &mut out);
                continue;
            }
            if let Some(at) = self.pending.find(TOOL_CALL_START) {
                let before: String = self.pending.drain(..at + TOOL_CALL_START.len()).take(at).collect();
                push_text(&mut out, before);
                self.in_call = true;
                continue;
            }
            let hold = partial_marker_len(&self.pending, TOOL_CALL_START);
            let ready: String = self.pending.drain(..self.pending.len() - hold).collect();
            push_text(&mut out, ready);
            return out;
        }
    }

    /// At the end of generation: an unfinished call that has started streaming ends with the
    /// parameters it has; any other comes back as the text it was.
    pub fn finish(&mut self) -> Vec<ContentPiece> {
        let rest = std::mem::take(&mut self.pending);
        let mut out = Vec::new();
        if self.in_call {
            self.in_call = false;
            self.stream(&rest, true, &mut out);
            if self.streaming.is_some() {
                out.push(ContentPiece::CallArguments(self.close_arguments()));
                return out;
            }
            push_text(&mut out, format!("{TOOL_CALL_START}{rest}"));
        } else {
            push_text(&mut out, rest);
        }
        out
    }

    /// A whole `<tool_call>` block.
    fn end_call(&mut self, body: &str, out: &mut Vec<ContentPiece>) {
        self.stream(body, true, out);
        if self.streaming.is_some() {
            out.push(ContentPiece::CallArguments(self.close_arguments()));
            return;
        }
        match parse_hermes_call(body.trim()) {
            Some(call) => push_call(out, call),
            // Not a call we understand: give the client the text rather than lose it.
            None => out.push(ContentPiece::Text(format!("{TOOL_CALL_START}{body}{TOOL_CALL_END}"))),
        }
    }

    /// Sends what is new in the XML call `body` (written so far): its start once the name is
    /// there, then each parameter once closed (`whole`: the body is all there is, and a
    /// parameter cut short counts as it is).
    fn stream(&mut self, body: &str, whole: bool, out: &mut Vec<ContentPiece>) {
        let trimmed = body.trim_start();
        let Some(rest) = trimmed.strip_prefix("<function=") else { return };
        let Some(name_end) = rest.find('>') else { return };
        let name = rest[..name_end].trim();
        if name.is_empty() {
            return;
        }
        if self.streaming.is_none() {
            out.push(ContentPiece::CallStart(name.to_string()));
            self.streaming = Some((name.to_string(), 0));
        }
        let params = xml_params(&rest[name_end + 1..], whole);
        let Some((name, sent)) = &mut self.streaming else { return };
        let types = self.types.get(name.as_str());
        for (key, raw) in params.iter().skip(*sent) {
            let ty = types.and_then(|p| p.get(key)).map_or("any", String::as_str);
            let separator = if *sent == 0 { "{" } else { "," };
            out.push(ContentPiece::CallArguments(format!("{separator}{}:{}", Value::String(key.clone()), typed_value(raw, ty))));
            *sent += 1;
        }
    }

    /// The end of the streamed call's arguments object.
    fn close_arguments(&mut self) -> String {
        match self.streaming.take() {
            Some((_, 0)) | None => "{}".into(),
            Some(_) => "}".into(),
        }
    }
}

/// A call known whole: its start and all its arguments at once.
fn push_call(out: &mut Vec<ContentPiece>, call: ToolCall) {
    out.push(ContentPiece::CallStart(call.name));
    out.push(ContentPiece::CallArguments(Value::Object(call.arguments).to_string()));
}

/// The parameters of an XML call after `<function=NAME>`, in order, as (key, raw value):
/// those closed by `</parameter>`, and with `cut_short` one still open at the end.
fn xml_params(mut rest: &str, cut_short: bool) -> Vec<(String, String)> {
    let mut params = Vec::new();
    while let Some(start) = rest.find("<parameter=") {
        let after = &rest[start + "<parameter=".len()..];
        let Some(key_end) = after.find('>') else { break };
        let value_and_rest = &after[key_end + 1..];
        let value_end = match value_and_rest.find("</parameter>") {
            Some(end) => end,
            None if cut_short => value_and_rest.len(),
            None => break,
        };
        let raw = value_and_rest[..value_end].strip_prefix('\n').unwrap_or(&value_and_rest[..value_end]);
        params.push((after[..key_end].trim().to_string(), raw.strip_suffix('\n').unwrap_or(raw).to_string()));
        rest = value_and_rest.get(value_end + "</parameter>".len()..).unwrap_or("");
    }
    params
}

fn push_text(out: &mut Vec<ContentPiece>, text: String) {
    if !text.is_empty() {
        out.push(ContentPiece::Text(text));
    }
}

fn typed_value(raw: &str, ty: &str) -> Value {
    if ty == "string" {
        return Value::String(raw.to_string());
    }
    serde_json::from_str(raw.trim()).unwrap_or_else(|_| Value::String(raw.to_string()))
}

fn parse_hermes_call(body: &str) -> Option<ToolCall> {
    let v: Value = serde_json::from_str(body).ok()?;
    let name = v.get("name")?.as_str()?.to_string();
    let arguments = match v.get("arguments") {
        Some(Value::Object(m)) => m.clone(),
        Some(Value::String(s)) => serde_json::from_str(s).ok()?,
        None => Map::new(),
        _ => return None,
    };
    Some(ToolCall { name, arguments })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn weather_types() -> ParameterTypes {
        parameter_types(&[json!({"type": "function", "function": {"name": "get_weather", "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "zip": {"type": "string"}, "unit": {"enum": ["c", "f"]}}
        }}})])
    }

    const CALL: &str = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=zip>\n75001\n</parameter>\n</function>\n</tool_call>";

    /// Text, and each call's name and arguments put together from the pieces.
    fn assemble(pieces: &[ContentPiece]) -> (String, Vec<(String, Value)>) {
        let mut text = String::new();
        let mut calls: Vec<(String, String)> = Vec::new();
        for p in pieces {
            match p {
                ContentPiece::Text(t) => text += t,
                ContentPiece::CallStart(name) => calls.push((name.clone(), String::new())),
                ContentPiece::CallArguments(a) => calls.last_mut().expect("arguments after a start").1 += a,
            }
        }
        let calls = calls.into_iter().map(|(n, a)| (n, serde_json::from_str(&a).unwrap_or_else(|e| panic!("{e}: {a}")))).collect();
        (text, calls)
    }

    fn run(text: &str, chunk: usize) -> Vec<ContentPiece> {
        let mut p = ToolCallParser::new(weather_types());
        let mut pieces = Vec::new();
        // Chunks on char boundaries: the texts are ASCII.
        for c in text.as_bytes().chunks(chunk) {
            pieces.extend(p.push(std::str::from_utf8(c).unwrap()));
        }
        pieces.extend(p.finish());
        pieces
    }

    #[test]
    fn parses_the_xml_form_with_declared_types_streaming_each_parameter() {
        let pieces = run(&format!("Checking.{CALL}"), 5);
        let (text, calls) = assemble(&pieces);
        assert_eq!(text, "Checking.");
        assert_eq!(calls, vec![("get_weather".to_string(), json!({"city": "Paris", "days": 3, "zip": "75001"}))]);
        // The start as soon as the name is there, then one piece per parameter, then the end.
        let args: Vec<&str> = pieces.iter().filter_map(|p| if let ContentPiece::CallArguments(a) = p { Some(a.as_str()) } else { None }).collect();
        assert_eq!(args, vec![r#"{"city":"Paris""#, r#","days":3"#, r#","zip":"75001""#, "}"]);
        let start = pieces.iter().position(|p| matches!(p, ContentPiece::CallStart(_))).unwrap();
        assert!(matches!(&pieces[start + 1], ContentPiece::CallArguments(a) if a.starts_with('{')));
        // Streamed token by token: the arguments arrive while the call is being written.
        let mut p = ToolCallParser::new(weather_types());
        let early: Vec<ContentPiece> = p.push("<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n");
        assert_eq!(early, vec![ContentPiece::CallStart("get_weather".into()), ContentPiece::CallArguments(r#"{"city":"Paris""#.into())]);
    }

    #[test]
    fn parses_two_calls_and_the_hermes_form() {
        let (_, calls) = assemble(&run(&format!("{CALL}\n<tool_call>\n{{\"name\": \"f\", \"arguments\": {{\"x\": [1]}}}}\n</tool_call>"), 7));
        assert_eq!(calls.iter().map(|c| c.0.as_str()).collect::<Vec<_>>(), vec!["get_weather", "f"]);
        assert_eq!(calls[1].1, json!({"x": [1]}));
    }

    #[test]
    fn calls_without_a_name_come_back_as_text() {
        let mut p = ToolCallParser::new(ParameterTypes::new());
        let pieces = p.push("<tool_call>nonsense</tool_call>");
        assert_eq!(pieces, vec![ContentPiece::Text("<tool_call>nonsense</tool_call>".into())]);
        assert!(p.push("<tool_call>\n<function").is_empty());
        assert_eq!(p.finish(), vec![ContentPiece::Text("<tool_call>\n<function".into())]);
    }

    #[test]
    fn a_call_keeps_its_name_and_parameters_whatever_else_the_model_wrote() {
        let call = |text: &str| assemble(&run(text, 3)).1;
        let weather = |args: Value| vec![("get_weather".to_string(), args)];
        assert_eq!(call("<tool_call>\n<function=get_weather>\n"), weather(json!({})));
        assert_eq!(call("<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n<parameter=city>\nPa"), weather(json!({"days": 3, "city": "Pa"})));
        assert_eq!(call("<tool_call>\n<function=get_weather>\nnot a parameter"), weather(json!({})));
        let (text, calls) = assemble(&run("<tool_call>\n<function=get_weather>\nhm\n<parameter=days>\n3\n</parameter>\nhm</function>\n</tool_call>ok", 4));
        assert_eq!((text.as_str(), calls), ("ok", weather(json!({"days": 3}))));
        // A string enum stays a string even when its text reads as JSON.
        assert_eq!(parameter_types(&[json!({"type": "function", "function": {"name": "f", "parameters": {"properties": {"u": {"enum": ["null"]}}}}})])["f"]["u"], "string");
    }
}
