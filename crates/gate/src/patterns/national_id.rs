//! National identity numbers: US SSN (area/group/serial rules), UK NINO (prefix rules), Indian
//! PAN (shape and holder type) and fourteen with check digits: German Steuer-ID, French NIR,
//! Spanish DNI/NIE, Italian codice fiscale, Dutch BSN, Indian Aadhaar, Chinese resident id,
//! Swedish personnummer, Brazilian CPF, Korean RRN, Japanese My Number, Turkish T.C. Kimlik
//! No, Russian SNILS and INN, Portuguese NIF, UAE Emirates ID. Bare digit strings that are common in other roles (9 to 12
//! digits) need a context word (in the language of the document).

use std::sync::LazyLock;

use regex::Regex;

use super::checksum::{
    ae_emirates_id, br_cpf, cn_resident_id, de_steuer_id, es_dni_nie, fr_nir, it_codice_fiscale,
    jp_my_number, kr_rrn, luhn, nl_bsn, pt_nif, ru_inn, ru_snils, tr_kimlik, verhoeff,
};
use super::context::{
    ascii_alnum_upper, ascii_digits, looks_like_reference, near, span, word_bounded,
};
use crate::span::{Category, Span};

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("national id regex")
}

static SSN: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?-u:\b)[0-9]{3}([- ])[0-9]{2}[- ][0-9]{4}(?-u:\b)|(?-u:\b)[0-9]{9}(?-u:\b)")
});
static SSN_WORD: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)(?-u:\b)(?:ssn|social security|soc\.? sec|ss#|tax ?id|itin)"));
static NINO: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?-u:\b)[A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z] ?[0-9]{2} ?[0-9]{2} ?[0-9]{2} ?[A-D](?-u:\b)")
});
static STEUER: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?-u:\b)[1-9][0-9] ?[0-9]{3} ?[0-9]{3} ?[0-9]{3}(?-u:\b)"));
static STEUER_WORD: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)steuer|tax ?id|(?-u:\b)idnr|identifikationsnummer|(?-u:\b)tin(?-u:\b)")
});
static NIR: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?-u:\b)[1-478] ?[0-9]{2} ?(?:0[1-9]|1[0-2]|[2-9][0-9]) ?(?:[0-9]{2}|2[AB]) ?[0-9]{3} ?[0-9]{3} ?[0-9]{2}(?-u:\b)",
    )
});
static DNI: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?-u:\b)(?:[0-9]{8}|[XYZ]-?[0-9]{7})-?[A-Z](?-u:\b)"));
static CF: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?-u:\b)[A-Z]{6}[0-9LMNPQRSTUV]{2}[ABCDEHLMPRST][0-9LMNPQRSTUV]{2}[A-Z][0-9LMNPQRSTUV]{3}[A-Z](?-u:\b)",
    )
});
static BSN: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?-u:\b)[0-9]{4}\.?[0-9]{2}\.?[0-9]{3}(?-u:\b)|(?-u:\b)[0-9]{9}(?-u:\b)")
});
static BSN_WORD: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)(?-u:\b)bsn(?-u:\b)|burgerservicenummer|sofi"));
static AADHAAR: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?-u:\b)[2-9][0-9]{3}[ \-]?[0-9]{4}[ \-]?[0-9]{4}(?-u:\b)"));
static AADHAAR_WORD: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)aadha+r|(?-u:\b)uid(?:ai)?(?-u:\b)|आधार"));
static CN_ID: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?-u:\b)[1-8][0-9]{5}(?:18|19|20)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])[0-9]{3}[0-9Xx](?-u:\b)",
    )
});
static PERSONNUMMER: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?-u:\b)(?:19|20)?[0-9]{2}(?:0[1-9]|1[0-2])(?:[0-6][0-9]|[7-9][0-1])[-+]?[0-9]{4}(?-u:\b)")
});
static PERSONNUMMER_WORD: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)personnummer|personnr|samordningsnummer"));
static CPF: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?-u:\b)[0-9]{3}\.[0-9]{3}\.[0-9]{3}-[0-9]{2}(?-u:\b)|(?-u:\b)[0-9]{11}(?-u:\b)")
});
static CPF_WORD: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)(?-u:\b)cpf(?-u:\b)"));

