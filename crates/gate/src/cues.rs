//! Lexicon backstops behind the learned tiers, for what a linear model trained on generated
//! sentences misses when a real person phrases it their own way.
//!
//! - `TopicCues`: a sentence that speaks about the writer or their own people (a first-person
//!   word: "my", "I'm", "ich", "mon", "mijn", ...) and names something of a sensitive topic
//!   ("biopsy", "debt", "avocat", ...) is reported as that topic with a weak confidence. Family
//!   and money words need a detail as well, since a child or a savings account mentioned in
//!   passing is not sensitive: a child word counts with an age, school, behaviour or health word
//!   ("my son is 7", "ma fille ... l'école"), a money word with a figure or a word of arrears
//!   ("my salary is 48,000", "we missed two mortgage payments"); words of debt count alone. Under the policy's `consent_below` a weak special-category finding asks the
//!   user instead of keeping the text local: the backstop turns a would-be leak into a question,
//!   and since findings are only ever added it can make a decision stricter, never looser.
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
//!
//! Words are matched on lowercase tokens: a lexicon entry ending in `*` is a prefix, any other
//! entry a whole token. Entries are chosen to be rare outside the topic ("christian", not
//! "christ*", which would match "Christmas"; "tax", not "tax*", which would match "taxi").

use crate::learned::{
    is_common_word_name, is_given_name, is_never_a_name, is_public_name, is_title, sentences,
    tokenize, Token,
};
use crate::pipeline::Detector;
use crate::{Category, Span};

/// Confidence of a lexicon finding: above the default policy's `ignore_below` (0.2) and below
/// its `consent_below` (0.5), so that a special category found only here asks for consent.
pub const CUE_CONFIDENCE: f32 = 0.45;
/// Confidence of a person found only by greeting or sign-off position.
pub const GREETING_CONFIDENCE: f32 = 0.7;
/// Confidence of a recipient found by position ("Reply to Astrid"): a weaker cue, since
/// organisations are written to as well.
pub const CUE_NAME_CONFIDENCE: f32 = 0.5;

#[rustfmt::skip]
const FIRST_PERSON: &[&str] = &[
    // en
    "i", "i'm", "i’m", "i've", "i’ve", "i'd", "i’d", "i'll", "my", "mine", "myself", "our", "ours", "we", "we're", "we’re", "we've",
    // de
    "ich", "bin", "mein", "meine", "meinen", "meinem", "meiner", "meines", "mir", "mich", "unser", "unsere", "unseren", "unserem", "unserer", "wir",
    // fr (j'ai, m'a ... are matched by prefix below)
    "je", "moi", "mon", "ma", "mes", "notre", "nos", "nous",
    // es
    "yo", "mi", "mis", "nuestro", "nuestra", "nuestros", "nuestras", "tengo", "estoy", "soy", "llevo", "necesito",
    "quiero", "puedo", "debo", "fui", "tuve",
    // it
    "io", "mio", "mia", "miei", "mie", "ho", "sono", "nostro", "nostra", "nostri", "nostre", "abbiamo", "voglio",
    // nl
    "ik", "mijn", "mij", "ons", "onze", "wij",
    // pt
    "eu", "meu", "minha", "meus", "minhas", "estou", "tenho", "nosso", "nossa", "preciso", "quero", "sou", "fui", "tive",
    // pl, sv, tr
    "jestem", "należę", "mam", "byłem", "byłam", "mój", "moja", "moje", "mnie", "moim", "mojej", "moją", "nasz", "nasza",
    "jag", "min", "mitt", "mina", "mig", "vi", "oss", "vår", "vårt", "våra", "benim",
];
/// Elided French first person: "j'ai", "m'a", "j’habite".
const FIRST_PERSON_PREFIXES: &[&str] = &["j'", "j’", "m'", "m’"];

