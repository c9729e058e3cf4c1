"""Generates the learned tiers' training data and the generated part of the evaluation corpus.

    python scripts/gate/gen_data.py train OUT_DIR   # names_{train,dev}.jsonl, topics_{train,dev}.jsonl
    python scripts/gate/gen_data.py eval            # crates/gate/data/eval_generated.jsonl

Training and dev sets use the training templates and the training halves of the unseen-name
lists; the evaluation corpus uses the held-out templates and halves, a different seed, and adds
identifier items (valid checksums) for the pattern tier. Deterministic for a given seed.

Gold decisions (shared with build_eval.py, documented in crates/gate/src/eval.rs):
  refuse  if a secret is present;
  local   if a special-category topic is present (health, mental health, sexuality, religion,
          politics, ethnicity, biometrics, legal, immigration, criminal history);
  consent if personal finances or children is present;
  mask    if an identifier or a private person's name is present;
  allow   otherwise (places and organisations alone identify nobody).
"""

import json
import random
import string
import sys
from pathlib import Path

from compose import compose
from everyday import everyday_sample
from topic_lexicon import identity_sample, lexicon_sample
from entities import Filler
from features import tokenize
from names_templates import HELDOUT as NAMES_HELDOUT, TEMPLATES as NAMES_TEMPLATES
from topic_templates import COND, MED, NEG_HELDOUT, NEGATIVES, HELDOUT as TOPIC_HELDOUT, TOPICS
from topic_world import LANGS as WORLD_LANGS, world_sample

ROOT = Path(__file__).resolve().parents[2]
LOCALES = ["en", "de", "fr", "es", "it", "nl", "pt"]
LOCAL_TOPICS = {
    "health", "mental_health", "sexuality", "religion", "politics", "ethnicity", "biometrics", "legal",
    "immigration", "criminal_history",
}
CONSENT_TOPICS = {"finances", "children"}
SECRETS = {"secret", "url_credentials"}
NAME_KINDS = {"person", "location", "organization"}


def gold_decision(spans, topics):
    cats = {s[2] for s in spans}
    if cats & SECRETS:
        return "refuse"
    if set(topics) & LOCAL_TOPICS:
        return "local"
    if set(topics) & CONSENT_TOPICS:
        return "consent"
    if cats - {"location", "organization"}:
        return "mask"
    return "allow"


def split(items, n_heldout, heldout):
    return items[len(items) - n_heldout :] if heldout else items[: len(items) - n_heldout]


PREFIX = {
    "en": ["", "", "", "Hi, ", "Quick question: ", "Please help. ", "Hey there! "],
    "de": ["", "", "Hallo, ", "Kurze Frage: ", "Bitte hilf mir. "],
    "fr": ["", "", "Bonjour, ", "Petite question : "],
    "es": ["", "", "Hola, ", "Una pregunta: "],
    "it": ["", "", "Ciao, ", "Una domanda: "],
    "nl": ["", "", "Hoi, ", "Snelle vraag: "],
    "pt": ["", "", "Olá, ", "Uma pergunta: "],
}
SUFFIX = {
    "en": ["", "", "", " Thanks!", " Keep it short.", " Answer in bullet points."],
    "de": ["", "", " Danke!", " Bitte kurz."],
    "fr": ["", "", " Merci !"],
    "es": ["", "", " ¡Gracias!"],
    "it": ["", "", " Grazie!"],
    "nl": ["", "", " Bedankt!"],
    "pt": ["", "", " Obrigado!"],
}


def names_template(rng, locale, heldout):
    if rng.random() < 0.45:
        return compose(rng, locale, heldout)
    return rng.choice(split(NAMES_TEMPLATES[locale], NAMES_HELDOUT[locale], heldout))


def names_sample(rng, filler, locale, heldout):
    text, spans = filler.fill(names_template(rng, locale, heldout), NAME_KINDS)
    if rng.random() < 0.25:
        # Two sentences: names after a sentence end, and capitalised sentence starts mid-text.
        more, more_spans = filler.fill(names_template(rng, locale, heldout), NAME_KINDS)
        off = len(text.encode()) + 1
        text += " " + more
        spans += [(s + off, e + off, c) for s, e, c in more_spans]
    return text, spans


def topic_text(rng, locale, template):
    return (
        template.replace("{COND}", rng.choice(COND[locale]))
        .replace("{MED}", rng.choice(MED))
        .replace("{AGE}", str(rng.randint(2, 15)))
        .replace("{AMT}", f"{rng.randint(18, 95)}00")
    )