/// PAN: five letters (the fourth the holder type, P for a person), four digits, a letter.
static PAN: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?-u:\b)[A-Z]{3}[PCHFATBLJG][A-Z][0-9]{4}[A-Z](?-u:\b)"));
static PAN_WORD: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)(?-u:\b)pan(?-u:\b)|permanent account|income tax|पैन|आयकर|स्थायी खाता")
});
static RRN: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?-u:\b)[0-9]{2}(?:0[1-9]|1[0-2])(?:0[1-9]|[12][0-9]|3[01])[ \-]?[1-8][0-9]{6}(?-u:\b)")
});
static RRN_WORD: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)주민등록|주민번호|(?-u:\b)rrn(?-u:\b)|resident registration"));
static TWELVE: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?-u:\b)[0-9]{4}[ \-]?[0-9]{4}[ \-]?[0-9]{4}(?-u:\b)"));
static MY_NUMBER_WORD: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)マイナンバー|個人番号|my ?number|mynumber"));
static ELEVEN: LazyLock<Regex> = LazyLock::new(|| re(r"(?-u:\b)[0-9]{11}(?-u:\b)"));
static KIMLIK_WORD: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)kimlik|(?-u:\b)t\.?c\.?(?-u:\b)|tckn|n[üu]fus|vatanda[şs]l[ıi]k|turkish id")
});
static SNILS: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?-u:\b)[0-9]{3}([\- ]?)[0-9]{3}[\- ]?[0-9]{3}[\- ]?[0-9]{2}(?-u:\b)"));
static SNILS_WORD: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)снилс|snils|страхов"));
static INN: LazyLock<Regex> = LazyLock::new(|| re(r"(?-u:\b)(?:[0-9]{10}|[0-9]{12})(?-u:\b)"));
static INN_WORD: LazyLock<Regex> = LazyLock::new(|| re(r"ИНН|инн|(?-u:\b)INN(?-u:\b)"));
static NIF: LazyLock<Regex> = LazyLock::new(|| re(r"(?-u:\b)[0-9]{3} ?[0-9]{3} ?[0-9]{3}(?-u:\b)"));
static NIF_WORD: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)(?-u:\b)(?:nif|nipc)(?-u:\b)|contribuinte|n[úu]mero fiscal|identifica[çc][ãa]o fiscal")
});
/// Emirates ID: 784-YYYY-NNNNNNN-C, or the fifteen digits bare next to a word for it.
static EMIRATES_ID: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?-u:\b)784([\- ]?)(?:19|20)[0-9]{2}[\- ]?[0-9]{7}[\- ]?[0-9](?-u:\b)"));
static EMIRATES_WORD: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)emirates|(?-u:\b)eid(?-u:\b)|هوية|الهوية|إماراتي"));

fn id(out: &mut Vec<Span>, start: usize, end: usize, detector: &str, confidence: f32) {
    out.push(span(start, end, Category::NationalId, detector, confidence));
}