#[rustfmt::skip]
const TOPIC_TERMS: &[(Category, &[&str])] = &[
    (Category::Health, &[
        "diagnos*", "biops*", "chemo*", "cancer*", "tumor*", "tumour*", "fever", "rash", "infection*", "diabet*", "insulin",
        "thyroid", "cholesterol", "pregnan*", "miscarr*", "surgery", "hospital*", "doctor*", "gp", "nurse", "medication*",
        "prescri*", "pills", "dose", "allerg*", "asthma", "cough*", "lump", "mri", "ecg", "x-ray", "blood*", "urine",
        "kidney*", "liver", "heart", "hiv", "injur*", "fractur*", "migraine*", "dizz*", "nause*", "vomit*", "swollen",
        "bleed*", "hepatit*", "arthrit*", "epilep*", "seizure*", "hernia", "physio*", "antibiot*", "statin*", "symptom*",
        "pain", "painful", "ache", "aches", "aching", "sick", "illness", "disease",
        "arzt", "ärzt*", "ärztin", "hausarzt", "hausärzt*", "krank*", "fieber", "schmerz*", "ausschlag", "blut*", "krebs",
        "schwanger*", "medikament*", "klinik*", "befund*", "*befund", "blutdruck", "tsh",
        "médecin*", "medecin*", "malad*", "douleur*", "diagnost*", "fièvre", "tumeur*", "enceinte", "hôpital", "hopital",
        "ordonnance", "médicament*",
        "médico", "medico", "enferm*", "dolor*", "fiebre", "cáncer", "embaraz*", "pastilla*", "medicament*", "sangre",
        "arritmia", "colesterol*",
        "malat*", "febbre", "cancro", "incinta", "ospedale", "farmac*", "sangue",
        "huisarts", "ziek*", "pijn*", "koorts", "kanker", "zwanger*", "ziekenhuis", "medicijn*", "bloed*",
        "doença*", "doenca*", "dor", "febre", "diagnóst*", "câncer", "grávida", "remédio*", "hepatite",
        "lekarz*", "chory", "chora", "chorob*", "ból*", "ciśnieni*", "gorączk*", "läkare", "sjuk*", "smärt*", "feber", "doktor*", "hastalı*", "hastayım", "ağrı*",
        // Specialists, vaccination and chronic conditions, in every locale of the gate
        "cardiolog*", "kardiolog*", "rheumatolog*", "reumatolog*", "rhumatolog*", "neurolog*", "oncolog*", "onkolog*",
        "oncoloog", "dermatolog*", "gastroenterolog*", "endocrinolog*", "endokrinolog*", "urolog*", "gynaecolog*",
        "gynecolog*", "gynäkolog*", "gynécolog*", "ginecolog*", "gynaecoloog", "nefrolog*", "nephrolog*", "hematolog*",
        "haematolog*", "ematolog*", "hämatolog*", "ophthalmolog*", "oftalmolog*", "pneumolog*",
        "vaccin*", "vacun*", "vacin*", "impfung*", "geimpft", "szczepi*", "vaccinat*",
        "sclerosis", "sclerosi", "sclérose", "esclerosis", "esclerose", "sklerose", "stwardnieni*", "lupus", "dementia",
        "demenz", "démence", "demencia", "demenza", "dementie", "demência", "parkinson*", "alzheimer*", "crohn*",
        "zawał*", "udar*", "leki", "leków", "cukrzyc*", "nowotw*", "infarkt*", "herzinfarkt", "infarto", "infarctus",
        "chlamydia", "herpes", "hpv",
    ]),
    (Category::MentalHealth, &[
        "depress*", "anxi*", "therap*", "psychiatr*", "psycholo*", "suicid*", "self-harm*", "ptsd", "trauma*",
        "ocd", "bipolar", "schizo*", "anorex*", "bulimi*", "burnout", "burn-out", "antidepress*", "sertralin*",
        "fluoxetin*", "venlafax*", "relaps*", "sober", "sobriety", "addict*", "hopeless*", "worthless", "lonely",
        "loneliness", "insomnia", "overwhelmed",
        "angst", "ängst*", "panik*", "therapie", "psychiater*", "einsam*", "selbstverletz*", "traurig*",
        "déprim*", "dépress*", "anxiét*", "angoiss*", "pleure*",
        "ansiedad", "depresi*", "ansios*", "pánico", "autolesi*",
        "ansia", "panico", "ansios*",
        "somber*", "depressie*", "paniek*",
        "ansiedade", "pânico", "choro",
        "depresj*", "lęk*", "ångest*",
    ]),
    (Category::Sexuality, &[
        "gay", "lesbian*", "lesbisch*", "lesbienne*", "lesbiana*", "lesbica*", "bisexual*", "bisexuel*", "bisessual*",
        "biseksu*", "bissexual*", "queer", "asexual*", "asexuel*", "transgender*", "nonbinary", "non-binary", "homosex*",
        "schwul*", "sexuality", "sexualité", "sexualidad", "polyamor*", "poliamor*", "attracted",
        // Gender identity, in every locale of the gate
        "trans", "transsexu*", "transexu*", "transgênero", "transgénero", "transgenere", "non-binaire", "nicht-binär",
        "nonbinair", "não-binári*", "no-binari*", "pansexu*", "homo", "homoseksu*", "lesbijk*", "geju",
    ]),
    (Category::Religion, &[
        "muslim*", "islam*", "christian*", "catholic*", "protestant*", "jewish", "judaism", "sikh*", "hindu*", "buddhis*",
        "atheis*", "church", "mosque", "synagogue", "prayer*", "pray", "praying", "faith", "hijab", "halal",
        "kosher", "ramadan", "baptis*", "jehovah*", "mormon*",
        "kirche", "moslem*", "gebet*", "jüdisch*", "christlich*", "christen", "evangel*",
        "musulman*", "juif", "juive", "catholique*", "église", "mosquée", "prière*",
        "musulmán", "judío", "judía", "católic*", "iglesia", "mezquita",
        "ebreo", "ebrea", "cattolic*", "chiesa", "moschea", "preghier*",
        "moslim*", "joods*", "katholiek*", "kerk", "moskee", "geloof*",
        "muçulman*", "judeu", "judia", "igreja", "mesquita", "testemunha", "jeová",
        // Affiliation, conversion, practice and places of worship in every locale of the gate
        "jehov*", "jeov*", "geova", "quran", "koran", "rabbi", "imam", "pastor", "agnostic", "headscarf", "turban",
        "kippah", "shabbat", "sabbath", "hajj", "eid",
        "muslimin", "muslima", "kopftuch", "jude", "jüdin", "getauft", "moschee", "synagoge",
        "jeûne", "baptisé*", "synagogue", "rabbin", "bouddhiste*",
        "ayuno", "bautizad*", "sinagoga", "testigo", "creyente",
        "battezzat*", "testimone", "fede", "credente", "digiuno",
        "moslima", "hoofddoek", "gedoopt", "bekeerd", "gelovig*",
        "batizad*", "evangélic*", "espírita", "umbanda", "candomblé", "crente",
        "katolik*", "katoliczk*", "muzułman*", "żyd", "żydówk*", "świadk*", "jehow*", "kościół", "kościele", "kościoła", "meczet*", "modl*",
        "wierząc*", "ateist*", "judendom*", "kristen", "kyrka*", "moské*",
    ]),
    (Category::Politics, &[
        "voted", "political", "politically", "protest*", "strike", "unionised", "unionized", "communist*", "socialist*",
        "tory", "republican*", "democrat*", "activis*", "left-wing", "right-wing", "far-right", "far-left",
        "partei", "gewerkschaft*", "politisch*", "linken", "afd", "cdu", "spd", "grünen",
        "syndicat*", "politique*", "grève", "manif", "manifestation*",
        "voté", "sindicat*", "manifestaci*", "huelga", "polític*",
        "votato", "sindacat*", "sciopero", "manifestazion*", "politic*",
        "gestemd", "partij", "vakbond*", "demonstratie*", "politiek*",
        "votei", "greve", "manifestaç*",
        "partii", "partia", "partię", "partią", "głosował*",
        // Membership and parties by name in every locale of the gate
        "marched", "rally", "canvass*", "grüne", "fdp", "bsw", "sozialdemokrat*",
        "militan*", "adhérent*", "insoumis*", "afiliad*", "psoe", "tesserat*",
        "pvv", "vvd", "d66", "groenlinks", "partijlid", "filiad*", "konfederacj*", "lewic*", "partyjn*",
        "socialdemokrat*", "sverigedemokrat*", "moderaterna", "vänsterpartiet", "partiet",
    ]),
    (Category::Ethnicity, &[
        "ethnic*", "racis*", "racial*", "arab*", "romani", "gypsy", "gitano*", "sinti", "immigrant*", "migrant*",
        "refugee*", "indigenous", "aboriginal", "biracial", "mixed-race", "latino", "latina", "hispanic",
        "migrationshintergrund", "ausländer*", "rassis*", "ethnisch*",
        "racisme", "ethnique*", "immigré*", "racismo", "étnic*", "inmigrante*", "razzis*", "etnic*",
        "allochto*",
        // Roma, Sinti and origin words in every locale of the gate
        "romni", "romnja", "romsk*", "cigan*", "cygan*", "gitan*", "tsigane*", "zingar*", "zigeun*", "zigenar*",
        "maghrébin*", "marokkaan*", "marokkaans*", "surinaams*", "afrodescendient*", "afrodescendent*",
        "obcokrajow*", "cudzoziem*", "imigrant*", "immigrat*", "invandrar*", "rasism*", "rasist*", "racist*",
    ]),
    (Category::Finances, &[
        // Money in trouble: a topic on its own next to a first-person word.
        "debt", "debts", "indebted", "overdrawn", "bankrupt*", "insolven*", "bailiff*", "arrears", "repossess*", "evict*",
        "owe", "owed", "owes", "owing", "payday",
        "schulden", "zwangsräumung", "verschuldet", "dispo", "pfändung", "inkasso", "mahnung*", "privatinsolvenz",
        "dette*", "endetté*", "découvert", "surendett*", "huissier*", "expuls*", "impayé*",
        "deuda*", "endeudad*", "moroso*", "embarg*", "desahucio",
        "debit*", "indebitat*", "pignoramento", "sfratt*",
        "schuld", "deurwaarder", "betalingsregeling", "incasso", "bkr", "uitzetting",
        "dívida*", "divida*", "endividad*", "penhora*", "serasa", "despejo",
        "chwilówk*", "dług*", "zadłuż*", "komornik*", "skuld*", "kronofogden",
    ]),
    (Category::Legal, &[
        "police", "arrest*", "court", "lawyer*", "solicitor*", "attorney*", "sued", "sue", "lawsuit*",
        "conviction*", "convicted", "prison", "jail", "probation", "parole", "custody", "warrant", "subpoena*",
        "summons", "offence", "offense", "bail", "fined",
        "polizei", "anwalt", "anwältin", "strafanzeige", "amtsgericht", "gerichtstermin", "vorladung", "beschuldigt*", "verurteil*", "betrug*",
        "klage",
        "avocat*", "plainte", "tribunal", "convocation", "condamn*", "procès", "amende", "commissariat",
        "policía", "policia", "abogad*", "denuncia*", "juicio", "juzgado", "multa", "detenid*", "condena*",
        "polizia", "avvocat*", "tribunale", "condann*", "querela",
        "politie", "advocaat", "aangifte", "rechtbank", "boete", "veroordeeld",
        "polícia", "advogad*", "denúncia", "policj*", "sąd*", "adwokat*", "polis", "advokat", "domstol", "åtal",
    ]),
    (Category::Biometrics, &[
        "fingerprint*", "faceid", "facial", "retina*", "iris", "voiceprint*", "biometr*", "dna", "genom*",
        "fingerabdr*", "gesichtserkennung", "empreinte*", "faciale", "biométr*", "huella*", "rostro", "impronta*",
        "facciale", "volto", "vingerafdruk*", "gezichtsherkenning", "rosto",
    ]),
];

