//! HTTP endpoints: requests in, jobs onto the engine queue, OpenAI-shaped JSON or
//! server-sent events out.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use futures_util::Stream;
use lily_engine::tool_choice::ForcedToolCall;
use lily_model::ChatOptions;
use serde_json::{json, Map, Value};
use tokio::sync::mpsc::{self, UnboundedReceiver};
use tracing::Instrument;

use crate::error::ApiError;
use crate::hybrid::REQUEST_ID_HEADER;
use crate::model::escape_conversation;
use crate::output::{Delta, LogprobEntry, ToolCallDelta};
use crate::request::{
    parse_chat, parse_completion, parse_detokenize, parse_tokenize, ChatMessage, ChatRequest,
    GenerationParams, Prompt, TokenizeInput,
};
use crate::worker::{Event, FinishReason, Job, JobKind, PushError, Usage};
use crate::App;

/// Unique enough for response and tool-call ids: a process-wide counter mixed with the start
/// time, so ids from two server runs do not collide in a client's logs.
pub(crate) fn new_id(prefix: &str) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let start = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    format!("{prefix}{:012x}{n:08x}", start & 0xffff_ffff_ffff)
}

fn unix_time() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

async fn read_body(body: Body, limit: usize) -> Result<axum::body::Bytes, ApiError> {
    axum::body::to_bytes(body, limit).await.map_err(|e| {
        if e.into_inner().downcast::<http_body_util::LengthLimitError>().is_ok() {
            ApiError::too_large(limit)
        } else {
            ApiError::bad_request("Could not read the request body.")
        }
    })
}

/// Names the request fields this server did not use (`x-lily-ignored-fields: a,b`).
pub const IGNORED_FIELDS_HEADER: &str = "x-lily-ignored-fields";

/// `response` with the ignored fields named in a header, when there are any.
pub(crate) fn with_ignored(mut response: Response, ignored: &[String]) -> Response {
    if let Ok(value) = HeaderValue::from_str(&ignored.join(",")) {
        if !ignored.is_empty() {
            response.headers_mut().insert(IGNORED_FIELDS_HEADER, value);
        }
    }
    response
}

impl App {
    fn check_model(&self, requested: &str) -> Result<(), ApiError> {
        if requested == self.config.model_id {
            Ok(())
        } else {
            Err(ApiError::model_not_found(requested, &self.config.model_id))
        }
    }

    /// Fields this server does not know: refused under `--strict`, else only named in the
    /// response (`with_ignored`).
    pub(crate) fn check_ignored(&self, ignored: &[String]) -> Result<(), ApiError> {
        match ignored.first() {
            Some(first) if self.config.strict => Err(ApiError {
                code: Some("unknown_parameter"),
                ..ApiError::invalid(first.as_str(), format!("Unrecognized request argument supplied: {} (this server runs with --strict).", ignored.join(", ")))
            }),
            _ => Ok(()),
        }
    }