pub fn scan(text: &str, out: &mut Vec<Span>) {
    for m in SSN.find_iter(text) {
        let d = ascii_digits(m.as_str());
        let (area, group, serial) = (&d[..3], &d[3..5], &d[5..]);
        let valid = area != "000"
            && area != "666"
            && !area.starts_with('9')
            && group != "00"
            && serial != "0000";
        let context = near(text, m.start(), m.end(), &SSN_WORD, 40, 0);
        let formatted =
            m.as_str().len() == 11 && m.as_str().as_bytes()[3] == m.as_str().as_bytes()[6];
        if valid && (context || (formatted && !looks_like_reference(text, m.start()))) {
            id(
                out,
                m.start(),
                m.end(),
                "us_ssn",
                if context { 0.98 } else { 0.85 },
            );
        }
    }
    for m in NINO.find_iter(text) {
        let prefix = &m.as_str()[..2];
        if !matches!(prefix, "BG" | "GB" | "KN" | "NK" | "NT" | "TN" | "ZZ") {
            id(out, m.start(), m.end(), "uk_nino", 0.9);
        }
    }
    for m in STEUER.find_iter(text) {
        let context = near(text, m.start(), m.end(), &STEUER_WORD, 40, 0);
        if (context || m.as_str().contains(' ')) && de_steuer_id(&ascii_digits(m.as_str())) {
            id(
                out,
                m.start(),
                m.end(),
                "de_steuer_id",
                if context { 0.98 } else { 0.85 },
            );
        }
    }
    for m in NIR.find_iter(text) {
        if fr_nir(&ascii_alnum_upper(m.as_str())) {
            id(out, m.start(), m.end(), "fr_nir", 0.97);
        }
    }
    for m in DNI.find_iter(text) {
        if es_dni_nie(&ascii_alnum_upper(m.as_str())) {
            id(out, m.start(), m.end(), "es_dni_nie", 0.95);
        }
    }
    for m in CF.find_iter(text) {
        let upper = m.as_str().to_ascii_uppercase();
        if it_codice_fiscale(&upper) {
            id(out, m.start(), m.end(), "it_codice_fiscale", 0.98);
        }
    }
    for m in BSN.find_iter(text) {
        if near(text, m.start(), m.end(), &BSN_WORD, 40, 0) && nl_bsn(&ascii_digits(m.as_str())) {
            id(out, m.start(), m.end(), "nl_bsn", 0.97);
        }
    }
    for m in AADHAAR.find_iter(text) {
        let context = near(text, m.start(), m.end(), &AADHAAR_WORD, 40, 0);
        let grouped = m.as_str().len() == 14;
        if (context || grouped)
            && !looks_like_reference(text, m.start())
            && verhoeff(&ascii_digits(m.as_str()))
        {
            id(
                out,
                m.start(),
                m.end(),
                "in_aadhaar_verhoeff",
                if context { 0.98 } else { 0.8 },
            );
        }
    }
    for m in CN_ID.find_iter(text) {
        if cn_resident_id(m.as_str()) {
            id(out, m.start(), m.end(), "cn_resident_id", 0.98);
        }
    }
    for m in PERSONNUMMER.find_iter(text) {
        let s = m.as_str();
        let context = near(text, m.start(), m.end(), &PERSONNUMMER_WORD, 40, 0);
        let digits = ascii_digits(s);
        let ten = &digits[digits.len() - 10..];
        // The 12-digit form with a hyphen also reads as a date and a counter: needs the word.
        let short_form = digits.len() == 10 && s.contains(['-', '+']);
        if (context || short_form) && luhn(ten) && word_bounded(text, m.start(), m.end()) {
            id(
                out,
                m.start(),
                m.end(),
                "se_personnummer",
                if context { 0.98 } else { 0.85 },
            );
        }
    }
    scan_asian_and_russian(text, out);
    for m in CPF.find_iter(text) {
        let context = near(text, m.start(), m.end(), &CPF_WORD, 40, 0);
        if (context || m.as_str().contains('.')) && br_cpf(&ascii_digits(m.as_str())) {
            id(out, m.start(), m.end(), "br_cpf", 0.97);
        }
    }
}

