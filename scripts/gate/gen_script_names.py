"""Generated test items for person names in the 14 languages of the gate: names drawn from the
`faker` package's person providers (seeded) in sentence frames per language that put them in
the positions the name rules know (after a title, greeting or word of relation, before an
honorific, beside a contact detail, mentioned again later). Frames are written here, not taken
from any evaluation set; each item is labelled like handwritten.txt.

    python -m venv /tmp/fk && /tmp/fk/bin/pip install faker
    /tmp/fk/bin/python scripts/gate/gen_script_names.py      # -> crates/gate/data/eval_script_names.jsonl
    cargo run --release -p lily-cli -- gate eval --corpus crates/gate/data/eval_script_names.jsonl

It measures recall over many names (most of them on the rules' lists, which come from the same
provider; the frames and the combinations are new) and that a masked text keeps no mention.
Precision is measured on the hand-written hard negatives of dev_names.txt.
"""

import json
import random
import re
import sys
from pathlib import Path

from faker import Faker

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "crates/gate/data/eval_script_names.jsonl"
SEED = 20260
PER_FRAME = 3

# locale of the item, faker locale, frames. {F} given name, {L} surname, {N} full name as the
# locale writes it; {E} an e-mail address made of the name. Brackets mark the gold spans.
FRAMES = {
    "en": ("en_US", [
        "My colleague [{F}] asked me to move the meeting to Thursday.",
        "Hi [{F}],\nthe slides are ready for review.",
        "Please forward the invoice to Mr [{L}] before noon.",
        "Contact: [{N}], [{E}]{{email}}",
        "Thanks again!\n\nBest,\n[{N}]",
    ]),
    "de": ("de_DE", [
        "Meine Kollegin [{F}] hat den Bericht schon geschickt.",
        "Bitte ruf Herrn [{L}] wegen des Angebots an.",
        "Danke!\n\nViele Grüße\n[{N}]",
        "Kontakt: [{N}], [{E}]{{email}}",
    ]),
    "fr": ("fr_FR", [
        "Bonjour [{F}],\nmerci pour le compte rendu.",
        "Peux-tu répondre à Mme [{L}] avant midi ?",
        "Mon voisin [{F}] garde le chat ce week-end.",
    ]),
    "es": ("es_ES", [
        "Hola [{F}],\n¿puedes revisar el presupuesto?",
        "Mi compañero [{F}] me pidió el informe.",
        "Llama a la señora [{L}] por lo del contrato.",
    ]),
    "it": ("it_IT", [
        "Ciao [{F}],\nhai visto il preventivo?",
        "Il mio collega [{N}] arriva domani.",
        "Grazie,\n\nSaluti,\n[{N}]",
    ]),
    "pt": ("pt_PT", [
        "Olá [{F}],\npodes enviar o relatório?",
        "A minha colega [{F}] vai tratar do pedido.",
        "Contato: [{N}], [{E}]{{email}}",
    ]),
    "nl": ("nl_NL", [
        "Hoi [{F}],\nkun je het rooster aanpassen?",
        "Mijn buurman [{F}] komt vanavond de ladder terugbrengen.",
        "Bedankt!\n\nMet vriendelijke groet,\n[{N}]",
    ]),
    "zh": ("zh_CN", [
        "请把报告发给同事[{N}]。",
        "明天下午和[{N}]老师开会。",
        "请联系[{N}]经理确认订单。",
        "我叫[{N}]，想预约下周的会议室。",
        "[{N}]先生的包裹到了，请通知[{L}]先生来取。",
    ]),
    "ja": ("ja_JP", [
        "明日、[{L}]さんに資料を送ってください。",
        "[{N}]さんから連絡がありました。",
        "営業部の[{L}]課長に見積もりを送ってください。",
        "[{N}]に確認して。[{L}]さんは午後に戻ります。",
    ]),
    "ko": ("ko_KR", [
        "[{N}] 씨에게 전화해 주세요.",
        "내일 [{N}] 과장님과 회의가 있어요.",
        "[{F}]씨가 보고서를 보냈어요.",
    ]),
    "ru": ("ru_RU", [
        "[{N}] просила перенести встречу.",
        "Привет, [{F}]!\nТы видел отчёт?",
        "Передай документы господину [{L}].",
        "Тел. [{N}] [+7 916 {P}]{{phone}}",
    ]),
    "ar": ("ar_AA", [
        "أرسل التقرير إلى الدكتور [{N}] غدا.",
        "مرحبا [{F}]، هل وصلتك الفاتورة؟",
        "السيد [{N}] ينتظر الرد على رسالته.",
    ]),
    "hi": ("hi_IN", [
        "कृपया श्रीमती [{N}] को ईमेल भेजें।",
        "[{L}] जी ने रिपोर्ट भेज दी है।",
        "मेरे दोस्त [{F}] ने किताब लौटा दी।",
    ]),
    "tr": ("tr_TR", [
        "Yarın [{F}] Bey ile görüşeceğim.",
        "Merhaba [{F}],\nraporu gönderebilir misin?",
        "Arkadaşım [{N}] toplantıya gelecek.",
        "Faturayı [{F}] Hanım'a ilet.",
    ]),
}
MARK = re.compile(r"\[([^\]]+)\](?:\{([a-z_]+)\})?")
ASCII = str.maketrans("äöüßéèêëáàâíìóòôúùñçãõ", "aouseeeeaaaiiooouuncao")


def person(fake, locale, rng):
    """A given name, a surname and the full name as the locale writes it."""
    male = rng.random() < 0.5
    first = fake.first_name_male() if male else fake.first_name_female()
    last = fake.last_name_male() if male and hasattr(fake, "last_name_male") else fake.last_name()
    if locale in ("zh", "ja", "ko"):
        return first, last, last + first
    if locale == "ru":
        middle = fake.middle_name_male() if male else fake.middle_name_female()
        return first, last, f"{first} {middle}"
    return first, last, f"{first} {last}"


def item(locale, frame, names, rng, n):
    first, last, full = names
    local = re.sub(r"[^a-z.]", "", f"{first}.{last}".lower().translate(ASCII)) or "contact"
    filled = frame.format(F=first, L=last, N=full, E=f"{local}@gmail.com", P=f"{rng.randint(100, 999)} {rng.randint(10, 99)} {rng.randint(10, 99)}")
    text, spans, pos = "", [], 0
    for m in MARK.finditer(filled):
        text += filled[pos : m.start()]
        start = len(text.encode())
        text += m.group(1)
        spans.append({"start": start, "end": len(text.encode()), "category": m.group(2) or "person"})
        pos = m.end()
    text += filled[pos:]
    return {"id": f"script-{locale}-{n:03d}", "source": "script_names", "locale": locale, "text": text,
            "spans": spans, "topics": [], "decision": "mask"}


def main():
    rng = random.Random(SEED)
    rows = []
    for locale, (faker_locale, frames) in FRAMES.items():
        fake = Faker(faker_locale)
        fake.seed_instance(SEED)
        for frame in frames:
            for _ in range(PER_FRAME):
                rows.append(item(locale, frame, person(fake, locale, rng), rng, len(rows)))
    with open(OUT, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    print(f"wrote {len(rows)} items to {OUT.relative_to(ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
