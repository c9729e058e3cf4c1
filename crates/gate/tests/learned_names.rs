//! The names tagger on sentences it was not trained on (the templates here are not in
//! scripts/gate/names_templates.py).

use lily_gate::learned::NameTagger;
use lily_gate::Category;

fn tagged(text: &str) -> Vec<(String, Category)> {
    let tagger = NameTagger::load_default().expect("embedded names model loads");
    tagger
        .tag(text)
        .into_iter()
        .map(|s| (text[s.start..s.end].to_string(), s.category))
        .collect()
}

#[test]
fn finds_people_places_and_organisations() {
    let got =
        tagged("Remind Katharina Vogelsang that the Siemens offsite in Leipzig starts at nine.");
    assert!(
        got.contains(&("Katharina Vogelsang".into(), Category::Person)),
        "{got:?}"
    );
    assert!(
        got.contains(&("Siemens".into(), Category::Organization)),
        "{got:?}"
    );
    assert!(
        got.contains(&("Leipzig".into(), Category::Location)),
        "{got:?}"
    );
}

#[test]
fn finds_names_in_german_where_every_noun_is_capitalised() {
    // One sentence can go either way between retrainings; most of these must be found, and no
    // capitalised common noun may be taken for a person.
    let cases = [
        (
            "Die Rechnung von Herrn Brinkhoff liegt noch im Büro, sagt Jürgen Albers.",
            ["Brinkhoff", "Jürgen Albers"],
        ),
        (
            "Bitte schick Sabine Wendler die Unterlagen für die Versicherung.",
            ["Sabine Wendler", ""],
        ),
        (
            "Gestern hat Frau Kowalczyk wegen der Heizung angerufen.",
            ["Kowalczyk", ""],
        ),
        (
            "Kannst du Torben Aschenbrenner und Lea Voss zum Grillen einladen?",
            ["Torben Aschenbrenner", "Lea Voss"],
        ),
        (
            "Der Termin mit Markus Feldhaus ist auf Dienstag verschoben.",
            ["Markus Feldhaus", ""],
        ),
    ];
    let (mut found, mut total) = (0, 0);
    for (text, names) in cases {
        let got = tagged(text);
        for name in names.into_iter().filter(|n| !n.is_empty()) {
            total += 1;
            found += usize::from(got.contains(&(name.to_string(), Category::Person)));
        }
        for noun in [
            "Rechnung",
            "Büro",
            "Unterlagen",
            "Versicherung",
            "Heizung",
            "Grillen",
            "Termin",
            "Dienstag",
        ] {
            assert!(
                !got.iter().any(|(t, c)| t == noun && *c == Category::Person),
                "{text}: {got:?}"
            );
        }
    }
    assert!(found * 10 >= total * 8, "{found} of {total} names found");
}

#[test]
fn public_figures_fictional_characters_and_products_are_not_people() {
    for text in [
        "What did Emmanuel Macron announce about pensions?",
        "Write a poem in which Sherlock Holmes solves a crossword.",
        "Is the Galaxy S24 better than the Pixel 8 for photos?",
    ] {
        let people: Vec<_> = tagged(text)
            .into_iter()
            .filter(|(_, c)| *c == Category::Person)
            .collect();
        assert!(people.is_empty(), "{text}: {people:?}");
    }
}

#[test]
fn computing_and_grammar_terms_are_not_people() {
    for text in [
        "Ich verstehe den Unterschied zwischen Genitiv und Dativ nicht.",
        "Mein Skript läuft in Bash, aber nicht in Zsh.",
        "Can Kotlin call this Java library directly?",
    ] {
        let people: Vec<_> = tagged(text)
            .into_iter()
            .filter(|(_, c)| *c == Category::Person)
            .collect();
        assert!(people.is_empty(), "{text}: {people:?}");
    }
}

#[test]
fn offsets_are_bytes_of_the_original_text() {
    let text = "Grüße an Zoë Lefèvre aus Köln!";
    let tagger = NameTagger::load_default().unwrap();
    for s in tagger.tag(text) {
        assert!(text.is_char_boundary(s.start) && text.is_char_boundary(s.end));
        assert!((0.0..=1.0).contains(&s.confidence));
        assert!(s.detector == "ner" || s.detector == "gazetteer");
    }
    assert!(tagged(text).contains(&("Zoë Lefèvre".into(), Category::Person)));
}

#[test]
fn empty_and_punctuation_only_inputs_have_no_names() {
    assert!(tagged("").is_empty());
    assert!(tagged(" ... !!! ").is_empty());
}

#[test]
fn megabyte_input_is_tagged_in_one_pass_with_valid_offsets() {
    // Every cost of the tagger is linear in the tokens; a megabyte must not take noticeably
    // longer than the sum of its sentences (the benchmark times it, this checks it finishes).
    let sentence = "Remind Anna Keller that the parcel from Köln arrived. ";
    let text = sentence.repeat((1 << 20) / sentence.len());
    let spans = NameTagger::load_default().unwrap().tag(&text);
    assert!(
        spans.len() >= (1 << 20) / sentence.len(),
        "{} spans",
        spans.len()
    );
    for s in &spans {
        assert!(s.start < s.end && text.is_char_boundary(s.start) && text.is_char_boundary(s.end));
    }
}
