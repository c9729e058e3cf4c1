//! Answering a routed request: upstream, with the reply unmasked (streamed or not), or by the
//! local engine; and what happens when the upstream fails.
//!
//! Failure before the upstream's first byte (connection refused, timeout, a 5xx, a body that
//! breaks or is not JSON in a non-streamed reply): the local model answers the whole request
//! (`x-lily-route: local`, `x-lily-fallback: upstream-error`), or, with fallback off, a 502.
//!
//! Failure in the middle of a stream (the connection breaks, the upstream goes quiet for the
//! timeout, or the stream ends without `[DONE]` and without a finish reason): the client has
//! already received part of the answer with `x-lily-route: cloud…`. The local engine then
//! finishes it in the same SSE response: it gets the original (unmasked) conversation with
//! the assistant text streamed so far as the start of its turn and continues from there; its
//! chunks name the local model in `model`. With fallback off the stream ends with an error
//! event instead, then `[DONE]`. The upstream's partial tool-call arguments, if it was in the
//! middle of one, are not continued: the local model answers in text.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use axum::http::{HeaderValue, StatusCode};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use lily_gate::{StreamUnmasker, Vault};
use serde_json::{json, Map, Value};
use tokio::sync::mpsc;

use super::upstream::{SseReader, UpstreamError};
use super::{Hybrid, Route, Ticket, FALLBACK_HEADER, ROUTE_HEADER};
use crate::error::ApiError;
use crate::request::parse_chat;
use crate::routes::{respond, start_chat, with_ignored, StreamFormatter};
use crate::worker::Event;
use crate::App;

fn set_route(response: &mut Response, route: Route, fallback: Option<&'static str>) {
    response.headers_mut().insert(ROUTE_HEADER, HeaderValue::from_static(route.as_str()));
    if let Some(why) = fallback {
        response.headers_mut().insert(FALLBACK_HEADER, HeaderValue::from_static(why));
    }
}

fn ms(since: Instant) -> f64 {
    (since.elapsed().as_secs_f64() * 1e6).round() / 1e3
}

/// The local engine answers; nothing leaves the machine.
pub(crate) async fn local(app: &Arc<App>, h: &Hybrid, mut ticket: Ticket, fallback: Option<&'static str>) -> Result<Response, ApiError> {
    ticket.record.destination = Route::Local.as_str();
    ticket.record.fallback = fallback;
    h.audit(app, &ticket.record);
    let mut req = parse_chat(&ticket.body)?;
    app.check_ignored(&req.ignored)?;
    let (stream, ignored) = (req.stream, std::mem::take(&mut req.ignored));
    let (rx, meta) = start_chat(app, req, None)?;
    let mut response = with_ignored(respond(rx, meta, stream).await?, &ignored);
    set_route(&mut response, Route::Local, fallback);
    Ok(response)
}

async fn failed_before_first_byte(app: &Arc<App>, h: &Hybrid, mut ticket: Ticket, e: UpstreamError) -> Result<Response, ApiError> {
    tracing::warn!(request_id = %ticket.record.request_id, error = %e, "the upstream failed before its first byte");
    app.metrics.count("lily_upstream_failures_total", "before_first_byte");
    if h.config.fallback {
        return local(app, h, ticket, Some("upstream-error")).await;
    }
    ticket.record.destination = "none";
    h.audit(app, &ticket.record);
    Err(ApiError::bad_gateway(format!("The upstream model failed: {e}.")))
}

/// Sends `body` upstream and relays the reply, unmasked with `vault`.
pub(crate) async fn cloud(app: &Arc<App>, h: &Hybrid, mut ticket: Ticket, body: Value, vault: Vault, route: Route) -> Result<Response, ApiError> {
    let started = Instant::now();
    let sent = h.upstream.send(&body, ticket.stream).await;
    ticket.record.upstream_latency_ms = Some(ms(started));
    let response = match sent {
        Ok(r) => r,
        Err(e) => return failed_before_first_byte(app, h, ticket, e).await,
    };
    let status = response.status();
    ticket.record.upstream_status = Some(status.as_u16());
    if status.is_success() && ticket.stream {
        return Ok(stream(app.clone(), ticket, response, vault, route));
    }
    let bytes = match h.upstream.body(response).await {
        Ok(b) => b,
        Err(e) => return failed_before_first_byte(app, h, ticket, e).await,
    };
    let mut reply: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => return failed_before_first_byte(app, h, ticket, UpstreamError::Broken(format!("the reply is not JSON: {e}"))).await,
    };
    unmask_strings(&mut reply, &vault);
    if status.is_success() {
        reply["model"] = json!(h.config.upstream_model);
    }
    ticket.record.destination = route.as_str();
    h.audit(app, &ticket.record);
    // A 4xx is the upstream's verdict on the request as sent: passed on, unmasked.
    let status = StatusCode::from_u16(status.as_u16()).unwrap_or(StatusCode::BAD_GATEWAY);
    let mut response = (status, Json(reply)).into_response();
    set_route(&mut response, route, None);
    Ok(response)
}

