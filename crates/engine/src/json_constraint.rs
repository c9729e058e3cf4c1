//! Constrained decoding for `response_format`: a byte-level pushdown automaton that accepts
//! exactly the JSON texts a schema allows (or any JSON object for `json_object`), and a mask
//! of the tokens whose bytes it can accept next. The mask comes from a walk over the sorted
//! vocabulary that works for any byte automaton (`ByteAutomaton`); the forced tool-call
//! prefix of `tool_choice` uses it too.
//!
//! Supported schema keywords: `type` (one or a list), `properties`, `required`,
//! `additionalProperties` (only when no `properties` are declared: with `properties`, exactly
//! the declared keys may appear, as structured-output engines commonly do), `items`, `enum`,
//! `const`, `anyOf`/`oneOf` whose alternatives start with different bytes (e.g. a type or
//! `null`), and local `$ref`s (`#/$defs/...`), not recursive ones. Value-level keywords
//! (`pattern`, `minimum`, `maxLength`, ...) are not enforced, so a schema that uses them is
//! refused (a 400 naming the keyword) rather than answered with output that may break them;
//! annotations (`title`, `description`, `default`, ...) are fine.

use std::sync::Arc;

use serde_json::Value;

#[derive(Debug, thiserror::Error, PartialEq)]
#[error("unsupported JSON schema at {path}: {reason}")]
pub struct SchemaError {
    /// JSON pointer into the schema.
    pub path: String,
    pub reason: String,
}

/// What a position in the document may hold.
#[derive(Debug)]
pub enum Node {
    Any,
    Object(ObjectNode),
    Array(Arc<Node>),
    String,
    Number { integer: bool },
    Boolean,
    Null,
    /// One of these serialized JSON values (from `enum` / `const`).
    Literals(Arc<Vec<Vec<u8>>>),
    /// The first byte decides which alternative is being written.
    OneOf(Vec<Arc<Node>>),
}

#[derive(Debug)]
pub struct ObjectNode {
    /// Declared properties: the key as JSON text (with its quotes) and its value's node.
    props: Vec<(Vec<u8>, Arc<Node>)>,
    required: Vec<bool>,
    /// Node for keys that are not declared, when such keys are allowed.
    open: Option<Arc<Node>>,
}

/// Recursion guard for `$ref` chains; real schemas nest far less than this.
const MAX_DEPTH: usize = 32;
/// Insignificant whitespace is bounded to what a pretty-printer writes, so that a weak model
/// cannot pad its answer with whitespace up to the length limit (small models under a
/// constraint otherwise tend to emit newlines forever): before the top-level value, at most
/// this many line breaks (a model's habit after its reasoning) and no blanks; inside a
/// container, one blank, or one line break (`\n` or `\r\n`) and then an indentation of at
/// most `INDENT_PER_LEVEL` blanks per level of nesting.
const MAX_LEADING_NEWLINES: u8 = 2;
const INDENT_PER_LEVEL: u16 = 4;

/// The run of insignificant whitespace being written.
#[derive(Debug, Clone, Copy, Default)]
struct WhitespaceRun {
    newlines: u8,
    /// Blanks (spaces, tabs) since the last line break, or since the run began.
    blanks: u16,
    /// A `\r` that a `\n` must follow.
    carriage_return: bool,
}

/// Any JSON object: what `response_format: {"type": "json_object"}` asks for.
pub fn any_object() -> Arc<Node> {
    Arc::new(Node::Object(ObjectNode { props: vec![], required: vec![], open: Some(Arc::new(Node::Any)) }))
}

/// Compiles a JSON schema into the automaton's nodes.
pub fn compile_schema(schema: &Value) -> Result<Arc<Node>, SchemaError> {
    compile(schema, schema, "", 0)
}

/// A tool's parameter schema as constrained decoding can enforce it, for a call the server
/// forces (`tool_choice`), where refusing the request is no option: value-level keywords
/// (`UNENFORCED_KEYWORDS`) are dropped, so the value's type and shape are still enforced, and
/// a schema that is unsupported even so becomes free JSON.
pub fn compile_schema_lenient(schema: &Value) -> Arc<Node> {
    compile_schema(&without_unenforced(schema)).unwrap_or_else(|_| Arc::new(Node::Any))
}

fn without_unenforced(schema: &Value) -> Value {
    match schema {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, _)| !UNENFORCED_KEYWORDS.contains(&k.as_str()))
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        // Names to schemas: the names are not keywords, whatever they say.
                        ("properties" | "$defs" | "definitions", Value::Object(m)) => {
                            Value::Object(m.iter().map(|(name, s)| (name.clone(), without_unenforced(s))).collect())
                        }
                        ("enum" | "const" | "default" | "examples", v) => v.clone(),
                        (_, v) => without_unenforced(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_unenforced).collect()),
        other => other.clone(),
    }
}