    fn submit(
        &self,
        prompt: Vec<u32>,
        params: GenerationParams,
        kind: JobKind,
    ) -> Result<UnboundedReceiver<Event>, ApiError> {
        let vocab_size = self.readiness.check()?;
        if prompt.is_empty() {
            return Err(ApiError::invalid("prompt", "The prompt is empty."));
        }
        if let Some(&bad) = prompt.iter().find(|&&t| t as usize >= vocab_size) {
            return Err(ApiError::invalid(
                "prompt",
                format!(
                    "Token id {bad} is outside the vocabulary (size {}).",
                    vocab_size
                ),
            ));
        }
        if let Some(&(bad, _)) = params
            .sampling
            .logit_bias
            .iter()
            .find(|&&(t, _)| t as usize >= vocab_size)
        {
            return Err(ApiError::invalid(
                format!("logit_bias.{bad}"),
                format!(
                    "Token id {bad} is outside the vocabulary (size {}).",
                    vocab_size
                ),
            ));
        }
        let max_seq = self.config.max_seq;
        if prompt.len() >= max_seq {
            return Err(ApiError {
                code: Some("context_length_exceeded"),
                ..ApiError::invalid(
                    "messages",
                    format!(
                        "The prompt has {} tokens; the context holds {max_seq}, and at least one must be left to generate.",
                        prompt.len()
                    ),
                )
            });
        }
        let room = max_seq - prompt.len();
        if let (Some(asked), Some(field)) = (params.max_tokens, params.max_tokens_field) {
            if asked > room {
                return Err(ApiError {
                    code: Some("context_length_exceeded"),
                    ..ApiError::invalid(
                        field,
                        format!(
                            "`{field}` is {asked}, but the context holds {max_seq} tokens and the prompt takes {}: at most {room} can be generated. Lower `{field}` or shorten the prompt.",
                            prompt.len()
                        ),
                    )
                });
            }
        }
        let (tx, rx) = mpsc::unbounded_channel();
        let now = Instant::now();
        let timeout = self.config.request_timeout;
        let span = tracing::Span::current();
        let job = Job { prompt, params, kind, events: tx, arrived: now, deadline: now + timeout, timeout, span };
        match self.queue.try_push(job) {
            Ok(depth) => {
                self.metrics.set_waiting(depth);
                Ok(rx)
            }
            Err(PushError::Full) => {
                let wait = self.metrics.mean_request_time().as_secs_f64() * self.queue.len() as f64;
                Err(ApiError::queue_full(wait.ceil().clamp(1.0, 60.0) as u64))
            }
            Err(PushError::Closed) => Err(ApiError::shutting_down()),
        }
    }
}

/// The parts of a response every chunk repeats.
#[derive(Clone)]
pub(crate) struct Meta {
    pub id: String,
    pub created: u64,
    pub model: String,
    pub chat: bool,
    pub logprobs: bool,
    pub include_usage: bool,
    /// Choices the job generates.
    pub n: usize,
}

/// The usage of a whole request: the prompt (and its cached part) counted once, as the first
/// choice found it; the completions of every choice.
fn add_usage(total: &mut Option<Usage>, choice: Usage) {
    match total {
        Some(t) => t.completion_tokens += choice.completion_tokens,
        None => *total = Some(choice),
    }
}

fn usage_json(u: &Usage) -> Value {
    json!({
        "prompt_tokens": u.prompt_tokens,
        "completion_tokens": u.completion_tokens,
        "total_tokens": u.prompt_tokens + u.completion_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cached_tokens},
    })
}

fn chat_logprobs(entries: &[LogprobEntry]) -> Value {
    let content: Vec<Value> = entries
        .iter()
        .map(|e| {
            let top: Vec<Value> = e.top.iter().map(|(t, b, lp)| json!({"token": t, "logprob": lp, "bytes": b})).collect();
            json!({"token": e.token, "logprob": e.logprob, "bytes": e.bytes, "top_logprobs": top})
        })
        .collect();
    json!({ "content": content })
}

/// The legacy `/v1/completions` shape; `offset` is where this chunk's text starts.
fn completion_logprobs(entries: &[LogprobEntry], offset: &mut usize) -> Value {
    let mut text_offset = Vec::new();
    for e in entries {
        text_offset.push(*offset);
        *offset += e.token.len();
    }
    let top: Vec<Value> = entries
        .iter()
        .map(|e| Value::Object(e.top.iter().map(|(t, _, lp)| (t.clone(), json!(lp))).collect::<Map<_, _>>()))
        .collect();
    json!({
        "tokens": entries.iter().map(|e| e.token.clone()).collect::<Vec<_>>(),
        "token_logprobs": entries.iter().map(|e| e.logprob).collect::<Vec<_>>(),
        "top_logprobs": top,
        "text_offset": text_offset,
    })
}

/// A tool call's opening: its id and name, with its arguments so far.
fn tool_call_json(index: usize, name: &str, arguments: &str) -> Value {
    json!({"index": index, "id": new_id("call_"), "type": "function", "function": {"name": name, "arguments": arguments}})
}