/// Every placeholder in every string restored (a non-streamed reply).
fn unmask_strings(value: &mut Value, vault: &Vault) {
    match value {
        Value::String(s) if s.contains('<') => *s = vault.unmask(s),
        Value::Array(items) => items.iter_mut().for_each(|v| unmask_strings(v, vault)),
        Value::Object(map) => map.values_mut().for_each(|v| unmask_strings(v, vault)),
        _ => {}
    }
}

/// The streamed reply: relayed chunk by chunk by a task, so the response starts at once.
fn stream(app: Arc<App>, ticket: Ticket, upstream: reqwest::Response, vault: Vault, route: Route) -> Response {
    let (tx, mut rx) = mpsc::channel::<SseEvent>(64);
    tokio::spawn(async move {
        if let Some(h) = app.hybrid.as_ref() {
            relay_stream(&app, h, ticket, upstream, vault, route, tx).await;
        }
    });
    let events = futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx).map(|e| e.map(Ok::<_, Infallible>)));
    let mut response = Sse::new(events).keep_alive(KeepAlive::default()).into_response();
    set_route(&mut response, route, None);
    response
}

fn data(value: &Value) -> SseEvent {
    SseEvent::default().data(value.to_string())
}

fn done() -> SseEvent {
    SseEvent::default().data("[DONE]")
}

/// Which streamed text of a choice an unmasker follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Field {
    /// A text field of the delta: `content`, `reasoning_content`, ...
    Text(&'static str),
    /// The arguments of the tool call with this index.
    Arguments(u64),
}

/// Delta fields that stream text and may split a placeholder.
const TEXT_FIELDS: [&str; 4] = ["content", "reasoning_content", "reasoning", "refusal"];

/// One stream unmasker per (choice, field), so a placeholder split across chunks of one field
/// is held back only in that field.
struct Unmaskers<'v> {
    vault: &'v Vault,
    open: HashMap<(u64, Field), StreamUnmasker<'v>>,
}

impl<'v> Unmaskers<'v> {
    fn new(vault: &'v Vault) -> Self {
        Self { vault, open: HashMap::new() }
    }

    fn push(&mut self, choice: u64, field: Field, text: &str) -> String {
        let vault = self.vault;
        self.open.entry((choice, field)).or_insert_with(|| vault.stream()).push(text)
    }

    /// Unmasks a chunk in place; the content of choice 0 shown to the client is appended to
    /// `shown`. Returns whether a choice finished.
    fn chunk(&mut self, chunk: &mut Value, shown: &mut String) -> bool {
        let Some(choices) = chunk.get_mut("choices").and_then(Value::as_array_mut) else {
            unmask_strings(chunk, self.vault);
            return false;
        };
        let mut finished = false;
        for choice in choices {
            let index = choice.get("index").and_then(Value::as_u64).unwrap_or(0);
            let finishing = choice.get("finish_reason").is_some_and(|f| !f.is_null());
            finished |= finishing;
            let Some(delta) = choice.get_mut("delta").and_then(Value::as_object_mut) else { continue };
            for key in TEXT_FIELDS {
                if let Some(Value::String(s)) = delta.get_mut(key) {
                    *s = self.push(index, Field::Text(key), s);
                    if key == "content" && index == 0 {
                        shown.push_str(s);
                    }
                }
            }
            for call in delta.get_mut("tool_calls").and_then(Value::as_array_mut).into_iter().flatten() {
                let call_index = call.get("index").and_then(Value::as_u64).unwrap_or(0);
                if let Some(Value::String(s)) = call.pointer_mut("/function/arguments") {
                    *s = self.push(index, Field::Arguments(call_index), s);
                }
                if let Some(Value::String(s)) = call.pointer_mut("/function/name") {
                    *s = self.vault.unmask(s);
                }
            }
            if finishing {
                self.release(index, delta, shown);
            }
        }
        finished
    }

    /// Adds what the unmaskers of `choice` still hold to `delta` and closes them.
    fn release(&mut self, choice: u64, delta: &mut Map<String, Value>, shown: &mut String) {
        let fields: Vec<Field> = self.open.keys().filter(|(c, _)| *c == choice).map(|(_, f)| *f).collect();
        for field in fields {
            let Some(unmasker) = self.open.remove(&(choice, field)) else { continue };
            let rest = unmasker.finish();
            if rest.is_empty() {
                continue;
            }
            match field {
                Field::Text(key) => {
                    if key == "content" && choice == 0 {
                        shown.push_str(&rest);
                    }
                    match delta.get_mut(key) {
                        Some(Value::String(s)) => s.push_str(&rest),
                        _ => {
                            delta.insert(key.to_string(), json!(rest));
                        }
                    }
                }
                Field::Arguments(call) => {
                    let calls = delta.entry("tool_calls").or_insert_with(|| json!([]));
                    if let Some(calls) = calls.as_array_mut() {
                        match calls.iter_mut().find(|c| c.get("index").and_then(Value::as_u64) == Some(call)) {
                            Some(c) => {
                                let args = c.pointer("/function/arguments").and_then(Value::as_str).unwrap_or("").to_string();
                                c["function"]["arguments"] = json!(args + &rest);
                            }
                            None => calls.push(json!({"index": call, "function": {"arguments": rest}})),
                        }
                    }
                }
            }
        }
    }

