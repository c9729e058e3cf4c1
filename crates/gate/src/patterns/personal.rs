//! Identifiers recognised by a word nearby: passport, identity card and driver's licence numbers, medical
//! record and insurance numbers (UK NHS numbers also by their check digit), dates of birth.

use std::sync::LazyLock;

use regex::Regex;

use super::checksum::nhs_number;
use super::context::{ascii_digits, before, span, word_bounded};
use crate::span::{Category, Span};

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("personal id regex")
}

/// An id-shaped token: 5 to 20 letters, digits and inner hyphens, at least three digits.
static ID_TOKEN: LazyLock<Regex> =
    LazyLock::new(|| re(r"[A-Za-z0-9](?:[A-Za-z0-9\-/]{3,18})[A-Za-z0-9]"));
/// Which kind of number the nearest keyword before a token announces.
static ID_WORD: LazyLock<Regex> = LazyLock::new(|| {
    re(concat!(
        r"(?i)(?P<passport>passport|reisepass|passeport|pasaporte|passaporto|passaporte|paspoort|pasaport|паспорт|护照|護照|パスポート|旅券|여권|جواز|पासपोर्ट)",
        r"|(?P<id_card>identity\s+(?:card|number|document)|national\s+id(?:entity)?|(?-u:\b)id[\s\-]card|personalausweis|ausweisnummer|carte\s+(?:nationale\s+)?d'identit[ée]|documento\s+(?:nacional\s+)?de\s+identidad|carta\s+d'identit[àa]|cart[ãa]o\s+de\s+cidad[ãa]o|bilhete\s+de\s+identidade|identiteitskaart|identiteitsbewijs|id-kaart|身份证|身分證|신분증|удостоверени[ея]\s+личности|بطاقة\s+الهوية|الهوية\s+الوطنية|الرقم\s+القومي|(?-u:\b)iqama|الإقامة|पहचान\s+पत्र|वोटर\s+आईडी|voter\s+id|n[üu]fus\s+c[üu]zdan\w*|kimlik\s+kart\w*)",
        r"|(?P<licence>driver'?s?\s+licen[cs]e|driving\s+licen[cs]e|licen[cs]e\s+(?:no|number|#)|(?-u:\b)DL\s*(?:no|#|number)?(?-u:\b)|f(?:ü|ue)hrerschein|permis\s+de\s+conduire|licencia\s+de\s+conducir|carnet\s+de\s+conducir|patente\s+di\s+guida|rijbewijs)",
        r"|(?P<medical>(?-u:\b)MRN(?-u:\b)|medical\s+record|patient\s+(?:id|number|no)|chart\s+(?:no|number)|hospital\s+(?:number|no)|health\s+record|(?-u:\b)NHS(?-u:\b)|krankenakte|patientennummer|dossier\s+m[ée]dical|historia\s+cl[ií]nica)",
        r"|(?P<insurance>insurance|policy\s+(?:no|number|#)|member\s+id|subscriber\s+id|medicare|medicaid|group\s+(?:no|number)|versicherungsnummer|versichertennummer|krankenversicherung|assurance|seguro|assicurazione|(?-i:(?-u:\b)AHV(?-u:\b)|(?-u:\b)SVNR(?-u:\b)))",
    ))
});
/// Keyword and token must be this close, with only filler words between.
const WINDOW: usize = 48;
static FILLER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^[\s:#=\-–.,()]*(?:(?:no|nr|number|num|id|is|was|#|card|details?|reads|ends|in|with|the|my|his|her|their|of|n[º°o]|numéro|nummer|número|numero|numara\w{0,4}|номер|серия|и|№|号码|號碼|号|番号|は|번호|는|은|رقم|السفر|نمبر|नंबर|संख्या|:)[\s:#=\-–.,()]*){0,5}$",
    )
});

