//! OpenAI chat completion requests: everything a request would carry off the machine is
//! inspected with one vault, so a person named in two places gets one placeholder; the
//! request's decision is the strictest over its texts.
//!
//! What is read: every string of the request (message contents and text parts, names,
//! reasoning, tool-call names and arguments, tool definitions with their parameter schemas,
//! `user`, `metadata`, stop strings, `response_format` schemas, anything a client adds), and
//! the keys of free-form objects (`metadata`, schemas), except the structural fields listed in
//! `STRUCTURAL` whose values are ids or enumerations. Long numbers inside the request's
//! objects (a card number in `metadata`, an account number as a schema default) are read as
//! text too; the top-level numbers are sampling settings. What cannot be read (an image, audio or
//! file part, a content part of an unknown type, a text part whose text is not a string) is
//! reported as `unreadable`; the policy's `unreadable` rule (default `local`) then decides, so
//! such a request never leaves the machine.

use std::borrow::Cow;
use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::{Map, Value};

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

/// Fields whose string values are ids or enumerations, never free text: inspecting them
/// costs time and a random-looking id (`call_9fK2...`) could pass for a secret.
const STRUCTURAL: &[&str] = &[
    "model",
    "role",
    "type",
    "id",
    "tool_call_id",
    "detail",
    "format",
];

/// Fields under which object keys are data too (a metadata key, a schema property name).
const FREE_FORM: &[&str] = &[
    "metadata",
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
];

/// Content part types whose payload is text the gate reads.
const TEXT_PARTS: &[(&str, &str)] = &[("text", "text"), ("refusal", "refusal")];

#[derive(Debug, Clone, Serialize)]
pub struct MessageFinding {
    /// Index into `messages`; absent for a finding outside the messages (tools, `user`, ...).
    pub message: Option<usize>,
    /// JSON pointer to the string the offsets index, e.g. `/messages/2/content`; for an
    /// object key, the pointer of the key's entry.
    pub pointer: String,
    #[serde(flatten)]
    pub finding: Finding,
}

/// A part of the request the gate cannot read, so it must not leave the machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unreadable {
    pub pointer: String,
    /// The part's type (`image_url`, `input_audio`, `file`, ...) or what was found instead
    /// of text.
    pub kind: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct RequestVerdict {
    pub decision: Decision,
    pub spans: Vec<MessageFinding>,
    pub categories: BTreeSet<Category>,
    /// Parts that were not inspected; with any, the decision is at least the policy's
    /// `unreadable` rule (for the cloud).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub unreadable: Vec<Unreadable>,
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

/// One JSON pointer token (RFC 6901 escaping).
fn token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Where a text sits: a string value, or an object key (renamed when masked).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Slot {
    Value,
    Key,
}

struct Text<'a> {
    message: Option<usize>,
    /// For a value, its pointer; for a key, the pointer of its entry (parent + key).
    pointer: String,
    slot: Slot,
    text: Cow<'a, str>,
}

#[derive(Default)]
struct Collected<'a> {
    texts: Vec<Text<'a>>,
    unreadable: Vec<Unreadable>,
}

impl<'a> Collected<'a> {
    fn text(
        &mut self,
        message: Option<usize>,
        pointer: String,
        slot: Slot,
        text: impl Into<Cow<'a, str>>,
    ) {
        let text = text.into();
        if !text.trim().is_empty() {
            self.texts.push(Text {
                message,
                pointer,
                slot,
                text,
            });
        }
    }

