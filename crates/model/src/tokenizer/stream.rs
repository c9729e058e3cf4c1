//! Decoding one token at a time, for streaming responses.
//!
//! A token is a run of bytes, not of characters: one CJK character or emoji is often split
//! across two or three tokens. The decoder holds back an incomplete UTF-8 sequence at the end
//! until the tokens that complete it arrive, so every piece it emits is whole text, and the
//! pieces put together equal [`Tokenizer::decode`] of all the ids.

use super::{Tokenizer, TokenizerError};

pub struct StreamDecoder<'t> {
    tokenizer: &'t Tokenizer,
    pending: Vec<u8>,
}

impl<'t> StreamDecoder<'t> {
    pub fn new(tokenizer: &'t Tokenizer) -> Self {
        StreamDecoder { tokenizer, pending: Vec::new() }
    }

    /// Adds one token; returns the text that became complete (possibly empty).
    pub fn push(&mut self, id: u32) -> Result<String, TokenizerError> {
        self.pending.extend_from_slice(self.tokenizer.bytes_of(id)?);
        let mut out = String::new();
        let mut consumed = 0;
        loop {
            match std::str::from_utf8(&self.pending[consumed..]) {
                Ok(text) => {
                    out.push_str(text);
                    consumed = self.pending.len();
                    break;
                }
                Err(e) => {
                    let valid = e.valid_up_to();
                    out.push_str(std::str::from_utf8(&self.pending[consumed..consumed + valid]).expect("checked valid"));
                    consumed += valid;
                    match e.error_len() {
                        // Bytes that no continuation can make valid: replaced now, exactly as
                        // `from_utf8_lossy` would replace them in a full decode.
                        Some(bad) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            consumed += bad;
                        }
                        // A character cut off at the end: wait for the next token.
                        None => break,
                    }
                }
            }
        }
        self.pending.drain(..consumed);
        Ok(out)
    }

    /// Ends the stream; a character still incomplete becomes U+FFFD.
    pub fn finish(self) -> String {
        String::from_utf8_lossy(&self.pending).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::super::Tokenizer;

    #[test]
    fn holds_back_split_characters_and_matches_full_decode() {
        let tok = Tokenizer::qwen3_6();
        for text in ["混合English和中文", "👨‍👩‍👧‍👦 🇫🇷 ok", "a\u{301}\u{338}", "<|im_start|>user\n你好<|im_end|>"] {
            let ids = tok.encode(text);
            let mut dec = tok.stream_decoder();
            let mut streamed = String::new();
            for &id in &ids {
                let piece = dec.push(id).unwrap();
                assert!(!piece.contains(char::REPLACEMENT_CHARACTER), "{text:?}: emitted a partial character");
                streamed.push_str(&piece);
            }
            streamed.push_str(&dec.finish());
            assert_eq!(streamed, tok.decode(&ids).unwrap());
        }
    }

    #[test]
    fn invalid_bytes_become_replacement_characters_as_in_full_decode() {
        let tok = Tokenizer::qwen3_6();
        // Byte tokens: 0xE4 0xBD (first two bytes of 你) then 'a', then a lone 0xE4 at the end.
        let byte = |b: u8| (0..tok.vocab_size() as u32).find(|&id| tok.token_bytes(id) == Some(&[b][..])).unwrap();
        let ids = [byte(0xE4), byte(0xBD), byte(b'a'), byte(0xE4)];
        let mut dec = tok.stream_decoder();
        let mut streamed = String::new();
        for &id in &ids {
            streamed.push_str(&dec.push(id).unwrap());
        }
        assert_eq!(streamed, "\u{FFFD}a");
        streamed.push_str(&dec.finish());
        assert_eq!(streamed, tok.decode(&ids).unwrap());
        assert_eq!(streamed, "\u{FFFD}a\u{FFFD}");
    }
}