/// Money words that are a topic only with a figure ("my salary is 48,000", "a loan of 9.000")
/// or a word of `MONEY_TROUBLE` in the sentence: "how does a savings account work, I want to
/// open one" is not (the rule
/// "Money without figures" of crates/gate/data/README.md).
#[rustfmt::skip]
const MONEY_TERMS: &[&str] = &[
    "loan", "loans", "mortgage*", "overdraft*", "salary", "income", "wages", "savings", "pension", "tax", "taxes",
    "paycheck", "payslip", "credit", "rent",
    "kredit*", "gehalt", "lohn", "miete", "hypothek*", "rente", "raten", "ratenkredit*", "ersparnis*",
    "crédit", "salaire", "loyer", "hypothèque", "prêt", "épargne", "impôt*",
    "préstamo*", "prestamo*", "hipoteca*", "sueldo", "salario", "nómina", "nomina", "alquiler", "ahorros",
    "mutuo", "prestito", "stipendio", "affitto", "bollett*", "risparmi",
    "lening*", "hypotheek", "salaris", "huur", "spaargeld",
    "empréstimo*", "emprestimo*", "salário", "aluguel", "renda", "prestação",
    "kredyt*", "pożyczk*", "czynsz", "pensj*", "lån", "lön", "hyra",
];