/// A streamed delta's tool calls: a call's first entry names it, later ones carry more of its
/// arguments (pieces for one call in one chunk are joined).
fn tool_call_deltas(calls: &[ToolCallDelta], sent: &mut usize) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    for c in calls {
        match c {
            ToolCallDelta::Start(name) => {
                *sent += 1;
                out.push(tool_call_json(*sent - 1, name, ""));
            }
            ToolCallDelta::Arguments(piece) => match out.last_mut().and_then(|v| v.pointer_mut("/function/arguments")) {
                Some(Value::String(arguments)) => arguments.push_str(piece),
                _ => out.push(json!({"index": sent.saturating_sub(1), "function": {"arguments": piece}})),
            },
        }
    }
    out
}

/// Turns engine events into stream chunks.
pub(crate) struct StreamFormatter {
    meta: Meta,
    /// Per choice: tool calls sent so far.
    tool_index: Vec<usize>,
    /// Per choice (completions): where the next chunk's text starts.
    text_offset: Vec<usize>,
}

impl StreamFormatter {
    pub fn new(meta: Meta) -> Self {
        let n = meta.n;
        Self {
            meta,
            tool_index: vec![0; n],
            text_offset: vec![0; n],
        }
    }

    fn chunk(&self, choice: Value) -> Value {
        let object = if self.meta.chat { "chat.completion.chunk" } else { "text_completion" };
        json!({"id": self.meta.id, "object": object, "created": self.meta.created, "model": self.meta.model, "choices": [choice]})
    }

    /// A chat stream opens each choice with the assistant's role.
    fn first(&self) -> Vec<Value> {
        if !self.meta.chat {
            return vec![];
        }
        (0..self.meta.n)
            .map(|i| self.chunk(json!({"index": i, "delta": {"role": "assistant", "content": ""}, "logprobs": null, "finish_reason": null})))
            .collect()
    }

    pub fn delta(&mut self, index: usize, d: &Delta) -> Value {
        if !self.meta.chat {
            let logprobs = if self.meta.logprobs {
                completion_logprobs(&d.logprobs, &mut self.text_offset[index])
            } else {
                Value::Null
            };
            return self.chunk(json!({"index": index, "text": d.content, "logprobs": logprobs, "finish_reason": null}));
        }
        let mut delta = Map::new();
        if !d.reasoning.is_empty() {
            delta.insert("reasoning_content".into(), json!(d.reasoning));
        }
        if !d.content.is_empty() {
            delta.insert("content".into(), json!(d.content));
        }
        if !d.tool_calls.is_empty() {
            delta.insert("tool_calls".into(), Value::Array(tool_call_deltas(&d.tool_calls, &mut self.tool_index[index])));
        }
        let logprobs = if self.meta.logprobs {
            chat_logprobs(&d.logprobs)
        } else {
            Value::Null
        };
        self.chunk(
            json!({"index": index, "delta": delta, "logprobs": logprobs, "finish_reason": null}),
        )
    }

    pub fn finish(&self, index: usize, reason: FinishReason) -> Value {
        if self.meta.chat {
            self.chunk(json!({"index": index, "delta": {}, "logprobs": null, "finish_reason": reason.as_str()}))
        } else {
            self.chunk(json!({"index": index, "text": "", "logprobs": null, "finish_reason": reason.as_str()}))
        }
    }

    pub fn usage(&self, usage: &Usage) -> Value {
        let object = if self.meta.chat { "chat.completion.chunk" } else { "text_completion" };
        json!({"id": self.meta.id, "object": object, "created": self.meta.created, "model": self.meta.model, "choices": [], "usage": usage_json(usage)})
    }
}

