//! Request bodies as OpenAI clients send them, checked and turned into what the engine
//! needs. Unknown fields are collected (`ignored`: the server names them in a response header,
//! or refuses them under `--strict`); fields we know but do not support are refused with a 400
//! that names them rather than silently ignored.

use std::sync::Arc;

use lily_engine::json_constraint::{self, Node};
use lily_engine::sampling::SamplingParams;
use lily_model::ChatOptions;
use serde::Deserialize;
use serde_json::{Map, Value};

use crate::error::ApiError;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// A tool call in the conversation history (an earlier assistant turn).
#[derive(Debug, Clone, PartialEq)]
pub struct HistoryToolCall {
    pub id: String,
    pub name: String,
    /// Parsed from the JSON string clients send; kept as a string if it is not JSON.
    pub arguments: Value,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ChatMessage {
    pub role: Role,
    pub content: String,
    pub reasoning_content: Option<String>,
    pub tool_calls: Vec<HistoryToolCall>,
    pub tool_call_id: Option<String>,
    pub name: Option<String>,
}

/// What generation needs, shared by both endpoints.
#[derive(Debug, Clone)]
pub struct GenerationParams {
    pub sampling: SamplingParams,
    /// `None`: up to the end of the context.
    pub max_tokens: Option<usize>,
    /// The request field `max_tokens` came from (`max_tokens`, `max_completion_tokens`);
    /// `None` for the endpoint's default, which is cut to the room left rather than refused.
    pub max_tokens_field: Option<&'static str>,
    /// Choices to generate (`n`), each sampled on its own.
    pub n: usize,
    pub stop: Vec<String>,
    /// `Some(n)`: report logprobs with the `n` most likely alternatives.
    pub logprobs: Option<usize>,
    pub response_format: Option<Arc<Node>>,
}

#[derive(Debug, Clone)]
pub struct ChatRequest {
    pub model: String,
    pub messages: Vec<ChatMessage>,
    /// OpenAI `tools` entries as sent; empty when none (or `tool_choice: "none"`).
    pub tools: Vec<Value>,
    /// `tool_choice` "required" or a named function: the answer must call one of these.
    /// `None`: the model decides ("auto").
    pub forced_tool_call: Option<Vec<String>>,
    pub enable_thinking: bool,
    pub stream: bool,
    pub include_usage: bool,
    pub params: GenerationParams,
    /// Top-level fields this server does not know (see `RawExtra`).
    pub ignored: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Prompt {
    Text(String),
    Tokens(Vec<u32>),
}

#[derive(Debug, Clone)]
pub struct CompletionRequest {
    pub model: String,
    pub prompt: Prompt,
    pub stream: bool,
    pub include_usage: bool,
    pub params: GenerationParams,
    pub ignored: Vec<String>,
}

/// Most top alternatives OpenAI allows per token.
const MAX_TOP_LOGPROBS: u64 = 20;
/// OpenAI allows 4; a few more cost nothing.
const MAX_STOP_STRINGS: usize = 16;
/// OpenAI's default for `/v1/completions`.
const COMPLETIONS_DEFAULT_MAX_TOKENS: usize = 16;
/// Choices per request: each one is a generation of its own on the one engine thread.
const MAX_CHOICES: u64 = 16;
/// OpenAI's range for a `logit_bias` value.
const MAX_LOGIT_BIAS: f64 = 100.0;
/// Fields that are accepted and have no effect on a local answer (who the user is, storage and
/// tier hints; vLLM's `add_special_tokens`, the same either way for Qwen's tokenizer, which
/// adds no BOS or EOS): not reported as ignored.
const ACCEPTED_WITHOUT_EFFECT: &[&str] = &[
    "user",
    "metadata",
    "store",
    "service_tier",
    "parallel_tool_calls",
    "safety_identifier",
    "prompt_cache_key",
    "add_special_tokens",
];

/// Every top-level field a struct above did not take, to report as ignored.
#[derive(Deserialize)]
struct RawExtra(Map<String, Value>);

impl RawExtra {
    fn ignored(self) -> Vec<String> {
        self.0
            .into_iter()
            .map(|(k, _)| k)
            .filter(|k| !ACCEPTED_WITHOUT_EFFECT.contains(&k.as_str()))
            .collect()
    }
}

#[derive(Deserialize)]
struct StreamOptions {
    #[serde(default)]
    include_usage: Option<bool>,
}

/// Fields both endpoints share.
#[derive(Deserialize)]
struct RawCommon {
    model: String,
    #[serde(default)]
    stream: Option<bool>,
    #[serde(default)]
    stream_options: Option<StreamOptions>,
    #[serde(default)]
    max_tokens: Option<u64>,
    #[serde(default)]
    stop: Option<Value>,
    #[serde(default)]
    temperature: Option<f64>,
    #[serde(default)]
    top_p: Option<f64>,
    #[serde(default)]
    top_k: Option<i64>,
    #[serde(default)]
    min_p: Option<f64>,
    #[serde(default)]
    seed: Option<i64>,
    #[serde(default)]
    presence_penalty: Option<f64>,
    #[serde(default)]
    frequency_penalty: Option<f64>,
    #[serde(default)]
    n: Option<u64>,
    #[serde(default)]
    logit_bias: Option<Map<String, Value>>,
}

#[derive(Deserialize)]
struct RawChat {
    #[serde(flatten)]
    common: RawCommon,
    messages: Vec<RawMessage>,
    #[serde(default)]
    max_completion_tokens: Option<u64>,
    #[serde(default)]
    logprobs: Option<bool>,
    #[serde(default)]
    top_logprobs: Option<u64>,
    #[serde(default)]
    tools: Option<Vec<Value>>,
    #[serde(default)]
    tool_choice: Option<Value>,
    #[serde(default)]
    response_format: Option<Value>,
    #[serde(default)]
    chat_template_kwargs: Option<Map<String, Value>>,
    #[serde(default)]
    audio: Option<Value>,
    #[serde(default)]
    modalities: Option<Vec<String>>,
    /// Last: takes what the fields above (and `common`) did not.
    #[serde(flatten)]
    extra: RawExtra,
}

#[derive(Deserialize)]
struct RawMessage {
    role: String,
    #[serde(default)]
    content: Option<Value>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    tool_calls: Option<Vec<Value>>,
    #[serde(default)]
    tool_call_id: Option<String>,
    #[serde(default)]
    reasoning_content: Option<String>,
}

#[derive(Deserialize)]
struct RawCompletion {
    #[serde(flatten)]
    common: RawCommon,
    prompt: Value,
    #[serde(default)]
    logprobs: Option<u64>,
    #[serde(default)]
    echo: Option<bool>,
    #[serde(default)]
    suffix: Option<String>,
    #[serde(default)]
    best_of: Option<u64>,
    #[serde(flatten)]
    extra: RawExtra,
}

fn parse_json<T: for<'de> Deserialize<'de>>(body: &[u8]) -> Result<T, ApiError> {
    let value: Value = serde_json::from_slice(body).map_err(|e| ApiError::bad_request(format!("Invalid JSON body: {e}")))?;
    if !value.is_object() {
        return Err(ApiError::bad_request("The request body must be a JSON object."));
    }
    serde_json::from_value(value).map_err(|e| ApiError::bad_request(format!("Invalid request: {e}")))
}

fn range(param: &str, value: Option<f64>, lo: f64, hi: f64, default: f64) -> Result<f32, ApiError> {
    match value {
        None => Ok(default as f32),
        Some(v) if v.is_finite() && (lo..=hi).contains(&v) => Ok(v as f32),
        Some(v) => Err(ApiError::invalid(param, format!("`{param}` must be between {lo} and {hi}, got {v}."))),
    }
}

fn stop_strings(stop: Option<Value>) -> Result<Vec<String>, ApiError> {
    let stops = match stop {
        None | Some(Value::Null) => vec![],
        Some(Value::String(s)) => vec![s],
        Some(Value::Array(items)) => items
            .into_iter()
            .map(|v| match v {
                Value::String(s) => Ok(s),
                other => Err(ApiError::invalid("stop", format!("`stop` entries must be strings, got {other}."))),
            })
            .collect::<Result<_, _>>()?,
        Some(other) => return Err(ApiError::invalid("stop", format!("`stop` must be a string or a list of strings, got {other}."))),
    };
    if stops.len() > MAX_STOP_STRINGS {
        return Err(ApiError::invalid("stop", format!("At most {MAX_STOP_STRINGS} stop strings are supported.")));
    }
    Ok(stops)
}

/// OpenAI's `logit_bias`: token ids (as JSON object keys) to a bias in [-100, 100]. Whether
/// an id is in the vocabulary is checked where the vocabulary is known (`App::submit`).
fn logit_bias(raw: Option<&Map<String, Value>>) -> Result<Vec<(u32, f32)>, ApiError> {
    let mut bias: Vec<(u32, f32)> = raw
        .into_iter()
        .flatten()
        .map(|(key, value)| {
            let param = format!("logit_bias.{key}");
            let id = key.parse::<u32>().map_err(|_| {
                ApiError::invalid(
                    &param,
                    format!(
                        "`logit_bias` keys must be token ids (non-negative integers), got {key:?}."
                    ),
                )
            })?;
            match value.as_f64() {
                Some(b) if (-MAX_LOGIT_BIAS..=MAX_LOGIT_BIAS).contains(&b) => Ok((id, b as f32)),
                _ => Err(ApiError::invalid(
                    &param,
                    format!(
                        "`logit_bias` values must be numbers between -100 and 100, got {value}."
                    ),
                )),
            }
        })
        .collect::<Result<_, _>>()?;
    bias.sort_unstable_by_key(|&(id, _)| id);
    Ok(bias)
}

/// Checks the shared fields; `max_tokens` is whichever of the endpoint's fields was given
/// (`max_tokens_field` names it; `None`: the endpoint's default).
fn common_params(
    c: &RawCommon,
    max_tokens: Option<u64>,
    max_tokens_field: Option<&'static str>,
) -> Result<GenerationParams, ApiError> {
    let n = c.n.unwrap_or(1);
    if !(1..=MAX_CHOICES).contains(&n) {
        return Err(ApiError::invalid(
            "n",
            format!("`n` must be between 1 and {MAX_CHOICES}, got {n}."),
        ));
    }
    if let (Some(0), Some(field)) = (max_tokens, max_tokens_field) {
        return Err(ApiError::invalid(
            field,
            format!("`{field}` must be at least 1."),
        ));
    }
    let top_k = match c.top_k {
        None | Some(-1) | Some(0) => 0,
        Some(k) if k > 0 => k as usize,
        Some(k) => return Err(ApiError::invalid("top_k", format!("`top_k` must be -1, 0 (off) or positive, got {k}."))),
    };
    let top_p = range("top_p", c.top_p, 0.0, 1.0, 1.0)?;
    if top_p == 0.0 {
        return Err(ApiError::invalid("top_p", "`top_p` must be greater than 0."));
    }
    Ok(GenerationParams {
        sampling: SamplingParams {
            temperature: range("temperature", c.temperature, 0.0, 2.0, 1.0)?,
            top_p,
            top_k,
            min_p: range("min_p", c.min_p, 0.0, 1.0, 0.0)?,
            presence_penalty: range("presence_penalty", c.presence_penalty, -2.0, 2.0, 0.0)?,
            frequency_penalty: range("frequency_penalty", c.frequency_penalty, -2.0, 2.0, 0.0)?,
            seed: c.seed.map(|s| s as u64),
            logit_bias: logit_bias(c.logit_bias.as_ref())?,
        },
        max_tokens: max_tokens.map(|m| m.min(usize::MAX as u64) as usize),
        max_tokens_field,
        n: n as usize,
        stop: stop_strings(c.stop.clone())?,
        logprobs: None,
        response_format: None,
    })
}

fn message_content(i: usize, role: Role, content: Option<Value>) -> Result<String, ApiError> {
    let param = format!("messages[{i}].content");
    match content {
        None | Some(Value::Null) if role == Role::Assistant => Ok(String::new()),
        None | Some(Value::Null) => Err(ApiError::invalid(&param, format!("`{param}` is required for {} messages.", role.as_str()))),
        Some(Value::String(s)) => Ok(s),
        Some(Value::Array(parts)) => {
            let mut text = String::new();
            for (j, part) in parts.iter().enumerate() {
                let kind = part.get("type").and_then(Value::as_str).unwrap_or("");
                match (kind, part.get("text").and_then(Value::as_str)) {
                    ("text", Some(t)) => text.push_str(t),
                    ("text", None) => return Err(ApiError::invalid(format!("{param}[{j}].text"), "A text part needs a string `text`.")),
                    ("", _) => return Err(ApiError::invalid(format!("{param}[{j}].type"), "Each content part needs a `type`.")),
                    (other, _) => {
                        return Err(ApiError::unsupported(
                            format!("{param}[{j}]"),
                            format!("Content parts of type `{other}` are not supported: this model takes text only."),
                        ))
                    }
                }
            }
            Ok(text)
        }
        Some(other) => Err(ApiError::invalid(&param, format!("`{param}` must be a string or a list of parts, got {other}."))),
    }
}

fn history_tool_calls(i: usize, calls: Vec<Value>) -> Result<Vec<HistoryToolCall>, ApiError> {
    calls
        .into_iter()
        .enumerate()
        .map(|(j, call)| {
            let param = format!("messages[{i}].tool_calls[{j}]");
            let f = call.get("function").ok_or_else(|| ApiError::invalid(&param, "A tool call needs a `function`."))?;
            let name = f.get("name").and_then(Value::as_str).ok_or_else(|| ApiError::invalid(&param, "A tool call needs `function.name`."))?;
            let arguments = match f.get("arguments") {
                Some(Value::String(s)) => serde_json::from_str(s).unwrap_or_else(|_| Value::String(s.clone())),
                Some(v @ Value::Object(_)) => v.clone(),
                None | Some(Value::Null) => Value::Object(Map::new()),
                Some(other) => return Err(ApiError::invalid(&param, format!("`function.arguments` must be a JSON string, got {other}."))),
            };
            let id = call.get("id").and_then(Value::as_str).unwrap_or_default().to_string();
            Ok(HistoryToolCall { id, name: name.to_string(), arguments })
        })
        .collect()
}

/// An assistant turn with its reasoning inline (`<think>…</think>answer`, as some clients send
/// history back) has it split off as the chat template would, before the client's text is
/// escaped (`model::escape_conversation`) and the template could no longer see the tags.
fn split_inline_reasoning(content: String) -> (String, Option<String>) {
    let Some(end) = content.find("</think>") else {
        return (content, None);
    };
    let before = content[..end].trim_end_matches('\n');
    let reasoning = before
        .rsplit("<think>")
        .next()
        .unwrap_or(before)
        .trim_start_matches('\n')
        .to_string();
    let answer = content
        .rsplit("</think>")
        .next()
        .unwrap_or("")
        .trim_start_matches('\n')
        .to_string();
    (answer, Some(reasoning))
}

fn messages(raw: Vec<RawMessage>) -> Result<Vec<ChatMessage>, ApiError> {
    if raw.is_empty() {
        return Err(ApiError::invalid("messages", "`messages` must not be empty."));
    }
    raw.into_iter()
        .enumerate()
        .map(|(i, m)| {
            let role = match m.role.as_str() {
                "system" | "developer" => Role::System,
                "user" => Role::User,
                "assistant" => Role::Assistant,
                "tool" => Role::Tool,
                other => {
                    return Err(ApiError::invalid(
                        format!("messages[{i}].role"),
                        format!("Unknown role `{other}`; expected system, developer, user, assistant or tool."),
                    ))
                }
            };
            let mut content = message_content(i, role, m.content)?;
            let mut reasoning_content = m.reasoning_content;
            if role == Role::Assistant && reasoning_content.is_none() {
                (content, reasoning_content) = split_inline_reasoning(content);
            }
            let tool_calls = history_tool_calls(i, m.tool_calls.unwrap_or_default())?;
            Ok(ChatMessage { role, content, reasoning_content, tool_calls, tool_call_id: m.tool_call_id, name: m.name })
        })
        .collect()
}

/// The declared tools and, when `tool_choice` forces a call, the names it may call.
fn tools(raw: Option<Vec<Value>>, choice: Option<Value>) -> Result<(Vec<Value>, Option<Vec<String>>), ApiError> {
    let tools = raw.unwrap_or_default();
    for (i, tool) in tools.iter().enumerate() {
        let ok = tool.get("type").and_then(Value::as_str) == Some("function")
            && tool.pointer("/function/name").and_then(Value::as_str).is_some_and(|n| !n.is_empty());
        if !ok {
            return Err(ApiError::invalid(format!("tools[{i}]"), "Each tool must be {\"type\": \"function\", \"function\": {\"name\": ...}}."));
        }
    }
    let names: Vec<String> = tools.iter().filter_map(|t| t.pointer("/function/name").and_then(Value::as_str)).map(str::to_string).collect();
    let forced = match choice {
        None | Some(Value::Null) => return Ok((tools, None)),
        Some(Value::String(s)) if s == "auto" => return Ok((tools, None)),
        Some(Value::String(s)) if s == "none" => return Ok((vec![], None)),
        Some(Value::String(s)) if s == "required" => names,
        Some(named @ Value::Object(_)) => {
            if named.get("type").and_then(Value::as_str) != Some("function") {
                return Err(ApiError::invalid(
                    "tool_choice",
                    format!("`tool_choice` must be \"auto\", \"none\", \"required\" or {{\"type\": \"function\", \"function\": {{\"name\": ...}}}}, got {named}."),
                ));
            }
            let name = named
                .pointer("/function/name")
                .and_then(Value::as_str)
                .ok_or_else(|| ApiError::invalid("tool_choice", "`tool_choice.function.name` must be a string."))?;
            if !names.iter().any(|n| n == name) {
                return Err(ApiError::invalid("tool_choice", format!("`tool_choice` names function `{name}`, which is not in `tools`.")));
            }
            vec![name.to_string()]
        }
        Some(other) => {
            return Err(ApiError::invalid(
                "tool_choice",
                format!("`tool_choice` must be \"auto\", \"none\", \"required\" or {{\"type\": \"function\", \"function\": {{\"name\": ...}}}}, got {other}."),
            ))
        }
    };
    if forced.is_empty() {
        return Err(ApiError::invalid("tool_choice", "`tool_choice` \"required\" needs at least one entry in `tools`."));
    }
    Ok((tools, Some(forced)))
}

fn response_format(raw: Option<Value>) -> Result<Option<Arc<Node>>, ApiError> {
    let Some(format) = raw.filter(|v| !v.is_null()) else { return Ok(None) };
    match format.get("type").and_then(Value::as_str) {
        Some("text") => Ok(None),
        Some("json_object") => Ok(Some(json_constraint::any_object())),
        Some("json_schema") => {
            let schema = format
                .pointer("/json_schema/schema")
                .ok_or_else(|| ApiError::invalid("response_format.json_schema.schema", "`json_schema` needs a `schema`."))?;
            json_constraint::compile_schema(schema)
                .map(Some)
                .map_err(|e| ApiError::invalid("response_format.json_schema.schema", e.to_string()))
        }
        other => Err(ApiError::invalid(
            "response_format.type",
            format!(
                "`response_format.type` must be text, json_object or json_schema, got {other:?}."
            ),
        )),
    }
}

fn enable_thinking(kwargs: Option<&Map<String, Value>>) -> Result<bool, ApiError> {
    match kwargs.and_then(|k| k.get("enable_thinking")) {
        None | Some(Value::Null) => Ok(true),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(ApiError::invalid(
            "chat_template_kwargs.enable_thinking",
            format!("`enable_thinking` must be a boolean, got {other}."),
        )),
    }
}

pub fn parse_chat(body: &[u8]) -> Result<ChatRequest, ApiError> {
    let raw: RawChat = parse_json(body)?;
    if raw.audio.is_some() || raw.modalities.as_ref().is_some_and(|m| m.iter().any(|x| x != "text")) {
        return Err(ApiError::unsupported("modalities", "Only text output is supported."));
    }
    let (max_tokens, max_field) = match (raw.max_completion_tokens, raw.common.max_tokens) {
        (Some(m), _) => (Some(m), "max_completion_tokens"),
        (None, m) => (m, "max_tokens"),
    };
    let mut params = common_params(&raw.common, max_tokens, Some(max_field))?;
    match (raw.logprobs.unwrap_or(false), raw.top_logprobs) {
        (_, Some(n)) if n > MAX_TOP_LOGPROBS => {
            return Err(ApiError::invalid("top_logprobs", format!("`top_logprobs` must be at most {MAX_TOP_LOGPROBS}.")))
        }
        (false, Some(n)) if n > 0 => return Err(ApiError::invalid("top_logprobs", "`top_logprobs` needs `logprobs: true`.")),
        (true, n) => params.logprobs = Some(n.unwrap_or(0) as usize),
        (false, _) => {}
    }
    params.response_format = response_format(raw.response_format)?;
    let enable_thinking = enable_thinking(raw.chat_template_kwargs.as_ref())?;
    let (tools, forced_tool_call) = tools(raw.tools, raw.tool_choice)?;
    if forced_tool_call.is_some() && params.response_format.is_some() {
        return Err(ApiError::invalid(
            "response_format",
            "`response_format` cannot be combined with a `tool_choice` that forces a tool call: the answer is the call.",
        ));
    }
    Ok(ChatRequest {
        model: raw.common.model,
        messages: messages(raw.messages)?,
        tools,
        forced_tool_call,
        enable_thinking,
        stream: raw.common.stream.unwrap_or(false),
        include_usage: raw.common.stream_options.and_then(|o| o.include_usage).unwrap_or(false),
        params,
        ignored: raw.extra.ignored(),
    })
}

fn prompt(value: Value) -> Result<Prompt, ApiError> {
    let token = |v: &Value| v.as_u64().filter(|&t| t <= u32::MAX as u64).map(|t| t as u32);
    match value {
        Value::String(s) => Ok(Prompt::Text(s)),
        Value::Array(items) if items.is_empty() => Err(ApiError::invalid("prompt", "`prompt` must not be empty.")),
        Value::Array(items) if items.iter().all(|v| v.is_number()) => items
            .iter()
            .map(|v| token(v).ok_or_else(|| ApiError::invalid("prompt", format!("Token ids must be non-negative integers, got {v}."))))
            .collect::<Result<_, _>>()
            .map(Prompt::Tokens),
        Value::Array(mut items) if items.len() == 1 => prompt(items.remove(0)),
        Value::Array(_) => Err(ApiError::unsupported("prompt", "Only one prompt per request is supported.")),
        other => Err(ApiError::invalid("prompt", format!("`prompt` must be a string or a list of token ids, got {other}."))),
    }
}

pub fn parse_completion(body: &[u8]) -> Result<CompletionRequest, ApiError> {
    let raw: RawCompletion = parse_json(body)?;
    if raw.echo == Some(true) {
        return Err(ApiError::unsupported("echo", "`echo` is not supported."));
    }
    if raw.suffix.as_ref().is_some_and(|s| !s.is_empty()) {
        return Err(ApiError::unsupported("suffix", "`suffix` is not supported."));
    }
    // best_of = n is what OpenAI does when only n is given: every candidate is returned.
    if raw.best_of.is_some_and(|b| b != raw.common.n.unwrap_or(1)) {
        return Err(ApiError::unsupported(
            "best_of",
            "Only best_of = n (every candidate returned) is supported.",
        ));
    }
    let (max_tokens, max_field) = match raw.common.max_tokens {
        Some(m) => (m, Some("max_tokens")),
        None => (COMPLETIONS_DEFAULT_MAX_TOKENS as u64, None),
    };
    let mut params = common_params(&raw.common, Some(max_tokens), max_field)?;
    if let Some(n) = raw.logprobs {
        if n > MAX_TOP_LOGPROBS {
            return Err(ApiError::invalid("logprobs", format!("`logprobs` must be at most {MAX_TOP_LOGPROBS}.")));
        }
        params.logprobs = Some(n as usize);
    }
    Ok(CompletionRequest {
        model: raw.common.model,
        prompt: prompt(raw.prompt)?,
        stream: raw.common.stream.unwrap_or(false),
        include_usage: raw.common.stream_options.and_then(|o| o.include_usage).unwrap_or(false),
        params,
        ignored: raw.extra.ignored(),
    })
}

/// What `/tokenize` encodes.
#[derive(Debug, Clone)]
pub enum TokenizeInput {
    /// Text as `/v1/completions` encodes a prompt (special-token text is a special token).
    Prompt(String),
    /// A conversation as `/v1/chat/completions` prompts it.
    Chat {
        messages: Vec<ChatMessage>,
        tools: Vec<Value>,
        options: ChatOptions,
    },
}

#[derive(Debug, Clone)]
pub struct TokenizeRequest {
    pub model: Option<String>,
    pub input: TokenizeInput,
    pub ignored: Vec<String>,
}

#[derive(Debug, Clone)]
pub struct DetokenizeRequest {
    pub model: Option<String>,
    pub tokens: Vec<u32>,
    pub ignored: Vec<String>,
}

/// vLLM's tokenize request: `{"model", "prompt"}` or `{"model", "messages", "tools",
/// "add_generation_prompt", "chat_template_kwargs"}`; `model` may be left out.
#[derive(Deserialize)]
struct RawTokenize {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    prompt: Option<String>,
    #[serde(default)]
    messages: Option<Vec<RawMessage>>,
    #[serde(default)]
    tools: Option<Vec<Value>>,
    #[serde(default)]
    add_generation_prompt: Option<bool>,
    #[serde(default)]
    chat_template_kwargs: Option<Map<String, Value>>,
    #[serde(flatten)]
    extra: RawExtra,
}

#[derive(Deserialize)]
struct RawDetokenize {
    #[serde(default)]
    model: Option<String>,
    tokens: Vec<u32>,
    #[serde(flatten)]
    extra: RawExtra,
}

pub fn parse_tokenize(body: &[u8]) -> Result<TokenizeRequest, ApiError> {
    let raw: RawTokenize = parse_json(body)?;
    let input = match (raw.prompt, raw.messages) {
        (Some(prompt), None) => TokenizeInput::Prompt(prompt),
        (None, Some(messages)) => {
            let options = ChatOptions {
                add_generation_prompt: raw.add_generation_prompt.unwrap_or(true),
                enable_thinking: enable_thinking(raw.chat_template_kwargs.as_ref())?,
                ..ChatOptions::default()
            };
            TokenizeInput::Chat {
                messages: self::messages(messages)?,
                tools: tools(raw.tools, None)?.0,
                options,
            }
        }
        _ => {
            return Err(ApiError::invalid(
                "prompt",
                "Give either `prompt` (text) or `messages` (a conversation).",
            ))
        }
    };
    Ok(TokenizeRequest {
        model: raw.model,
        input,
        ignored: raw.extra.ignored(),
    })
}

pub fn parse_detokenize(body: &[u8]) -> Result<DetokenizeRequest, ApiError> {
    let raw: RawDetokenize = parse_json(body)?;
    Ok(DetokenizeRequest {
        model: raw.model,
        tokens: raw.tokens,
        ignored: raw.extra.ignored(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn chat(v: Value) -> Result<ChatRequest, ApiError> {
        parse_chat(v.to_string().as_bytes())
    }

    #[test]
    fn a_typical_request_parses() {
        let r = chat(json!({
            "model": "m", "stream": true, "stream_options": {"include_usage": true},
            "messages": [
                {"role": "developer", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "hi "}, {"type": "text", "text": "there"}]},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "42"}
            ],
            "max_completion_tokens": 5, "stop": "END", "temperature": 0, "seed": 3, "top_k": -1,
            "logprobs": true, "top_logprobs": 2,
            "chat_template_kwargs": {"enable_thinking": false},
            "response_format": {"type": "json_object"},
            "user": "ignored", "parallel_tool_calls": true
        }))
        .unwrap();
        assert_eq!(r.messages[0].role, Role::System);
        assert_eq!(r.messages[1].content, "hi there");
        assert_eq!(r.messages[2].tool_calls[0].arguments, json!({"a": 1}));
        assert_eq!(r.messages[2].reasoning_content, None);
        assert_eq!(
            (r.stream, r.include_usage, r.enable_thinking),
            (true, true, false)
        );
        assert_eq!(r.params.max_tokens, Some(5));
        assert_eq!(r.params.stop, vec!["END".to_string()]);
        assert_eq!(r.params.logprobs, Some(2));
        assert_eq!(r.params.sampling.temperature, 0.0);
        assert!(r.params.response_format.is_some());
        assert_eq!(
            (r.params.n, r.params.max_tokens_field),
            (1, Some("max_completion_tokens"))
        );
        assert!(
            r.ignored.is_empty(),
            "user and parallel_tool_calls are known: {:?}",
            r.ignored
        );
    }

    #[test]
    fn inline_reasoning_in_assistant_history_is_split_off() {
        let r = chat(json!({"model": "m", "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "<think>\nhmm\n</think>\n\nanswer"},
            {"role": "user", "content": "<think>stays</think>"}
        ]}))
        .unwrap();
        assert_eq!(
            (
                r.messages[1].content.as_str(),
                r.messages[1].reasoning_content.as_deref()
            ),
            ("answer", Some("hmm"))
        );
        assert_eq!(
            (
                r.messages[2].content.as_str(),
                r.messages[2].reasoning_content.as_deref()
            ),
            ("<think>stays</think>", None)
        );
    }

