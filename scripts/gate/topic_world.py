"""Topic rows in the gate's 14 languages: the frames of topic_frames.py filled with the terms of
topic_terms.py, `faker` names of each language ({NAME}) and the writer's people ({REL}).

`world_sample(rng, lang)` gives (text, labels, template id): a personal frame with a topic's term
is labelled with the topic; a general frame, or any frame with a benign (`none`) term, is not.
The template id is the frame, so that calibration holds out whole frames. Training only; the
held-out frames and terms (the last of each list) are kept for evaluation items.
"""

from faker import Faker

from topic_frames import FRAMES, GENERIC, REL, REL_OBLIQUE
from topic_terms import EVERYDAY, TERMS

LANGS = ["en", "de", "fr", "es", "it", "pt", "nl", "zh", "ja", "ko", "ar", "ru", "hi", "tr"]
FAKER_LOCALE = {
    "en": "en_GB", "de": "de_DE", "fr": "fr_FR", "es": "es_ES", "it": "it_IT", "pt": "pt_BR", "nl": "nl_NL",
    "zh": "zh_CN", "ja": "ja_JP", "ko": "ko_KR", "ar": "ar_AA", "ru": "ru_RU", "hi": "hi_IN", "tr": "tr_TR",
}
BENIGN_SHARE = 0.45
PERSONAL_SHARE = 0.5
_NAMES = {}


def names(lang):
    """200 full names and 200 given names of the language, seeded: the same on every run with
    the same `faker` version (scripts/gate/requirements-train.txt pins it)."""
    if lang not in _NAMES:
        fake = Faker(FAKER_LOCALE[lang])
        fake.seed_instance(4242)
        _NAMES[lang] = [fake.name() for _ in range(200)] + [fake.first_name() for _ in range(200)]
    return _NAMES[lang]


def held_out(items, heldout):
    """The last item of a list is kept for evaluation, the others for training."""
    return items[-1:] if heldout else items[:-1]


def fill(rng, lang, frame, term):
    text = frame.replace("{T}", term)
    for slot, pool in (("{REL}", REL[lang]), ("{RELO}", REL_OBLIQUE.get(lang, REL[lang])), ("{NAME}", names(lang))):
        while slot in text:
            text = text.replace(slot, rng.choice(pool), 1)
    return text.replace("{AGE}", str(rng.randint(3, 15)))


def world_sample(rng, lang, heldout=False):
    if lang in EVERYDAY and rng.random() < 0.15:
        text = rng.choice(held_out(EVERYDAY[lang], heldout))
        return text, [], text
    topic = "none" if rng.random() < BENIGN_SHARE else rng.choice([t for t in TERMS if t != "none"])
    kinds = TERMS[topic][lang]
    kind = rng.choice(sorted(kinds))
    term = rng.choice(held_out(kinds[kind].split("|"), heldout))
    personal = rng.random() < PERSONAL_SHARE
    if personal:
        frames = held_out(FRAMES[lang][kind][0], heldout)
    else:
        frames = held_out(FRAMES[lang][kind][1], heldout) + held_out(GENERIC[lang], heldout)
    frame = rng.choice(frames)
    text = fill(rng, lang, frame, term)
    labels = [topic] if personal and topic != "none" else []
    if topic != "none" and rng.random() < 0.25:
        # A benign first-person sentence beside the disclosure: the topic is in the term, not in
        # the length or the company of the text.
        kind2 = rng.choice(sorted(TERMS["none"][lang]))
        benign = fill(rng, lang, rng.choice(held_out(FRAMES[lang][kind2][0], heldout)),
                      rng.choice(held_out(TERMS["none"][lang][kind2].split("|"), heldout)))
        text = f"{benign} {text}" if rng.random() < 0.5 else f"{text} {benign}"
    return text, labels, frame