    /// A chunk with everything still held, shaped like `envelope` (id, created); `None` when
    /// nothing is held.
    fn flush(&mut self, envelope: &Value, shown: &mut String) -> Option<Value> {
        let mut indices: Vec<u64> = self.open.keys().map(|(c, _)| *c).collect();
        indices.sort_unstable();
        indices.dedup();
        let mut choices = Vec::new();
        for index in indices {
            let mut delta = Map::new();
            self.release(index, &mut delta, shown);
            if !delta.is_empty() {
                choices.push(json!({"index": index, "delta": delta, "finish_reason": null}));
            }
        }
        (!choices.is_empty()).then(|| {
            json!({"id": envelope.get("id"), "object": "chat.completion.chunk", "created": envelope.get("created"),
                   "model": envelope.get("model"), "choices": choices})
        })
    }
}

async fn relay_stream(app: &Arc<App>, h: &Hybrid, mut ticket: Ticket, upstream: reqwest::Response, vault: Vault, route: Route, tx: mpsc::Sender<SseEvent>) {
    let mut reader = SseReader::new(upstream.bytes_stream(), h.upstream.timeout);
    let mut unmaskers = Unmaskers::new(&vault);
    let mut shown = String::new();
    let mut envelope = Value::Null;
    let mut finished = false;
    let failure = loop {
        match reader.next().await {
            Ok(Some(event)) if event.trim() == "[DONE]" => break None,
            Ok(Some(event)) => {
                let Ok(mut chunk) = serde_json::from_str::<Value>(&event) else {
                    tracing::warn!(request_id = %ticket.record.request_id, "the upstream sent an event that is not JSON: skipped");
                    continue;
                };
                finished |= unmaskers.chunk(&mut chunk, &mut shown);
                if chunk.get("choices").is_some() {
                    chunk["model"] = json!(h.config.upstream_model);
                    envelope = chunk.clone();
                }
                if tx.send(data(&chunk)).await.is_err() {
                    return; // the client went away; dropping the upstream response closes it
                }
            }
            Ok(None) if finished => break None,
            Ok(None) => break Some(UpstreamError::Broken("the stream ended without [DONE]".into())),
            // After a finish reason the answer is whole; only the `[DONE]` went missing.
            Err(_) if finished => break None,
            Err(e) => break Some(e),
        }
    };
    // At the end of a whole answer, a held `<...` was not a placeholder: it is text. After a
    // failure it is the unfinished start of one, which means nothing to the client: dropped.
    if failure.is_none() {
        if let Some(chunk) = unmaskers.flush(&envelope, &mut shown) {
            let _ = tx.send(data(&chunk)).await;
        }
    }
    drop(unmaskers);
    drop(vault);
    ticket.record.destination = route.as_str();
    if let Some(e) = failure {
        tracing::warn!(request_id = %ticket.record.request_id, error = %e, "the upstream failed mid-stream");
        app.metrics.count("lily_upstream_failures_total", "mid_stream");
        if h.config.fallback {
            ticket.record.fallback = Some("upstream-error-mid-stream");
            if let Err(e) = continue_locally(app, &ticket, &shown, &tx).await {
                let _ = tx.send(SseEvent::default().data(e.body())).await;
            }
        } else {
            let e = ApiError::bad_gateway(format!("The upstream model failed mid-stream: {e}."));
            let _ = tx.send(SseEvent::default().data(e.body())).await;
        }
    }
    h.audit(app, &ticket.record);
    let _ = tx.send(done()).await;
}

/// The local engine finishes the answer: the original conversation, the text already shown
/// as the start of the assistant's turn.
async fn continue_locally(
    app: &Arc<App>,
    ticket: &Ticket,
    shown: &str,
    tx: &mpsc::Sender<SseEvent>,
) -> Result<(), ApiError> {
    let mut req = parse_chat(&ticket.body)?;
    // What was shown is the first choice's text: that one is continued.
    req.params.n = 1;
    let (mut rx, meta) = start_chat(app, req, Some(shown))?;
    let include_usage = meta.include_usage;
    let mut formatter = StreamFormatter::new(meta);
    while let Some(event) = rx.recv().await {
        let chunk = match event {
            Event::Delta { choice, delta } => formatter.delta(choice, &delta),
            Event::Done {
                choice,
                finish_reason,
                usage,
            } => {
                let _ = tx
                    .send(data(&formatter.finish(choice, finish_reason)))
                    .await;
                if include_usage {
                    let _ = tx.send(data(&formatter.usage(&usage))).await;
                }
                return Ok(());
            }
            Event::Error(e) => return Err(e),
        };
        if tx.send(data(&chunk)).await.is_err() {
            return Ok(());
        }
    }
    Err(ApiError::internal("The engine stopped before the answer was finished."))
}
