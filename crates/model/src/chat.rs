//! The chat format: OpenAI-style messages rendered into the prompt text the model was trained
//! on, by the checkpoint's own Jinja chat template (assets/qwen3_6_chat_template.jinja by
//! default), so that prompts are byte-identical to transformers' `apply_chat_template`
//! (checked on 35 conversations in tests/chat_template.rs).
//!
//! Rendering matches transformers' Jinja environment: `trim_blocks` and `lstrip_blocks`, no
//! autoescape, Python string methods (minijinja-contrib's pycompat), `raise_exception`, and a
//! `tojson` that writes what Python's `json.dumps(..., ensure_ascii=False)` writes. `trim` is
//! Python's `str.strip`, which also strips U+001C..U+001F.

use std::path::{Path, PathBuf};

use minijinja::{Environment, Error, ErrorKind, Value};
use serde::{Deserialize, Serialize};

/// The chat template of Qwen/Qwen3.6-35B-A3B (Apache-2.0, see assets/LICENSE-qwen).
const QWEN3_6_TEMPLATE: &str = include_str!("../../../assets/qwen3_6_chat_template.jinja");
const TEMPLATE_NAME: &str = "chat_template";

#[derive(Debug, thiserror::Error)]
pub enum ChatError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}: {reason}")]
    Config { path: PathBuf, reason: String },
    #[error("{origin}: the chat template does not parse: {source}")]
    Template { origin: String, source: Error },
    /// The template refused the conversation (its `raise_exception`), or rendering failed.
    #[error("cannot render the conversation: {0}")]
    Render(String),
    #[error("messages[{index}]: {reason}")]
    Message { index: usize, reason: String },
}

/// One message as an OpenAI-compatible client sends it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Content>,
    /// The thinking of an earlier assistant turn (what came between `<think>` and `</think>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_content: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_calls: Option<Vec<ToolCall>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Content {
    Text(String),
    Parts(Vec<ContentPart>),
}

/// A content part; Lily serves a text model, so only `{"type": "text", "text": ...}` renders.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ContentPart {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    pub function: FunctionCall,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionCall {
    pub name: String,
    /// A JSON object, or (as the OpenAI API sends it) a string holding one.
    pub arguments: serde_json::Value,
}

impl Message {
    pub fn new(role: &str, content: &str) -> Message {
        Message { role: role.to_owned(), content: Some(Content::Text(content.to_owned())), ..Message::default() }
    }
}

#[derive(Clone, Debug)]
pub struct ChatOptions {
    /// End with the opening of the assistant's turn (what generation continues from).
    pub add_generation_prompt: bool,
    /// Off: the assistant's turn starts with an empty `<think>\n\n</think>\n\n`.
    pub enable_thinking: bool,
    /// Keep the thinking of every earlier assistant turn, not only those after the last user query.
    pub preserve_thinking: bool,
}

impl Default for ChatOptions {
    fn default() -> Self {
        ChatOptions { add_generation_prompt: true, enable_thinking: true, preserve_thinking: false }
    }
}

pub struct ChatTemplate {
    env: Environment<'static>,
}

impl ChatTemplate {
    /// The committed Qwen3.6 chat template.
    pub fn qwen3_6() -> ChatTemplate {
        ChatTemplate::from_source(QWEN3_6_TEMPLATE.to_owned(), "assets/qwen3_6_chat_template.jinja")
            .expect("the committed chat template parses (checked by the tests)")
    }

