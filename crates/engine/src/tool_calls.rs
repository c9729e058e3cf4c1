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
//! `string` parameter stays a string, anything else is parsed as JSON when it parses). The
//! older Hermes form, a JSON object `{"name": ..., "arguments": {...}}` inside `<tool_call>`,
//! is accepted too.

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

#[derive(Debug, Clone, PartialEq)]
pub enum ContentPiece {
    Text(String),
    ToolCall(ToolCall),
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

/// Streams content text through, cutting out `<tool_call>` blocks as parsed calls.
#[derive(Debug)]
pub struct ToolCallParser {
    types: ParameterTypes,
    in_call: bool,
    pending: String,
    /// Calls are parsed leniently (see `forced_calls`).
    forced: bool,
}

impl ToolCallParser {
    pub fn new(types: ParameterTypes) -> Self {
        Self { types, in_call: false, pending: String::new(), forced: false }
    }

    /// For calls the server forced open (`tool_choice`), which must come back as calls: a
    /// call keeps its name and well-formed parameters even when the model wrote other text in
    /// it or stopped before closing it (that text is dropped).
    pub fn forced_calls(mut self) -> Self {
        self.forced = true;
        self
    }

    fn parse(&self, body: &str) -> Option<ToolCall> {
        if self.forced {
            parse_forced_call(body, &self.types)
        } else {
            parse_tool_call(body, &self.types)
        }
    }