def topic_sample(rng, filler, locale, heldout, with_names=True):
    """A text, its topic labels and the template ids it came from: one or two topic sentences,
    benign sentences, or names sentences (which must not look like topics), with greetings and
    sign-offs around. Template ids let train_topics.py calibrate on templates it did not train on."""
    r = rng.random() * (1.0 if with_names else 0.8)
    labels = set()
    parts, tids = [], []
    if not heldout and rng.random() < 0.45:
        text, lab, tid = lexicon_sample(rng, locale)
        labels |= set(lab)
        parts.append(text)
        tids.append(tid)
    elif r < 0.5:
        pool = split(TOPICS[locale], TOPIC_HELDOUT[locale], heldout)
        lab, t = rng.choice(pool)
        labels |= set(lab)
        parts.append(topic_text(rng, locale, t))
        tids.append(t)
        if rng.random() < 0.2:
            lab2, t2 = rng.choice(pool)
            labels |= set(lab2)
            parts.append(topic_text(rng, locale, t2))
            tids.append(t2)
    elif r < 0.8:
        t = rng.choice(split(NEGATIVES[locale], NEG_HELDOUT[locale], heldout))
        parts.append(t)
        tids.append(t)
    else:
        parts.append(names_sample(rng, filler, locale, heldout)[0])
        tids.append("names")
    if rng.random() < 0.2:
        t = rng.choice(split(NEGATIVES[locale], NEG_HELDOUT[locale], heldout))
        parts.insert(rng.randrange(len(parts) + 1), t)
        tids.append(t)
    text = rng.choice(PREFIX[locale]) + " ".join(parts) + rng.choice(SUFFIX[locale])
    return text, sorted(labels), tids


def pick_locale(rng):
    # English and German carry the most templates; every locale is present.
    return rng.choices(LOCALES, weights=[4, 3, 2, 2, 1, 1, 1])[0]


# Political parties named in the topic templates: organisations.
PARTIES = ["Greens", "Labour party", "Republican party", "AfD", "SPD", "Rassemblement national", "Vox", "Lega", "PVV", "Chega"]
_PLACE_SEQS = None


def annotate(text):
    """Gold name spans of a topic or benign text, which has no slots: the places of the
    gazetteer and the unseen list, and the parties, matched as capitalised token sequences."""
    global _PLACE_SEQS
    if _PLACE_SEQS is None:
        from entities import GAZ_PLACES, UNSEEN_PLACES
        _PLACE_SEQS = [(tuple(t for _, _, t in tokenize(p)), "location") for p in GAZ_PLACES + UNSEEN_PLACES]
        _PLACE_SEQS += [(tuple(t for _, _, t in tokenize(p)), "organization") for p in PARTIES]
        _PLACE_SEQS.sort(key=lambda x: -len(x[0]))
    toks = tokenize(text)
    words = [t for _, _, t in toks]
    spans, i = [], 0
    while i < len(toks):
        for seq, cat in _PLACE_SEQS:
            if tuple(words[i : i + len(seq)]) == seq:
                spans.append((toks[i][0], toks[i + len(seq) - 1][1], cat))
                i += len(seq)
                break
        else:
            i += 1
    return spans


# ---- identifiers (evaluation only: the pattern tier is not trained) -----------------------

def luhn_complete(prefix, length, rng):
    digits = [int(c) for c in prefix] + [rng.randrange(10) for _ in range(length - len(prefix) - 1)]
    total = 0
    for i, d in enumerate(reversed(digits)):
        d = d * 2 if i % 2 == 0 else d
        total += d - 9 if d > 9 else d
    return "".join(map(str, digits)) + str((10 - total % 10) % 10)


def iban(rng):
    country, bban = rng.choice([
        ("DE", "".join(rng.choice(string.digits) for _ in range(18))),
        ("FR", "".join(rng.choice(string.digits) for _ in range(23))),
        ("ES", "".join(rng.choice(string.digits) for _ in range(20))),
        ("NL", "".join(rng.choice("ABNRIG") for _ in range(4)) + "".join(rng.choice(string.digits) for _ in range(10))),
        ("IT", rng.choice(string.ascii_uppercase) + "".join(rng.choice(string.digits) for _ in range(22))),
        ("PT", "".join(rng.choice(string.digits) for _ in range(21))),
    ])
    numeric = "".join(str(int(c, 36)) for c in bban + country + "00")
    check = 98 - int(numeric) % 97
    raw = f"{country}{check:02d}{bban}"
    return " ".join(raw[i : i + 4] for i in range(0, len(raw), 4)) if rng.random() < 0.6 else raw


