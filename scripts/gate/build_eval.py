"""Turns the hand-written sets of crates/gate/data (handwritten.txt, blind.txt .. blind8.txt, blind8_adv.txt,
first_person.txt, dev_identifiers.txt, dev_multilingual.txt)
(inline [text]{category} markup) into crates/gate/data/eval_<name>.jsonl with byte offsets.

    python scripts/gate/build_eval.py             # the sets above
    python scripts/gate/build_eval.py dev_names   # named sets only: <name>.txt -> eval_<name>.jsonl
"""

import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "crates/gate/data"
MARK = re.compile(r"\[([^\]]+)\]\{([a-z_]+)\}")
CATEGORIES = {
    "email", "phone", "payment_card", "iban", "national_id", "passport", "drivers_licence", "ip_address",
    "mac_address", "url_credentials", "secret", "crypto_wallet", "date_of_birth", "street_address",
    "medical_record", "insurance_number", "person", "location", "organization",
}
TOPICS = {
    "health", "mental_health", "sexuality", "religion", "politics", "ethnicity", "finances", "legal", "children",
    "biometrics", "immigration", "criminal_history",
}
DECISIONS = {"allow", "mask", "consent", "local", "refuse"}


def parse(line, n):
    locale, decision, topics, marked = line.split("\t")
    assert decision in DECISIONS, f"line {n}: decision {decision}"
    topics = [] if topics == "-" else topics.split(",")
    assert set(topics) <= TOPICS, f"line {n}: topics {topics}"
    marked = marked.replace("\\n", "\n")
    text, spans, pos = "", [], 0
    for m in MARK.finditer(marked):
        text += marked[pos : m.start()]
        start = len(text.encode())
        text += m.group(1)
        assert m.group(2) in CATEGORIES, f"line {n}: category {m.group(2)}"
        spans.append({"start": start, "end": len(text.encode()), "category": m.group(2)})
        pos = m.end()
    text += marked[pos:]
    assert "[" not in text or "]{" not in text, f"line {n}: unparsed markup"
    return {"locale": locale, "text": text, "spans": spans, "topics": topics, "decision": decision}


def build(name, prefix):
    rows = []
    for n, line in enumerate((DATA / f"{name}.txt").read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        item = parse(line, n)
        rows.append({"id": f"{prefix}-{len(rows):03d}", "source": name, **item})
    with open(DATA / f"eval_{name}.jsonl", "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} {name} items", file=sys.stderr)


# Every set: file stem and id prefix.
SETS = [
    ("handwritten", "hw"), ("blind", "blind"), ("blind2", "blind2"), ("first_person", "fp"),
    ("blind3", "blind3"), ("blind4", "blind4"), ("blind5", "blind5"), ("blind6", "blind6"),
    ("dev_identifiers", "devid"), ("dev_multilingual", "devml"), ("dev_names", "dev_names"),
    ("blind7", "blind7"), ("blind8", "blind8"), ("blind8_adv", "blind8_adv"),
]


def main():
    """Builds every set, or only the sets named as arguments."""
    known = dict(SETS)
    wanted = sys.argv[1:] or [name for name, _ in SETS]
    unknown = [name for name in wanted if name not in known]
    if unknown:
        sys.exit(f"unknown set(s) {unknown}; known: {sorted(known)}")
    for name in wanted:
        build(name, known[name])


if __name__ == "__main__":
    main()
