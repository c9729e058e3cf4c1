//! Lexicon backstops behind the learned tiers, for what a linear model trained on generated
//! sentences misses when a real person phrases it their own way.
//!
//! - `TopicCues` (in `crate::topic_cues`, re-exported here): a first-person word and a sensitive
//!   object in one sentence, in every language of the gate, is reported as that topic with a weak
//!   confidence.
//! - `GreetingNames`: a capitalised word after a greeting ("Hi Tendai,"), alone on the line
//!   after a short sign-off line ("Best,\nSiobhan Mulcahy", "Kind regards,\nOrla Brennan") or at
//!   the start of a sentence before a verb whose subject is a person is a person, whether or not
//!   the tagger knows the name. The verb is a listed one ("Hauke is flying in", "Wojciech asked
//!   me"), any lowercase word that is not a function word when the name is a given name of the
//!   gazetteer ("Priya repariert das Fahrrad"), or a progressive with the writer's people as
//!   object ("Tendekai is driving us"). A full name of two capitalised words before a listed
//!   verb is a person too ("Maria Lindqvist called"), unless it starts with a determiner,
//!   possessive or title ("Meine Therapeutin sagt"). Greetings, sign-offs and verbs include
//!   Russian and Turkish ones ("Привет, Дима!", "Saygılarımla"); a comma may follow a greeting.

use crate::learned::{
    is_common_word_name, is_given_name, is_never_a_name, is_public_name, is_surname, is_title,
    tokenize, Token,
};
use crate::pipeline::Detector;
use crate::public_context::is_public_context;
use crate::{Category, Span};

pub use crate::topic_cues::{TopicCues, CUE_CONFIDENCE};

/// Confidence of a person found only by greeting or sign-off position.
pub const GREETING_CONFIDENCE: f32 = 0.7;
/// Confidence of a recipient found by position ("Reply to Astrid"): a weaker cue, since
/// organisations are written to as well.
pub const CUE_NAME_CONFIDENCE: f32 = 0.5;