    /// Every string under `value`, and the keys of free-form objects.
    fn walk(
        &mut self,
        message: Option<usize>,
        pointer: &str,
        value: &'a Value,
        keys_are_data: bool,
    ) {
        match value {
            Value::String(s) => self.text(message, pointer.to_string(), Slot::Value, s),
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    self.walk(message, &format!("{pointer}/{i}"), item, keys_are_data);
                }
            }
            Value::Object(map) => {
                for (key, item) in map {
                    let here = format!("{pointer}/{}", token(key));
                    if keys_are_data {
                        self.text(message, here.clone(), Slot::Key, key);
                    }
                    if STRUCTURAL.contains(&key.as_str()) && !keys_are_data {
                        continue;
                    }
                    let free = !keys_are_data && FREE_FORM.contains(&key.as_str());
                    self.walk(message, &here, item, free);
                }
            }
            // Six digits and more can be an account, card or phone number.
            Value::Number(n) if n.to_string().bytes().filter(u8::is_ascii_digit).count() >= 6 => {
                self.text(message, pointer.to_string(), Slot::Value, n.to_string())
            }
            Value::Null | Value::Bool(_) | Value::Number(_) => {}
        }
    }

    /// A message's content parts: text parts are read whole, any other part is unreadable.
    fn parts(&mut self, index: usize, pointer: &str, parts: &'a [Value]) {
        for (j, part) in parts.iter().enumerate() {
            let here = format!("{pointer}/{j}");
            let kind = part
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("untyped");
            match TEXT_PARTS.iter().find(|(t, _)| *t == kind) {
                Some((_, field)) => match part.get(*field) {
                    // The text and whatever else the part carries (annotations, ...).
                    Some(Value::String(_)) => self.walk(Some(index), &here, part, false),
                    other => self.unreadable.push(Unreadable {
                        pointer: format!("{here}/{field}"),
                        kind: format!(
                            "{kind} part whose {field} is {}",
                            other.map_or("missing", type_name)
                        ),
                    }),
                },
                None => self.unreadable.push(Unreadable {
                    pointer: here,
                    kind: kind.to_string(),
                }),
            }
        }
    }
}

fn collect(request: &Value) -> Result<Collected<'_>, RequestError> {
    let object = request.as_object().ok_or(RequestError::NotAChatRequest)?;
    let messages = object
        .get("messages")
        .and_then(Value::as_array)
        .ok_or(RequestError::NotAChatRequest)?;
    let mut out = Collected::default();
    for (i, message) in messages.iter().enumerate() {
        let message = message
            .as_object()
            .ok_or(RequestError::MessageNotObject { index: i })?;
        let base = format!("/messages/{i}");
        for (key, value) in message {
            let here = format!("{base}/{}", token(key));
            match (key.as_str(), value) {
                ("content", Value::Null) => {}
                ("content", Value::String(s)) => out.text(Some(i), here, Slot::Value, s),
                ("content", Value::Array(parts)) => out.parts(i, &here, parts),
                ("content", other) => {
                    return Err(RequestError::BadContent {
                        index: i,
                        found: type_name(other),
                    })
                }
                // An assistant's earlier audio answer is referenced by id; the audio itself
                // cannot be read.
                ("audio", audio) if !audio.is_null() => out.unreadable.push(Unreadable {
                    pointer: here,
                    kind: "audio".into(),
                }),
                (key, _) if STRUCTURAL.contains(&key) => {}
                (key, value) => out.walk(Some(i), &here, value, FREE_FORM.contains(&key)),
            }
        }
    }
    for (key, value) in object {
        // Top-level numbers are sampling settings (`seed`, `max_tokens`).
        if key == "messages" || STRUCTURAL.contains(&key.as_str()) || value.is_number() {
            continue;
        }
        out.walk(
            None,
            &format!("/{}", token(key)),
            value,
            FREE_FORM.contains(&key.as_str()),
        );
    }
    Ok(out)
}

/// Renames the object key at `pointer` (parent pointer + escaped key) to `new_key`.
fn rename_key(request: &mut Value, pointer: &str, old_key: &str, new_key: String) {
    let Some((parent, _)) = pointer.rsplit_once('/') else {
        return;
    };
    if let Some(Value::Object(map)) = request.pointer_mut(parent) {
        if let Some(value) = map.remove(old_key) {
            map.insert(new_key, value);
        }
    }
}