/// Keywords that restrict which values are valid beyond what the automaton enforces.
const UNENFORCED_KEYWORDS: &[&str] = &[
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "prefixItems",
    "minProperties",
    "maxProperties",
    "patternProperties",
    "propertyNames",
    "dependentRequired",
    "dependentSchemas",
    "allOf",
    "not",
    "if",
    "then",
    "else",
];

fn err(path: &str, reason: impl Into<String>) -> SchemaError {
    SchemaError { path: if path.is_empty() { "/".into() } else { path.into() }, reason: reason.into() }
}

fn compile(schema: &Value, root: &Value, path: &str, depth: usize) -> Result<Arc<Node>, SchemaError> {
    if depth > MAX_DEPTH {
        return Err(err(path, "schema nests too deeply (recursive $ref?)"));
    }
    let obj = match schema {
        Value::Bool(true) => return Ok(Arc::new(Node::Any)),
        Value::Object(o) => o,
        _ => return Err(err(path, "a schema must be an object or `true`")),
    };
    if let Some(key) = UNENFORCED_KEYWORDS.iter().find(|k| obj.contains_key(**k)) {
        return Err(err(
            path,
            format!("`{key}` is not enforced by constrained decoding; remove it (and validate that property yourself)"),
        ));
    }
    if let Some(r) = obj.get("$ref") {
        let target = r
            .as_str()
            .and_then(|r| r.strip_prefix('#'))
            .and_then(|p| root.pointer(p))
            .ok_or_else(|| err(path, format!("cannot resolve $ref {r}: only local references (#/...) are supported")))?;
        return compile(target, root, &format!("{path}/$ref"), depth + 1);
    }
    if let Some(c) = obj.get("const") {
        return Ok(Arc::new(Node::Literals(Arc::new(vec![c.to_string().into_bytes()]))));
    }
    if let Some(e) = obj.get("enum") {
        let values = e.as_array().filter(|a| !a.is_empty()).ok_or_else(|| err(path, "enum must be a non-empty array"))?;
        return Ok(Arc::new(Node::Literals(Arc::new(values.iter().map(|v| v.to_string().into_bytes()).collect()))));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = obj.get(key) {
            let alts = alts.as_array().filter(|a| !a.is_empty()).ok_or_else(|| err(path, format!("{key} must be a non-empty array")))?;
            let nodes = alts
                .iter()
                .enumerate()
                .map(|(i, a)| compile(a, root, &format!("{path}/{key}/{i}"), depth + 1))
                .collect::<Result<Vec<_>, _>>()?;
            return one_of(nodes, path);
        }
    }
    match obj.get("type") {
        None => {
            if obj.contains_key("properties") {
                compile_typed("object", obj, root, path, depth)
            } else if obj.contains_key("items") {
                compile_typed("array", obj, root, path, depth)
            } else {
                Ok(Arc::new(Node::Any))
            }
        }
        Some(Value::String(t)) => compile_typed(t, obj, root, path, depth),
        Some(Value::Array(ts)) => {
            let nodes = ts
                .iter()
                .map(|t| match t.as_str() {
                    Some(t) => compile_typed(t, obj, root, path, depth),
                    None => Err(err(path, "type list entries must be strings")),
                })
                .collect::<Result<Vec<_>, _>>()?;
            one_of(nodes, path)
        }
        Some(other) => Err(err(path, format!("type must be a string or a list, got {other}"))),
    }
}

fn compile_typed(
    ty: &str,
    obj: &serde_json::Map<String, Value>,
    root: &Value,
    path: &str,
    depth: usize,
) -> Result<Arc<Node>, SchemaError> {
    Ok(Arc::new(match ty {
        "string" => Node::String,
        "number" => Node::Number { integer: false },
        "integer" => Node::Number { integer: true },
        "boolean" => Node::Boolean,
        "null" => Node::Null,
        "array" => Node::Array(match obj.get("items") {
            Some(items) => compile(items, root, &format!("{path}/items"), depth + 1)?,
            None => Arc::new(Node::Any),
        }),
        "object" => {
            let mut props = Vec::new();
            if let Some(p) = obj.get("properties") {
                let p = p.as_object().ok_or_else(|| err(path, "properties must be an object"))?;
                for (name, sub) in p {
                    let node = compile(sub, root, &format!("{path}/properties/{name}"), depth + 1)?;
                    props.push((Value::String(name.clone()).to_string().into_bytes(), node));
                }
            }
            let required_names: Vec<&str> = obj
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let required: Vec<bool> = props
                .iter()
                .map(|(k, _)| required_names.iter().any(|r| Value::String(r.to_string()).to_string().as_bytes() == k))
                .collect();
            let open = if !props.is_empty() {
                None
            } else {
                match obj.get("additionalProperties") {
                    Some(Value::Bool(false)) => None,
                    Some(s @ Value::Object(_)) => Some(compile(s, root, &format!("{path}/additionalProperties"), depth + 1)?),
                    _ => Some(Arc::new(Node::Any)),
                }
            };
            Node::Object(ObjectNode { props, required, open })
        }
        other => return Err(err(path, format!("unknown type {other:?}"))),
    }))
}