/// Money in trouble without a figure: "we missed two mortgage payments", "three months of rent
/// behind".
#[rustfmt::skip]
const MONEY_TROUBLE: &[&str] = &[
    "behind", "missed", "overdue", "afford", "rückstand", "rückstände", "verzug", "retard", "atrasad*", "atraso",
    "retraso", "ritardo", "arretrat*", "achterstand", "achter", "zaległ*",
];

/// Child words: a topic only with a detail about the child in the sentence (an age, school,
/// behaviour or health: `CHILD_DETAILS`, an age, or a health word), not "a trip with my kids".
#[rustfmt::skip]
const CHILD_TERMS: &[&str] = &[
    "son", "daughter*", "kid", "kids", "child", "children", "toddler*", "baby", "infant", "teen", "teenager*",
    "*year-old", "boy", "girl", "eldest", "youngest",
    "sohn", "tochter", "kind", "kinder", "kleinkind", "enkelin", "enkelkind*", "kleiner", "kleine",
    "fils", "fille", "enfant*", "bébé", "ado", "petit", "petite",
    "hijo", "hija", "hijos", "hijas", "niño*", "niña*", "bebé", "pequeño", "pequeña",
    "figlio", "figlia", "figli", "bambin*", "bimb*",
    "zoon", "dochter", "kinderen", "zoontje", "dochtertje", "peuter*",
    "filho", "filha", "filhos", "criança*", "bebê", "pequeno", "pequena",
    "syn", "córka", "dziecko", "dzieci", "dotter", "barn", "barnet",
];
#[rustfmt::skip]
const CHILD_DETAILS: &[&str] = &[
    "school", "schoolbag", "teacher*", "classmates", "grades", "nursery", "kindergarten", "daycare",
    "bullied", "bully*", "tantrum*", "behaviour*", "behavior*", "adhd", "autis*", "speech", "wets",
    "bedwetting", "nightmare*", "suspended", "expelled", "detention", "hits", "hitting", "bites", "biting",
    "schule", "schulranzen", "lehrer*", "kita", "kindergarten", "gemobbt", "mobbing", "wutanf*",
    "adhs", "nässt", "einnässen", "albtr*", "verhalten*", "sprech*",
    "école", "ecole", "collège", "college", "maîtresse", "maitresse", "instit*", "crèche", "harcel*", "colère*",
    "tdah", "pipi", "cauchemar*", "comportement*",
    "colegio", "escuela", "instituto", "profesor*", "profe", "guardería", "acoso", "rabieta*", "moja",
    "pesadilla*", "comportamiento*",
    "scuola", "maestr*", "insegnant*", "asilo", "bullismo", "capricci", "pipì", "incubi", "comportamento",
    "juf", "meester", "klas", "kinderopvang", "crèche", "gepest", "pesten", "driftbui*", "bedplassen", "plast",
    "nachtmerrie*", "gedrag*",
    "escola", "professor*", "professora", "turma", "creche", "birra*", "phda", "xixi", "pesadelo*",
    "szkoł*", "nauczyciel*", "przedszkol*", "skola*", "skolan", "lärar*", "förskola*", "klass*",
];
/// Words after a number that make it an age: "is 7 years old", "a 4 ans", "ha 7 anni".
#[rustfmt::skip]
const AGE_UNITS: &[&str] = &[
    "year", "years", "yrs", "yo", "month", "months", "jahre", "jahren", "monate", "ans", "mois", "años", "anos",
    "meses", "anni", "mesi", "jaar", "maanden", "år", "månader", "lat", "lata",
];
/// Words before a number that make it an age: "my son is 7", "mein Sohn ist 7", "zoon van 4".
const AGE_VERBS: &[&str] = &[
    "is", "ist", "turned", "turns", "wird", "heeft", "van", "är", "ma", "(",
];