pub fn inspect_request(
    gate: &Gate,
    request: &Value,
    dest: Destination,
    vault: &mut Vault,
) -> Result<RequestVerdict, RequestError> {
    let collected = collect(request)?;
    let mut decision = Decision::Allow;
    let mut spans = Vec::new();
    let mut categories = BTreeSet::new();
    let mut trace = Vec::new();
    let mut masked: Vec<(&Text, String)> = Vec::new();
    for text in &collected.texts {
        let verdict = gate.inspect_in(&text.text, dest, vault);
        decision = decision.max(verdict.decision);
        categories.extend(verdict.categories);
        let at = match text.slot {
            Slot::Value => text.pointer.clone(),
            Slot::Key => format!("{} (key)", text.pointer),
        };
        trace.extend(
            verdict
                .trace
                .into_iter()
                .map(|line| format!("{at}: {line}")),
        );
        if let Some(m) = verdict.masked_text {
            masked.push((text, m));
        }
        spans.extend(verdict.findings.into_iter().map(|finding| MessageFinding {
            message: text.message,
            pointer: text.pointer.clone(),
            finding,
        }));
    }
    let unreadable = collected.unreadable;
    if !unreadable.is_empty() && dest == Destination::Cloud {
        let rule = gate.policy().unreadable;
        for u in &unreadable {
            trace.push(format!(
                "{}: {} cannot be inspected -> {rule} (policy `unreadable`)",
                u.pointer, u.kind
            ));
        }
        decision = decision.max(rule);
    }
    trace.push(format!(
        "request decision {decision}: the strictest over its texts"
    ));
    let masked_request =
        if matches!(decision, Decision::Mask | Decision::Consent) && !masked.is_empty() {
            let mut copy = request.clone();
            // Values first: renaming a key would move the pointers of the values under it.
            for (text, m) in masked.iter().filter(|(t, _)| t.slot == Slot::Value) {
                if let Some(slot) = copy.pointer_mut(&text.pointer) {
                    *slot = Value::String(m.clone());
                }
            }
            // Deepest keys first, for the same reason.
            let mut keys: Vec<&(&Text, String)> =
                masked.iter().filter(|(t, _)| t.slot == Slot::Key).collect();
            keys.sort_by_key(|(t, _)| std::cmp::Reverse(t.pointer.matches('/').count()));
            for (text, m) in keys {
                rename_key(&mut copy, &text.pointer, &text.text, m.clone());
            }
            Some(copy)
        } else {
            None
        };
    Ok(RequestVerdict {
        decision,
        spans,
        categories,
        unreadable,
        masked_request,
        trace,
    })
}