fn event_stream(mut rx: UnboundedReceiver<Event>, meta: Meta) -> impl Stream<Item = Result<SseEvent, Infallible>> {
    let data = |v: Value| SseEvent::default().data(v.to_string());
    let mut f = StreamFormatter::new(meta);
    let mut pending: VecDeque<SseEvent> = f.first().into_iter().map(data).collect();
    let mut finished = 0;
    let mut total = None;
    let mut done = false;
    futures_util::stream::poll_fn(move |cx| loop {
        if let Some(e) = pending.pop_front() {
            return std::task::Poll::Ready(Some(Ok(e)));
        }
        if done {
            return std::task::Poll::Ready(None);
        }
        match rx.poll_recv(cx) {
            std::task::Poll::Pending => return std::task::Poll::Pending,
            std::task::Poll::Ready(None) => done = true,
            std::task::Poll::Ready(Some(Event::Delta { choice, delta })) => {
                pending.push_back(data(f.delta(choice, &delta)))
            }
            std::task::Poll::Ready(Some(Event::Done {
                choice,
                finish_reason,
                usage,
            })) => {
                pending.push_back(data(f.finish(choice, finish_reason)));
                add_usage(&mut total, usage);
                finished += 1;
                if finished < f.meta.n {
                    continue;
                }
                if let (true, Some(usage)) = (f.meta.include_usage, &total) {
                    pending.push_back(data(f.usage(usage)));
                }
                pending.push_back(SseEvent::default().data("[DONE]"));
                done = true;
            }
            std::task::Poll::Ready(Some(Event::Error(e))) => {
                pending.push_back(SseEvent::default().data(e.body()));
                pending.push_back(SseEvent::default().data("[DONE]"));
                done = true;
            }
        }
    })
}

/// One choice of a non-streaming response, as its deltas arrive.
#[derive(Default)]
struct ChoiceText {
    reasoning: String,
    content: String,
    /// Each call's name and arguments.
    calls: Vec<(String, String)>,
    logprobs: Vec<LogprobEntry>,
}

impl ChoiceText {
    fn json(self, index: usize, finish_reason: FinishReason, meta: &Meta) -> Value {
        if !meta.chat {
            let lp = if meta.logprobs {
                completion_logprobs(&self.logprobs, &mut 0)
            } else {
                Value::Null
            };
            return json!({"index": index, "text": self.content, "logprobs": lp, "finish_reason": finish_reason.as_str()});
        }
        let mut message = Map::new();
        message.insert("role".into(), json!("assistant"));
        let no_text = self.content.is_empty() && !self.calls.is_empty();
        message.insert(
            "content".into(),
            if no_text {
                Value::Null
            } else {
                json!(self.content)
            },
        );
        if !self.reasoning.is_empty() {
            message.insert("reasoning_content".into(), json!(self.reasoning));
        }
        if !self.calls.is_empty() {
            let calls: Vec<Value> = self.calls.iter().enumerate().map(|(i, (name, arguments))| tool_call_json(i, name, arguments)).collect();
            message.insert("tool_calls".into(), Value::Array(calls));
        }
        let lp = if meta.logprobs {
            chat_logprobs(&self.logprobs)
        } else {
            Value::Null
        };
        json!({"index": index, "message": message, "logprobs": lp, "finish_reason": finish_reason.as_str()})
    }
}

/// Waits for the whole generation and builds the non-streaming response.
async fn collect(mut rx: UnboundedReceiver<Event>, meta: Meta) -> Result<Response, ApiError> {
    let mut texts: Vec<ChoiceText> = (0..meta.n).map(|_| ChoiceText::default()).collect();
    let mut choices = Vec::with_capacity(meta.n);
    let mut total = None;
    while choices.len() < meta.n {
        match rx.recv().await {
            Some(Event::Delta { choice, delta }) => {
                let t = &mut texts[choice];
                t.reasoning += &delta.reasoning;
                t.content += &delta.content;
                for c in delta.tool_calls {
                    match c {
                        ToolCallDelta::Start(name) => t.calls.push((name, String::new())),
                        ToolCallDelta::Arguments(piece) => t.calls.last_mut().into_iter().for_each(|(_, a)| a.push_str(&piece)),
                    }
                }
                t.logprobs.extend(delta.logprobs);
            }
            Some(Event::Error(e)) => return Err(e),
            None => {
                return Err(ApiError::internal(
                    "The engine stopped before the request finished.",
                ))
            }
            Some(Event::Done {
                choice,
                finish_reason,
                usage,
            }) => {
                add_usage(&mut total, usage);
                choices.push(std::mem::take(&mut texts[choice]).json(choice, finish_reason, &meta));
            }
        }
    }
    let usage = total.map(|u| usage_json(&u)).unwrap_or(Value::Null);
    let object = if meta.chat {
        "chat.completion"
    } else {
        "text_completion"
    };
    let body = json!({"id": meta.id, "object": object, "created": meta.created, "model": meta.model, "choices": choices, "usage": usage});
    Ok(Json(body).into_response())
}