fn matches(entry: &str, word: &str) -> bool {
    if let Some(stem) = entry.strip_suffix('*') {
        word.starts_with(stem)
    } else if let Some(tail) = entry.strip_prefix('*') {
        word.ends_with(tail)
    } else {
        word == entry
    }
}

/// Words after a topic word that make it a technical term: "child process", "retina display".
#[rustfmt::skip]
const TECHNICAL_HEADS: &[&str] = &[
    "process", "processes", "element", "elements", "component", "components", "node", "nodes", "class", "classes",
    "thread", "threads", "window", "windows", "widget", "widgets", "table", "display", "screen", "theme", "item",
    "items", "key", "keys", "id", "span", "div",
];

/// The word after an elided article or pronoun: "m'expulser" -> "expulser", "l'école" ->
/// "école", "dell'ospedale" -> "ospedale".
fn without_elision(word: &str) -> &str {
    const ELIDED: &[&str] = &[
        "l", "d", "j", "m", "n", "s", "t", "c", "qu", "all", "dell", "nell", "sull", "un",
    ];
    word.split_once(['\'', '’'])
        .filter(|(head, tail)| ELIDED.contains(head) && !tail.is_empty())
        .map_or(word, |(_, tail)| tail)
}

fn terms_of(category: Category) -> &'static [&'static str] {
    TOPIC_TERMS
        .iter()
        .find(|(c, _)| *c == category)
        .map_or(&[], |(_, terms)| terms)
}