fn one_of(nodes: Vec<Arc<Node>>, path: &str) -> Result<Arc<Node>, SchemaError> {
    if nodes.len() == 1 {
        return Ok(nodes.into_iter().next().expect("one node"));
    }
    let mut taken = [false; 256];
    for node in &nodes {
        let first = first_bytes(node);
        if (0..256).any(|b| first[b] && taken[b]) {
            return Err(err(path, "alternatives that can start with the same character (e.g. two objects) are not supported"));
        }
        for b in 0..256 {
            taken[b] |= first[b];
        }
    }
    Ok(Arc::new(Node::OneOf(nodes)))
}

fn first_bytes(node: &Node) -> [bool; 256] {
    let mut set = [false; 256];
    let mut add = |bytes: &[u8]| bytes.iter().for_each(|&b| set[b as usize] = true);
    match node {
        Node::Any => add(b"{[\"-0123456789tfn"),
        Node::Object(_) => add(b"{"),
        Node::Array(_) => add(b"["),
        Node::String => add(b"\""),
        Node::Number { .. } => add(b"-0123456789"),
        Node::Boolean => add(b"tf"),
        Node::Null => add(b"n"),
        Node::Literals(opts) => opts.iter().for_each(|o| add(&o[..1])),
        Node::OneOf(alts) => {
            for alt in alts {
                let f = first_bytes(alt);
                (0..256).for_each(|b| set[b] |= f[b]);
            }
        }
    }
    set
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum ObjState {
    AfterOpen,
    AfterComma,
    /// A free (undeclared) key's string is being read.
    InFreeKey,
    /// Key read: declared property index, or `None` for a free key.
    AfterKey(Option<usize>),
    AfterValue,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum ArrState {
    Open,
    Comma,
    Value,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum StrState {
    Normal,
    Backslash,
    Hex(u8),
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum NumState {
    Start,
    Minus,
    Zero,
    Int,
    Dot,
    Frac,
    Exp,
    ExpSign,
    ExpDigits,
}

impl NumState {
    fn complete(self) -> bool {
        matches!(self, NumState::Zero | NumState::Int | NumState::Frac | NumState::ExpDigits)
    }
}

#[derive(Debug, Clone)]
enum Frame {
    Value(Arc<Node>),
    Object { node: Arc<Node>, seen: Vec<bool>, state: ObjState },
    /// A declared key, matched byte by byte against the keys not yet used.
    Key { candidates: Vec<usize>, pos: usize },
    Array { item: Arc<Node>, state: ArrState },
    Str(StrState),
    Num { state: NumState, integer: bool },
    Literal { options: Arc<Vec<Vec<u8>>>, alive: Vec<usize>, pos: usize },
}

/// Where the automaton is in the document. Cheap to clone (nodes are shared).
#[derive(Debug, Clone)]
pub struct JsonMachine {
    stack: Vec<Frame>,
    whitespace: WhitespaceRun,
}

/// The vocabulary prepared once for masking: non-empty token ids sorted by their bytes with
/// the length each shares with the previous one, which tokens can sit inside a JSON string as
/// they are, and which hold a `>` (only those can end a tag in a forced tool call's text).
/// Looking these up beats reading every token's bytes on each mask.
pub struct VocabIndex {
    order: Vec<u32>,
    shared_prefix: Vec<u16>,
    string_safe: Vec<bool>,
    pub(crate) has_gt: Vec<bool>,
}

impl VocabIndex {
    pub fn new(token_bytes: &[Vec<u8>]) -> Self {
        let mut order: Vec<u32> = (0..token_bytes.len() as u32).filter(|&id| !token_bytes[id as usize].is_empty()).collect();
        order.sort_unstable_by(|&a, &b| token_bytes[a as usize].cmp(&token_bytes[b as usize]));
        let mut shared_prefix = Vec::with_capacity(order.len());
        let mut previous: &[u8] = &[];
        for &id in &order {
            let bytes = &token_bytes[id as usize];
            let shared = previous.iter().zip(bytes.iter()).take_while(|(a, b)| a == b).count();
            shared_prefix.push(shared.min(u16::MAX as usize) as u16);
            previous = bytes;
        }
        let string_safe = token_bytes
            .iter()
            .map(|t| !t.is_empty() && t.iter().all(|&b| b >= 0x20 && b != b'"' && b != b'\\'))
            .collect();
        let has_gt = token_bytes.iter().map(|t| t.contains(&b'>')).collect();
        Self { order, shared_prefix, string_safe, has_gt }
    }
}

/// A byte-level automaton with cheaply cloned state: what the vocabulary walk simulates.
pub trait ByteAutomaton: Clone {
    /// Consumes one byte; false (leaving the state unspecified) if it may not come next.
    fn step(&mut self, b: u8) -> bool;
}

/// Sets `mask[id]` for every non-empty token whose bytes `start` accepts as they are.
///
/// Walks the tokens in byte order keeping the automaton's state after each prefix of the
/// current token, so a prefix is simulated once for all tokens that share it and a rejected
/// prefix rules out all of them at once. `index` must have been built from `token_bytes`.
pub fn mask_accepted_tokens<M: ByteAutomaton>(start: &M, token_bytes: &[Vec<u8>], index: &VocabIndex, mask: &mut [bool]) {
    let mut states = vec![start.clone()];
    // Length of the shortest rejected prefix of the previous token (0: none rejected).
    let mut rejected_at = 0usize;
    for (&id, &shared) in index.order.iter().zip(&index.shared_prefix) {
        let bytes = &token_bytes[id as usize];
        let shared = shared as usize;
        if rejected_at != 0 && rejected_at <= shared {
            continue;
        }
        rejected_at = 0;
        states.truncate(shared + 1);
        for depth in shared..bytes.len() {
            let mut next = states[depth].clone();
            if !next.step(bytes[depth]) {
                rejected_at = depth + 1;
                break;
            }
            states.push(next);
        }
        mask[id as usize] = rejected_at == 0;
    }
}

impl ByteAutomaton for JsonMachine {
    fn step(&mut self, b: u8) -> bool {
        self.consume(b)
    }
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\n' | b'\r' | b'\t')
}

fn object_node(node: &Node) -> &ObjectNode {
    match node {
        Node::Object(o) => o,
        _ => unreachable!("object frames are only made from object nodes"),
    }
}

impl JsonMachine {
    pub fn new(root: Arc<Node>) -> Self {
        Self {
            stack: vec![Frame::Value(root)],
            whitespace: WhitespaceRun::default(),
        }
    }

    /// The document is finished (generation may end here).
    pub fn is_complete(&self) -> bool {
        match self.stack.as_slice() {
            [] => true,
            [Frame::Num { state, .. }] => state.complete(),
            [Frame::Literal { options, alive, pos }] => alive.iter().any(|&i| options[i].len() == *pos),
            _ => false,
        }
    }

    /// Feeds bytes; returns false (leaving the machine in an unspecified state) on the first
    /// byte the schema does not allow.
    pub fn feed(&mut self, bytes: &[u8]) -> bool {
        bytes.iter().all(|&b| self.consume(b))
    }

    pub fn accepts(&self, bytes: &[u8]) -> bool {
        self.clone().feed(bytes)
    }

    /// For each token (by its bytes; empty means never allowed, e.g. special tokens), whether
    /// it may come next. `end_ids` are allowed once the document is complete. `index` must
    /// have been built from the same `token_bytes`.
    pub fn allowed_tokens(&self, token_bytes: &[Vec<u8>], index: &VocabIndex, end_ids: &[u32]) -> Vec<bool> {
        let mut mask = vec![false; token_bytes.len()];
        if matches!(self.stack.last(), Some(Frame::Str(StrState::Normal))) {
            // Inside a string almost every token is allowed: take the plain ones as they are
            // and simulate only those with a quote, a backslash or a control byte.
            for (id, bytes) in token_bytes.iter().enumerate() {
                mask[id] = !bytes.is_empty() && (index.string_safe[id] || self.accepts(bytes));
            }
        } else {
            mask_accepted_tokens(self, token_bytes, index, &mut mask);
        }
        if self.is_complete() {
            for &id in end_ids {
                if let Some(m) = mask.get_mut(id as usize) {
                    *m = true;
                }
            }
        }
        mask
    }

    /// Whether whitespace byte `b` may extend the current run (see `MAX_LEADING_NEWLINES`).
    fn whitespace(&mut self, b: u8) -> bool {
        let depth = self
            .stack
            .iter()
            .filter(|f| matches!(f, Frame::Object { .. } | Frame::Array { .. }))
            .count() as u16;
        let max_newlines = if depth == 0 { MAX_LEADING_NEWLINES } else { 1 };
        let run = &mut self.whitespace;
        match b {
            b'\n' => {
                run.newlines += 1;
                run.blanks = 0;
                run.carriage_return = false;
                run.newlines <= max_newlines
            }
            b'\r' if !run.carriage_return && run.newlines < max_newlines => {
                run.carriage_return = true;
                true
            }
            b' ' | b'\t' if !run.carriage_return && depth > 0 => {
                run.blanks += 1;
                run.blanks
                    <= if run.newlines == 0 {
                        1
                    } else {
                        INDENT_PER_LEVEL * depth
                    }
            }
            _ => false,
        }
    }

    fn consume(&mut self, b: u8) -> bool {
        if !is_ws(b) {
            if self.whitespace.carriage_return {
                return false;
            }
            self.whitespace = WhitespaceRun::default();
        }
        loop {
            let Some(top) = self.stack.last_mut() else { return false };
            match top {
                Frame::Value(node) => {
                    if is_ws(b) {
                        return self.whitespace(b);
                    }
                    let node = node.clone();
                    self.stack.pop();
                    match self.start_value(&node, b) {
                        Some(true) => return true,
                        Some(false) => continue,
                        None => return false,
                    }
                }
                Frame::Object { node, seen, state } => {
                    let node = node.clone();
                    let o = object_node(&node);
                    let all_required = o.required.iter().zip(seen.iter()).all(|(&r, &s)| !r || s);
                    let more_keys = o.open.is_some() || seen.iter().any(|&s| !s);
                    match *state {
                        _ if is_ws(b) && *state != ObjState::InFreeKey => {
                            return self.whitespace(b)
                        }
                        ObjState::AfterOpen | ObjState::AfterComma if b == b'"' => {
                            let candidates: Vec<usize> = (0..o.props.len()).filter(|&i| !seen[i]).collect();
                            let declared = candidates.iter().any(|&i| o.props[i].0[0] == b'"');
                            if o.open.is_some() {
                                *state = ObjState::InFreeKey;
                                self.stack.push(Frame::Str(StrState::Normal));
                            } else if declared {
                                self.stack.push(Frame::Key { candidates, pos: 1 });
                            } else {
                                return false;
                            }
                            return true;
                        }
                        ObjState::AfterOpen if b == b'}' && all_required => {
                            self.stack.pop();
                            return true;
                        }
                        ObjState::AfterKey(prop) if b == b':' => {
                            let value = match prop {
                                Some(i) => o.props[i].1.clone(),
                                None => o.open.clone().unwrap_or_else(|| Arc::new(Node::Any)),
                            };
                            *state = ObjState::AfterValue;
                            self.stack.push(Frame::Value(value));
                            return true;
                        }
                        ObjState::AfterValue if b == b',' && more_keys => {
                            *state = ObjState::AfterComma;
                            return true;
                        }
                        ObjState::AfterValue if b == b'}' && all_required => {
                            self.stack.pop();
                            return true;
                        }
                        _ => return false,
                    }
                }
                Frame::Key { .. } => return self.step_key(b),
                Frame::Array { item, state } => match *state {
                    _ if is_ws(b) => return self.whitespace(b),
                    ArrState::Open if b == b']' => {
                        self.stack.pop();
                        return true;
                    }
                    ArrState::Open | ArrState::Comma => {
                        let item = item.clone();
                        *state = ArrState::Value;
                        self.stack.push(Frame::Value(item));
                        continue;
                    }
                    ArrState::Value if b == b',' => {
                        *state = ArrState::Comma;
                        return true;
                    }
                    ArrState::Value if b == b']' => {
                        self.stack.pop();
                        return true;
                    }
                    ArrState::Value => return false,
                },
                Frame::Str(state) => {
                    match *state {
                        StrState::Normal => match b {
                            b'"' => {
                                self.stack.pop();
                                if let Some(Frame::Object { state: s @ ObjState::InFreeKey, .. }) = self.stack.last_mut() {
                                    *s = ObjState::AfterKey(None);
                                }
                            }
                            b'\\' => *state = StrState::Backslash,
                            0..=0x1f => return false,
                            _ => {}
                        },
                        StrState::Backslash => match b {
                            b'u' => *state = StrState::Hex(0),
                            b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => *state = StrState::Normal,
                            _ => return false,
                        },
                        StrState::Hex(n) => {
                            if !b.is_ascii_hexdigit() {
                                return false;
                            }
                            *state = if n == 3 { StrState::Normal } else { StrState::Hex(n + 1) };
                        }
                    }
                    return true;
                }
                Frame::Num { state, integer } => {
                    use NumState::*;
                    let fraction_ok = !*integer;
                    let next = match (*state, b) {
                        (Start, b'-') => Some(Minus),
                        (Start | Minus, b'0') => Some(Zero),
                        (Start | Minus, b'1'..=b'9') => Some(Int),
                        (Int, b'0'..=b'9') => Some(Int),
                        (Zero | Int, b'.') if fraction_ok => Some(Dot),
                        (Zero | Int | Frac, b'e' | b'E') if fraction_ok => Some(Exp),
                        (Dot | Frac, b'0'..=b'9') => Some(Frac),
                        (Exp, b'+' | b'-') => Some(ExpSign),
                        (Exp | ExpSign | ExpDigits, b'0'..=b'9') => Some(ExpDigits),
                        _ => None,
                    };
                    match next {
                        Some(n) => {
                            *state = n;
                            return true;
                        }
                        // A number ends at the first byte that cannot continue it; that byte
                        // belongs to whatever encloses the number.
                        None if state.complete() => {
                            self.stack.pop();
                            continue;
                        }
                        None => return false,
                    }
                }
                Frame::Literal { options, alive, pos } => {
                    let p = *pos;
                    let next: Vec<usize> = alive.iter().copied().filter(|&i| options[i].get(p) == Some(&b)).collect();
                    if next.is_empty() {
                        if alive.iter().any(|&i| options[i].len() == p) {
                            self.stack.pop();
                            continue;
                        }
                        return false;
                    }
                    let finished = next.iter().all(|&i| options[i].len() == p + 1);
                    *alive = next;
                    *pos = p + 1;
                    if finished {
                        self.stack.pop();
                    }
                    return true;
                }
            }
        }
    }

    fn step_key(&mut self, b: u8) -> bool {
        let n = self.stack.len();
        let (Some(Frame::Object { node, .. }), Some(Frame::Key { candidates, pos })) = (self.stack.get(n.wrapping_sub(2)), self.stack.get(n - 1)) else {
            unreachable!("a key frame sits on an object frame")
        };
        let keys = &object_node(node).props;
        let p = *pos;
        let next: Vec<usize> = candidates.iter().copied().filter(|&i| keys[i].0.get(p) == Some(&b)).collect();
        let done = next.iter().copied().find(|&i| keys[i].0.len() == p + 1);
        if next.is_empty() {
            return false;
        }
        if let Some(i) = done {
            self.stack.pop();
            if let Some(Frame::Object { seen, state, .. }) = self.stack.last_mut() {
                seen[i] = true;
                *state = ObjState::AfterKey(Some(i));
            }
        } else if let Some(Frame::Key { candidates, pos }) = self.stack.last_mut() {
            *candidates = next;
            *pos = p + 1;
        }
        true
    }

    /// Replaces a value slot with the frame for the value that byte `b` starts. Returns
    /// whether `b` was consumed (`Some(false)`: feed it to the new frame), or `None` if no
    /// value of this node starts with `b`.
    fn start_value(&mut self, node: &Arc<Node>, b: u8) -> Option<bool> {
        let literal = |options: Arc<Vec<Vec<u8>>>| {
            let alive = (0..options.len()).collect();
            Frame::Literal { options, alive, pos: 0 }
        };
        let frame = match (&**node, b) {
            (Node::Any, b'{') => Frame::Object { node: any_object(), seen: vec![], state: ObjState::AfterOpen },
            (Node::Object(o), b'{') => Frame::Object { node: node.clone(), seen: vec![false; o.props.len()], state: ObjState::AfterOpen },
            (Node::Any, b'[') => Frame::Array { item: Arc::new(Node::Any), state: ArrState::Open },
            (Node::Array(item), b'[') => Frame::Array { item: item.clone(), state: ArrState::Open },
            (Node::Any | Node::String, b'"') => Frame::Str(StrState::Normal),
            (Node::Any, b'-' | b'0'..=b'9') => {
                self.stack.push(Frame::Num { state: NumState::Start, integer: false });
                return Some(false);
            }
            (Node::Number { integer }, _) => {
                self.stack.push(Frame::Num { state: NumState::Start, integer: *integer });
                return Some(false);
            }
            (Node::Any, b't' | b'f' | b'n') => {
                self.stack.push(literal(Arc::new(vec![b"true".to_vec(), b"false".to_vec(), b"null".to_vec()])));
                return Some(false);
            }
            (Node::Boolean, _) => {
                self.stack.push(literal(Arc::new(vec![b"true".to_vec(), b"false".to_vec()])));
                return Some(false);
            }
            (Node::Null, _) => {
                self.stack.push(literal(Arc::new(vec![b"null".to_vec()])));
                return Some(false);
            }
            (Node::Literals(options), _) => {
                self.stack.push(literal(options.clone()));
                return Some(false);
            }
            (Node::OneOf(alts), _) => {
                let alt = alts.iter().find(|a| first_bytes(a)[b as usize])?.clone();
                return self.start_value(&alt, b);
            }
            _ => return None,
        };
        self.stack.push(frame);
        Some(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn accepts_complete(root: &Arc<Node>, text: &str) -> bool {
        let mut m = JsonMachine::new(root.clone());
        m.feed(text.as_bytes()) && m.is_complete()
    }

    #[test]
    fn json_object_accepts_objects_only() {
        let root = any_object();
        for ok in [r#"{}"#, r#"{"a": [1, -2.5e3, "x\"y\u00e9"], "b": {"c": null}, "d": true}"#, "{\n  \"k\" : false\n}"] {
            assert!(accepts_complete(&root, ok), "{ok}");
        }
        for bad in [r#"[1]"#, r#"{"a" 1}"#, r#"{"a": 01}"#, r#"{"a": tru}"#, r#"{"a": 1,}"#, "{\"a\": \"\x01\"}", r#"{} x"#] {
            assert!(!accepts_complete(&root, bad), "{bad}");
        }
        let mut m = JsonMachine::new(root);
        assert!(m.feed(br#"{"a": 12"#) && !m.is_complete());
    }

    #[test]
    fn schema_restricts_keys_types_and_required() {
        let schema = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "age": {"type": "integer"},
                "tags": {"type": "array", "items": {"enum": ["a", "bc"]}},
                "pet": {"anyOf": [{"$ref": "#/$defs/Pet"}, {"type": "null"}]}
            },
            "required": ["name", "age"],
            "$defs": {"Pet": {"type": "object", "properties": {"kind": {"const": "cat"}}, "required": ["kind"]}}
        });
        let root = compile_schema(&schema).unwrap();
        for ok in [
            r#"{"name": "Lily", "age": 3}"#,
            r#"{"age": 3, "name": "x", "tags": ["bc", "a"], "pet": {"kind": "cat"}}"#,
            r#"{"name": "x", "age": -0, "pet": null}"#,
        ] {
            assert!(accepts_complete(&root, ok), "{ok}");
        }
        for bad in [
            r#"{"name": "Lily"}"#,
            r#"{"name": "Lily", "age": 3.5}"#,
            r#"{"name": 1, "age": 3}"#,
            r#"{"name": "x", "age": 3, "extra": 1}"#,
            r#"{"name": "x", "name": "y", "age": 3}"#,
            r#"{"name": "x", "age": 3, "tags": ["b"]}"#,
            r#"{"name": "x", "age": 3, "pet": {"kind": "dog"}}"#,
        ] {
            assert!(!accepts_complete(&root, bad), "{bad}");
        }
    }

    #[test]
    fn numbers_and_literals_end_where_the_parent_continues() {
        let root = compile_schema(&json!({"type": "array", "items": {"enum": [1, 12]}})).unwrap();
        assert!(accepts_complete(&root, "[1,12, 1]"));
        assert!(!accepts_complete(&root, "[123]"));
        let top_number = compile_schema(&json!({"type": "number"})).unwrap();
        let mut m = JsonMachine::new(top_number);
        assert!(m.feed(b"4") && m.is_complete());
        assert!(m.feed(b"2.5") && m.is_complete());
    }

    #[test]
    fn unsupported_schemas_are_rejected_with_a_path() {
        let e = compile_schema(&json!({"anyOf": [{"type": "object"}, {"type": "object", "properties": {}}]})).unwrap_err();
        assert_eq!(e.path, "/");
        let e = compile_schema(&json!({"properties": {"a": {"$ref": "#/nowhere"}}})).unwrap_err();
        assert_eq!(e.path, "/properties/a");
        let recursive = json!({"$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}}, "$ref": "#/$defs/N"});
        assert!(compile_schema(&recursive).is_err());
        let e = compile_schema(&json!({"properties": {"name": {"type": "string", "maxLength": 5}}})).unwrap_err();
        assert_eq!(e.path, "/properties/name");
        assert!(e.reason.contains("maxLength"), "{}", e.reason);
        let annotated = json!({"title": "T", "description": "d", "properties": {"a": {"type": "integer", "default": 1}}});
        assert!(compile_schema(&annotated).is_ok());
    }

    #[test]
    fn lenient_schemas_keep_the_type_and_drop_value_keywords() {
        let root = compile_schema_lenient(&json!({"type": "object", "properties": {
            "format": {"type": "string", "format": "date"}, "n": {"type": "integer", "minimum": 1}
        }, "required": ["n"]}));
        assert!(accepts_complete(&root, r#"{"format": "x", "n": 0}"#), "a property named like a keyword stays");
        assert!(!accepts_complete(&root, r#"{"n": "1"}"#) && !accepts_complete(&root, r#"{"format": "x"}"#));
        let unsupported = compile_schema_lenient(&json!({"anyOf": [{"type": "object"}, {"type": "object", "properties": {}}]}));
        assert!(accepts_complete(&unsupported, "[1]"), "free JSON");
    }

    #[test]
    fn token_mask_follows_the_document_and_allows_the_end_only_when_complete() {
        let vocab: Vec<Vec<u8>> = vec![b"{".to_vec(), b"}".to_vec(), b"\"a\"".to_vec(), b":".to_vec(), b"1".to_vec(), b"x".to_vec(), vec![], b" ".to_vec()];
        let end = [6u32];
        let index = VocabIndex::new(&vocab);
        let root = compile_schema(&json!({"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]})).unwrap();
        let mut m = JsonMachine::new(root);
        assert_eq!(
            m.allowed_tokens(&vocab, &index, &end),
            vec![true, false, false, false, false, false, false, false]
        );
        assert!(m.feed(b"{"));
        assert_eq!(m.allowed_tokens(&vocab, &index, &end), vec![false, false, true, false, false, false, false, true]);
        assert!(m.feed(b"\"a\":1"));
        assert_eq!(m.allowed_tokens(&vocab, &index, &end), vec![false, true, false, false, true, false, false, true]);
        assert!(m.feed(b"}"));
        assert_eq!(m.allowed_tokens(&vocab, &index, &end), vec![false, false, false, false, false, false, true, false]);
    }

    #[test]
    fn sorted_walk_and_string_fast_path_agree_with_feeding_each_token() {
        // A vocabulary of short byte strings over JSON's alphabet, from a fixed xorshift.
        let alphabet = b"{}[]\":,0123456789 abe.-tn\\\n";
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut vocab: Vec<Vec<u8>> = vec![vec![]];
        for _ in 0..3000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let len = 1 + (x % 4) as usize;
            vocab.push((0..len).map(|i| alphabet[((x >> (8 + 6 * i)) % alphabet.len() as u64) as usize]).collect());
        }
        let index = VocabIndex::new(&vocab);
        let root = compile_schema(&json!({"type": "object", "properties": {"a": {"type": "array", "items": {"type": "number"}}, "b": {"type": "string"}, "n": {"type": "null"}}})).unwrap();
        for prefix in ["", "{", "{\"a\"", "{\"a\": [1", "{\"a\": [1, -2.", "{\"b\": \"x", "{\"b\": \"x\\", "{\"n\": nu", "{\"b\": \"\"}"] {
            let mut m = JsonMachine::new(root.clone());
            assert!(m.feed(prefix.as_bytes()), "{prefix}");
            let expected: Vec<bool> = vocab.iter().map(|t| !t.is_empty() && m.accepts(t)).collect();
            assert!(m.allowed_tokens(&vocab, &index, &[]) == expected, "after {prefix:?}");
        }
    }

    #[test]
    fn whitespace_is_what_a_pretty_printer_writes_and_no_more() {
        let root = any_object();
        let pretty =
            "\n\n{\n    \"a\": [\n        1,\n        {\"b\": null}\n    ],\r\n\t\"c\" : true\n}";
        assert!(accepts_complete(&root, pretty), "{pretty}");
        assert!(accepts_complete(&root, r#"{"a": 1, "b": [1, 2]}"#));
        for padded in [
            "\n\n\n{}",
            " {}",
            "{  \"a\": 1}",
            "{\n\n\"a\": 1}",
            "{\n     \"a\": 1}",
            "{\"a\": [\n         1]}",
            "{\r \"a\": 1}",
            "{\"a\": 1\r}",
        ] {
            assert!(!accepts_complete(&root, padded), "{padded:?}");
        }
        // Padding costs a structural byte every few bytes: the document moves on.
        let mut m = JsonMachine::new(root);
        assert!(m.feed(b"{\"a\": ["));
        assert!(m.feed(b"\n        ") && !m.accepts(b" ") && !m.accepts(b"\n"));
    }
}