    /// A checkpoint's template: `chat_template.jinja`, else the `chat_template` string of
    /// `tokenizer_config.json`.
    pub fn from_model_dir(dir: impl AsRef<Path>) -> Result<ChatTemplate, ChatError> {
        let dir = dir.as_ref();
        let jinja = dir.join("chat_template.jinja");
        if jinja.is_file() {
            let source = std::fs::read_to_string(&jinja).map_err(|source| ChatError::Io { path: jinja.clone(), source })?;
            return ChatTemplate::from_source(source, &jinja.display().to_string());
        }
        let config = dir.join("tokenizer_config.json");
        let text = std::fs::read_to_string(&config).map_err(|source| ChatError::Io { path: config.clone(), source })?;
        let json: serde_json::Value = serde_json::from_str(&text)
            .map_err(|e| ChatError::Config { path: config.clone(), reason: e.to_string() })?;
        let source = json.get("chat_template").and_then(serde_json::Value::as_str).ok_or_else(|| ChatError::Config {
            path: config.clone(),
            reason: "no `chat_template` string (and no chat_template.jinja beside it)".into(),
        })?;
        ChatTemplate::from_source(source.to_owned(), &config.display().to_string())
    }

    /// A template from its source; `origin` names it in errors.
    pub fn from_source(source: String, origin: &str) -> Result<ChatTemplate, ChatError> {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_filter("tojson", tojson);
        env.add_filter("trim", python_strip);
        env.add_function("raise_exception", raise_exception);
        env.add_template_owned(TEMPLATE_NAME, source)
            .map_err(|source| ChatError::Template { origin: origin.to_owned(), source })?;
        Ok(ChatTemplate { env })
    }

    /// The prompt text of a conversation. `tools` are OpenAI-style tool definitions, rendered
    /// as given.
    pub fn render(&self, messages: &[Message], tools: &[serde_json::Value], options: &ChatOptions) -> Result<String, ChatError> {
        let messages = messages.iter().enumerate().map(|(i, m)| for_template(i, m)).collect::<Result<Vec<_>, _>>()?;
        let template = self.env.get_template(TEMPLATE_NAME).expect("added in from_source");
        let tools = if tools.is_empty() { Value::from(()) } else { Value::from_serialize(tools) };
        let mut ctx = vec![
            ("messages", Value::from_serialize(&messages)),
            ("tools", tools),
            ("add_generation_prompt", Value::from(options.add_generation_prompt)),
            ("enable_thinking", Value::from(options.enable_thinking)),
        ];
        // The template tests `preserve_thinking is defined and preserve_thinking is true`.
        if options.preserve_thinking {
            ctx.push(("preserve_thinking", Value::from(true)));
        }
        let ctx: Value = ctx.into_iter().collect();
        template.render(ctx).map_err(|e| ChatError::Render(render_error_message(&e)))
    }
}

// The server renders prompts from many request threads with one template.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<ChatTemplate>();
};

/// The message as the template sees it: text parts only, and tool-call arguments as objects
/// (the template walks them with `|items`; OpenAI clients send them as JSON text).
fn for_template(index: usize, message: &Message) -> Result<Message, ChatError> {
    let bad = |reason: String| ChatError::Message { index, reason };
    let mut m = message.clone();
    if let Some(Content::Parts(parts)) = &m.content {
        for (j, part) in parts.iter().enumerate() {
            if part.kind != "text" || part.text.is_none() {
                return Err(bad(format!("content[{j}] has type {:?}: only text parts are supported", part.kind)));
            }
        }
    }
    for (j, call) in m.tool_calls.iter_mut().flatten().enumerate() {
        let args = &mut call.function.arguments;
        if let serde_json::Value::String(text) = args {
            *args = serde_json::from_str(text)
                .map_err(|e| bad(format!("tool_calls[{j}].function.arguments is not JSON: {e}")))?;
        }
        if !args.is_object() {
            return Err(bad(format!("tool_calls[{j}].function.arguments must be a JSON object, found {args}")));
        }
    }
    Ok(m)
}

/// The template's own message for `raise_exception`, otherwise minijinja's full description.
fn render_error_message(e: &Error) -> String {
    match (e.kind(), e.detail()) {
        (ErrorKind::InvalidOperation, Some(detail)) => detail.to_owned(),
        _ => format!("{e:#}"),
    }
}

fn raise_exception(message: String) -> Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, message))
}

