//! Hybrid compute: with `--upstream`, every chat request for the model `auto` or the upstream
//! model's name passes the privacy gate (loaded once, shared by all requests) and is, by its
//! decision:
//!
//! - `allow`: sent upstream unchanged (`x-lily-route: cloud`);
//! - `mask`: sent upstream with placeholders, the reply unmasked before the client sees it,
//!   streamed or not (`cloud-masked`);
//! - `local`: answered by the local engine, nothing sent (`local`);
//! - `refuse`: a 403 `sensitive_content_refused` naming the categories, never the values;
//! - `consent`: a 403 `consent_required` with a `consent_id`, the categories and the masked
//!   preview; the same request again with `x-lily-consent: <id>` is sent (masked).
//!
//! A request naming the local model, or with `x-lily-route: local`, stays local without the
//! gate. An upstream failure before its first byte falls back to the local model
//! (`x-lily-fallback: upstream-error`) unless fallback is off (then a 502); a failure in the
//! middle of a stream is finished by the local model (see `relay`).
//!
//! - `upstream`: the HTTP client and the SSE reader; `relay`: sending, unmasking, fallback;
//! - `consent`: the ticket store; `audit`: the JSON-lines audit log.

pub mod audit;
pub mod consent;
pub mod relay;
pub mod upstream;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use lily_gate::request::content_fingerprint;
use lily_gate::{inspect_request, Decision, Destination, Gate, RequestVerdict, Tier, Vault};
use serde_json::{json, Map, Value};

use crate::error::ApiError;
use crate::routes::new_id;
use crate::App;
use audit::{AuditLog, AuditRecord};
use consent::{content_hash, ConsentError, ConsentStore};
use upstream::Upstream;

pub const ROUTE_HEADER: &str = "x-lily-route";
pub const CONSENT_HEADER: &str = "x-lily-consent";
pub const FALLBACK_HEADER: &str = "x-lily-fallback";
pub const REQUEST_ID_HEADER: &str = "x-request-id";
/// The model name that asks for routing by the gate.
pub const AUTO_MODEL: &str = "auto";

#[derive(Clone)]
pub struct HybridConfig {
    /// OpenAI-compatible base URL, e.g. `https://api.example.com/v1`.
    pub upstream_url: String,
    pub upstream_model: String,
    /// Sent as `Authorization: Bearer`; from the environment, never a flag.
    pub upstream_key: Option<String>,
    pub gate: Arc<Gate>,
    /// Until the upstream's response headers, and between two chunks of its stream.
    pub upstream_timeout: Duration,
    /// Answer locally when the upstream fails; otherwise a 502.
    pub fallback: bool,
    pub consent_ttl: Duration,
    pub audit_log: Option<PathBuf>,
}

impl std::fmt::Debug for HybridConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HybridConfig")
            .field("upstream_url", &self.upstream_url)
            .field("upstream_model", &self.upstream_model)
            .field("upstream_key", &self.upstream_key.as_ref().map(|_| "<set>"))
            .field("gate_tiers", &self.gate.tier_names())
            .field("upstream_timeout", &self.upstream_timeout)
            .field("fallback", &self.fallback)
            .field("consent_ttl", &self.consent_ttl)
            .field("audit_log", &self.audit_log)
            .finish()
    }
}

#[derive(Debug, thiserror::Error)]
pub enum HybridError {
    #[error("upstream client: {0}")]
    Client(#[from] reqwest::Error),
    #[error("audit log {path}: {source}")]
    AuditLog { path: String, source: std::io::Error },
}

/// Where a response was served, as `x-lily-route` says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Cloud,
    CloudMasked,
    Local,
}

impl Route {
    pub fn as_str(self) -> &'static str {
        match self {
            Route::Cloud => "cloud",
            Route::CloudMasked => "cloud-masked",
            Route::Local => "local",
        }
    }
}

pub struct Hybrid {
    config: HybridConfig,
    upstream: Upstream,
    consents: ConsentStore,
    audit: Option<AuditLog>,
}

/// What the handler knows about one request, carried to where it is answered and then
/// written to the audit log.
pub(crate) struct Ticket {
    pub record: AuditRecord,
    /// The body as the client sent it: what the local model answers from.
    pub body: Bytes,
    pub stream: bool,
}