pub(crate) async fn respond(rx: UnboundedReceiver<Event>, meta: Meta, stream: bool) -> Result<Response, ApiError> {
    if stream {
        Ok(Sse::new(event_stream(rx, meta)).keep_alive(KeepAlive::default()).into_response())
    } else {
        collect(rx, meta).await
    }
}

fn reply(result: Result<Response, ApiError>) -> Response {
    result.unwrap_or_else(IntoResponse::into_response)
}

pub async fn chat_completions(State(app): State<Arc<App>>, headers: HeaderMap, body: Body) -> Response {
    let bytes = match read_body(body, app.config.max_body_bytes).await {
        Ok(b) => b,
        Err(e) => return e.into_response(),
    };
    if let Some(hybrid) = &app.hybrid {
        return hybrid.chat(&app, &headers, bytes).await;
    }
    reply(chat(&app, &bytes).await)
}

async fn chat(app: &Arc<App>, bytes: &[u8]) -> Result<Response, ApiError> {
    let mut req = parse_chat(bytes)?;
    app.check_model(&req.model)?;
    app.check_ignored(&req.ignored)?;
    let (stream, ignored) = (req.stream, std::mem::take(&mut req.ignored));
    let (rx, meta) = start_chat(app, req, None)?;
    Ok(with_ignored(respond(rx, meta, stream).await?, &ignored))
}

/// The prompt of a conversation: every string the client wrote escaped, so that its
/// special-token text is plain text and only the template's structure makes special tokens.
/// Also whether the template opened the assistant's turn inside `<think>`.
fn chat_prompt(
    app: &App,
    messages: &[ChatMessage],
    tools: &[Value],
    options: &ChatOptions,
    assistant_prefix: Option<&str>,
) -> Result<(Vec<u32>, bool), ApiError> {
    let (messages, tools) = escape_conversation(app.model.as_ref(), messages, tools);
    let mut text = app
        .model
        .render_chat(&messages, &tools, options)
        .map_err(|m| ApiError::invalid("messages", m))?;
    let thinking = text.ends_with("<think>\n");
    if let Some(prefix) = assistant_prefix {
        text.push_str(&app.model.escape(prefix));
    }
    Ok((app.model.encode_chat(&text), thinking))
}

/// Queues a chat request on the local engine. With `assistant_prefix`, the assistant turn
/// starts with that text (thinking closed) and the engine continues it.
pub(crate) fn start_chat(
    app: &App,
    req: ChatRequest,
    assistant_prefix: Option<&str>,
) -> Result<(UnboundedReceiver<Event>, Meta), ApiError> {
    let options = ChatOptions {
        enable_thinking: req.enable_thinking && assistant_prefix.is_none(),
        ..ChatOptions::default()
    };
    let (prompt, thinking) =
        chat_prompt(app, &req.messages, &req.tools, &options, assistant_prefix)?;
    let tools =
        (!req.tools.is_empty()).then(|| lily_engine::tool_calls::parameter_types(&req.tools));
    let logprobs = req.params.logprobs.is_some();
    let n = req.params.n;
    let forced_call = req.forced_tool_call.map(|names| ForcedToolCall::new(&names, &req.tools));
    let rx = app.submit(prompt, req.params, JobKind::Chat { thinking, tools, forced_call })?;
    let meta = Meta {
        id: new_id("chatcmpl-"),
        created: unix_time(),
        model: app.config.model_id.clone(),
        chat: true,
        logprobs,
        include_usage: req.include_usage,
        n,
    };
    Ok((rx, meta))
}

pub async fn completions(State(app): State<Arc<App>>, body: Body) -> Response {
    reply(completion(app, body).await)
}

