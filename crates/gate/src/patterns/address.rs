//! Street addresses: a house number next to a street-type word, in English, German, Dutch,
//! French, Spanish, Portuguese, Italian, Russian and Turkish styles, extended over a following
//! postcode and town; Japanese, Chinese and Korean addresses by their administrative units
//! followed by block and house numbers.

use std::sync::LazyLock;

use regex::Regex;

use super::context::span;
use crate::span::{Category, Span};

fn re(pattern: &str) -> Regex {
    Regex::new(pattern).expect("address regex")
}

static STREETS: LazyLock<Vec<(&'static str, Regex)>> = LazyLock::new(|| {
    vec![
        // "221B Baker Street", "1600 Pennsylvania Ave NW", "10 Downing St."
        (
            "address_en",
            re(
                r"(?-u:\b)[0-9]{1,5}[A-Za-z]?(?:-[0-9]{1,4})?,?\s(?:[A-Z][A-Za-z'\-]*\.?\s){1,4}(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|Close|Crescent|Square|Sq|Parkway|Pkwy|Highway|Hwy|Circle|Cir|Trail|Row|Gardens|Grove|Mews|Hill)(?-u:\b)\.?(?:\s(?:NW|NE|SW|SE|N|S|E|W)(?-u:\b))?(?:,?\s(?:Apt|Apartment|Suite|Ste|Unit|Flat|#)\.?\s?[0-9A-Za-z\-]{1,6})?",
            ),
        ),
        // "Hauptstraße 5", "Kerkstraat 12a", "Berliner Allee 3": a word before a separate
        // street type only when it is an adjective form ("Berliner", "Alte", "Langen"), so a
        // preceding noun of the sentence stays out.
        (
            "address_de_nl",
            re(
                r"(?:[A-ZÄÖÜ][a-zäöüß]+(?:er|e|en)\s(?:Straße|Strasse|Weg|Allee|Platz|Gasse|Ring|Damm|Ufer|Chaussee|Markt)|[A-ZÄÖÜ][a-zäöüß\-]*(?:straße|strasse|str\.|weg|gasse|allee|platz|ring|damm|ufer|straat|laan|gracht|plein|kade|dijk|steeg))\s[0-9]{1,4}[a-z]?(?-u:\b)",
            ),
        ),
        // "12 rue de la Paix", "5 bis avenue Victor Hugo"
        (
            "address_fr",
            re(
                r"(?-u:\b)[0-9]{1,4}(?:\s?(?:bis|ter))?,?\s(?:rue|avenue|av\.|boulevard|bd|allée|chemin|impasse|place|quai|cours|route)\s(?:de\sla\s|de\sl'|du\s|des\s|de\s|d')?[A-ZÉÈ][\p{L}'\-]+(?:\s[A-ZÉÈ][\p{L}'\-]+){0,3}",
            ),
        ),
        // "Calle de Alcalá 42", "Avda. Diagonal, nº 640", "Rua de Cedofeita 214",
        // "Avenida da Liberdade, 110"
        (
            "address_es_pt",
            re(
                r"(?-u:\b)(?:Calle|C/|Avenida|Avda\.?|Av\.|Plaza|Pza\.|Paseo|Camino|Carretera|Ronda|Travesía|Rua|R\.|Travessa|Praça|Largo|Estrada|Alameda|Rodovia)\s(?:(?:de|da|do|das|dos)\s(?:la\s|los\s|las\s)?|del\s)?[\p{Lu}][\p{L}]+(?:\s(?:(?:de|da|do|das|dos)\s)?[\p{Lu}][\p{L}]+){0,3},?\s(?:n[º°o]\.?\s?)?[0-9]{1,4}(?-u:\b)",
            ),
        ),
        // "ул. Ленина, д. 5, кв. 12", "проспект Мира, дом 7"
        (
            "address_ru",
            re(
                r"(?:ул\.|улица|пр-т|просп\.|проспект|пер\.|переулок|бульвар|б-р|шоссе|наб\.|набережная|пл\.|площадь)\s?[\p{Lu}0-9][\p{L}0-9\-]*(?:\s[\p{L}\-]+){0,2},?\s(?:д\.|дом)\s?[0-9]{1,4}[а-я]?(?:,?\s(?:кв\.|квартира|корп\.|корпус|стр\.)\s?[0-9]{1,4})*",
            ),
        ),
        // "Atatürk Cad. No: 12", "Lale Sokak No:5 Daire 3", "Bağdat Caddesi No 45/7"
        (
            "address_tr",
            re(
                r"[\p{Lu}][\p{L}]+(?:\s[\p{Lu}0-9][\p{L}0-9]*){0,2}\s(?:Caddesi|Cad\.|Sokak|Sokağı|Sk\.|Bulvarı|Blv\.|Mahallesi|Mah\.)(?:,?\s[\p{Lu}][\p{L}]+(?:\s(?:Caddesi|Cad\.|Sokak|Sokağı|Sk\.))?)?,?\s?No\s?:?\s?[0-9]{1,4}(?:/[0-9]{1,4})?(?:,?\s(?:Daire|D\.)\s?:?\s?[0-9]{1,4})?",
            ),
        ),
        // "東京都世田谷区北沢2-14-7", "大阪市北区梅田1丁目2番3号": a city, ward, town or village
        // (after an optional prefecture), then block, lot and house numbers.
        (
            "address_ja",
            re(
                r"(?:\p{Han}{2,3}[都道府県])?\p{Han}{1,6}?[市区町村郡]\p{Han}{0,8}?[0-9]{1,4}(?:丁目|-)[0-9]{1,4}(?:番地?|-)[0-9]{1,4}号?",
            ),
        ),
        // "北京市朝阳区建国路88号", "上海市浦东新区世纪大道100号2号楼1201室", with a lane
        // between street and house: "张杨路1688弄3号502室"
        (
            "address_zh",
            re(
                r"(?:\p{Han}{2,4}[省市])?\p{Han}{1,6}?[市区县]\p{Han}{1,10}?(?:路|街|大道|巷|弄|胡同)[0-9]{1,5}(?:号|弄)(?:[0-9]{1,4}(?:号楼|号|栋|幢|座|楼|层|单元|室))*",
            ),
        ),
        // "서울특별시 강남구 테헤란로 123", "마포구 월드컵북로12길 34"
        (
            "address_ko",
            re(
                r"(?:\p{Hangul}{2,8}(?:특별시|광역시|시|도)\s)?\p{Hangul}{1,6}[구군]\s\p{Hangul}{1,10}(?:로|길)(?:\s?[0-9]{1,4}(?:번?길))?\s?[0-9]{1,5}(?:-[0-9]{1,4})?",
            ),
        ),
        // "Via Roma 10", "Piazza San Marco, 1"
        (
            "address_it",
            re(
                r"(?-u:\b)(?:Via|Viale|Piazza|Piazzale|Corso|Largo|Vicolo)\s(?:[\p{Lu}][\p{L}']*\s){1,4}?,?\s?[0-9]{1,4}[a-z]?(?-u:\b)",
            ),
        ),
    ]
});
/// What may follow a street: US "Springfield, IL 62704", UK "London NW1 6XE", EU "10115
/// Berlin", Portuguese and Brazilian "4050-174 Porto", or a town after a comma. A capitalised word after a space alone is the next word
/// of the prompt ("... Baker Street Please send"), not a town.
static TAIL: LazyLock<Regex> = LazyLock::new(|| {
    let town = r"[\p{Lu}][\p{Ll}\-]+";
    let towns = format!(r"{town}(?:\s{town}){{0,2}}");
    re(&format!(
        r"^(?:,?\s{towns},?\s[A-Z]{{2}}(?-u:\b)(?:\s[0-9]{{5}}(?:-[0-9]{{4}})?)?|,?\s{towns},?\s[A-Z]{{1,2}}[0-9][A-Z0-9]?\s?[0-9][A-Z]{{2}}(?-u:\b)|,?\s[0-9]{{4,5}}(?:-[0-9]{{3}})?\s{town}|,\s{town})"
    ))
});