    #[test]
    fn n_logit_bias_and_unknown_fields() {
        let r = chat(json!({
            "model": "m", "messages": [{"role": "user", "content": "x"}], "n": 3,
            "logit_bias": {"50": -100, "7": 2.5}, "repetition_penalty": 1.1, "foo": {"bar": 1}
        }))
        .unwrap();
        assert_eq!(r.params.n, 3);
        assert_eq!(r.params.sampling.logit_bias, vec![(7, 2.5), (50, -100.0)]);
        let mut ignored = r.ignored.clone();
        ignored.sort();
        assert_eq!(
            ignored,
            vec!["foo".to_string(), "repetition_penalty".to_string()]
        );
        let c =
            parse_completion(br#"{"model": "m", "prompt": "x", "n": 2, "best_of": 2, "bogus": 1}"#)
                .unwrap();
        assert_eq!(
            (c.params.n, c.ignored.clone()),
            (2, vec!["bogus".to_string()])
        );
        assert_eq!(
            c.params.max_tokens_field, None,
            "the default of 16 is not the client's"
        );
        assert!(
            parse_completion(br#"{"model": "m", "prompt": "x", "n": 2, "best_of": 3}"#).is_err()
        );
    }

    #[test]
    fn tool_choice_forces_a_call_to_the_declared_tools() {
        let with_choice = |choice: Value| {
            let tools = json!([{"type": "function", "function": {"name": "a"}}, {"type": "function", "function": {"name": "b"}}]);
            chat(json!({"model": "m", "messages": [{"role": "user", "content": "x"}], "tools": tools, "tool_choice": choice}))
        };
        assert_eq!(with_choice(json!("auto")).unwrap().forced_tool_call, None);
        let none = with_choice(json!("none")).unwrap();
        assert!(none.tools.is_empty() && none.forced_tool_call.is_none());
        assert_eq!(with_choice(json!("required")).unwrap().forced_tool_call, Some(vec!["a".to_string(), "b".to_string()]));
        let named = with_choice(json!({"type": "function", "function": {"name": "b"}})).unwrap();
        assert_eq!((named.tools.len(), named.forced_tool_call), (2, Some(vec!["b".to_string()])));
        for bad in [json!({"type": "function", "function": {"name": "c"}}), json!({"type": "function"}), json!({"type": "custom"}), json!("always"), json!(1)] {
            let e = with_choice(bad.clone()).unwrap_err();
            assert_eq!(e.param.as_deref(), Some("tool_choice"), "{bad}");
        }
        assert!(with_choice(json!({"type": "function", "function": {"name": "c"}})).unwrap_err().message.contains("`c`"));
    }

    #[test]
    fn bad_requests_name_the_field() {
        let base = |extra: Value| {
            let mut v = json!({"model": "m", "messages": [{"role": "user", "content": "x"}]});
            v.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            chat(v).unwrap_err()
        };
        assert_eq!(base(json!({"n": 0})).param.as_deref(), Some("n"));
        assert_eq!(base(json!({"n": 17})).param.as_deref(), Some("n"));
        assert_eq!(
            base(json!({"logit_bias": {"x": 1}})).param.as_deref(),
            Some("logit_bias.x")
        );
        assert_eq!(
            base(json!({"logit_bias": {"5": 101}})).param.as_deref(),
            Some("logit_bias.5")
        );
        assert_eq!(
            base(json!({"logit_bias": {"5": "1"}})).param.as_deref(),
            Some("logit_bias.5")
        );
        assert_eq!(
            base(json!({"temperature": 3})).param.as_deref(),
            Some("temperature")
        );
        assert_eq!(
            base(json!({"top_logprobs": 3})).param.as_deref(),
            Some("top_logprobs")
        );
        assert_eq!(
            base(json!({"messages": []})).param.as_deref(),
            Some("messages")
        );
        // "required" with no tools to call.
        assert_eq!(base(json!({"tool_choice": "required"})).param.as_deref(), Some("tool_choice"));
        let tools = json!([{"type": "function", "function": {"name": "f"}}]);
        let forced_json = base(json!({"tools": tools, "tool_choice": "required", "response_format": {"type": "json_object"}}));
        assert_eq!(forced_json.param.as_deref(), Some("response_format"));
        assert_eq!(base(json!({"stop": 5})).param.as_deref(), Some("stop"));
        assert_eq!(base(json!({"max_tokens": 0})).param.as_deref(), Some("max_tokens"));
        let image = base(json!({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}));
        assert_eq!(image.param.as_deref(), Some("messages[0].content[0]"));
        assert!(image.message.contains("image_url"));
        let schema = base(json!({"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "nope"}}}}));
        assert!(schema.message.contains("nope"), "{}", schema.message);
        assert!(chat(json!({"model": "m", "messages": "hi"})).unwrap_err().message.starts_with("Invalid request"));
        assert!(parse_chat(b"{not json").unwrap_err().message.starts_with("Invalid JSON"));
        assert!(parse_chat(b"[1]").is_err());
    }

    #[test]
    fn completion_prompts() {
        let p = |v: Value| parse_completion(json!({"model": "m", "prompt": v}).to_string().as_bytes()).map(|r| r.prompt);
        assert_eq!(p(json!("hi")).unwrap(), Prompt::Text("hi".into()));
        assert_eq!(p(json!(["hi"])).unwrap(), Prompt::Text("hi".into()));
        assert_eq!(p(json!([1, 2])).unwrap(), Prompt::Tokens(vec![1, 2]));
        assert_eq!(p(json!([[1, 2]])).unwrap(), Prompt::Tokens(vec![1, 2]));
        assert!(p(json!(["a", "b"])).is_err());
        assert!(p(json!([-1])).is_err());
        let r = parse_completion(br#"{"model": "m", "prompt": "x", "logprobs": 2}"#).unwrap();
        assert_eq!((r.params.logprobs, r.params.max_tokens), (Some(2), Some(16)));
    }
}