/// An amount of money: a number of at least three digits ("48,000", "1.400", "2500"), or one
/// with a thousands suffix ("23k").
fn has_figure(sentence: &str) -> bool {
    let chars: Vec<char> = sentence.chars().collect();
    let mut digits = 0;
    for (i, &c) in chars.iter().enumerate() {
        if c.is_ascii_digit() {
            digits += 1;
            let next = chars.get(i + 1).copied();
            if digits >= 3
                || (matches!(next, Some('k' | 'K'))
                    && !chars.get(i + 2).is_some_and(|c| c.is_alphabetic()))
            {
                return true;
            }
        } else {
            // Thousands separators keep the digit run going: "48,000", "1.400", "12 000".
            let joins = matches!(c, ',' | '.' | '\'' | ' ')
                && digits > 0
                && chars.get(i + 1).is_some_and(char::is_ascii_digit);
            if !joins {
                digits = 0;
            }
        }
    }
    false
}

/// A child's age: a number up to 18 after "is"/"ist"/"(" or before "years"/"ans"/"anni", or a
/// "7-year-old".
fn has_age(words: &[String]) -> bool {
    words.iter().enumerate().any(|(k, w)| {
        let is_age = w.parse::<u32>().is_ok_and(|n| n <= 18);
        w.ends_with("-year-old")
            || w.contains("-jährig")
            || (is_age
                && (words
                    .get(k + 1)
                    .is_some_and(|n| AGE_UNITS.contains(&n.as_str()))
                    || (k > 0 && AGE_VERBS.contains(&words[k - 1].as_str()))))
    })
}