/// Python's `str.strip(chars)`: with no argument it strips what `str.isspace` calls space,
/// which is Unicode White_Space plus the four information separators U+001C..U+001F.
fn python_strip(value: String, chars: Option<String>) -> String {
    match chars {
        Some(chars) => value.trim_matches(|c| chars.contains(c)).to_owned(),
        None => value.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)).to_owned(),
    }
}

/// transformers' `tojson`: `json.dumps(value, ensure_ascii=False)`, keys in insertion order,
/// `", "` and `": "` separators, Python's float spelling.
fn tojson(value: Value) -> Result<Value, Error> {
    let json = serde_json::to_value(&value)
        .map_err(|e| Error::new(ErrorKind::InvalidOperation, format!("tojson: {e}")))?;
    let mut out = String::new();
    python_json(&json, &mut out);
    Ok(Value::from_safe_string(out))
}

fn python_json(v: &serde_json::Value, out: &mut String) {
    use serde_json::Value as J;
    match v {
        J::Null => out.push_str("null"),
        J::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        J::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => out.push_str(&python_float(f)),
            _ => out.push_str(&n.to_string()),
        },
        J::String(s) => python_string(s, out),
        J::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                python_json(item, out);
            }
            out.push(']');
        }
        J::Object(map) => {
            out.push('{');
            for (i, (k, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                python_string(k, out);
                out.push_str(": ");
                python_json(item, out);
            }
            out.push('}');
        }
    }
}

fn python_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Python's `repr(float)`: the shortest digits that round-trip (as Rust's), written
/// positionally for exponents -4..16 (always with a fraction, "2.0") and as "1e-05" / "1.5e+16"
/// otherwise.
fn python_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity".into() } else { "-Infinity".into() };
    }
    let sci = format!("{f:e}"); // e.g. "-1.5e16", "1e-5", "0e0"
    let (mantissa, exp) = sci.split_once('e').expect("{:e} has an exponent");
    let exp: i32 = exp.parse().expect("{:e} exponent is an integer");
    let (sign, mantissa) = mantissa.strip_prefix('-').map_or(("", mantissa), |m| ("-", m));
    let digits: String = mantissa.chars().filter(|&c| c != '.').collect();
    if (-4..16).contains(&exp) {
        let point = exp + 1; // digits before the decimal point
        let body = if point <= 0 {
            format!("0.{}{digits}", "0".repeat((-point) as usize))
        } else if point as usize >= digits.len() {
            format!("{digits}{}.0", "0".repeat(point as usize - digits.len()))
        } else {
            format!("{}.{}", &digits[..point as usize], &digits[point as usize..])
        };
        format!("{sign}{body}")
    } else {
        let exp_sign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mantissa}e{exp_sign}{:02}", exp.abs())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_spelled_as_python_repr() {
        for (f, py) in [
            (2.0, "2.0"), (0.5, "0.5"), (1e-5, "1e-05"), (1.5e16, "1.5e+16"), (1e16, "1e+16"),
            (123456789012345.6, "123456789012345.6"), (0.0001, "0.0001"), (-0.25, "-0.25"), (0.0, "0.0"),
            (1e22, "1e+22"), (3.25, "3.25"), (-1.5e-7, "-1.5e-07"),
        ] {
            assert_eq!(python_float(f), py, "{f}");
        }
    }

    #[test]
    fn strings_are_escaped_as_python_json_dumps() {
        let mut out = String::new();
        python_string("a\"b\\c\nd\u{1}é😀<>&'", &mut out);
        assert_eq!(out, r#""a\"b\\c\nd\u0001é😀<>&'""#);
    }

    #[test]
    fn strip_matches_python() {
        assert_eq!(python_strip("\u{1c}\u{1f} hi\u{3000}\u{85}".into(), None), "hi");
        assert_eq!(python_strip("\nxx\n".into(), Some("\n".into())), "xx");
    }
}
