//! Errors as OpenAI clients expect them: an HTTP status and
//! `{"error": {"message", "type", "param", "code"}}`.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use serde_json::{Map, Value};

#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// The request field at fault, when there is one (`"messages[2].content"`).
    pub param: Option<String>,
    pub code: Option<&'static str>,
    /// Seconds, for 429 and 503.
    pub retry_after: Option<u64>,
    /// More fields of the error object, beside OpenAI's four (a consent id, categories).
    pub extra: Option<Box<Map<String, Value>>>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: ErrorDetail<'a>,
}

#[derive(Serialize)]
struct ErrorDetail<'a> {
    message: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    param: Option<&'a str>,
    code: Option<&'static str>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    extra: Option<&'a Map<String, Value>>,
}

impl ApiError {
    fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self { status, message: message.into(), param: None, code: None, retry_after: None, extra: None }
    }

    pub fn invalid(param: impl Into<String>, message: impl Into<String>) -> Self {
        Self { param: Some(param.into()), ..Self::new(StatusCode::BAD_REQUEST, message) }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }

    pub fn unsupported(param: impl Into<String>, message: impl Into<String>) -> Self {
        Self { code: Some("unsupported_parameter"), ..Self::invalid(param, message) }
    }

    pub fn model_not_found(requested: &str, served: &str) -> Self {
        Self {
            param: Some("model".into()),
            code: Some("model_not_found"),
            ..Self::new(StatusCode::NOT_FOUND, format!("The model `{requested}` does not exist; this server serves `{served}`."))
        }
    }

    pub fn unauthorized() -> Self {
        Self { code: Some("invalid_api_key"), ..Self::new(StatusCode::UNAUTHORIZED, "Incorrect or missing API key.") }
    }

    pub fn too_large(limit: usize) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, format!("Request body is larger than the limit of {limit} bytes."))
    }

    pub fn queue_full(retry_after: u64) -> Self {
        Self {
            code: Some("queue_full"),
            retry_after: Some(retry_after),
            ..Self::new(StatusCode::TOO_MANY_REQUESTS, "The server is busy: its request queue is full. Retry later.")
        }
    }

    pub fn shutting_down() -> Self {
        Self { retry_after: Some(5), ..Self::new(StatusCode::SERVICE_UNAVAILABLE, "The server is shutting down.") }
    }

    /// 503 while the engine loads or after it failed; `code` tells which.
    pub fn not_ready(code: &'static str, message: impl Into<String>) -> Self {
        Self { code: Some(code), retry_after: Some(5), ..Self::new(StatusCode::SERVICE_UNAVAILABLE, message) }
    }

    pub fn timeout(seconds: u64) -> Self {
        Self {
            code: Some("timeout"),
            ..Self::new(StatusCode::GATEWAY_TIMEOUT, format!("The request did not finish within its {seconds} s time limit."))
        }
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    pub fn not_found(path: &str) -> Self {
        Self::new(StatusCode::NOT_FOUND, format!("No route for {path}."))
    }

    pub fn method_not_allowed() -> Self {
        Self::new(StatusCode::METHOD_NOT_ALLOWED, "Method not allowed for this path.")
    }

    /// 502: the upstream (cloud) model failed and no local fallback was allowed.
    pub fn bad_gateway(message: impl Into<String>) -> Self {
        Self { code: Some("upstream_error"), ..Self::new(StatusCode::BAD_GATEWAY, message) }
    }

    /// 403 with a code a client can act on (a refusal by the privacy policy, a consent).
    pub fn forbidden(code: &'static str, message: impl Into<String>) -> Self {
        Self { code: Some(code), ..Self::new(StatusCode::FORBIDDEN, message) }
    }

    pub fn with_extra(mut self, extra: Map<String, Value>) -> Self {
        self.extra = Some(Box::new(extra));
        self
    }

    fn kind(&self) -> &'static str {
        match self.status.as_u16() {
            401 => "authentication_error",
            404 if self.code.is_none() => "not_found_error",
            429 => "rate_limit_error",
            500..=599 => "server_error",
            _ => "invalid_request_error",
        }
    }

    /// The JSON body, also used for errors inside a stream.
    pub fn body(&self) -> String {
        let body = ErrorBody {
            error: ErrorDetail {
                message: &self.message,
                kind: self.kind(),
                param: self.param.as_deref(),
                code: self.code,
                extra: self.extra.as_deref(),
            },
        };
        serde_json::to_string(&body).unwrap_or_default()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, [(header::CONTENT_TYPE, "application/json")], self.body()).into_response();
        if let Some(seconds) = self.retry_after {
            response.headers_mut().insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}
