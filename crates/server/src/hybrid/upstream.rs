//! The cloud model: an OpenAI-compatible `/chat/completions` behind a base URL, reached over
//! HTTPS (or plain HTTP on loopback), its key from the environment; and a reader for its
//! server-sent events.

use std::time::Duration;

use axum::body::Bytes;
use futures_util::{Stream, StreamExt};
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use serde_json::Value;

#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    #[error("cannot reach the upstream model: {0}")]
    Connect(String),
    #[error("the upstream model did not answer within {0:?}")]
    Timeout(Duration),
    #[error("the upstream model answered HTTP {0}")]
    Status(u16),
    #[error("the upstream connection broke: {0}")]
    Broken(String),
}

/// Reqwest's message names the URL and the cause; the request body is never part of it.
fn describe(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text = format!("{text}: {s}");
        source = s.source();
    }
    text
}

pub struct Upstream {
    client: reqwest::Client,
    url: String,
    key: Option<String>,
    /// Until the response headers arrive, and between two reads of a streamed body.
    pub timeout: Duration,
}

impl Upstream {
    pub fn new(base_url: &str, key: Option<String>, timeout: Duration) -> Result<Self, reqwest::Error> {
        let client = reqwest::Client::builder().connect_timeout(timeout).build()?;
        let url = format!("{}/chat/completions", base_url.trim_end_matches('/'));
        Ok(Self { client, url, key, timeout })
    }

    /// Posts `body` and waits for the response headers. A 5xx is an error (the request may be
    /// retried elsewhere); a 4xx is returned for the caller to pass on.
    pub async fn send(&self, body: &Value, stream: bool) -> Result<reqwest::Response, UpstreamError> {
        let mut request = self
            .client
            .post(&self.url)
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, if stream { "text/event-stream" } else { "application/json" })
            .body(body.to_string());
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        let response = tokio::time::timeout(self.timeout, request.send())
            .await
            .map_err(|_| UpstreamError::Timeout(self.timeout))?
            .map_err(|e| UpstreamError::Connect(describe(&e)))?;
        if response.status().is_server_error() {
            return Err(UpstreamError::Status(response.status().as_u16()));
        }
        Ok(response)
    }

    /// The whole body of a non-streamed response.
    pub async fn body(&self, response: reqwest::Response) -> Result<Bytes, UpstreamError> {
        tokio::time::timeout(self.timeout, response.bytes())
            .await
            .map_err(|_| UpstreamError::Timeout(self.timeout))?
            .map_err(|e| UpstreamError::Broken(describe(&e)))
    }
}

/// Server-sent events, read line by line from a byte stream that may split lines anywhere.
pub struct SseReader<S> {
    body: S,
    buffer: Vec<u8>,
    data: Vec<String>,
    idle: Duration,
    ended: bool,
}

impl<S: Stream<Item = Result<Bytes, reqwest::Error>> + Unpin> SseReader<S> {
    pub fn new(body: S, idle: Duration) -> Self {
        Self { body, buffer: Vec::new(), data: Vec::new(), idle, ended: false }
    }

    /// The `data` of the next event (its `data:` lines joined by newlines); `None` when the
    /// body ended. A body that ends inside an event hands that event out first.
    pub async fn next(&mut self) -> Result<Option<String>, UpstreamError> {
        loop {
            while let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                let line = String::from_utf8_lossy(&line);
                let line = line.trim_end_matches(['\n', '\r']);
                if line.is_empty() {
                    if !self.data.is_empty() {
                        return Ok(Some(std::mem::take(&mut self.data).join("\n")));
                    }
                } else if let Some(data) = line.strip_prefix("data:") {
                    self.data.push(data.strip_prefix(' ').unwrap_or(data).to_string());
                }
                // Comments (`:`), `event:`, `id:` and `retry:` lines carry nothing to relay.
            }
            if self.ended {
                if !self.buffer.is_empty() {
                    self.buffer.push(b'\n');
                    continue;
                }
                return Ok((!self.data.is_empty()).then(|| std::mem::take(&mut self.data).join("\n")));
            }
            match tokio::time::timeout(self.idle, self.body.next()).await {
                Err(_) => return Err(UpstreamError::Timeout(self.idle)),
                Ok(None) => self.ended = true,
                Ok(Some(Err(e))) => return Err(UpstreamError::Broken(describe(&e))),
                Ok(Some(Ok(bytes))) => self.buffer.extend_from_slice(&bytes),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(chunks: &[&'static str]) -> SseReader<impl Stream<Item = Result<Bytes, reqwest::Error>> + Unpin> {
        let items: Vec<Result<Bytes, reqwest::Error>> = chunks.iter().map(|c| Ok(Bytes::from_static(c.as_bytes()))).collect();
        SseReader::new(futures_util::stream::iter(items), Duration::from_secs(1))
    }

    #[tokio::test]
    async fn events_split_anywhere_are_reassembled() {
        let mut r = reader(&["da", "ta: {\"a\":", "1}\r\n\r\n: comment\n\ndata:[DONE]\n", "\n", "data: tail"]);
        assert_eq!(r.next().await.unwrap().as_deref(), Some("{\"a\":1}"));
        assert_eq!(r.next().await.unwrap().as_deref(), Some("[DONE]"));
        assert_eq!(r.next().await.unwrap().as_deref(), Some("tail"));
        assert_eq!(r.next().await.unwrap(), None);
    }
}