impl Hybrid {
    pub fn new(config: HybridConfig) -> Result<Self, HybridError> {
        let upstream = Upstream::new(&config.upstream_url, config.upstream_key.clone(), config.upstream_timeout)?;
        let audit = match &config.audit_log {
            Some(path) => Some(AuditLog::open(path).map_err(|source| HybridError::AuditLog { path: path.display().to_string(), source })?),
            None => None,
        };
        let consents = ConsentStore::new(config.consent_ttl);
        Ok(Self { config, upstream, consents, audit })
    }

    /// `/v1/models` entries beside the local model.
    pub fn models(&self, created: u64) -> Vec<Value> {
        vec![
            json!({"id": AUTO_MODEL, "object": "model", "created": created, "owned_by": "lily",
                   "description": "Routed by the privacy gate: the upstream model when safe, masked, or the local model."}),
            json!({"id": self.config.upstream_model, "object": "model", "created": created, "owned_by": "upstream",
                   "description": "The upstream model, behind the privacy gate."}),
        ]
    }

    pub(crate) fn audit(&self, app: &App, record: &AuditRecord) {
        app.metrics.count("lily_route_requests_total", record.destination);
        if let Some(log) = &self.audit {
            log.write(record);
        }
    }

    /// Every chat request when hybrid compute is on; always answers with `x-request-id` (the
    /// one `routes::request_span` gave the request).
    pub async fn chat(&self, app: &Arc<App>, headers: &HeaderMap, body: Bytes) -> Response {
        let given = headers.get(REQUEST_ID_HEADER).and_then(|v| v.to_str().ok());
        let request_id = given.map_or_else(|| new_id("req-"), str::to_string);
        let mut response = self.route(app, headers, body, &request_id).await.unwrap_or_else(IntoResponse::into_response);
        if let Ok(v) = HeaderValue::from_str(&request_id) {
            response.headers_mut().insert(REQUEST_ID_HEADER, v);
        }
        response
    }

    async fn route(&self, app: &Arc<App>, headers: &HeaderMap, body: Bytes, request_id: &str) -> Result<Response, ApiError> {
        let value: Value = serde_json::from_slice(&body).map_err(|e| ApiError::bad_request(format!("Invalid JSON body: {e}")))?;
        let model = value.get("model").and_then(Value::as_str).ok_or_else(|| ApiError::invalid("model", "`model` must be a string."))?;
        let forced_local = match headers.get(ROUTE_HEADER).map(HeaderValue::as_bytes) {
            None | Some(b"auto") => false,
            Some(b"local") => true,
            Some(_) => return Err(ApiError::bad_request(format!("Header {ROUTE_HEADER} must be `local` or `auto`."))),
        };
        let local_id = &app.config.model_id;
        if model != local_id && model != AUTO_MODEL && model != self.config.upstream_model {
            return Err(ApiError {
                message: format!(
                    "The model `{model}` does not exist; this server serves `{local_id}` (local), `{}` (upstream) and `{AUTO_MODEL}` (routed).",
                    self.config.upstream_model
                ),
                ..ApiError::model_not_found(model, local_id)
            });
        }
        let stream = value.get("stream").and_then(Value::as_bool).unwrap_or(false);
        let mut ticket = Ticket {
            record: AuditRecord { time: now(), request_id: request_id.to_string(), ..AuditRecord::default() },
            body,
            stream,
        };
        if forced_local || model == local_id {
            ticket.record.forced_local = true;
            return relay::local(app, self, ticket, None).await;
        }
        let gate = self.config.gate.clone();
        let (value, vault, verdict) = tokio::task::spawn_blocking(move || {
            let mut vault = Vault::new();
            let verdict = inspect_request(&gate, &value, Destination::Cloud, &mut vault);
            (value, vault, verdict)
        })
        .await
        .map_err(|e| ApiError::internal(format!("The privacy gate failed: {e}")))?;
        let verdict = verdict.map_err(|e| ApiError::invalid("messages", e.to_string()))?;
        let decision = effective_decision(&verdict);
        app.metrics.count("lily_gate_decisions_total", decision.as_str());
        let record = &mut ticket.record;
        record.decision = Some(decision.as_str());
        record.categories = verdict.categories.iter().copied().collect();
        record.unreadable = verdict.unreadable.len();
        record.masked_spans = verdict.spans.iter().filter(|s| s.finding.outcome == Decision::Mask).count();
        match decision {
            Decision::Allow | Decision::Mask => {}
            Decision::Local => return relay::local(app, self, ticket, None).await,
            Decision::Refuse => {
                record.destination = "none";
                self.audit(app, record);
                return Err(ApiError::forbidden(
                    "sensitive_content_refused",
                    format!("This request is not sent: it contains {}, which the privacy policy refuses.", what_was_found(&verdict)),
                ));
            }
            Decision::Consent => self.consent(app, headers, &value, &verdict, record)?,
        }
        let route = if verdict.masked_request.is_some() { Route::CloudMasked } else { Route::Cloud };
        record.placeholders = vault.len();
        let body = outbound(&verdict, &value, &self.config.upstream_model);
        relay::cloud(app, self, ticket, body, vault, route).await
    }