#[rustfmt::skip]
const GREETINGS: &[&str] = &[
    "hi", "hello", "hey", "dear", "hallo", "liebe", "lieber", "bonjour", "salut", "coucou", "hola", "querido", "querida",
    "ciao", "caro", "cara", "oi", "olá", "hoi", "hej", "cześć", "merhaba", "selam", "sevgili",
    "привет", "здравствуй", "здравствуйте", "уважаемый", "уважаемая", "дорогой", "дорогая",
];
#[rustfmt::skip]
const SIGN_OFFS: &[&str] = &[
    "best", "regards", "wishes", "cheers", "thanks", "sincerely", "yours", "love", "care", "soon",
    "grüße", "grüßen", "gruß", "lg", "danke",
    "cordialement", "amitiés", "bises", "bisous", "salutations", "merci", "vous",
    "saludos", "saludo", "abrazo", "abrazos", "besos", "atentamente", "gracias",
    "saluti", "saluto", "abbraccio", "abbracci", "baci", "grazie",
    "groeten", "groet", "bedankt",
    "abraços", "abraço", "beijos", "atenciosamente", "cumprimentos", "obrigado", "obrigada",
    "pozdrawiam", "pozdrowienia", "poważaniem", "dzięki", "hälsningar", "hälsning", "mvh", "tack",
    "уважением", "спасибо", "saygılarımla", "teşekkürler", "sevgiler",
];
/// A sign-off is a short line: the sign-off word and at most this many words before it
/// ("Kind regards", "Mit freundlichen Grüßen", "Com os melhores cumprimentos").
const SIGN_OFF_MAX_LEADING_WORDS: usize = 3;
/// Verbs whose subject is a person, in the languages of the corpus: a capitalised word that
/// opens a sentence (or a "that"-clause) and is followed by one of them is someone the writer
/// knows ("Hauke is flying in", "Yetunde arriva domani", "that Eva says hi").
#[rustfmt::skip]
const PERSON_VERBS: &[&str] = &[
    "arrives", "arrived", "says", "said", "asked", "told", "texted", "emailed", "invited", "messaged", "wrote",
    "replied", "phoned", "mentioned",
    "sagt", "fragt", "lässt", "demande", "llega", "arriva", "chiede", "chega", "diz", "zegt", "vraagt",
    // coming, calling, visiting: "Freja kommt morgen", "Ilse belt vanavond"
    "comes", "called", "rang", "visits", "visited", "kommt", "ruft", "besucht", "vient", "arrive", "appelle",
    "viene", "llama", "visita", "chiama", "komt", "belt", "bezoekt", "vem", "liga", "kommer", "ringer",
    "hälsar", "przyjeżdża", "przychodzi", "dzwoni",
    "сказал", "сказала", "спросил", "спросила", "просил", "просила", "приедет", "придёт", "придет", "звонил",
    "звонила", "позвонил", "позвонила", "написал", "написала", "прислал", "прислала", "передаёт", "передает",
    "dedi", "geliyor", "gelecek", "aradı", "sordu", "yazdı", "söyledi", "gönderdi",
];
/// After "is"/"ist"/"est" these make a person of the subject ("Hauke is flying in").
const PERSON_PARTICIPLES: &[&str] = &["flying", "coming", "visiting", "arriving", "landing"];
/// Auxiliaries of the English progressive: "<Name> is picking me up".
const PROGRESSIVE_AUXILIARIES: &[&str] = &["is", "was"];
/// Objects that make the subject of a progressive an agent who does something to or with the
/// writer's people: "<Name> is picking me up", "is driving us", "is meeting her".
const PERSONAL_OBJECTS: &[&str] = &["me", "us", "him", "her", "them", "my", "our"];
/// Words that cannot follow a sentence subject as its verb: after a given name of the gazetteer
/// they mean the name is part of something else ("Mark the cell", "Grace period of the loan",
/// "Paris and Rome").
#[rustfmt::skip]
const NOT_VERBS: &[&str] = &[
    "and", "or", "of", "from", "in", "at", "on", "to", "for", "with", "by", "the", "a", "an", "you", "your", "up",
    "down", "out", "off", "over", "as", "than", "period", "und", "oder", "von", "aus", "mit", "für", "der", "die", "das",
    "den", "dem", "ein", "eine", "et", "ou", "de", "du", "des", "la", "le", "les", "un", "une", "y", "o", "e", "del",
    "di", "da", "con", "en", "el", "los", "las", "van", "met", "het", "een", "och", "eller", "med", "i", "z", "w", "na",
];
/// Imperatives of passing something on to someone; with one of `RECIPIENT_PREPOSITIONS` after
/// them (a few words on at most) the capitalised word that follows is the recipient: "Reply to
/// Astrid", "Reenvía esto a Xabier", "Stuur dit door naar Lian".
#[rustfmt::skip]
const ADDRESSING_VERBS: &[&str] = &[
    "reply", "forward", "write", "send", "email", "text", "antworte", "schreib", "schreibe", "leite", "sende",
    "réponds", "écris", "transfère", "envoie", "responde", "escribe", "reenvía", "envía", "rispondi", "scrivi",
    "inoltra", "invia", "responda", "escreve", "escreva", "reencaminha", "encaminha", "envia", "antwoord",
    "schrijf", "stuur", "schick", "schicke", "message", "manda", "mande", "scrivi", "call", "phone", "ring", "ruf",
    "rufe", "appelle", "téléphone", "llama", "llame", "chiama", "telefona", "liga", "ligue", "telefoneer", "bel",
];
/// Nouns of a message between an addressing verb and its preposition, capitalised in German or
/// written in capitals: "Schreib eine SMS an Jörg", "Schick eine kurze Nachricht an Frau Kowalczyk".
#[rustfmt::skip]
const MESSAGE_NOUNS: &[&str] = &[
    "sms", "e-mail", "email", "mail", "nachricht", "whatsapp", "brief", "notiz", "karte", "mitteilung", "antwort",
    "dm", "mms",
];
const RECIPIENT_PREPOSITIONS: &[&str] = &["to", "an", "à", "a", "al", "ao", "para", "naar", "aan"];
/// Titles before a name, not part of it.
#[rustfmt::skip]
const TITLES: &[&str] = &[
    "dr", "mr", "mrs", "ms", "prof", "professor", "herr", "frau", "m", "mme", "sr", "sra", "dott", "dottssa", "dhr",
    "mevr", "coach", "don", "doña", "dona", "señor", "señora", "signor", "signora", "senhor", "senhora",
];
/// Words that open a clause about someone: "that Eva says hi", "dass Camille grüßen lässt".
const CLAUSE_OPENERS: &[&str] = &["that", "dass", "que", "che", "dat"];
/// Words that open a capitalised noun phrase, not a name: "Meine Therapeutin sagt", "Der
/// Vermieter sagt".
#[rustfmt::skip]
const NOT_SUBJECT_NAMES: &[&str] = &[
    "mein", "meine", "dein", "deine", "sein", "seine", "ihr", "ihre", "unser", "unsere", "euer", "eure", "der", "die",
    "das", "den", "dem", "ein", "eine", "einer", "kein", "keine", "dieser", "diese", "dieses", "jeder", "jede", "the",
    "a", "an", "my", "our", "your", "his", "her", "their", "this", "that", "le", "la", "les", "mon", "ma", "el", "los",
    "las", "mi", "il", "lo", "gli", "het", "de", "een", "mijn", "onze", "o", "os", "as", "um", "uma", "meu", "minha",
];
/// Capitalised words in those positions that are not names.
#[rustfmt::skip]
const NOT_NAMES: &[&str] = &[
    "all", "everyone", "everybody", "team", "there", "guys", "folks", "world", "sir", "madam", "someone", "somebody",
    "nobody", "no", "he", "she", "they", "it", "this", "that", "mum", "mom", "dad", "mother", "father", "my", "the",
    "a", "an", "who", "what", "and", "thank", "you", "er", "es", "man", "jemand", "wer", "il", "elle", "on", "qui",
    "él", "ella", "alguien", "quién", "lui", "lei", "qualcuno", "chi", "ele", "ela", "alguém", "quem", "hij", "zij",
    "ze", "iemand", "wie", "morgen", "heute", "hier", "dann", "jetzt", "post", "google", "clippy", "npm", "pip",
    // question words and pronouns that open sentences in the other languages of the gate
    "when", "where", "why", "how", "was", "warum", "wann", "wo", "quand", "où", "quoi", "pourquoi", "comment", "qué",
    "cuándo", "dónde", "cómo", "por", "cosa", "quando", "dove", "come", "perché", "wat", "waar", "wanneer", "hoe",
    "onde", "como", "что", "кто", "когда", "где", "почему", "как", "он", "она", "они", "мы", "вы", "это", "kim", "ne",
    "neden", "nasıl", "nerede", "bu", "şu", "o",
];