/// PAN, Korean RRN, Japanese My Number, Turkish Kimlik, Russian SNILS and INN.
fn scan_asian_and_russian(text: &str, out: &mut Vec<Span>) {
    let context = |m: &regex::Match, word: &Regex| near(text, m.start(), m.end(), word, 48, 0);
    for m in PAN.find_iter(text) {
        let holder = m.as_str().as_bytes()[3];
        if context(&m, &PAN_WORD) {
            id(out, m.start(), m.end(), "in_pan", 0.98);
        } else if holder == b'P' && !looks_like_reference(text, m.start()) {
            id(out, m.start(), m.end(), "in_pan", 0.9);
        }
    }
    for m in RRN.find_iter(text) {
        let digits = ascii_digits(m.as_str());
        if context(&m, &RRN_WORD) {
            id(out, m.start(), m.end(), "kr_rrn", 0.98);
        } else if m.as_str().contains('-') && kr_rrn(&digits) {
            id(out, m.start(), m.end(), "kr_rrn", 0.95);
        }
    }
    for m in TWELVE.find_iter(text) {
        if context(&m, &MY_NUMBER_WORD) && jp_my_number(&ascii_digits(m.as_str())) {
            id(out, m.start(), m.end(), "jp_my_number", 0.97);
        }
    }
    for m in ELEVEN.find_iter(text) {
        if context(&m, &KIMLIK_WORD) && tr_kimlik(m.as_str()) {
            id(out, m.start(), m.end(), "tr_kimlik", 0.97);
        }
    }
    for m in SNILS.find_iter(text) {
        let formatted = m.as_str().len() == 14;
        if (formatted || context(&m, &SNILS_WORD)) && ru_snils(&ascii_digits(m.as_str())) {
            id(out, m.start(), m.end(), "ru_snils", 0.95);
        }
    }
    for m in INN.find_iter(text) {
        if context(&m, &INN_WORD) && ru_inn(m.as_str()) {
            id(out, m.start(), m.end(), "ru_inn", 0.97);
        }
    }
    // Nine bare digits are as often an order or a phone: the NIF needs its word.
    for m in NIF.find_iter(text) {
        if context(&m, &NIF_WORD) && pt_nif(&ascii_digits(m.as_str())) {
            id(out, m.start(), m.end(), "pt_nif", 0.97);
        }
    }
    for caps in EMIRATES_ID.captures_iter(text) {
        let m = caps.get(0).expect("whole match");
        let grouped = caps.get(1).is_some_and(|g| !g.as_str().is_empty());
        if (grouped || context(&m, &EMIRATES_WORD)) && ae_emirates_id(&ascii_digits(m.as_str())) {
            id(out, m.start(), m.end(), "ae_emirates_id", 0.97);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(t: &str) -> Vec<(String, &str)> {
        let mut out = Vec::new();
        scan(t, &mut out);
        out.iter()
            .map(|s| (s.detector.clone(), &t[s.start..s.end]))
            .collect()
    }

    fn found(t: &str, detector: &str, value: &str) {
        let got = ids(t);
        assert!(
            got.iter().any(|(d, v)| d == detector && *v == value),
            "{t:?}: {got:?}"
        );
    }

    #[test]
    fn positives() {
        found("SSN 536-22-1234", "us_ssn", "536-22-1234");
        found(
            "my social security number is 536221234",
            "us_ssn",
            "536221234",
        );
        found("NI number AB 12 34 56 C", "uk_nino", "AB 12 34 56 C");
        found("Steuer-ID: 86095742719", "de_steuer_id", "86095742719");
        found("ID 86 095 742 719 bitte", "de_steuer_id", "86 095 742 719");
        found(
            "NIR 2 55 08 14 168 025 38",
            "fr_nir",
            "2 55 08 14 168 025 38",
        );
        found("DNI 12345678Z", "es_dni_nie", "12345678Z");
        found("NIE X-1234567-L", "es_dni_nie", "X-1234567-L");
        found(
            "CF RSSMRA85T10A562S",
            "it_codice_fiscale",
            "RSSMRA85T10A562S",
        );
        found("mijn BSN is 111222333", "nl_bsn", "111222333");
        found(
            "Aadhaar 2341 2341 2346",
            "in_aadhaar_verhoeff",
            "2341 2341 2346",
        );
        found(
            "身份证 11010519491231002X",
            "cn_resident_id",
            "11010519491231002X",
        );
        found("personnummer 811218-9876", "se_personnummer", "811218-9876");
        found("CPF 529.982.247-25", "br_cpf", "529.982.247-25");
    }

    #[test]
    fn more_positives() {
        found("my PAN is ABCPE1234F", "in_pan", "ABCPE1234F");
        found("पैन कार्ड AAACB1234C", "in_pan", "AAACB1234C");
        found(
            "आधार 2341 2341 2346",
            "in_aadhaar_verhoeff",
            "2341 2341 2346",
        );
        found("주민등록번호 800101-1234560", "kr_rrn", "800101-1234560");
        found("번호 800101-1234560 입니다", "kr_rrn", "800101-1234560");
        found(
            "マイナンバーは1234 5678 9018です",
            "jp_my_number",
            "1234 5678 9018",
        );
        found("TC Kimlik No: 10000000146", "tr_kimlik", "10000000146");
        found("СНИЛС 112-233-445 95", "ru_snils", "112-233-445 95");
        found("снилс 11223344595", "ru_snils", "11223344595");
        found("ИНН 500100732259", "ru_inn", "500100732259");
        found("o meu NIF, 123456789, e a morada", "pt_nif", "123456789");
        found(
            "número de contribuinte 123 456 789",
            "pt_nif",
            "123 456 789",
        );
        found(
            "Emirates ID 784-1980-1234567-8",
            "ae_emirates_id",
            "784-1980-1234567-8",
        );
        found(
            "رقم الهوية 784198012345678",
            "ae_emirates_id",
            "784198012345678",
        );
    }

    #[test]
    fn more_hard_negatives() {
        for t in [
            "part ABCDE1234F in stock",
            "order 800101-1234563",
            "1234 5678 9018 units",
            "phone 10000000146",
            "112-233-445 96",
            "ИНН 500100732258",
            "build 7707083893",
            "NIF 123456788",
            "encomenda 123456789 enviada",
            "784198012345678 rows",
            "Emirates ID 784-1980-1234567-9",
        ] {
            assert!(ids(t).is_empty(), "{t}: {:?}", ids(t));
        }
    }

    #[test]
    fn hard_negatives() {
        for t in [
            "SSN 000-12-3456",
            "call 666-12-3456",
            "part 912-34-5678",
            "order 536-22-1234",
            "zip code 123456789 is not an ssn",
            "id 86095742718 here",
            "12345678A is not a DNI",
            "RSSMRA85T10A562T",
            "count 111222333 items",
            "2341 2341 2347",
            "110105194912310021",
            "20240115-1234 build",
            "BG 12 34 56 C",
        ] {
            assert!(ids(t).is_empty(), "{t:?}: {:?}", ids(t));
        }
    }
}