fn is_first_person(word: &str) -> bool {
    FIRST_PERSON.contains(&word) || FIRST_PERSON_PREFIXES.iter().any(|p| word.starts_with(p))
}

/// Topic lexicon + first-person backstop; see the module documentation.
pub struct TopicCues;

impl Detector for TopicCues {
    fn name(&self) -> &str {
        "topic-cues"
    }

    fn detect(&self, text: &str) -> Vec<Span> {
        let mut found: Vec<Span> = Vec::new();
        for (s, e) in sentences(text) {
            let words: Vec<String> = tokenize(&text[s..e])
                .iter()
                .map(|t| t.text.to_lowercase())
                .collect();
            if !words.iter().any(|w| is_first_person(w)) {
                continue;
            }
            let has = |terms: &[&str]| {
                words.iter().enumerate().any(|(k, w)| {
                    let w = without_elision(w);
                    terms.iter().any(|t| matches(t, w))
                        && !words
                            .get(k + 1)
                            .is_some_and(|n| TECHNICAL_HEADS.contains(&n.as_str()))
                })
            };
            let health = [Category::Health, Category::MentalHealth]
                .iter()
                .any(|c| has(terms_of(*c)));
            let detail_hits = [
                (
                    Category::Finances,
                    has(MONEY_TERMS) && (has_figure(&text[s..e]) || has(MONEY_TROUBLE)),
                ),
                (
                    Category::Children,
                    has(CHILD_TERMS) && (health || has(CHILD_DETAILS) || has_age(&words)),
                ),
            ];
            let hits = TOPIC_TERMS
                .iter()
                .map(|&(category, terms)| (category, has(terms)))
                .chain(detail_hits);
            for (category, hit) in hits {
                if hit && !found.iter().any(|f| f.category == category) {
                    found.push(Span {
                        start: s,
                        end: e,
                        category,
                        detector: "topic-cue".to_string(),
                        confidence: CUE_CONFIDENCE,
                    });
                }
            }
        }
        found
    }
}

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
    "schrijf", "stuur",
];
const RECIPIENT_PREPOSITIONS: &[&str] = &["to", "an", "à", "a", "para", "naar", "aan"];
/// Titles before a name, not part of it.
#[rustfmt::skip]
const TITLES: &[&str] = &[
    "dr", "mr", "mrs", "ms", "prof", "professor", "herr", "frau", "m", "mme", "sr", "sra", "dott", "dottssa", "dhr",
    "mevr", "coach",
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
        && !NOT_NAMES.contains(&t.text.to_lowercase().as_str())
        && !is_never_a_name(&t.text.to_lowercase())
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
                    .take_while(|&k| tokens[k].text.chars().all(char::is_lowercase))
                    .find(|&k| RECIPIENT_PREPOSITIONS.contains(&lower[k].as_str()));
                if let Some(p) = preposition {
                    // Past a title: "Write to Dr. Hansen".
                    let mut k = p + 1;
                    while lower
                        .get(k)
                        .is_some_and(|w| TITLES.contains(&w.as_str()) || w == ".")
                    {
                        k += 1;
                    }
                    if k < tokens.len() {
                        out.extend(name_run(&tokens, k, CUE_NAME_CONFIDENCE));
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
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topics(text: &str) -> Vec<Category> {
        TopicCues.detect(text).iter().map(|s| s.category).collect()
    }

    fn people(text: &str) -> Vec<&str> {
        GreetingNames
            .detect(text)
            .iter()
            .map(|s| &text[s.start..s.end])
            .collect()
    }

    #[test]
    fn first_person_and_topic_word_are_both_needed() {
        assert_eq!(
            topics("My biopsy came back and I am scared."),
            [Category::Health]
        );
        assert_eq!(
            topics("Ma fille de 5 ans a peur du noir."),
            [Category::Children]
        );
        assert_eq!(
            topics("J'ai reçu une convocation au commissariat."),
            [Category::Legal]
        );
        assert!(topics("How is a biopsy done?").is_empty());
        assert!(topics("My monitor flickers over HDMI.").is_empty());
    }

    #[test]
    fn family_and_money_words_need_a_detail() {
        assert!(topics("We are driving to the coast with my kids in May.").is_empty());
        assert!(topics("Mi hija quiere aprender a nadar, ¿dónde empiezo?").is_empty());
        assert!(topics("I want to open a savings account, how do they work?").is_empty());
        assert!(topics("Wie funktioniert eine Hypothek? Wir überlegen zu kaufen.").is_empty());
        assert_eq!(
            topics("My son is 7 and can't read yet."),
            [Category::Children]
        );
        assert_eq!(topics("My 9-year-old hates maths."), [Category::Children]);
        assert_eq!(
            topics("Mijn dochter wordt gepest op school."),
            [Category::Children]
        );
        assert_eq!(
            topics("My daughter has a fever again."),
            [Category::Health, Category::Children]
        );
        assert_eq!(
            topics("My salary is 48,000 and the rent takes half."),
            [Category::Finances]
        );
        assert_eq!(topics("I owe 23k on my cards."), [Category::Finances]);
        assert_eq!(
            topics("We missed two mortgage payments."),
            [Category::Finances]
        );
        assert_eq!(
            topics("Ich habe Schulden bei der Bank."),
            [Category::Finances]
        );
        assert_eq!(
            topics("Le propriétaire menace de m'expulser, je suis perdu."),
            [Category::Finances]
        );
        assert_eq!(
            topics("Mijn zoon van 4 slaapt slecht door nachtmerries."),
            [Category::Children]
        );
    }

    #[test]
    fn lexicon_entries_do_not_match_inside_unrelated_words() {
        assert!(topics("I booked a taxi for my Christmas party.").is_empty());
        assert!(topics("My Facebook page needs a new banner.").is_empty());
        assert!(topics("Welche Nebenwirkungen haben Statine im Allgemeinen?").is_empty());
        assert!(topics("My child process exits before the parent reads its pipe.").is_empty());
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
        assert!(people("Antwoord Andrea over de reis naar Lima.").is_empty());
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

    #[test]
    fn identity_statements_in_every_locale() {
        assert_eq!(
            topics("Sou cigana e ninguém me aluga casa."),
            [Category::Ethnicity]
        );
        assert_eq!(
            topics("Należę do Konfederacji od roku."),
            [Category::Politics]
        );
        assert_eq!(
            topics("Ik draag een hoofddoek op mijn werk."),
            [Category::Religion]
        );
        assert_eq!(
            topics("Mein Neurologe hat eine Sklerose festgestellt."),
            [Category::Health]
        );
        assert_eq!(
            topics("Soy trans y trabajo en una tienda."),
            [Category::Sexuality]
        );
        assert!(topics("My std::vector keeps reallocating.").is_empty());
        assert!(topics("Je veux faire de la voile cet été.").is_empty());
        assert!(topics("Ich glaube, mein Router ist kaputt.").is_empty());
    }
}
