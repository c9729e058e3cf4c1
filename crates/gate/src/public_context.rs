//! Sentences whose persons are public or fictional whoever they are, so that the name lists
//! need not know every historical figure or character:
//!
//! - **Who-was questions**: a name right after "Who was", "Qui était", "Chi era", "Wer war",
//!   "Кто такой", "من هو" (articles and titles between allowed: "O que fez o Marquês de ...")
//!   or right before "是谁", "とは誰", "는 누구", "कौन थे", "kimdir". Asking a model who someone
//!   is only makes sense for someone it can know of: a public figure.
//! - **History questions**: a name right after "What did", "Why is", "Waarom wordt", "Qué hizo"
//!   in a sentence that also has a year, a century or a word of fame or naming ("famous",
//!   "genoemd", "célèbre"): "O que fez X depois do terramoto de 1755".
//! - **Fiction**: a sentence naming a book, novel, film or series with a quoted title ("Dans
//!   « Les Misérables », pourquoi Javert ...", "في رواية \"اللص والكلاب\""): its names are
//!   characters.
//!
//! The person detectors drop a span in such a sentence; a name the user also writes elsewhere is
//! still found there.

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

/// Openings of a who-was question, lowercased; the name follows.
#[rustfmt::skip]
const WHO_BEFORE: &[&str] = &[
    "who was", "who were", "who is", "wer war", "wer ist", "qui était", "qui fut", "qui est", "quién fue", "quién era",
    "quién es", "chi era", "chi fu", "chi è", "chi è stato", "chi è stata", "quem foi", "quem era", "quem é", "wie was",
    "wie is", "кто такой", "кто такая", "кто такие", "кто был", "кто была", "кто это", "من هو", "من هي", "من كان",
    "من كانت",
];
/// Endings of a who-was question in languages that put the question after the name.
#[rustfmt::skip]
const WHO_AFTER: &[&str] = &[
    "是谁", "是誰", "是什么人", "是哪位", "とは誰", "とはだれ", "って誰", "はどんな人", "とはどんな人", "は誰", "는 누구",
    "은 누구", "이 누구", "가 누구", "란 누구", "는 어떤 인물", "은 어떤 인물", "कौन थे", "कौन था", "कौन थी", "कौन हैं",
    "कौन है", "kimdir", "kimdi", "kim idi",
];
/// Openings of a question about what someone did or why they are called so; the name follows,
/// and the sentence must also carry a `HISTORY_MARKS` word or a year.
#[rustfmt::skip]
const HISTORY_BEFORE: &[&str] = &[
    "what did", "why did", "when did", "how did", "why is", "why was", "warum wird", "warum wurde",
    "warum ist", "was hat", "was machte", "wofür ist", "wofür war", "wann lebte", "qu'a fait", "pourquoi", "qué hizo",
    "por qué", "por qué se llama a", "cosa fece", "cosa ha fatto", "perché", "o que fez", "por que",
    "waarom wordt", "waarom werd", "waarom is", "wat deed", "чем известен", "чем известна", "чем знаменит",
    "что сделал", "что сделала", "почему", "ماذا فعل", "ماذا فعلت", "لماذا",
];
/// Words of fame, naming and the past that make a who-did question historical.
#[rustfmt::skip]
const HISTORY_MARKS: &[&str] = &[
    "famous", "known", "called", "remembered", "century", "history", "historical", "died", "born", "reign", "invent",
    "discover", "berühmt", "bekannt", "genannt", "jahrhundert", "geschichte", "célèbre", "connu", "appelé", "appelle",
    "siècle", "histoire", "famoso", "famosa", "conocido", "llamado", "llama", "siglo", "historia", "chiamato",
    "chiamata", "secolo", "storia", "rinascimento", "chamado", "chamada", "conhecido", "século",
    "história", "beroemd", "bekend", "genoemd", "eeuw", "geschiedenis", "известен", "известна", "знаменит", "век",
    "истории", "ünlü", "yüzyıl", "tarih", "مشهور", "لقب", "يلقب", "القرن", "التاريخ", "著名", "有名", "世纪", "世紀",
    "历史", "歴史", "유명", "세기", "역사", "प्रसिद्ध", "इतिहास", "शताब्दी", "सदी",
];
/// Words for a work of fiction; with a quoted title in the sentence its names are characters.
#[rustfmt::skip]
const WORKS: &[&str] = &[
    "book", "novel", "film", "movie", "series", "play", "story", "buch", "roman", "film", "serie", "theaterstück",
    "livre", "pièce", "libro", "novela", "película", "romanzo", "racconto", "livro", "romance", "filme", "série",
    "boek", "verhaal", "книга", "книге", "романе", "роман", "фильме", "фильм", "сериале", "kitap", "kitabında",
    "romanında", "filminde", "dizisinde", "رواية", "الرواية", "كتاب", "فيلم", "مسلسل", "小说", "小說", "电影", "電影",
    "小説", "映画", "ドラマ", "소설", "영화", "드라마", "उपन्यास", "किताब", "फ़िल्म", "फिल्म",
];
/// Prepositions that, right before a quoted title, name a work: "Dans « Les Misérables »".
const IN_TITLE: &[&str] = &["in", "im", "dans", "en", "nel", "no", "na", "в", "во"];
/// Articles and titles allowed between a question's opening and the name.
#[rustfmt::skip]
const BETWEEN: &[&str] = &[
    "the", "der", "die", "das", "le", "la", "l'", "el", "il", "lo", "o", "a", "de", "het", "king", "queen", "könig",
    "königin", "kaiser", "roi", "reine", "rey", "reina", "re", "regina", "rei", "rainha", "koning", "koningin",
    "sultan", "царь", "император", "saint", "san", "santa", "são", "sankt", "st", "sint",
];
/// Words of a summary, plot or characters: in a sentence with a name, and with a word of
/// literature study anywhere in the text, the name is a character ("Resumo de Dom Casmurro:
/// a Capitu traiu o Bentinho? ... prova de literatura").
#[rustfmt::skip]
const PLOT_WORDS: &[&str] = &[
    "summary", "summarise", "summarize", "plot", "character", "characters", "zusammenfassung", "inhaltsangabe",
    "figur", "figuren", "résumé", "résume", "personnage", "personnages", "resumen", "resume", "personaje",
    "personajes", "trama", "riassunto", "riassumi", "personaggio", "personaggi", "resumo", "resuma", "enredo",
    "personagem", "personagens", "samenvatting", "personage", "personages", "özet", "özeti", "karakter",
    "karakteri", "karakterler", "пересказ", "сюжет", "персонаж", "персонажи", "ملخص", "شخصية", "شخصيات",
    "सारांश", "पात्र", "概要", "梗概", "摘要", "人物", "あらすじ", "登場人物", "요약", "줄거리", "등장인물",
];
/// Words of literature study: a literature class, an exam or essay on a book.
#[rustfmt::skip]
const LITERATURE_WORDS: &[&str] = &[
    "literature", "literary", "literatur", "littérature", "littéraire", "literatura", "letteratura",
    "literatuur", "edebiyat", "литература", "литературе", "литературы", "الأدب", "أدب", "साहित्य", "文学",
    "문학", "lektüre", "reading list", "book report", "leesverslag", "fiche de lecture",
];
/// Nouns of dishes that a person's name follows in the dish's name ("pêche Melba", "beef
/// Wellington", "bœuf Stroganoff"): the name names the dish.
#[rustfmt::skip]
const DISH_HEADS: &[&str] = &[
    "pêche", "pêches", "peach", "tarte", "crêpe", "crêpes", "sauce", "salade", "salad", "poulet", "chicken", "bœuf",
    "boeuf", "beef", "eggs", "œufs", "steak", "tournedos", "pizza", "torta", "tarta", "salsa", "salat", "салат",
    "бефстроганов", "kebap", "kebabı", "kebab", "soupe", "soup", "sopa", "zuppa", "bolo", "gâteau", "pudding",
    "cocktail", "filet",
];
const QUOTES: &[char] = &[
    '"', '«', '»', '“', '”', '„', '「', '」', '『', '』', '《', '》',
];