pub fn scan_contextual_ids(text: &str, out: &mut Vec<Span>) {
    for m in ID_TOKEN.find_iter(text) {
        let token = m.as_str();
        if ascii_digits(token).len() < 3
            || !word_bounded(text, m.start(), m.end())
            || looks_like_date(token)
        {
            continue;
        }
        let window = before(text, m.start(), WINDOW);
        let Some(caps) = ID_WORD.captures_iter(window).last() else {
            continue;
        };
        let keyword_end = caps.get(0).expect("whole match").end();
        if !FILLER.is_match(&window[keyword_end..]) {
            continue;
        }
        let (category, detector) = if caps.name("passport").is_some() {
            (Category::Passport, "passport_in_context")
        } else if caps.name("id_card").is_some() {
            (Category::NationalId, "id_card_in_context")
        } else if caps.name("licence").is_some() {
            (Category::DriversLicence, "drivers_licence_in_context")
        } else if caps.name("medical").is_some() {
            (Category::MedicalRecord, "medical_record_in_context")
        } else {
            (Category::InsuranceNumber, "insurance_number_in_context")
        };
        out.push(span(m.start(), m.end(), category, detector, 0.9));
    }
    // A Russian passport is a series of four digits (often split 2 + 2) and a number of six.
    for m in RU_PASSPORT.find_iter(text) {
        if RU_PASSPORT_WORD.is_match(before(text, m.start(), WINDOW + 16)) {
            out.push(span(
                m.start(),
                m.end(),
                Category::Passport,
                "ru_passport_in_context",
                0.9,
            ));
        }
    }
    // NHS numbers are often written in three groups, which the token above does not cover.
    for m in NHS.find_iter(text) {
        if nhs_number(&ascii_digits(m.as_str()))
            && NHS_WORD.is_match(before(text, m.start(), WINDOW))
        {
            out.push(span(
                m.start(),
                m.end(),
                Category::MedicalRecord,
                "nhs_number",
                0.97,
            ));
        }
    }
}

static RU_PASSPORT: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?-u:\b)[0-9]{2} ?[0-9]{2}[ №]{0,3}[0-9]{6}(?-u:\b)"));
static RU_PASSPORT_WORD: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)паспорт"));
static NHS: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?-u:\b)[0-9]{3}[ \-]?[0-9]{3}[ \-]?[0-9]{4}(?-u:\b)"));
static NHS_WORD: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)(?-u:\b)NHS(?-u:\b)|health\s+service"));

fn looks_like_date(token: &str) -> bool {
    static DATE: LazyLock<Regex> = LazyLock::new(|| {
        re(r"^(?:[0-9]{1,2}[\-/][0-9]{1,2}[\-/][0-9]{2,4}|[0-9]{4}[\-/][0-9]{1,2}[\-/][0-9]{1,2})$")
    });
    DATE.is_match(token)
}

const MONTHS: &str = "jan(?:uary|uar|vier)?|feb(?:ruary|ruar)?|f[ée]vrier|mar(?:ch|s|zo)?|m[äa]rz|apr(?:il)?|avril|abril|may|mai|mayo|maggio|jun(?:e|i|io)?|juin|giugno|jul(?:y|i|io)?|juillet|luglio|aug(?:ust)?|ao[ûu]t|agosto|sep(?:t|tember|tembre|tiembre)?|settembre|oct(?:ober|obre)?|okt(?:ober)?|octubre|ottobre|nov(?:ember|embre|iembre)?|dec(?:ember)?|dez(?:ember)?|d[ée]cembre|diciembre|dicembre|enero|gennaio|febrero|febbraio|aprile|junio|julio";