async fn completion(app: Arc<App>, body: Body) -> Result<Response, ApiError> {
    let bytes = read_body(body, app.config.max_body_bytes).await?;
    let req = parse_completion(&bytes)?;
    app.check_model(&req.model)?;
    app.check_ignored(&req.ignored)?;
    let prompt = match req.prompt {
        Prompt::Text(t) => app.model.encode(&t),
        Prompt::Tokens(t) => t,
    };
    let logprobs = req.params.logprobs.is_some();
    let n = req.params.n;
    let rx = app.submit(prompt, req.params, JobKind::Completion)?;
    let meta = Meta {
        id: new_id("cmpl-"),
        created: unix_time(),
        model: app.config.model_id.clone(),
        chat: false,
        logprobs,
        include_usage: req.include_usage,
        n,
    };
    Ok(with_ignored(
        respond(rx, meta, req.stream).await?,
        &req.ignored,
    ))
}

/// Every model this server answers for, as `/v1/models` lists them.
fn model_entries(app: &App) -> Vec<Value> {
    let mut model = json!({"id": app.config.model_id, "object": "model", "created": app.started, "owned_by": "lily"});
    if let Some(note) = &app.config.demo_note {
        model["demo"] = json!(true);
        model["description"] = json!(note);
    }
    let mut data = vec![model];
    if let Some(hybrid) = &app.hybrid {
        data.extend(hybrid.models(app.started));
    }
    data
}

pub async fn models(State(app): State<Arc<App>>) -> Response {
    Json(json!({"object": "list", "data": model_entries(&app)})).into_response()
}

pub async fn model(State(app): State<Arc<App>>, Path(id): Path<String>) -> Response {
    match model_entries(&app)
        .into_iter()
        .find(|m| m["id"] == id.as_str())
    {
        Some(model) => Json(model).into_response(),
        None => ApiError::model_not_found(&id, &app.config.model_id).into_response(),
    }
}

/// vLLM's `/tokenize`: a prompt, or a conversation as the chat endpoint would prompt it.
pub async fn tokenize(State(app): State<Arc<App>>, body: Body) -> Response {
    reply(tokenize_request(&app, body).await)
}

async fn tokenize_request(app: &App, body: Body) -> Result<Response, ApiError> {
    let bytes = read_body(body, app.config.max_body_bytes).await?;
    let req = parse_tokenize(&bytes)?;
    if let Some(model) = &req.model {
        app.check_model(model)?;
    }
    app.check_ignored(&req.ignored)?;
    let tokens = match &req.input {
        TokenizeInput::Prompt(text) => app.model.encode(text),
        TokenizeInput::Chat {
            messages,
            tools,
            options,
        } => chat_prompt(app, messages, tools, options, None)?.0,
    };
    let body =
        json!({"count": tokens.len(), "max_model_len": app.config.max_seq, "tokens": tokens});
    Ok(with_ignored(Json(body).into_response(), &req.ignored))
}

/// vLLM's `/detokenize`: token ids back to text.
pub async fn detokenize(State(app): State<Arc<App>>, body: Body) -> Response {
    reply(detokenize_request(&app, body).await)
}

async fn detokenize_request(app: &App, body: Body) -> Result<Response, ApiError> {
    let bytes = read_body(body, app.config.max_body_bytes).await?;
    let req = parse_detokenize(&bytes)?;
    if let Some(model) = &req.model {
        app.check_model(model)?;
    }
    app.check_ignored(&req.ignored)?;
    let vocab_size = app.readiness.check()?;
    let mut text = Vec::new();
    for (i, &id) in req.tokens.iter().enumerate() {
        let bytes = app
            .model
            .token_bytes(id)
            .filter(|_| (id as usize) < vocab_size)
            .ok_or_else(|| {
                ApiError::invalid(
                    format!("tokens[{i}]"),
                    format!(
                        "Token id {id} is not in the vocabulary (size {}).",
                        vocab_size
                    ),
                )
            })?;
        text.extend(bytes);
    }
    let body = json!({"prompt": String::from_utf8_lossy(&text)});
    Ok(with_ignored(Json(body).into_response(), &req.ignored))
}