/// The sentence around bytes `start..end` of `text`: from after the last sentence end before
/// `start` to the first one after `end`.
fn sentence(text: &str, start: usize, end: usize) -> (usize, usize) {
    let ends = |c: char| matches!(c, '.' | '!' | '?' | '\n' | '。' | '！' | '？' | '؟' | '।');
    let a = text[..start].rfind(ends).map_or(0, |p| {
        p + text[p..].chars().next().map_or(1, char::len_utf8)
    });
    let b = text[end..].find(ends).map_or(text.len(), |p| end + p);
    (a, b)
}

/// Whether a lowercased text, with articles and titles stripped from its end, is one of `cues`.
fn is_opening(before: &str, cues: &[&str]) -> bool {
    let mut words: Vec<&str> = before.split_whitespace().collect();
    loop {
        let joined = words.join(" ");
        let joined = joined.trim_matches(|c: char| c == ',' || c == '¿' || c == '¡');
        if cues.contains(&joined) {
            return true;
        }
        match words.last() {
            Some(w) if BETWEEN.contains(w) => {
                words.pop();
            }
            _ => return false,
        }
    }
}

/// Whether a lowercased sentence has a preposition right before a quoted title: "dans « ",
/// "in \"" (with or without the space).
fn has_titled_quote(whole: &str) -> bool {
    QUOTES.iter().any(|q| {
        whole.match_indices(*q).any(|(i, _)| {
            let head = &whole[..i];
            IN_TITLE.iter().any(|p| {
                head.strip_suffix(' ').is_some_and(|h| h.ends_with(p))
                    || (i == p.len() && head == *p)
            })
        })
    })
}