/// Capitalised, then lowercase letters only (apostrophes and hyphens joining parts): "Astrid",
/// "O'Neill", "Jean-Luc"; not "HR" or "GitHub", which name organisations and products.
pub(crate) fn is_name_word(t: &Token<'_>) -> bool {
    let mut chars = t.text.chars();
    let mut after_joiner = false;
    chars.next().is_some_and(|c| c.is_uppercase())
        && chars.all(|c| {
            let ok = c.is_lowercase()
                || matches!(c, '\'' | '’' | '-')
                || (after_joiner && c.is_uppercase());
            after_joiner = matches!(c, '\'' | '’' | '-');
            ok
        })
        && {
            let lower = t.text.to_lowercase();
            !NOT_NAMES.contains(&lower.as_str()) && !is_never_a_name(&lower)
        }
}

/// Up to three name words from token `i`, as a person span.
fn name_run(tokens: &[Token<'_>], i: usize, confidence: f32) -> Option<Span> {
    let run = tokens[i..]
        .iter()
        .take(3)
        .take_while(|t| is_name_word(t))
        .count();
    (run > 0).then(|| Span {
        start: tokens[i].start,
        end: tokens[i + run - 1].end,
        category: Category::Person,
        detector: "greeting".to_string(),
        confidence,
    })
}

/// Whether token `i` ends a short sign-off line: nothing but at most
/// `SIGN_OFF_MAX_LEADING_WORDS` words before it on its line, and only a comma or "!" after it.
/// Without the punctuation the line must hold two words or more ("Mit freundlichen Grüßen"), so
/// a line of running text broken after "best" is not read as a sign-off.
fn sign_off_line(tokens: &[Token<'_>], text: &str, i: usize) -> bool {
    let line_start = text[..tokens[i].start].rfind('\n').map_or(0, |p| p + 1);
    let leading = &tokens[tokens.partition_point(|t| t.start < line_start)..i];
    let words_only = leading.iter().all(|t| {
        t.text
            .chars()
            .all(|c| c.is_alphabetic() || c == '\'' || c == '’')
    });
    let punct = tokens
        .get(i + 1)
        .is_some_and(|t| matches!(t.text, "," | "!"));
    let after = tokens
        .get(i + 1 + usize::from(punct))
        .map_or(text.len(), |t| t.start);
    let line_ends = text[tokens[i + usize::from(punct)].end..after].contains('\n');
    words_only
        && leading.len() <= SIGN_OFF_MAX_LEADING_WORDS
        && line_ends
        && (punct || !leading.is_empty())
}

/// "<Name> is picking me up", "<Name>'s driving us": a progressive whose object is the writer
/// or their people makes the subject a person.
fn progressive_with_personal_object(lower: &[String], i: usize) -> bool {
    let at = |k: usize| lower.get(i + k).map(String::as_str);
    at(1).is_some_and(|a| PROGRESSIVE_AUXILIARIES.contains(&a))
        && at(2).is_some_and(|v| v.len() > 4 && v.ends_with("ing"))
        && at(3).is_some_and(|o| PERSONAL_OBJECTS.contains(&o))
}

/// A lowercase word right after the subject (one space, no punctuation between) that can be its
/// verb: letters only and not one of `NOT_VERBS`.
fn verb_like(tokens: &[Token<'_>], text: &str, k: usize) -> bool {
    tokens.get(k).is_some_and(|t| {
        text[tokens[k - 1].end..t.start] == *" "
            && t.text.chars().all(char::is_lowercase)
            && !NOT_VERBS.contains(&t.text)
    })
}

/// Names by position: after a greeting, under a sign-off, before "asked". See the module
/// documentation.
pub struct GreetingNames;

impl Detector for GreetingNames {
    fn name(&self) -> &str {
        "greeting-names"
    }

    fn detect(&self, text: &str) -> Vec<Span> {
        let tokens = tokenize(text);
        let lower: Vec<String> = tokens.iter().map(|t| t.text.to_lowercase()).collect();
        // A token opens a line or sentence when nothing but whitespace precedes it on its
        // line, or the token before it ends a sentence.
        let opens = |i: usize| {
            i == 0
                || text[tokens[i - 1].end..tokens[i].start].contains('\n')
                || matches!(tokens[i - 1].text, "." | "!" | "?" | ":" | "\"")
        };
        let mut out = Vec::new();
        for i in 0..tokens.len() {
            let next_is = |k: usize, s: &str| tokens.get(i + k).is_some_and(|t| t.text == s);
            // "Hi Tendai," / "Liebe Henrike,"
            if opens(i) && GREETINGS.contains(&lower[i].as_str()) {
                // "Привет, Дима!", "Hello, Priya,": a comma may follow the greeting.
                let first = i + 1 + usize::from(next_is(1, ","));
                if let Some(span) = name_run(&tokens, first, GREETING_CONFIDENCE) {
                    let after = tokens[tokens.partition_point(|t| t.end <= span.end)..].first();
                    if after.is_some_and(|t| matches!(t.text, "," | "!")) {
                        out.push(span);
                    }
                }
            }
            // "Best,\nSiobhan Mulcahy", "Kind regards,\nMarisol Achterberg", "Mit freundlichen
            // Grüßen\nAnna": a short line ending in a sign-off word, then the name alone on the
            // next line.
            if SIGN_OFFS.contains(&lower[i].as_str()) && sign_off_line(&tokens, text, i) {
                let punct = usize::from(next_is(1, ",") || next_is(1, "!"));
                let line_end = tokens.get(i + punct).map_or(text.len(), |t| t.end);
                if let Some(first) = tokens.get(i + punct + 1) {
                    if text[line_end..first.start].contains('\n') {
                        if let Some(span) = name_run(&tokens, i + punct + 1, GREETING_CONFIDENCE) {
                            let rest = &text[span.end..];
                            if rest.trim_start_matches([' ', '\t']).is_empty()
                                || rest.trim_start_matches([' ', '\t']).starts_with('\n')
                            {
                                out.push(span);
                            }
                        }
                    }
                }
            }
            // "Reply to Astrid", "Responde a Ishaan en Rotterdam"
            let polite = i > 0
                && opens(i - 1)
                && matches!(lower[i - 1].as_str(), "please" | "bitte" | "kindly");
            if (opens(i) || polite) && ADDRESSING_VERBS.contains(&lower[i].as_str()) {
                // Only over lowercase words ("this", "dit door"): past a capitalised word or a
                // comma the preposition belongs to something else ("Antwoord Andrea over de
                // reis naar Lima").
                let window = (i + 1)..(i + 6).min(tokens.len().saturating_sub(1));
                let preposition = window
                    .into_iter()
                    .take_while(|&k| {
                        tokens[k].text.chars().all(char::is_lowercase)
                            || MESSAGE_NOUNS.contains(&lower[k].as_str())
                    })
                    .find(|&k| RECIPIENT_PREPOSITIONS.contains(&lower[k].as_str()));
                // Past a title or an elided article with its noun: "Write to Dr. Hansen",
                // "Chiama l'architetta Patrizia Colombo".
                let mut k = preposition.map_or(i + 1, |p| p + 1);
                while lower.get(k).is_some_and(|w| {
                    TITLES.contains(&w.as_str())
                        || is_title(w)
                        || w == "."
                        || (w.starts_with(['l', 'd']) && w[1..].starts_with(['\'', '’']))
                }) {
                    k += 1;
                }
                if let Some(span) = tokens
                    .get(k)
                    .and_then(|_| name_run(&tokens, k, CUE_NAME_CONFIDENCE))
                {
                    // Without a preposition the name is the verb's object ("Text Mark that",
                    // "Chiama Patrizia Colombo"): a listed given name or surname, not any
                    // capitalised noun ("Schreib Briefe", "Write Python Code").
                    let last = text[span.start..span.end].rsplit(' ').next().unwrap_or("");
                    if preposition.is_some()
                        || is_surname(&last.to_lowercase())
                        || is_given_name(&lower[k])
                        || is_common_word_name(&lower[k])
                    {
                        out.push(span);
                    }
                }
            }
            // "Hauke arrive de Kyiv demain", "A Enzo chega amanhã", "that Eva says hi"
            let opens_clause = opens(i)
                || (i > 0 && CLAUSE_OPENERS.contains(&lower[i - 1].as_str()))
                || (i == 1 && matches!(tokens[0].text, "A" | "O"));
            let verb = lower.get(i + 1).map(String::as_str);
            let person_verb = verb.is_some_and(|v| PERSON_VERBS.contains(&v))
                || (matches!(verb, Some("is" | "ist" | "est"))
                    && lower
                        .get(i + 2)
                        .is_some_and(|p| PERSON_PARTICIPLES.contains(&p.as_str())))
                || progressive_with_personal_object(&lower, i)
                || (is_given_name(&lower[i])
                    && !is_common_word_name(&lower[i])
                    && verb_like(&tokens, text, i + 1));
            if opens_clause && is_name_word(&tokens[i]) && person_verb {
                out.push(Span {
                    start: tokens[i].start,
                    end: tokens[i].end,
                    category: Category::Person,
                    detector: "greeting".to_string(),
                    confidence: GREETING_CONFIDENCE,
                });
            }
            // A full name as the subject: "Maria Lindqvist called", "Анна Петрова сказала".
            // Not "Meine Therapeutin sagt" or "Frau Albers sagt": German nouns are capitalised.
            let full_name = i + 2 < tokens.len()
                && is_name_word(&tokens[i])
                && is_name_word(&tokens[i + 1])
                && tokens[i].text.chars().count() > 1
                && tokens[i + 1].text.chars().count() > 1
                && !NOT_SUBJECT_NAMES.contains(&lower[i].as_str())
                && !is_title(&lower[i])
                && text[tokens[i].end..tokens[i + 1].start] == *" "
                && PERSON_VERBS.contains(&lower[i + 2].as_str())
                && ![i, i + 1].iter().any(|&k| is_public_name(&lower[k]))
                && !is_public_name(&format!("{} {}", lower[i], lower[i + 1]));
            if opens_clause && full_name {
                out.push(Span {
                    start: tokens[i].start,
                    end: tokens[i + 1].end,
                    category: Category::Person,
                    detector: "greeting".to_string(),
                    confidence: GREETING_CONFIDENCE,
                });
            }
        }
        out.retain(|s| !is_public_context(text, s.start, s.end));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn people(text: &str) -> Vec<&str> {
        GreetingNames
            .detect(text)
            .iter()
            .map(|s| &text[s.start..s.end])
            .collect()
    }

    #[test]
    fn names_by_greeting_sign_off_and_addressing_verb() {
        assert_eq!(people("Hi Tendai, thanks for the invoice."), ["Tendai"]);
        assert_eq!(
            people("Thanks!\n\nBest,\nSiobhan Mulcahy"),
            ["Siobhan Mulcahy"]
        );
        assert_eq!(
            people("Wojciech asked me to send the minutes."),
            ["Wojciech"]
        );
        assert_eq!(people("Hauke is flying in from Kyiv."), ["Hauke"]);
        assert_eq!(people("A Enzo chega amanhã de Lyon."), ["Enzo"]);
        assert_eq!(
            people("Apologise to coach Mulder that Roos says hi."),
            ["Roos"]
        );
        assert_eq!(people("Responde a Ishaan en Pays-Bas."), ["Ishaan"]);
        assert_eq!(people("Stuur dit door naar Lian over de reis."), ["Lian"]);
        assert_eq!(people("Write to Dr. Hansen about it."), ["Hansen"]);
        assert_eq!(
            people("Bitte schreib an Jan-Erik Sommer."),
            ["Jan-Erik Sommer"]
        );
        assert_eq!(people("Ilse belt vanavond over het feest."), ["Ilse"]);
        assert!(people("Freitag kommt der Techniker.").is_empty());
        assert!(people("Bash ruft das Skript zweimal auf.").is_empty());
        // Andrea is the verb's object; the preposition after her belongs to the trip.
        assert_eq!(
            people("Antwoord Andrea over de reis naar Lima."),
            ["Andrea"]
        );
        assert_eq!(
            people("Schreib eine SMS an Jörg: er soll anrufen."),
            ["Jörg"]
        );
        assert_eq!(
            people("Chiama l'architetta Patrizia Colombo domani."),
            ["Patrizia Colombo"]
        );
        assert!(people("Write Python Code for me.").is_empty());
        assert!(people("Send the report to HR and to GitHub support.").is_empty());
        assert!(people("Python says the module is missing.").is_empty());
        assert!(people("Morgen kommt die Post.").is_empty());
        assert!(people("Hello World!").is_empty());
        assert!(people("Hi all, the build is green.").is_empty());
        assert!(people("Someone asked me about it.").is_empty());
        assert!(people("Best, they said, is to wait.").is_empty());
    }

    #[test]
    fn names_under_a_sign_off_line_and_as_subjects() {
        assert_eq!(
            people("Could you shorten this?\n\nKind regards,\nOrla Brennan"),
            ["Orla Brennan"]
        );
        assert_eq!(
            people("Danke!\n\nMit freundlichen Grüßen\nGesine Albers"),
            ["Gesine Albers"]
        );
        assert!(people("Which is the best\nPython library for this?").is_empty());
        assert!(people("Here are my best\nwishes,\nand more").is_empty());
        // A given name of the gazetteer before any verb-like word; an unknown one before a
        // progressive with the writer's people as object.
        assert_eq!(people("Priya repariert das Fahrrad."), ["Priya"]);
        assert_eq!(
            people("Tendekai is driving us to the airport."),
            ["Tendekai"]
        );
        assert!(people("Mark the cells in red.").is_empty());
        assert!(people("Mia moglie vuole una bici.").is_empty());
        assert!(people("Priya and Lukas").is_empty());
        assert!(people("Docker is using all the memory.").is_empty());
    }
}