def card(rng):
    num = luhn_complete(rng.choice(["4", "51", "53", "55"]), 16, rng)
    sep = rng.choice([" ", "-", ""])
    return sep.join(num[i : i + 4] for i in range(0, 16, 4))


def phone(rng):
    d = lambda n: "".join(rng.choice(string.digits) for _ in range(n))
    return rng.choice([
        f"+49 30 {d(8)}", f"+49 151 {d(8)}", f"+33 6 {d(2)} {d(2)} {d(2)} {d(2)}", f"+34 6{d(2)} {d(3)} {d(3)}",
        f"+39 3{d(2)} {d(3)} {d(4)}", f"+31 6 {d(8)}", f"+351 91{d(1)} {d(3)} {d(3)}", f"+44 7{d(3)} {d(6)}",
        f"+1 {rng.randint(201, 989)} {rng.randint(201, 989)} {d(4)}",
    ])


def ssn(rng):
    area = rng.choice([a for a in range(1, 900) if a != 666])
    return f"{area:03d}-{rng.randint(1, 99):02d}-{rng.randint(1, 9999):04d}"


def secret(rng):
    alnum = string.ascii_letters + string.digits
    return rng.choice([
        "AKIA" + "".join(rng.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16)),
        "ghp_" + "".join(rng.choice(alnum) for _ in range(36)),
        "sk_live_" + "".join(rng.choice(alnum) for _ in range(24)),
    ])


IDENT = {
    "EMAIL": ("email", lambda rng, f: f"{f.rng.choice(f.first).lower()}.{f.rng.choice(['mueller', 'smith', 'dupont', 'garcia', 'rossi', 'devries', 'silva'])}{rng.randint(1, 99)}@{rng.choice(['gmail.com', 'web.de', 'orange.fr', 'outlook.com', 'libero.it', 'ziggo.nl', 'sapo.pt'])}"),
    "PHONE": ("phone", lambda rng, f: phone(rng)),
    "IBAN": ("iban", lambda rng, f: iban(rng)),
    "CARD": ("payment_card", lambda rng, f: card(rng)),
    "IP": ("ip_address", lambda rng, f: f"{rng.randint(11, 223)}.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}"),
    "MAC": ("mac_address", lambda rng, f: ":".join(f"{rng.randrange(256):02x}" for _ in range(6))),
    "SSN": ("national_id", lambda rng, f: ssn(rng)),
    "KEY": ("secret", lambda rng, f: secret(rng)),
}

IDENT_TEMPLATES = {
    "en": [
        "Please update my contact email to {EMAIL} and my number to {PHONE}.",
        "Wire the deposit to IBAN {IBAN} before Friday.",
        "My card {CARD} was charged twice, write a dispute letter.",
        "The server at {IP} keeps dropping connections, here is the log.",
        "Whitelist the device with MAC {MAC} on the office network.",
        "My SSN is {SSN}, fill in the form for me.",
        "Why does this fail? client = Client(api_key=\"{KEY}\")",
        "Call me at {PHONE} or write to {EMAIL}.",
        "Here is my new card: {CARD}. Update the subscription.",
        "Set AWS key {KEY} in the CI config for me.",
        "{P} asked me to send the refund to {IBAN}.",
        "Forward the invoice to {EMAIL}, attention {P}.",
    ],
    "de": [
        "Bitte ändere meine E-Mail auf {EMAIL} und meine Nummer auf {PHONE}.",
        "Überweise die Kaution bis Freitag auf {IBAN}.",
        "Meine Karte {CARD} wurde doppelt belastet.",
        "Der Server {IP} bricht ständig die Verbindung ab.",
        "{P} hat gebeten, die Erstattung an {IBAN} zu schicken.",
        "Ruf {P} unter {PHONE} an.",
    ],
    "fr": [
        "Mets à jour mon adresse {EMAIL} et mon numéro {PHONE}.",
        "Vire la caution sur l'IBAN {IBAN} avant vendredi.",
        "Ma carte {CARD} a été débitée deux fois.",
        "Envoie la facture à {EMAIL}, à l'attention de {P}.",
    ],
    "es": [
        "Actualiza mi correo a {EMAIL} y mi teléfono a {PHONE}.",
        "Transfiere la fianza al IBAN {IBAN}.",
        "Mi tarjeta {CARD} tiene un cargo doble.",
    ],
    "it": [
        "Aggiorna la mia email a {EMAIL} e il numero a {PHONE}.",
        "Fai il bonifico all'IBAN {IBAN}.",
    ],
    "nl": [
        "Wijzig mijn e-mail in {EMAIL} en mijn nummer in {PHONE}.",
        "Maak de borg over naar {IBAN}.",
    ],
    "pt": [
        "Atualiza o meu e-mail para {EMAIL} e o telefone para {PHONE}.",
        "Transfere a caução para o IBAN {IBAN}.",
    ],
}