/// Whether a person named at bytes `start..end` of `text` stands in a who-was question, a
/// history question or a sentence about a work of fiction; see the module documentation.
/// Cheapest test first: most names are in none, and each later test reads the whole sentence.
pub fn is_public_context(text: &str, start: usize, end: usize) -> bool {
    let (a, b) = sentence(text, start, end);
    let before = text[a..start].trim().to_lowercase();
    let after = text[end..b].trim_start();
    let who = is_opening(&before, WHO_BEFORE)
        || WHO_AFTER.iter().any(|w| after.starts_with(w))
        || after == "kim"
        || after.starts_with("kim ");
    if who {
        return true;
    }
    let previous = before.rsplit(' ').next().unwrap_or("");
    if DISH_HEADS.contains(&previous) {
        return true;
    }
    let whole = text[a..b].to_lowercase();
    if is_opening(&before, HISTORY_BEFORE) {
        // A year: the sentence's only number, of three or four digits (not a phone number's group).
        let numbers: Vec<&str> = whole
            .split(|c: char| !c.is_ascii_digit())
            .filter(|d| !d.is_empty())
            .collect();
        let year = numbers.len() == 1 && (3..=4).contains(&numbers[0].len());
        if year || HISTORY_MARKS.iter().any(|m| whole.contains(m)) {
            return true;
        }
    }
    if contains_word(&PLOT, &whole) && LITERATURE.is_match(text) {
        return true;
    }
    let quoted = whole.chars().filter(|c| QUOTES.contains(c)).count() >= 2;
    if !quoted {
        return false;
    }
    let work_word = whole
        .split(|c: char| {
            c.is_whitespace() || (c.is_ascii_punctuation() && c != '\'') || QUOTES.contains(&c)
        })
        .any(|w| WORKS.contains(&w) || w.strip_prefix('ل').is_some_and(|r| WORKS.contains(&r)));
    work_word || has_titled_quote(&whole)
}

/// One automaton per word list, so that a sentence is read once however long the list.
fn automaton(words: &[&str]) -> AhoCorasick {
    let mut forms: Vec<String> = Vec::new();
    for w in words {
        let mut chars = w.chars();
        let capitalised: String = chars
            .next()
            .map(|c| c.to_uppercase().chain(chars).collect())
            .unwrap_or_default();
        forms.extend([w.to_string(), capitalised]);
    }
    // The lists are compile-time constants; a failure is a build defect caught by tests.
    AhoCorasick::new(&forms).expect("the word lists build")
}

static PLOT: LazyLock<AhoCorasick> = LazyLock::new(|| automaton(PLOT_WORDS));
static LITERATURE: LazyLock<AhoCorasick> = LazyLock::new(|| automaton(LITERATURE_WORDS));

/// Whether a word of `words` stands in `text` as a whole word (Han, kana and Hangul words
/// anywhere).
fn contains_word(words: &AhoCorasick, text: &str) -> bool {
    let unspaced = |c: char| {
        crate::names_scripts::is_han(c)
            || crate::names_scripts::is_kana(c)
            || crate::names_scripts::is_hangul(c)
    };
    words.find_overlapping_iter(text).any(|m| {
        text[m.start()..].chars().next().is_some_and(unspaced)
            || (!text[..m.start()]
                .chars()
                .next_back()
                .is_some_and(char::is_alphanumeric)
                && !text[m.end()..]
                    .chars()
                    .next()
                    .is_some_and(char::is_alphanumeric))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn public(text: &str, name: &str) -> bool {
        let start = text.find(name).expect("name in text");
        is_public_context(text, start, start + name.len())
    }

    #[test]
    fn who_was_and_history_questions_name_public_figures() {
        assert!(public(
            "Qui était Jean Moulin et pourquoi repose-t-il au Panthéon ?",
            "Jean Moulin"
        ));
        assert!(public(
            "O que fez o Marquês de Pombal depois do terramoto de 1755?",
            "Marquês de Pombal"
        ));
        assert!(public(
            "Waarom wordt Willem van Oranje de Vader des Vaderlands genoemd?",
            "Willem"
        ));
        assert!(public("王安石是谁？", "王安石"));
        assert!(!public("Ruf Jörg an, er wartet.", "Jörg"));
        assert!(!public("Why is Jörg late again?", "Jörg"));
    }

    #[test]
    fn names_in_a_sentence_about_a_quoted_work_are_characters() {
        assert!(public(
            "Dans « Les Misérables », pourquoi Javert traque-t-il Jean Valjean ?",
            "Jean Valjean"
        ));
        assert!(!public("Schreib Anna: \"Bin gleich da\".", "Anna"));
    }

    #[test]
    fn characters_of_a_summary_for_a_literature_class() {
        let pt = "Resumo de Dom Casmurro: afinal a Capitu traiu ou não o Bentinho? Preciso pra prova de literatura.";
        assert!(public(pt, "Capitu"));
        assert!(public(
            "Краткий пересказ: почему Раскольников идёт к старухе? Это для урока литературы.",
            "Раскольников"
        ));
        // A summary without a literature class is a summary of the user's own material.
        assert!(!public(
            "Write a summary of the call with Anna Keller.",
            "Anna Keller"
        ));
    }

    #[test]
    fn a_name_after_a_dish_noun_names_the_dish() {
        assert!(public("Recette d'une pêche Melba pour quatre", "Melba"));
        assert!(public(
            "How long do I rest a beef Wellington?",
            "Wellington"
        ));
        assert!(!public("Cook dinner for Melba tonight", "Melba"));
    }
}