/// 200 only when a request can be served now; otherwise 503 in OpenAI's error shape, with the
/// reason (loading, failed, shutting down), for load balancers and readiness probes.
pub async fn health(State(app): State<Arc<App>>) -> Response {
    match app.readiness.check() {
        Ok(_) => Json(json!({"status": "ok", "queue_depth": app.queue.len()})).into_response(),
        Err(e) => e.into_response(),
    }
}

pub async fn metrics(State(app): State<Arc<App>>) -> Response {
    app.metrics.set_waiting(app.queue.len());
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], app.metrics.render()).into_response()
}

pub async fn not_found(req: Request) -> Response {
    ApiError::not_found(req.uri().path()).into_response()
}

pub async fn method_not_allowed() -> Response {
    ApiError::method_not_allowed().into_response()
}

/// Compares without an early exit, so the time taken does not reveal how much of a guessed
/// key was right.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    let mut diff = (a.len() != b.len()) as u8;
    for i in 0..a.len().max(b.len()) {
        diff |= a.get(i).copied().unwrap_or(0) ^ b.get(i).copied().unwrap_or(0);
    }
    diff == 0
}

pub async fn require_api_key(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    if let Some(key) = &app.config.api_key {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .unwrap_or("");
        if !constant_time_eq(given.trim().as_bytes(), key.as_bytes()) {
            return ApiError::unauthorized().into_response();
        }
    }
    next.run(req).await
}

/// A client's `x-request-id` kept as the request's id: short and plain enough to log as is.
fn usable_request_id(id: &str) -> bool {
    (1..=128).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b':'))
}

/// Runs every request in a span carrying its id: the client's `x-request-id` when it sends a
/// usable one, else a new one. Every log line written for the request, on the engine thread
/// too, names it; the response carries it back in `x-request-id`.
pub async fn request_span(mut req: Request, next: Next) -> Response {
    let given = req.headers().get(REQUEST_ID_HEADER).and_then(|v| v.to_str().ok()).filter(|id| usable_request_id(id));
    let id = given.map_or_else(|| new_id("req-"), str::to_string);
    let Ok(header_value) = HeaderValue::from_str(&id) else { return next.run(req).await };
    req.headers_mut().insert(REQUEST_ID_HEADER, header_value.clone());
    let span = tracing::info_span!("request", request_id = %id);
    let (method, path) = (req.method().clone(), req.uri().path().to_string());
    let started = Instant::now();
    let mut response = next.run(req).instrument(span.clone()).await;
    let status = response.status().as_u16();
    // Until the response head: a stream goes on after it.
    let head_ms = started.elapsed().as_secs_f64() * 1e3;
    span.in_scope(|| {
        // Probes and scrapes come every few seconds: not worth a line each.
        if path.starts_with("/v1/") {
            tracing::info!(%method, %path, status, head_ms, "answered");
        } else {
            tracing::debug!(%method, %path, status, head_ms, "answered");
        }
    });
    response.headers_mut().entry(REQUEST_ID_HEADER).or_insert(header_value);
    response
}

const ENDPOINTS: &[&str] = &[
    "/v1/chat/completions",
    "/v1/completions",
    "/v1/models",
    "/tokenize",
    "/detokenize",
    "/health",
    "/metrics",
];

pub async fn count_requests(State(app): State<Arc<App>>, req: Request, next: Next) -> Response {
    let path = req.uri().path().to_string();
    let endpoint = ENDPOINTS.iter().find(|&&e| e == path).copied().unwrap_or("other");
    let response = next.run(req).await;
    let status: StatusCode = response.status();
    app.metrics.request(endpoint, status.as_u16());
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constant_time_eq_is_equality() {
        assert!(constant_time_eq(b"secret", b"secret"));
        assert!(!constant_time_eq(b"secret", b"secreT"));
        assert!(!constant_time_eq(b"secret", b"secret2"));
        assert!(!constant_time_eq(b"", b"x"));
        assert!(constant_time_eq(b"", b""));
    }
}