/// The request's content as the gate reads it, for binding a consent to exactly what was
/// inspected: every inspected text with its place, and every unreadable part, in a fixed
/// order. Fields outside it (sampling settings, `stream`) may change without changing it.
pub fn content_fingerprint(request: &Value) -> Result<String, RequestError> {
    let collected = collect(request)?;
    let mut items: Map<String, Value> = Map::new();
    for t in &collected.texts {
        let key = match t.slot {
            Slot::Value => t.pointer.clone(),
            Slot::Key => format!("{}#key", t.pointer),
        };
        items.insert(key, Value::String(t.text.to_string()));
    }
    for u in &collected.unreadable {
        let value = request.pointer(&u.pointer).cloned().unwrap_or(Value::Null);
        items.insert(format!("{}#unreadable", u.pointer), value);
    }
    // `Map` is ordered by key, so the serialisation is canonical.
    Ok(Value::Object(items).to_string())
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
                {"role": "user", "content": [{"type": "text", "text": "and cc bo@acme.org",
                                              "annotations": [{"note": "from cy@acme.org"}]}]}
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
        // The part's fields are read in map order: the two new addresses get 2 and 3.
        let text = masked["messages"][3]["content"][0]["text"]
            .as_str()
            .unwrap();
        let note = masked["messages"][3]["content"][0]["annotations"][0]["note"]
            .as_str()
            .unwrap();
        assert!(text.starts_with("and cc <EMAIL_") && note.starts_with("from <EMAIL_"));
        assert_eq!(vault.unmask(text), "and cc bo@acme.org");
        assert_eq!(vault.unmask(note), "from cy@acme.org");
        assert_eq!(masked["model"], "gpt-x");
        assert_eq!(
            v.spans.iter().map(|s| s.message).collect::<Vec<_>>(),
            [Some(1), Some(2), Some(3), Some(3)]
        );
        assert_eq!(vault.len(), 3);
    }

    #[test]
    fn every_field_that_would_leave_is_inspected_and_masked() {
        let request = json!({
            "model": "gpt-x",
            "messages": [
                {"role": "user", "name": "zed@acme.net", "content": "hi"},
                {"role": "assistant", "content": "ok", "reasoning_content": "ask cy@acme.com",
                 "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "found dee@acme.com"}
            ],
            "tools": [{"type": "function", "function": {"name": "lookup",
                "description": "Looks up eve@acme.com",
                "parameters": {"type": "object", "properties": {"fay@acme.com": {"type": "string",
                    "description": "or gus@acme.com", "enum": ["hal@acme.com"]}}}}}],
            "user": "ivy@acme.com",
            "metadata": {"jon@acme.com": "kim@acme.com", "card": 4111111111111111u64},
            "stop": ["lou@acme.com"],
            "response_format": {"type": "json_schema", "json_schema": {"name": "r",
                "schema": {"type": "object", "properties": {"mo@acme.com": {"type": "string"}}}}}
        });
        let mut vault = Vault::new();
        let v = inspect_request(&gate(), &request, Destination::Cloud, &mut vault).unwrap();
        assert_eq!(v.decision, Decision::Mask);
        let sent = v.masked_request.unwrap().to_string();
        for raw in [
            "zed", "cy@", "dee", "eve", "fay", "gus", "hal", "ivy", "jon", "kim", "lou", "mo@",
        ] {
            assert!(!sent.contains(raw), "{raw} left in {sent}");
        }
        // The structure survives: ids and types are not touched, keys are renamed in place.
        let sent: Value = serde_json::from_str(&sent).unwrap();
        assert_eq!(sent["messages"][2]["tool_call_id"], "call_1");
        assert_eq!(sent["tools"][0]["function"]["parameters"]["type"], "object");
        let key = sent["tools"][0]["function"]["parameters"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .next()
            .unwrap()
            .clone();
        assert_eq!(vault.unmask(&key), "fay@acme.com");
    }

    #[test]
    fn unreadable_parts_never_leave() {
        let request = json!({"messages": [{"role": "user", "content": [
            {"type": "text", "text": "what is this?"},
            {"type": "image_url", "image_url": {"url": "https://x/y.png"}},
            {"type": "hologram", "data": "?"},
            {"type": "text", "text": 5}
        ]}]});
        let v = inspect_request(&gate(), &request, Destination::Cloud, &mut Vault::new()).unwrap();
        assert_eq!(v.decision, Decision::Local);
        let kinds: Vec<&str> = v.unreadable.iter().map(|u| u.kind.as_str()).collect();
        assert_eq!(
            kinds,
            ["image_url", "hologram", "text part whose text is a number"]
        );
        // On the machine itself nothing is sent anywhere.
        let local =
            inspect_request(&gate(), &request, Destination::Local, &mut Vault::new()).unwrap();
        assert_eq!(local.decision, Decision::Allow);
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
    fn fingerprint_follows_content_not_settings() {
        let a = json!({"model": "m", "temperature": 0, "messages": [{"role": "user", "content": "hi"}]});
        let b = json!({"model": "auto", "stream": true, "messages": [{"role": "user", "content": "hi"}]});
        let c = json!({"model": "m", "messages": [{"role": "user", "content": "hi!"}]});
        assert_eq!(
            content_fingerprint(&a).unwrap(),
            content_fingerprint(&b).unwrap()
        );
        assert_ne!(
            content_fingerprint(&a).unwrap(),
            content_fingerprint(&c).unwrap()
        );
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