    /// A request held for consent: goes ahead (`Ok`) with a valid `x-lily-consent`, else is
    /// answered with a new consent id, or with why the one presented is not accepted.
    fn consent(&self, app: &App, headers: &HeaderMap, value: &Value, verdict: &RequestVerdict, record: &mut AuditRecord) -> Result<(), ApiError> {
        let content = content_hash(&content_fingerprint(value).map_err(|e| ApiError::invalid("messages", e.to_string()))?);
        record.destination = "none";
        let Some(id) = headers.get(CONSENT_HEADER).and_then(|v| v.to_str().ok()) else {
            let id = self.consents.issue(content).map_err(|e| ApiError::internal(format!("No randomness for a consent id: {e}")))?;
            record.consent = Some("asked");
            self.audit(app, record);
            let mut extra = Map::new();
            extra.insert("consent_id".into(), json!(id));
            extra.insert("categories".into(), json!(verdict.categories));
            extra.insert("masked_preview".into(), outbound(verdict, value, &self.config.upstream_model));
            extra.insert("expires_in".into(), json!(self.consents.ttl().as_secs()));
            let message = format!(
                "This request contains {}; it is sent to the upstream model only with consent: send it again with header {CONSENT_HEADER}: {id}.",
                what_was_found(verdict)
            );
            return Err(ApiError::forbidden("consent_required", message).with_extra(extra));
        };
        if let Err(e) = self.consents.redeem(id.trim(), content) {
            record.consent = Some(match e {
                ConsentError::Unknown => "rejected: unknown or used",
                ConsentError::Expired => "rejected: expired",
                ConsentError::Mismatch => "rejected: content differs",
            });
            self.audit(app, record);
            let message = format!("Consent not accepted: {e}. Send the request without {CONSENT_HEADER} to ask again.");
            return Err(ApiError::forbidden("consent_invalid", message));
        }
        record.consent = Some("granted");
        Ok(())
    }
}

/// The gate's decision, made safe to act on: a `mask` whose masked findings include a topic
/// (a document label with nothing to replace) cannot be masked, so it stays local: never send
/// what the gate flagged.
fn effective_decision(verdict: &RequestVerdict) -> Decision {
    let unmaskable = verdict.spans.iter().any(|s| s.finding.outcome == Decision::Mask && s.finding.span.category.tier() == Tier::Topic);
    if verdict.decision == Decision::Mask && unmaskable {
        Decision::Local
    } else {
        verdict.decision
    }
}

/// What goes upstream: the masked request (or the request as sent when nothing is masked),
/// naming the upstream model.
fn outbound(verdict: &RequestVerdict, request: &Value, upstream_model: &str) -> Value {
    let mut body = verdict.masked_request.clone().unwrap_or_else(|| request.clone());
    body["model"] = json!(upstream_model);
    body
}

/// The categories (and unreadable parts) for a message: names, never values.
fn what_was_found(verdict: &RequestVerdict) -> String {
    let mut parts: Vec<String> = verdict.categories.iter().map(|c| json!(c).as_str().unwrap_or("?").to_string()).collect();
    parts.extend(verdict.unreadable.iter().map(|u| format!("content the gate cannot read ({})", u.kind)));
    match parts.len() {
        0 => "content the policy holds back".to_string(),
        _ => format!("sensitive content ({})", parts.join(", ")),
    }
}

fn now() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| (d.as_millis() as f64) / 1000.0)
}
