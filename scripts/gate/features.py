"""Tokeniser and feature extraction shared by the training scripts.

This file is the Python twin of crates/gate/src/learned/features.rs. A model trained here is
only valid for Rust inference when both produce byte-identical feature strings; the tests in
crates/gate/tests/learned_features.rs check the Rust side against fixtures written by
`write_feature_fixture` below. Bump NAME_FEATURE_VERSION or TOPIC_FEATURE_VERSION in both files
on any change to that model's features (the tokeniser is shared: a change to it bumps both).
"""

from pathlib import Path

from unicode_alpha import is_other_alphabetic

NAME_FEATURE_VERSION = 4
TOPIC_FEATURE_VERSION = 5
GAZ_DIR = Path(__file__).resolve().parents[2] / "crates/gate/src/learned/gazetteers"


def is_word_char(ch):
    # Rust's char::is_alphanumeric: str.isalnum plus the marks of Other_Alphabetic.
    return ch.isalnum() or ch == "_" or is_other_alphabetic(ch)


# str.isspace counts the information separators U+001C..U+001F, Rust's char::is_whitespace does not.
_NOT_RUST_SPACE = set("\x1c\x1d\x1e\x1f")


def is_space(ch):
    return ch.isspace() and ch not in _NOT_RUST_SPACE


def tokenize(text):
    """Word runs (letters, digits, `_`, with inner `'`, `’` or `-` joining two runs) and single
    punctuation characters. Returns (start_byte, end_byte, token) triples."""
    out = []
    chars = list(text)
    offs = []
    b = 0
    for ch in chars:
        offs.append(b)
        b += len(ch.encode("utf-8"))
    offs.append(b)
    i, n = 0, len(chars)
    while i < n:
        ch = chars[i]
        if is_space(ch):
            i += 1
            continue
        if is_word_char(ch):
            j = i + 1
            while j < n:
                if is_word_char(chars[j]):
                    j += 1
                elif chars[j] in "'’-" and j + 1 < n and is_word_char(chars[j + 1]):
                    j += 2
                else:
                    break
            out.append((offs[i], offs[j], "".join(chars[i:j])))
            i = j
        else:
            out.append((offs[i], offs[i + 1], ch))
            i += 1
    return out


def shape(tok):
    s = []
    for ch in tok:
        if ch.isupper():
            c = "X"
        elif ch.islower():
            c = "x"
        elif ch.isnumeric():
            c = "d"
        else:
            c = "-"
        if not s or s[-1] != c:
            s.append(c)
    return "".join(s)


def fnv1a(s):
    h = 0x811C9DC5
    for byte in s.encode("utf-8"):
        h ^= byte
        h = (h * 0x01000193) & 0xFFFFFFFF
    return h


def _read_list(name):
    lines = (GAZ_DIR / name).read_text(encoding="utf-8").splitlines()
    return [l.strip() for l in lines if l.strip() and not l.startswith("#")]


def strip_possessive(w):
    for suffix in ("'s", "’s"):
        if w.endswith(suffix) and len(w) > len(suffix):
            return w[: -len(suffix)]
    return w


class Gazetteers:
    """Single-token sets for given names, surnames and organisation words; token-sequence sets
    for places and public/fictional names (matched longest first)."""

    def __init__(self):
        self.first = self._token_set(_read_list("first_names.txt"))
        self.last = self._token_set(_read_list("surnames.txt"))
        self.org = {t.lower() for t in _read_list("org_suffixes.txt")}
        self.titles = {t.lower() for t in _read_list("titles.txt")}
        self.places = self._seq_set(_read_list("places.txt"))
        self.public = self._seq_set(_read_list("public_names.txt"))
        self.orgnames = self._seq_set(_read_list("organisations.txt"))

    @staticmethod
    def _token_set(entries):
        out = set()
        for e in entries:
            for _, _, t in tokenize(e):
                if t[0].isupper():
                    out.add(t.lower())
        return out

    @staticmethod
    def _seq_set(entries):
        return {tuple(t.lower() for _, _, t in tokenize(e)) for e in entries}

    def seq_flags(self, lower, seqs):
        """Marks every token covered by a longest match of one of `seqs`."""
        flags = [False] * len(lower)
        maxlen = max(len(s) for s in seqs)
        i = 0
        while i < len(lower):
            for L in range(min(maxlen, len(lower) - i), 0, -1):
                if tuple(lower[i : i + L]) in seqs:
                    for k in range(i, i + L):
                        flags[k] = True
                    i += L
                    break
            else:
                i += 1
        return flags

    def flags(self, toks):
        # "Macron's" is looked up as "macron": the tokeniser keeps the possessive on the word.
        lower = [strip_possessive(t.lower()) for t in toks]
        places = self.seq_flags(lower, self.places)
        public = self.seq_flags(lower, self.public)
        orgnames = self.seq_flags(lower, self.orgnames)
        out = []
        for i, w in enumerate(lower):
            f = []
            if w in self.first:
                f.append("fn")
            if w in self.last:
                f.append("sn")
            if w in self.org:
                f.append("org")
            if places[i]:
                f.append("pl")
            if public[i]:
                f.append("pub")
            if w in self.titles:
                f.append("title")
            if orgnames[i]:
                f.append("orgn")
            out.append(f)
        return out


SENT_END = {".", "!", "?", ":", ";", '"', "«", "»", "“", "„", "¿", "¡", "(", "\n"}