/// Dates as Chinese, Japanese and Korean write them: "1985年6月12日", "1985년 6월 12일", and in
/// Chinese numerals "一九八五年六月十二日".
static CJK_DATE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:19|20)[0-9]{2}\s?[年년]\s?(?:0?[1-9]|1[0-2])\s?[月월]\s?(?:0?[1-9]|[12][0-9]|3[01])\s?[日일]|[一二][〇零一二三四五六七八九○]{3}年(?:[一二三四五六七八九]|十[一二]?)月(?:[一二三四五六七八九]|[二三]?十[一二三四五六七八九]?)日",
    )
});
static DATE: LazyLock<Regex> = LazyLock::new(|| {
    re(&format!(
        r"(?i)(?-u:\b)(?:[0-9]{{1,2}}[./\-][0-9]{{1,2}}[./\-](?:19|20)?[0-9]{{2}}|(?:19|20)[0-9]{{2}}[./\-][0-9]{{1,2}}[./\-][0-9]{{1,2}}|[0-9]{{1,2}}(?:st|nd|rd|th|er|\.)?\s+(?:de\s+)?(?:{MONTHS})\.?,?\s+(?:de\s+)?(?:19|20)[0-9]{{2}}|(?:{MONTHS})\.?\s+[0-9]{{1,2}}(?:st|nd|rd|th)?,?\s+(?:19|20)[0-9]{{2}})(?-u:\b)"
    ))
});
/// Unicode word boundaries here ("née"): this only runs on short windows, so the slower
/// engine they need costs nothing.
static BIRTH_WORD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\bborn\b|\bbirth|\bdob\b|d\.o\.b|birthday|geboren|geburtsdatum|\bgeb\.|\bné\b|\bnée\b|naissance|nacimiento|nacid[oa]|\bnat[oa]\b|nascita|geboortedatum|\bf\.\s?d\.|fødselsdato|födelsedatum|nascimento|nascid[oa]|\bdoğum|рожд|родил|出生日|出生年|出生于|出生於|出生在|生日|生年月日|誕生日|생년월일|생일|출생일|태어|ميلاد|الميلاد|مواليد|जन्म",
    )
});

pub fn scan_date_of_birth(text: &str, out: &mut Vec<Span>) {
    let numeric = DATE.find_iter(text).filter(|m| plausible_date(m.as_str()));
    // The CJK pattern bounds its month and day itself.
    for m in numeric.chain(CJK_DATE.find_iter(text)) {
        if !BIRTH_WORD.is_match(before(text, m.start(), WINDOW)) {
            continue;
        }
        out.push(span(
            m.start(),
            m.end(),
            Category::DateOfBirth,
            "date_of_birth_in_context",
            0.9,
        ));
    }
}