def ident_sample(rng, filler, locale):
    template = rng.choice(IDENT_TEMPLATES[locale])
    out, spans, i = "", [], 0
    while i < len(template):
        if template[i] == "{":
            j = template.index("}", i)
            slot = template[i + 1 : j]
            if slot in IDENT:
                cat, make = IDENT[slot]
                value = make(rng, filler)
            else:
                value, cat = filler.slot(slot)
            start = len(out.encode())
            out += value
            if cat:
                spans.append((start, len(out.encode()), cat))
            i = j + 1
        else:
            out += template[i]
            i += 1
    return out, spans


# ---- writers ------------------------------------------------------------------------------

def write_jsonl(path, rows):
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} rows to {path}", file=sys.stderr)


def train_sets(out_dir, seed=1):
    for name, n, s in [("train", 24000, seed), ("dev", 3000, seed + 100)]:
        rng = random.Random(s)
        filler = Filler(rng, heldout=False)
        rows = []
        for _ in range(n):
            loc = pick_locale(rng)
            text, spans = names_sample(rng, filler, loc, heldout=False)
            rows.append({"text": text, "spans": spans})
        # Topic and benign texts teach the tagger that capitalised nouns, acronyms and
        # parties' contexts are not people.
        for _ in range(n // 6):
            text, _, _ = topic_sample(rng, filler, pick_locale(rng), heldout=False, with_names=False)
            rows.append({"text": text, "spans": annotate(text)})
        write_jsonl(out_dir / f"names_{name}.jsonl", rows)
        rows = []
        for _ in range(n):
            loc = pick_locale(rng)
            text, labels, tids = topic_sample(rng, filler, loc, heldout=False)
            rows.append({"text": text, "labels": labels, "templates": tids})
        # Everyday first-person requests (mostly benign) from a generator of their own, so that
        # the rows above and the names data stay what they were.
        day_rng = random.Random(s + 7)
        for _ in range(n):
            text, labels, tid = everyday_sample(day_rng, pick_locale(day_rng))
            rows.append({"text": text, "labels": labels, "templates": [tid]})
        # Religion, ethnicity and party membership in every locale, from a generator of their own
        # for the same reason.
        id_rng = random.Random(s + 11)
        for _ in range(n // 8):
            text, labels, tid = identity_sample(id_rng, pick_locale(id_rng))
            rows.append({"text": text, "labels": labels, "templates": [tid]})
        # All twelve topics in all fourteen languages, with faker names (topic_world.py), from a
        # generator of their own for the same reason.
        world_rng = random.Random(s + 13)
        for _ in range(n):
            text, labels, tid = world_sample(world_rng, world_rng.choice(WORLD_LANGS))
            rows.append({"text": text, "labels": labels, "templates": [tid]})
        write_jsonl(out_dir / f"topics_{name}.jsonl", rows)


def eval_set(path, seed=20261130):
    rng = random.Random(seed)
    filler = Filler(rng, heldout=True)
    rows = []

    def add(kind, loc, text, spans, topics):
        rows.append({
            "id": f"gen-{kind}-{loc}-{len(rows):04d}",
            "source": "generated",
            "locale": loc,
            "text": text,
            "spans": [{"start": s, "end": e, "category": c} for s, e, c in spans],
            "topics": topics,
            "decision": gold_decision(spans, topics),
        })

    for _ in range(420):
        loc = pick_locale(rng)
        text, spans = names_sample(rng, filler, loc, heldout=True)
        add("names", loc, text, spans, [])
    for _ in range(260):
        loc = pick_locale(rng)
        text, labels, _ = topic_sample(rng, filler, loc, heldout=True, with_names=False)
        add("topics", loc, text, annotate(text), labels)
    for _ in range(160):
        loc = pick_locale(rng)
        text, spans = ident_sample(rng, filler, loc)
        add("ident", loc, text, spans, [])
    write_jsonl(path, rows)


if __name__ == "__main__":
    if sys.argv[1:2] == ["train"]:
        train_sets(Path(sys.argv[2]))
    elif sys.argv[1:2] == ["eval"]:
        eval_set(ROOT / "crates/gate/data/eval_generated.jsonl")
    else:
        sys.exit(__doc__)
