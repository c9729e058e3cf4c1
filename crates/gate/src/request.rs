//! OpenAI chat completion requests: every text a request carries (message contents, text
//! parts, tool-call arguments) is inspected with one vault, so a person named in two messages
//! gets one placeholder; the request's decision is the strictest over its texts.

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

use crate::mask::Vault;
use crate::pipeline::Gate;
use crate::policy::Destination;
use crate::span::Category;
use crate::verdict::{Decision, Finding};

#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error("chat request: expected a JSON object with a `messages` array")]
    NotAChatRequest,
    #[error("chat request: messages[{index}] is not an object")]
    MessageNotObject { index: usize },
    #[error("chat request: messages[{index}].content is {found}; expected a string, an array of parts or null")]
    BadContent { index: usize, found: &'static str },
}

/// A JSON object with a `messages` array: what an OpenAI chat completion request looks like.
pub fn is_chat_request(value: &Value) -> bool {
    value.get("messages").is_some_and(Value::is_array)
}

#[derive(Debug, Clone, Serialize)]
pub struct MessageFinding {
    /// Index into `messages`.
    pub message: usize,
    /// JSON pointer to the string the offsets index, e.g. `/messages/2/content`.
    pub pointer: String,
    #[serde(flatten)]
    pub finding: Finding,
}

#[derive(Debug, Clone, Serialize)]
pub struct RequestVerdict {
    pub decision: Decision,
    pub spans: Vec<MessageFinding>,
    pub categories: BTreeSet<Category>,
    /// The request with every masked text replaced; present when the decision is `mask` or
    /// `consent` and something was masked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub masked_request: Option<Value>,
    pub trace: Vec<String>,
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// (message index, JSON pointer, text) of every text in the request.
fn texts(request: &Value) -> Result<Vec<(usize, String, &str)>, RequestError> {
    let messages = request
        .get("messages")
        .and_then(Value::as_array)
        .ok_or(RequestError::NotAChatRequest)?;
    let mut out = Vec::new();
    for (i, message) in messages.iter().enumerate() {
        let message = message
            .as_object()
            .ok_or(RequestError::MessageNotObject { index: i })?;
        match message.get("content") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => out.push((i, format!("/messages/{i}/content"), s.as_str())),
            Some(Value::Array(parts)) => {
                for (j, part) in parts.iter().enumerate() {
                    if let Some(s) = part.get("text").and_then(Value::as_str) {
                        out.push((i, format!("/messages/{i}/content/{j}/text"), s));
                    }
                }
            }
            Some(other) => {
                return Err(RequestError::BadContent {
                    index: i,
                    found: type_name(other),
                })
            }
        }
        if let Some(calls) = message.get("tool_calls").and_then(Value::as_array) {
            for (k, call) in calls.iter().enumerate() {
                if let Some(s) = call.pointer("/function/arguments").and_then(Value::as_str) {
                    out.push((
                        i,
                        format!("/messages/{i}/tool_calls/{k}/function/arguments"),
                        s,
                    ));
                }
            }
        }
    }
    Ok(out)
}

pub fn inspect_request(
    gate: &Gate,
    request: &Value,
    dest: Destination,
    vault: &mut Vault,
) -> Result<RequestVerdict, RequestError> {
    let mut decision = Decision::Allow;
    let mut spans = Vec::new();
    let mut categories = BTreeSet::new();
    let mut trace = Vec::new();
    let mut masked: Vec<(String, String)> = Vec::new();
    for (message, pointer, text) in texts(request)? {
        let verdict = gate.inspect_in(text, dest, vault);
        decision = decision.max(verdict.decision);
        categories.extend(verdict.categories);
        trace.extend(
            verdict
                .trace
                .into_iter()
                .map(|line| format!("{pointer}: {line}")),
        );
        if let Some(m) = verdict.masked_text {
            masked.push((pointer.clone(), m));
        }
        spans.extend(verdict.findings.into_iter().map(|finding| MessageFinding {
            message,
            pointer: pointer.clone(),
            finding,
        }));
    }
    trace.push(format!(
        "request decision {decision}: the strictest over its texts"
    ));
    let masked_request =
        if matches!(decision, Decision::Mask | Decision::Consent) && !masked.is_empty() {
            let mut copy = request.clone();
            for (pointer, text) in masked {
                if let Some(slot) = copy.pointer_mut(&pointer) {
                    *slot = Value::String(text);
                }
            }
            Some(copy)
        } else {
            None
        };
    Ok(RequestVerdict {
        decision,
        spans,
        categories,
        masked_request,
        trace,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Policy;
    use serde_json::json;

    fn gate() -> Gate {
        Gate::identifiers_only(Policy::default_policy())
    }

    #[test]
    fn masks_every_message_with_one_vault() {
        let request = json!({
            "model": "gpt-x",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Mail ann@acme.io"},
                {"role": "assistant", "content": null, "tool_calls": [{"id": "1", "type": "function",
                    "function": {"name": "send", "arguments": "{\"to\": \"ann@acme.io\"}"}}]},
                {"role": "user", "content": [{"type": "text", "text": "and cc bo@acme.org"},
                                              {"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}
            ]
        });
        let mut vault = Vault::new();
        let v = inspect_request(&gate(), &request, Destination::Cloud, &mut vault).unwrap();
        assert_eq!(v.decision, Decision::Mask);
        let masked = v.masked_request.unwrap();
        assert_eq!(masked["messages"][1]["content"], "Mail <EMAIL_1>");
        assert_eq!(
            masked["messages"][2]["tool_calls"][0]["function"]["arguments"],
            "{\"to\": \"<EMAIL_1>\"}"
        );
        assert_eq!(
            masked["messages"][3]["content"][0]["text"],
            "and cc <EMAIL_2>"
        );
        assert_eq!(masked["model"], "gpt-x");
        assert_eq!(
            v.spans.iter().map(|s| s.message).collect::<Vec<_>>(),
            [1, 2, 3]
        );
        assert_eq!(vault.unmask("sent to <EMAIL_2>"), "sent to bo@acme.org");
    }

    #[test]
    fn strictest_message_decides() {
        let request = json!({"messages": [
            {"role": "user", "content": "mail ann@acme.io"},
            {"role": "user", "content": "key: sk-proj-4fT9xQ2mL8vN3bR7kW1zY6hJ0cD5sA2e"}
        ]});
        let v = inspect_request(&gate(), &request, Destination::Cloud, &mut Vault::new()).unwrap();
        assert_eq!(v.decision, Decision::Refuse);
        assert!(v.masked_request.is_none());
    }

    #[test]
    fn malformed_requests_are_named() {
        let err = inspect_request(
            &gate(),
            &json!({"messages": [{"content": 5}]}),
            Destination::Cloud,
            &mut Vault::new(),
        );
        assert!(err
            .unwrap_err()
            .to_string()
            .contains("messages[0].content is a number"));
        assert!(!is_chat_request(&json!({"prompt": "hi"})));
    }
}