    pub fn push(&mut self, text: &str) -> Vec<ContentPiece> {
        self.pending.push_str(text);
        let mut out = Vec::new();
        loop {
            if self.in_call {
                let Some(at) = self.pending.find(TOOL_CALL_END) else { return out };
                let body: String = self.pending.drain(..at + TOOL_CALL_END.len()).take(at).collect();
                self.in_call = false;
                match self.parse(&body) {
                    Some(call) => out.push(ContentPiece::ToolCall(call)),
                    // Not a call we understand: give the client the text rather than lose it.
                    None => out.push(ContentPiece::Text(format!("{TOOL_CALL_START}{body}{TOOL_CALL_END}"))),
                }
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

    /// At the end of generation: an unfinished call is returned as the text it was.
    pub fn finish(&mut self) -> Vec<ContentPiece> {
        let rest = std::mem::take(&mut self.pending);
        let mut out = Vec::new();
        if self.in_call {
            self.in_call = false;
            match self.forced.then(|| self.parse(&rest)).flatten() {
                Some(call) => out.push(ContentPiece::ToolCall(call)),
                None => push_text(&mut out, format!("{TOOL_CALL_START}{rest}")),
            }
        } else {
            push_text(&mut out, rest);
        }
        out
    }
}

fn push_text(out: &mut Vec<ContentPiece>, text: String) {
    if !text.is_empty() {
        out.push(ContentPiece::Text(text));
    }
}

/// Parses the inside of one `<tool_call>` block.
pub fn parse_tool_call(body: &str, types: &ParameterTypes) -> Option<ToolCall> {
    let body = body.trim();
    if body.starts_with('{') {
        return parse_hermes_call(body);
    }
    parse_xml_call(body, types, false)
}

/// The inside of a call the server forced open: its name and whichever parameters are there,
/// a parameter cut short ending where the text ends; other text is ignored.
pub fn parse_forced_call(body: &str, types: &ParameterTypes) -> Option<ToolCall> {
    let body = body.trim();
    if body.starts_with('{') {
        return parse_hermes_call(body);
    }
    parse_xml_call(body, types, true)
}

fn parse_xml_call(body: &str, types: &ParameterTypes, lenient: bool) -> Option<ToolCall> {
    let rest = body.strip_prefix("<function=")?;
    let name_end = rest.find('>')?;
    let name = rest[..name_end].trim().to_string();
    let mut rest = &rest[name_end + 1..];
    match rest.rfind("</function>") {
        Some(end) => rest = &rest[..end],
        None if lenient => {}
        None => return None,
    }
    let param_types = types.get(&name);
    let mut arguments = Map::new();
    while let Some(start) = rest.find("<parameter=") {
        let after = &rest[start + "<parameter=".len()..];
        let Some(key_end) = after.find('>') else {
            if lenient {
                break;
            }
            return None;
        };
        let key = after[..key_end].trim().to_string();
        let value_and_rest = &after[key_end + 1..];
        let value_end = match value_and_rest.find("</parameter>") {
            Some(end) => end,
            None if lenient => value_and_rest.len(),
            None => return None,
        };
        let raw = value_and_rest[..value_end].strip_prefix('\n').unwrap_or(&value_and_rest[..value_end]);
        let raw = raw.strip_suffix('\n').unwrap_or(raw);
        let ty = param_types.and_then(|p| p.get(&key)).map_or("any", String::as_str);
        arguments.insert(key, typed_value(raw, ty));
        rest = value_and_rest.get(value_end + "</parameter>".len()..).unwrap_or("");
    }
    if !lenient && !rest.trim().is_empty() {
        return None;
    }
    (!name.is_empty()).then_some(ToolCall { name, arguments })
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
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "zip": {"type": "string"}}
        }}})])
    }

    const CALL: &str = "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n<parameter=days>\n3\n</parameter>\n<parameter=zip>\n75001\n</parameter>\n</function>\n</tool_call>";

    #[test]
    fn parses_the_xml_form_with_declared_types() {
        let mut p = ToolCallParser::new(weather_types());
        let text = format!("Checking.{CALL}");
        let mut pieces = Vec::new();
        // Feed it in 5-byte chunks (on char boundaries: the text is ASCII).
        for chunk in text.as_bytes().chunks(5) {
            pieces.extend(p.push(std::str::from_utf8(chunk).unwrap()));
        }
        pieces.extend(p.finish());
        // Text may arrive in several pieces; what matters is the text and where the call is.
        let split = pieces.iter().position(|p| matches!(p, ContentPiece::ToolCall(_))).unwrap();
        let text: String = pieces[..split]
            .iter()
            .map(|p| match p {
                ContentPiece::Text(t) => t.as_str(),
                ContentPiece::ToolCall(_) => unreachable!(),
            })
            .collect();
        assert_eq!(text, "Checking.");
        let pieces = pieces[split..].to_vec();
        let expected_args = json!({"city": "Paris", "days": 3, "zip": "75001"});
        assert_eq!(
            pieces,
            vec![
                ContentPiece::ToolCall(ToolCall {
                    name: "get_weather".into(),
                    arguments: expected_args.as_object().unwrap().clone()
                }),
            ]
        );
    }

    #[test]
    fn parses_two_calls_and_the_hermes_form() {
        let mut p = ToolCallParser::new(weather_types());
        let mut pieces = p.push(&format!("{CALL}\n<tool_call>\n{{\"name\": \"f\", \"arguments\": {{\"x\": [1]}}}}\n</tool_call>"));
        pieces.extend(p.finish());
        let calls: Vec<_> = pieces
            .iter()
            .filter_map(|p| match p {
                ContentPiece::ToolCall(c) => Some(c.name.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(calls, vec!["get_weather", "f"]);
    }

    #[test]
    fn malformed_or_unfinished_calls_come_back_as_text() {
        let mut p = ToolCallParser::new(ParameterTypes::new());
        let pieces = p.push("<tool_call>nonsense</tool_call>");
        assert_eq!(pieces, vec![ContentPiece::Text("<tool_call>nonsense</tool_call>".into())]);
        assert!(p.push("<tool_call>\n<function=f>").is_empty());
        assert_eq!(p.finish(), vec![ContentPiece::Text("<tool_call>\n<function=f>".into())]);
    }

    #[test]
    fn a_forced_call_keeps_its_name_and_parameters_whatever_else_the_model_wrote() {
        let call = |text: &str| {
            let mut p = ToolCallParser::new(weather_types()).forced_calls();
            let mut pieces = p.push(text);
            pieces.extend(p.finish());
            pieces
        };
        let weather = |args: serde_json::Value| ContentPiece::ToolCall(ToolCall { name: "get_weather".into(), arguments: args.as_object().unwrap().clone() });
        assert_eq!(call("<tool_call>\n<function=get_weather>\n"), vec![weather(json!({}))]);
        assert_eq!(call("<tool_call>\n<function=get_weather>\n<parameter=days>\n3\n</parameter>\n<parameter=city>\nPa"), vec![weather(json!({"days": 3, "city": "Pa"}))]);
        assert_eq!(call("<tool_call>\n<function=get_weather>\nnot a parameter"), vec![weather(json!({}))]);
        assert_eq!(call("<tool_call>\n<function=get_weather>\nhm\n<parameter=days>\n3\n</parameter>\nhm</function>\n</tool_call>ok"), vec![weather(json!({"days": 3})), ContentPiece::Text("ok".into())]);
        // Without a function name there is no call to return.
        assert_eq!(call("<tool_call>\n<function"), vec![ContentPiece::Text("<tool_call>\n<function".into())]);
    }
}