/// Words for "address" that Chinese and Japanese write straight before one ("地址上海市...",
/// "住所東京都..."), which the unit pattern would take for part of a province's name.
const CJK_ADDRESS_LABELS: &[&str] = &[
    "收货地址",
    "收貨地址",
    "家庭住址",
    "通讯地址",
    "通訊地址",
    "地址",
    "住址",
    "住所",
    "所在地",
];

pub fn scan(text: &str, out: &mut Vec<Span>) {
    for (detector, street) in STREETS.iter() {
        for m in street.find_iter(text) {
            let end = m.end() + TAIL.find(&text[m.end()..]).map_or(0, |t| t.end());
            let label = CJK_ADDRESS_LABELS
                .iter()
                .find(|l| m.as_str().starts_with(**l))
                .map_or(0, |l| l.len());
            out.push(span(
                m.start() + label,
                end,
                Category::StreetAddress,
                detector,
                0.85,
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addresses(t: &str) -> Vec<String> {
        let mut out = Vec::new();
        scan(t, &mut out);
        out.iter().map(|s| t[s.start..s.end].to_string()).collect()
    }

    #[test]
    fn positives() {
        for (t, value) in [
            (
                "I live at 221B Baker Street, London NW1 6XE.",
                "221B Baker Street, London NW1 6XE",
            ),
            (
                "ship to 742 Evergreen Terrace, Springfield, IL 62704 please",
                "742 Evergreen Terrace, Springfield, IL 62704",
            ),
            ("1600 Pennsylvania Ave NW", "1600 Pennsylvania Ave NW"),
            (
                "Wohnung in der Hauptstraße 5, 10115 Berlin",
                "Hauptstraße 5, 10115 Berlin",
            ),
            ("Berliner Allee 3", "Berliner Allee 3"),
            ("Kerkstraat 12a", "Kerkstraat 12a"),
            ("habite au 12 rue de la Paix", "12 rue de la Paix"),
            ("vivo en Calle de Alcalá 42", "Calle de Alcalá 42"),
            ("abito in Via Roma 10", "Via Roma 10"),
            (
                "地址上海市浦东新区张杨路1688弄3号502室。",
                "上海市浦东新区张杨路1688弄3号502室",
            ),
            (
                "Send it to 350 Fifth Avenue, New York, NY 10118",
                "350 Fifth Avenue, New York, NY 10118",
            ),
            (
                "221B Baker Street London NW1 6XE",
                "221B Baker Street London NW1 6XE",
            ),
            // The next word of the prompt is not part of the address.
            (
                "I live at 221B Baker Street Please send the parcel",
                "221B Baker Street",
            ),
            ("Adresse Hauptstraße 5 Bitte schnell", "Hauptstraße 5"),
            (
                "Lieferung Hauptstraße 5, 10115 Berlin Danke",
                "Hauptstraße 5, 10115 Berlin",
            ),
            ("Wohnung Lindenstraße 12 Morgen", "Lindenstraße 12"),
            ("ship to 10 Downing St. Tomorrow works", "10 Downing St."),
            (
                "e a morada Rua de Cedofeita 214, 4050-174 Porto.",
                "Rua de Cedofeita 214, 4050-174 Porto",
            ),
            (
                "moro na Avenida da Liberdade, 110",
                "Avenida da Liberdade, 110",
            ),
            (
                "新しい住所は東京都世田谷区北沢2-14-7、電話は",
                "東京都世田谷区北沢2-14-7",
            ),
            (
                "住所：大阪市北区梅田1丁目2番3号です",
                "大阪市北区梅田1丁目2番3号",
            ),
            (
                "地址：北京市朝阳区建国路88号，谢谢",
                "北京市朝阳区建国路88号",
            ),
            (
                "주소는 서울특별시 강남구 테헤란로 123 입니다",
                "서울특별시 강남구 테헤란로 123",
            ),
            (
                "адрес: ул. Ленина, д. 5, кв. 12. Спасибо",
                "ул. Ленина, д. 5, кв. 12",
            ),
            (
                "adresim Lale Sokak No:5 Daire 3, Kadıköy",
                "Lale Sokak No:5 Daire 3, Kadıköy",
            ),
        ] {
            assert_eq!(addresses(t), [value], "{t}");
        }
    }

    #[test]
    fn hard_negatives() {
        for t in [
            "we had 3 Main concerns",
            "chapter 7 of the book",
            "the street was empty",
            "version 2 Way to go",
            "via email 5 times",
            "a rua estava vazia",
            "Python 3.12 の変更点を2-3行で",
            "第3章の2-14-7節",
            "我在北京市住了3年",
            "서울에서 3년 살았어요",
            "улица была пустой, дом 5 этажей",
            "No: 5 sorusu",
        ] {
            assert!(addresses(t).is_empty(), "{t}: {:?}", addresses(t));
        }
    }
}
