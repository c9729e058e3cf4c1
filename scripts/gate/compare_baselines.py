"""Leak and friction of two public baselines beside Lily's gate, per evaluation set, in one run.

    python scripts/gate/compare_baselines.py [--lily target/release/lily] [FILE.jsonl ...]

Baselines (install into a virtual environment of their own, see scripts/gate/README.md):
- Presidio's pattern recognizers (presidio-analyzer), without a spaCy model: an NLP engine stub
  gives them no tokens and no named entities, so only the regular-expression recognizers (with
  their checksums) run. Every locale is analysed as English, where Presidio has most recognizers,
  and also in the item's own language where Presidio has recognizers for it.
- detect-secrets with its default plugins, line by line.

Their findings become decisions with the gold rule of crates/gate/data/README.md: a secret
(detect-secrets) -> refuse; an identifier (a Presidio entity other than places, dates, URLs and
groups, which the gold allows) -> mask; else allow. Neither finds topics, so they never answer
`local` or `consent`. Leak and friction are computed as `lily gate eval` computes them: a leak is
a sensitive item allowed, masked while the gold keeps it (local, consent, refuse), or masked with a
gold identifier or name still visible; friction is a benign item not allowed. Lily's numbers come
from `lily gate eval --corpus FILE` on the same file.

Without FILE arguments the committed non-blind sets are compared (`SETS`).
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "crates/gate/data"
# The committed sets (a blind set is listed only after its single measurement).
SETS = [
    "generated", "handwritten", "blind", "blind2", "first_person", "blind3", "blind4", "blind5", "blind6", "blind7",
    "dev_multilingual", "dev_identifiers", "dev_names",
]
# Presidio entities the gold allows: places, dates and times, URLs without credentials, and
# nationality/religious/political groups (a topic, which Presidio does not decide on).
ALLOWED_ENTITIES = {"LOCATION", "DATE_TIME", "URL", "NRP"}
PRESIDIO_THRESHOLD = 0.4
IDENTIFIER_GOLD = {
    "email", "phone", "payment_card", "iban", "national_id", "passport", "drivers_licence", "ip_address",
    "mac_address", "url_credentials", "secret", "crypto_wallet", "date_of_birth", "street_address",
    "medical_record", "insurance_number", "person",
}


def presidio_analyzer():
    import tldextract
    from presidio_analyzer import AnalyzerEngine, RecognizerRegistry
    from presidio_analyzer.nlp_engine import NlpArtifacts, NlpEngine

    # The e-mail recognizer checks domains against the public suffix list; the copy bundled with
    # tldextract, instead of a download at first use (this machine may have no network).
    tldextract.tldextract.TLD_EXTRACTOR = tldextract.TLDExtract(suffix_list_urls=())

    class NoNlp(NlpEngine):
        """No model: no tokens, no named entities; the pattern recognizers still run."""

        def __init__(self, languages):
            self.languages = languages

        def load(self):
            pass

        def is_loaded(self):
            return True

        def process_text(self, text, language):
            return NlpArtifacts(entities=[], tokens=[], tokens_indices=[], lemmas=[], nlp_engine=self, language=language)

        def process_batch(self, texts, language, **kwargs):
            for t in texts:
                yield t, self.process_text(t, language)

        def is_stopword(self, word, language):
            return False

        def is_punct(self, word, language):
            return False

        def get_supported_entities(self):
            return []

        def get_supported_languages(self):
            return self.languages

    languages = ["en", "es", "it", "pl", "fi", "ko", "de", "fr", "nl", "pt"]
    nlp = NoNlp(languages)
    registry = RecognizerRegistry(supported_languages=languages)
    registry.load_predefined_recognizers(languages=languages, nlp_engine=nlp)
    having = {r.supported_language for r in registry.recognizers}
    engine = AnalyzerEngine(registry=registry, nlp_engine=nlp, supported_languages=languages)
    return engine, having


def secrets_in(text, scratch):
    """detect-secrets as `detect-secrets scan FILE` runs it: its ad-hoc string scan searches
    eagerly and calls every word of prose a high-entropy string."""
    from detect_secrets import SecretsCollection
    from detect_secrets.settings import default_settings

    scratch.write_text(text, encoding="utf-8")
    found = SecretsCollection()
    with default_settings():
        found.scan_file(str(scratch))
    return [s for _, s in found]


def baseline_decision(item, presidio, having, scratch):
    text = item["text"]
    if secrets_in(text, scratch):
        return "refuse", text
    spans = []
    for language in {"en", item.get("locale", "en")} & having:
        for r in presidio.analyze(text=text, language=language, score_threshold=PRESIDIO_THRESHOLD):
            if r.entity_type not in ALLOWED_ENTITIES:
                spans.append((r.start, r.end))
    if not spans:
        return "allow", text
    # Presidio offsets are characters; the mask replaces every found range.
    chars = list(text)
    for start, end in spans:
        for i in range(start, end):
            chars[i] = "\0"
    masked = re.sub("\0+", "<PII>", "".join(chars))
    return "mask", masked


def leaks(item, decision, sent):
    gold = item["decision"]
    if gold == "allow" or decision in ("consent", "local", "refuse"):
        return False
    if decision == "allow" or gold in ("local", "refuse", "consent"):
        return True
    raw = item["text"].encode()
    return any(
        s["category"] in IDENTIFIER_GOLD and raw[s["start"] : s["end"]].decode() in sent for s in item["spans"]
    )


def lily_rates(lily, path):
    """(leaks, sensitive, held back, benign, ids of the leaked items) from the eval report."""
    out = subprocess.run(
        [lily, "gate", "eval", "--items", "--corpus", str(path)], capture_output=True, text=True, check=True
    ).stdout
    leak = re.search(r"Leak rate [\d.]+% \((\d+) of (\d+)", out)
    friction = re.search(r"Friction [\d.]+% \((\d+) of (\d+)", out)
    leaked = set(re.findall(r"^leak: (\S+) \(gold", out, re.M))
    return int(leak[1]), int(leak[2]), int(friction[1]), int(friction[2]), leaked


def rate(n, d):
    return f"{100 * n / d:6.2f}% ({n}/{d})" if d else "     -"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument("--lily", default=str(ROOT / "target/release/lily"))
    args = ap.parse_args()
    files = args.files or [DATA / f"eval_{name}.jsonl" for name in SETS]
    presidio, having = presidio_analyzer()
    scratch = Path(tempfile.mkdtemp()) / "item.txt"
    # The last column: leak among the items whose gold is `mask` for identifiers alone (no name,
    # topic or secret), the part of the task pattern recognizers attempt.
    print(f"{'set':<18} {'system':<26} {'leak':>16} {'friction':>16} {'leak, identifiers':>18}")
    for path in files:
        items = [json.loads(l) for l in path.read_text(encoding="utf-8").splitlines() if l.strip()]
        sensitive = [i for i in items if i["decision"] != "allow"]
        benign = [i for i in items if i["decision"] == "allow"]
        results = {id(i): baseline_decision(i, presidio, having, scratch) for i in items}
        leaked = sum(leaks(i, *results[id(i)]) for i in sensitive)
        held = sum(results[id(i)][0] != "allow" for i in benign)
        masks = [
            i for i in sensitive if i["decision"] == "mask" and all(s["category"] != "person" for s in i["spans"])
        ]
        leaked_masks = sum(leaks(i, *results[id(i)]) for i in masks)
        name = path.stem.removeprefix("eval_")
        print(
            f"{name:<18} {'Presidio + detect-secrets':<26} {rate(leaked, len(sensitive)):>16} "
            f"{rate(held, len(benign)):>16} {rate(leaked_masks, len(masks)):>18}"
        )
        ll, ls, lh, lb, lily_leaked = lily_rates(args.lily, path)
        lm = sum(i["id"] in lily_leaked for i in masks)
        print(f"{'':<18} {'Lily gate':<26} {rate(ll, ls):>16} {rate(lh, lb):>16} {rate(lm, len(masks)):>18}")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