/// Numeric dates: some reading (day-month or month-day) must give month <= 12 and day <= 31.
fn plausible_date(s: &str) -> bool {
    let parts: Vec<u32> = s
        .split(['.', '/', '-'])
        .filter_map(|p| p.trim().parse().ok())
        .collect();
    if parts.len() != 3 {
        return true; // a written month: the regex already bounded the day
    }
    let (a, b) = if parts[0] > 31 {
        (parts[1], parts[2])
    } else {
        (parts[0], parts[1])
    };
    (1..=31).contains(&a) && (1..=31).contains(&b) && (a <= 12 || b <= 12)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(f: fn(&str, &mut Vec<Span>), t: &str) -> Vec<(Category, String)> {
        let mut out = Vec::new();
        f(t, &mut out);
        out.iter()
            .map(|s| (s.category, t[s.start..s.end].to_string()))
            .collect()
    }

    #[test]
    fn contextual_ids() {
        let cases = [
            (
                "my passport number is X12345678.",
                Category::Passport,
                "X12345678",
            ),
            ("Reisepass Nr. C01X00T47", Category::Passport, "C01X00T47"),
            (
                "driver's license: D123-4567-8901",
                Category::DriversLicence,
                "D123-4567-8901",
            ),
            (
                "DL# S530-4412-9981",
                Category::DriversLicence,
                "S530-4412-9981",
            ),
            ("MRN 00482913", Category::MedicalRecord, "00482913"),
            (
                "patient id: PT-7781234",
                Category::MedicalRecord,
                "PT-7781234",
            ),
            (
                "insurance policy number: POL88812345",
                Category::InsuranceNumber,
                "POL88812345",
            ),
            (
                "Member ID W123456789",
                Category::InsuranceNumber,
                "W123456789",
            ),
            (
                "NHS number 943 476 5919",
                Category::MedicalRecord,
                "943 476 5919",
            ),
            (
                "Паспорт: серия и номер 45 19 738264, выдан",
                Category::Passport,
                "45 19 738264",
            ),
            ("护照号码 E12345678", Category::Passport, "E12345678"),
            (
                "여권 번호는 M12345678 입니다",
                Category::Passport,
                "M12345678",
            ),
            (
                "pasaport numaram U12345678, formu doldur",
                Category::Passport,
                "U12345678",
            ),
            ("رقم جواز السفر A1234567", Category::Passport, "A1234567"),
            (
                "Personalausweis Nr. L01X00T47 bitte eintragen",
                Category::NationalId,
                "L01X00T47",
            ),
            (
                "numéro de carte d'identité : 180692301234",
                Category::NationalId,
                "180692301234",
            ),
            (
                "رقم بطاقة الهوية 1023456789",
                Category::NationalId,
                "1023456789",
            ),
            (
                "my voter ID is ABC1234567",
                Category::NationalId,
                "ABC1234567",
            ),
        ];
        let bare = run(scan_contextual_ids, "my NHS no 9434765919");
        assert!(
            bare.contains(&(Category::MedicalRecord, "9434765919".to_string())),
            "{bare:?}"
        );
        for (t, cat, value) in cases {
            assert_eq!(
                run(scan_contextual_ids, t),
                [(cat, value.to_string())],
                "{t}"
            );
        }
    }

    #[test]
    fn contextual_id_hard_negatives() {
        for t in [
            "my passport expired in 2019",
            "renew the passport before the trip on 12/05/2024",
            "insurance costs went up 2023 by a lot",
            "passport photos are 35x45 mm; I bought model AB1234 yesterday at the shop",
            "NHS number 943 476 5918",
            "they were all removed in svn r262489 long ago",
            "серия 45 19 738264",
            "the identity card expired in 2021",
            "ID card reader model 4410 is broken",
        ] {
            assert!(
                run(scan_contextual_ids, t).is_empty(),
                "{t}: {:?}",
                run(scan_contextual_ids, t)
            );
        }
    }

    #[test]
    fn dates_of_birth() {
        for (t, value) in [
            ("DOB: 03/15/1987", "03/15/1987"),
            ("born on 5 March 1987 in Leeds", "5 March 1987"),
            ("date of birth 1987-03-15", "1987-03-15"),
            ("geboren am 15.03.1987", "15.03.1987"),
            ("née le 15 mars 1987", "15 mars 1987"),
            (
                "fecha de nacimiento: 15 de marzo de 1987",
                "15 de marzo de 1987",
            ),
            ("Birthday: March 15th, 1987", "March 15th, 1987"),
            ("дата рождения 14.02.1987", "14.02.1987"),
            ("Doğum tarihi: 03.04.1990", "03.04.1990"),
            ("出生日期是一九八五年六月十二日", "一九八五年六月十二日"),
            ("生年月日：1990年4月3日", "1990年4月3日"),
            ("생년월일 1988년 9월 23일", "1988년 9월 23일"),
            ("تاريخ الميلاد 14.02.1987", "14.02.1987"),
            ("जन्म तिथि 14/02/1987", "14/02/1987"),
        ] {
            assert_eq!(
                run(scan_date_of_birth, t),
                [(Category::DateOfBirth, value.to_string())],
                "{t}"
            );
        }
    }

    #[test]
    fn date_hard_negatives() {
        for t in [
            "the meeting is on 03/15/2024",
            "released 2024-01-15",
            "born 45/13/1987 in an unknown place",
            "会议定在2024年3月15日",
            "출생률은 2023년 12월 31일 기준",
        ] {
            assert!(run(scan_date_of_birth, t).is_empty(), "{t}");
        }
    }
}