def name_features(toks, gaz):
    """Feature strings for each token of one text, for the names tagger."""
    lower = [t.lower() for t in toks]
    shapes = [shape(t) for t in toks]
    flags = gaz.flags(toks)
    n = len(toks)

    def w(i):
        return lower[i] if 0 <= i < n else ("<s>" if i < 0 else "</s>")

    def sh(i):
        return shapes[i] if 0 <= i < n else "_"

    def g(i):
        return flags[i] if 0 <= i < n else []

    feats = []
    for i in range(n):
        chars = lower[i]
        cap = toks[i][0].isupper()
        first = i == 0 or toks[i - 1] in SENT_END
        f = [
            "b",
            "w=" + chars,
            "p3=" + chars[:3],
            "s3=" + chars[-3:],
            "s2=" + chars[-2:],
            "sh=" + sh(i),
            "w-1=" + w(i - 1),
            "w+1=" + w(i + 1),
            "w-2=" + w(i - 2),
            "w+2=" + w(i + 2),
            "sh-1=" + sh(i - 1),
            "sh+1=" + sh(i + 1),
            "w-1|sh=" + w(i - 1) + "|" + sh(i),
            "sh+1|w+1=" + sh(i) + "|" + w(i + 1),
            "shs=" + sh(i - 1) + "|" + sh(i) + "|" + sh(i + 1),
            "w-2|w-1=" + w(i - 2) + "|" + w(i - 1),
        ]
        if first:
            f.append("first|sh=" + sh(i))
        for x in g(i):
            f.append("g=" + x)
            f.append("g=" + x + "|cap=" + str(cap))
            if first:
                f.append("g=" + x + "|first")
        for x in g(i - 1):
            f.append("g-1=" + x)
        for x in g(i + 1):
            f.append("g+1=" + x)
        for x in g(i - 2):
            f.append("g-2=" + x)
        for x in g(i + 2):
            f.append("g+2=" + x)
        feats.append(f)
    return feats


def topic_features(toks):
    """Feature strings of one text for the topic classifier: lowercased words, word bigrams,
    5-character prefixes (a cheap stem that carries across inflections in all locales) and
    character n-grams (`char_ngrams`)."""
    words = [t.lower() for t in toks if is_word_char(t[0])]
    f = {"b"}
    prev = "<s>"
    for w in words:
        f.add("u=" + w)
        f.add("bg=" + prev + " " + w)
        if len(w) > 5:
            f.add("p5=" + w[:5])
        f.update(char_ngrams(w))
        prev = w
    return sorted(f)


# Scripts written without spaces between words (Han, kana) or with particles fused to the word
# (Hangul).
UNSPACED = [
    (0x1100, 0x11FF), (0x3040, 0x30FF), (0x3130, 0x318F), (0x31F0, 0x31FF), (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF), (0xAC00, 0xD7AF), (0xF900, 0xFAFF), (0xFF66, 0xFF9F), (0x20000, 0x3134F),
]


def is_unspaced(ch):
    return any(a <= ord(ch) <= b for a, b in UNSPACED)


def char_ngrams(w):
    """Bigrams and trigrams of a word in an unspaced script, trigrams of any other word of four
    characters or more."""
    unspaced = any(is_unspaced(ch) for ch in w)
    if not unspaced and len(w) < 4:
        return []
    out = ["c3=" + w[i : i + 3] for i in range(len(w) - 2)]
    if unspaced:
        out += ["c2=" + w[i : i + 2] for i in range(len(w) - 1)]
    return out


def hashed(feats, log2_buckets):
    mask = (1 << log2_buckets) - 1
    return [fnv1a(x) & mask for x in feats]


def write_feature_fixture(path):
    """Feature strings of a few texts that exercise the tokeniser's edge cases, for the Rust
    twin's test (crates/gate/tests/learned_features.rs)."""
    import json

    texts = [
        "Mein Nachbar Hans Müller wohnt in New York, O'Brien-Smith ist 42.",
        "¿Qué dijo Pedro Sánchez en Bruxelles?  Dr. Weber — 3.5 mg; “quoted” İstanbul ½ x_y",
        "iPhone 15 Pro, ISBN 978-3-16-148410-0, order AB-4431-X\nthanks",
        "",
        "Zoë's café l’été Jean-Pierre, Macron's plan, Emmanuel Macron’s speech",
        "Frau Dr. Weber von der Deutschen Bank und Markus Feldhaus (Deutsche Bank AG) in Den Haag",
        "我的签证下个月到期，我妈妈在医院做化疗。私の夫は透析を受けています、ｶﾀｶﾅ",
        "제 아내가 항우울제를 먹고 있어요. 남편은 HIV 양성입니다",
        "زوجي يتناول الأنسولين وبالسرطان مُشخَّص، تأشيرتي انتهت",
        "मेरी माँ का डायलिसिस होता है, उन्हें कैंसर है। मुझे वीज़ा चाहिए",
        "У моего брата судимость, диализ три раза в неделю. Oturma iznim bitti, kemoterapi alıyorum",
        "sep\x1carated\u200bzero-width \u0301accent ⓐⓑ",
    ]
    gaz = Gazetteers()
    rows = []
    for t in texts:
        toks = tokenize(t)
        words = [w for _, _, w in toks]
        rows.append({
            "text": t,
            "tokens": [[s, e] for s, e, _ in toks],
            "name_features": name_features(words, gaz),
            "topic_features": topic_features(words),
        })
    with open(path, "w", encoding="utf-8") as f:
        json.dump(rows, f, ensure_ascii=False, indent=0)


if __name__ == "__main__":
    import sys

    write_feature_fixture(sys.argv[1])
