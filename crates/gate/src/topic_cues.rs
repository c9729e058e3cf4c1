//! `TopicCues`: the lexicon backstop behind the learned topic classifier, for what a linear model
//! trained on generated sentences misses when a real person phrases it their own way (in any of
//! the 14 languages both know).
//!
//! A disclosure is a first-person word and a sensitive object in one sentence: "my biopsy",
//! "ich habe eine Vorstrafe", "我是HIV阳性", "私の夫は透析", "у меня судимость", "मुझे एचआईवी है".
//! First-person words include the writer's own people ("my wife", "我妈妈", Japanese humble
//! family words such as 母 and 夫, which only name one's own family), so a disclosure about a
//! specific other person counts too. Such a sentence is reported as the object's topic with a
//! weak confidence (`CUE_CONFIDENCE`). A general question on the same object ("What are the side
//! effects of SSRIs?", "移民法是怎么规定的?") has no first-person word and is not reported.
//!
//! - Family and money words need a detail as well, since a child or a savings account mentioned
//!   in passing is not sensitive: a child word counts with an age, school, behaviour or health
//!   word ("my son is 7", "ma fille ... l'école"), a money word with a figure or a word of
//!   arrears ("my salary is 48,000", "we missed two mortgage payments"); words of debt count
//!   alone.
//! - A patient document (a discharge letter, lab report or prescription: a field such as
//!   "Diagnosis:", or a document name in a text laid out in lines or fields) with a health word
//!   is a health disclosure about its patient without any first-person word.
//!
//! Under the policy's `consent_below` a weak special-category finding asks the user instead of
//! keeping the text local: the backstop turns a would-be leak into a question, and since
//! findings are only ever added it can make a decision stricter, never looser.
//!
//! Matching: every entry of every list is one pattern of a single Aho-Corasick automaton, run
//! once over each sentence (case-folded), so the cost is linear in the text whatever the size of
//! the lexicon. An entry ending in `*` is a prefix, one starting with `*` a suffix, any other a
//! whole word; word edges are checked against the neighbouring characters, so "l'hôpital" and
//! "dell'ospedale" match "hôpital" and "ospedale". By script:
//! - Chinese and Japanese (Han, kana) are written without spaces: their entries match anywhere.
//!   Japanese hiragana words that occur inside common words are listed in inflected forms
//!   ("がんだ", not "がん", which is in "がんばって").
//! - Arabic attaches conjunctions, prepositions and the article to the word ("وبالسرطان"): an
//!   Arabic entry may be preceded in its word by those (`PROCLITICS`), and stems take `*` for the
//!   attached pronouns ("تاشير*" for تأشيرة, تأشيرتي). Hamza forms of alef, alef maqsura and
//!   vowel marks are folded away on both sides.
//! - Russian and Turkish inflect: their entries are stems with `*` unless a stem would match
//!   unrelated words ("рак" cancer is listed by case form, since "рак*" is in "ракета").
//! - Korean attaches particles to nouns: entries are prefixes of the word ("아내*"), or listed with
//!   their particles where the bare noun is a prefix of unrelated words ("암이", "암을").
//! - Devanagari vowel signs and viramas are word characters; the nukta is folded away, so "ज़"
//!   and "ज" spellings match alike.
//!
//! Entries are chosen to be rare outside the topic ("christian", not "christ*", which would match
//! "Christmas"; "tax", not "tax*", which would match "taxi"; no "prep", which is mostly meal
//! prep).

use std::collections::BTreeSet;
use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

use crate::learned::{sentences, tokenize};
use crate::pipeline::Detector;
use crate::{Category, Span};

/// Confidence of a lexicon finding: above the default policy's `ignore_below` (0.2) and below
/// its `consent_below` (0.5), so that a special category found only by one word asks for consent.
pub const CUE_CONFIDENCE: f32 = 0.45;

/// Confidence of a finding with `evidence` independent cues: two words of one topic in a
/// first-person sentence ("我是HIV阳性，在吃抗病毒药"), a visa word with a status in trouble, a
/// patient document's field with a diagnosis. Each cue alone is weak; two combine as a noisy OR
/// (0.70), like the classifier and the lexicon in `pipeline`, and cross the default
/// `consent_below`: the text is kept local instead of asked about. More than two add nothing,
/// since words of one sentence are not independent.
fn cue_confidence(evidence: usize) -> f32 {
    1.0 - (1.0 - CUE_CONFIDENCE).powi(evidence.clamp(1, 2) as i32)
}

#[rustfmt::skip]
const FIRST_PERSON: &[&str] = &[
    // en
    "i", "i'm", "i’m", "i've", "i’ve", "i'd", "i’d", "i'll", "my", "mine", "myself", "our", "ours", "we", "we're", "we’re", "we've",
    // de
    "ich", "bin", "mein", "meine", "meinen", "meinem", "meiner", "meines", "mir", "mich", "unser", "unsere", "unseren", "unserem", "unserer", "wir",
    // fr (j'ai, m'a ... by the elided prefixes)
    "je", "moi", "mon", "ma", "mes", "notre", "nos", "nous", "j'*", "j’*", "m'*", "m’*",
    // es
    "yo", "mi", "mis", "nuestro", "nuestra", "nuestros", "nuestras", "tengo", "estoy", "soy", "llevo", "necesito",
    "quiero", "puedo", "debo", "fui", "tuve", "me pongo", "me han", "me van", "me diagnostic*", "me hicieron",
    "me dijeron", "me operaron",
    // it
    "io", "mio", "mia", "miei", "mie", "ho", "sono", "nostro", "nostra", "nostri", "nostre", "abbiamo", "voglio", "faccio", "prendo",
    // nl
    "ik", "mijn", "mij", "ons", "onze", "wij",
    // pt
    "eu", "meu", "minha", "meus", "minhas", "estou", "tenho", "nosso", "nossa", "preciso", "quero", "sou", "fui", "tive", "tomo", "faço",
    // pl, sv
    "jestem", "należę", "mam", "byłem", "byłam", "mój", "moja", "moje", "mnie", "moim", "mojej", "moją", "nasz", "nasza",
    "jag", "min", "mitt", "mina", "mig", "vi", "oss", "vår", "vårt", "våra",
    // tr: pronouns, the writer's people, present and future first person, "I am ..." forms of identities
    "ben", "benim", "beni", "bende", "benden", "biz", "bizim", "bize", "bizi", "annem", "annemin", "babam",
    "babamın", "eşim", "eşimin", "kocam", "kocamın", "karım", "oğlum", "oğlumun", "kızım", "kızımın", "kardeşim",
    "ablam", "abim", "ağabeyim", "doktorum", "onkoloğum", "vizemin", "vizemi", "ev sahibim", "patronum",
    "avukatım", "işverenim", "üyesiyim", "üyeyim", "*iyorum", "*ıyorum", "*uyorum", "*üyorum", "*acağım",
    "*eceğim", "pozitifim", "hastayım", "geyim", "eşcinselim", "lezbiyenim", "müslümanım", "hristiyanım",
    "hıristiyanım", "aleviyim", "ateistim", "kürdüm", "iznimin", "iznim", "vizem", "kaydım", "sonucumun", "sonucum",
    "*duğumu", "*dığımı", "*diğimi", "*düğümü", "*tuğumu", "*tığımı", "*tiğimi", "*tüğümü",
    // ru
    "я", "мне", "меня", "мной", "мой", "моя", "мое", "мои", "моего", "моей", "моему", "моим", "моих", "мою", "мы",
    "нас", "нам", "наш", "наша", "наше", "наши", "нашего", "нашей",
    // hi, and Hindi written in Latin letters
    "mujhe", "mujhko", "mera", "meri", "mere", "maine", "hamara", "hamari", "humara", "main hoon", "main hun", "mai hoon",
    "मैं", "मैंने", "मेरा", "मेरी", "मेरे", "मुझे", "मुझको", "मुझसे", "हम", "हमारा", "हमारी", "हमारे", "हमें",
    // zh (我 also covers 我的, 我们, 我妈妈)
    "我", "本人",
    // ja: pronouns, humble family words (only for one's own family), and, since Japanese drops the
    // subject that is the speaker, forms of undergoing something: "was diagnosed", "was told",
    // "am infected", "am taking", "under treatment", "in hospital"
    "私", "僕", "俺", "わたし", "あたし", "自分", "母が", "母は", "母の", "父が", "父は", "父の", "夫が", "夫は", "夫の", "妻が",
    "妻は", "妻の", "息子", "娘が", "娘は", "娘の", "兄は", "兄が", "兄の", "姉は", "姉が", "姉の", "弟は", "弟が", "弟の",
    "妹は", "妹が", "妹の", "祖母", "祖父", "家族", "主人", "診断され", "言われました", "感染して", "飲んでいます",
    "服用して", "服用中", "治療中", "通院中", "通院して", "入院中", "受けています", "打っています",
    // ko: pronouns with their particles, family words (the possessive is usually dropped), and
    // forms of undergoing something, whose dropped subject is the speaker ("am taking", "am being
    // treated")
    "나", "나는", "나도", "나를", "내가", "내", "나의", "저", "저는", "저도", "저를", "제가", "제", "저의", "저희*", "우리",
    "우리는", "우리가", "아내*", "남편*", "아들*", "딸", "딸이", "딸은", "딸의", "딸을", "딸아이*", "엄마*", "아빠*", "어머니*",
    "아버지*", "진단을 받", "판정을 받", "먹고 있어요", "먹고 있습니다", "받고 있어요", "받고 있습니다", "맞고 있어요",
    "치료 중", "치료중", "입원 중",
    // ar: pronouns, "I have", "I suffer", "I take", the writer's people and things
    "انا", "انني", "اني", "لدي", "لديّ", "عندي", "اعاني", "اتناول", "نحن", "زوجي", "زوجتي", "ابني", "ابنتي", "بنتي",
    "امي", "والدتي", "ابي", "والدي", "اخي", "اختي", "طبيبي", "تشخيصي", "تاشيرتي", "اقامتي", "حالتي", "نتيجتي", "سجلي",
    "قال لي", "قالت لي", "اخبرتني", "سابدا", "ساخضع", "اخاف", "اشعر", "صرت", "لا استطيع", "لم اعد", "اخذ دواء", "خائف", "خائفه",
    // Verbs that only the writer says of themself: "I feel", "I started", "I've been (feeling)"
    "ando", "comecei", "fiquei", "sinto", "me sinto", "comencé", "empecé", "me siento", "mi sento",
    "ho iniziato", "ho cominciato", "je me sens", "ich fühle mich",
    // Turkish first person past ("kilo verdim", "çağrıldım"), by endings no other language has
    "*dım", "*düm", "*rdim", "*ldim", "*ndim", "*ktim", "*ştim", "*ttim", "*rdum", "*ldum", "*ndum",
    "*duğum", "*tuğum", "*dığım", "*tığım", "*diğim", "*tiğim", "*düğüm", "*tüğüm", "*sıyım", "*siyim", "*suyum",
    "*süyüm",
    // The writer's people named without a possessive, as Russian and Hindi usually do ("Мужу дали",
    // "पिताजी को")
    "муж", "мужа", "мужу", "мужем", "жена", "жены", "жене", "женой", "мама", "мамы", "маме", "маму", "мамой",
    "папа", "папы", "папе", "папу", "сын", "сына", "сыну", "сыном", "дочь", "дочери", "дочке", "брат", "брату",
    "сестра", "сестре", "бабушк*", "дедушк*",
    "पिताजी", "पिता जी", "पापा", "माँ", "मां", "मम्मी", "माताजी", "पति", "पत्नी", "बेटा", "बेटी", "भाई", "बहन",
    "दादी", "दादा", "नानी", "नाना",
    // Japanese and Korean drop the subject that is the speaker; the clause that sets out one's own
    // situation before a question ("...のですが", "...는데"), ongoing treatment ("通っていて",
    // "받고 있는데") and favours done to the speaker ("してもらっている", "出してくれません") mark it
    "のですが", "んですが", "んですけど", "のですけど", "ているので", "ているのに", "っていて", "通って",
    "てもらって", "てくれません", "てくれない", "たくない", "たくありません", "と言われて", "飲み始め", "打ち始め",
    "通い始め", "に呼ばれ", "呼び出され",
    // Feelings are predicated of the speaker only, in Japanese and Korean ("つらいです", "무서워요")
    "つらいです", "辛いです", "不安です", "怖いです", "困っています", "悩んでいます", "心配です",
    "힘들어요", "힘듭니다", "무서워요", "걱정돼요", "걱정이에요", "불안해요", "괴로워요", "답답해요", "어떡하죠",
    "*는데", "*인데", "*은데", "받고 있*", "먹고 있*", "맞고 있*", "다니고 있*",
    // The writer's own story told as lasting up to now ("since last year", "for three weeks",
    // "lately"); a plain past date is not one ("how many were arrested last year?")
    "since last", "for the past", "for the last", "lately", "these days",
    "seit letzter", "seit letztem", "seit wochen", "seit monaten", "seit jahren", "seit einer woche",
    "seit einem monat", "seit einem jahr", "in letzter zeit",
    "depuis des semaines", "depuis des mois", "depuis des années", "depuis la semaine", "depuis le mois",
    "depuis l'an", "depuis l’an", "depuis l'année", "depuis l’année", "ces derniers temps",
    "desde hace", "últimamente",
    "da settimane", "da mesi", "da anni", "dalla settimana", "dal mese", "dall'anno", "dall’anno", "ultimamente",
    "sinds vorige", "sinds vorig", "al weken", "al maanden", "al jaren", "de laatste tijd",
    "desde que", "há semanas", "há meses", "há anos",
    "с прошлого", "с прошлой", "уже неделю", "уже месяц", "уже год", "уже две", "уже три", "последнее время",
    "haftadır", "haftalardır", "aydır", "aylardır", "yıldır", "yıllardır", "gündür", "günlerdir", "son zamanlarda",
    "去年から", "先月から", "先週から", "ずっと",
    "요즘", "작년부터", "지난달부터", "지난주부터", "올해부터",
    "منذ شهر", "منذ اسبوع", "منذ سنه", "منذ ايام", "منذ العمليه",
    "आजकल", "कल से", "हफ्ते से", "हफ्तों से", "महीने से", "महीनों से", "साल से",
];

/// Wishing to die or to disappear: a mental-health disclosure that is said of oneself, so each
/// entry is both a topic word and a first-person word.
#[rustfmt::skip]
const WISHES_TO_DIE: &[&str] = &[
    "want to die", "want to disappear", "don't want to live", "don’t want to live", "nicht mehr leben",
    "envie de mourir", "veux mourir", "veux disparaître", "quiero morir", "quiero desaparecer", "no quiero vivir",
    "voglio morire", "voglio sparire", "non voglio più vivere", "wil dood", "wil verdwijnen", "wil niet meer leven",
    "quero morrer", "quero desaparecer", "não quero mais viver", "хочу умереть", "хочу исчезнуть", "не хочу жить",
    "ölmek istiyorum", "yaşamak istemiyorum", "kaybolmak istiyorum", "मरना चाहता", "मरना चाहती", "जीना नहीं चाहता",
    "जीना नहीं चाहती", "nicht mehr aufwachen", "don't want to wake up", "don’t want to wake up", "kill myself",
    "end my life", "take my own life", "mich umbringen", "me tuer", "matarme", "uccidermi", "me matar",
    "покончить с собой", "kendimi öldür*", "不想醒来", "想死", "不想活", "想消失", "死にたい", "消えたい", "生きていたくない", "죽고 싶*", "사라지고 싶*",
    "살기 싫*", "اريد ان اموت", "لا اريد ان اعيش",
];

/// A man speaking of himself ("僕", "I'm a guy", "मैं लड़का हूँ") or a woman of herself: with a
/// partner of the same sex (`MALE_PARTNERS`, `FEMALE_PARTNERS`) in the sentence, a disclosure of
/// sexuality.
#[rustfmt::skip]
const MALE_SELF: &[&str] = &[
    "i'm a man", "i am a man", "i'm a guy", "i am a guy", "as a guy", "ich bin ein mann", "ich bin ein junge",
    "je suis un homme", "je suis un garçon", "je suis un mec", "soy hombre", "soy un hombre", "soy un chico",
    "sono un uomo", "sono un ragazzo", "ik ben een man", "ik ben een jongen", "sou homem", "sou um homem",
    "sou um rapaz", "я парень", "я мужчина", "erkeğim", "ben erkeğim", "मैं लड़का हूँ", "मैं लड़का हूं", "मैं आदमी हूँ",
    "मैं आदमी हूं", "我是男生", "我是男的", "我是男人", "僕", "俺", "男ですが", "남자인데", "저는 남자", "나는 남자",
    "انا رجل", "انا شاب",
];
#[rustfmt::skip]
const FEMALE_SELF: &[&str] = &[
    "i'm a woman", "i am a woman", "i'm a girl", "i am a girl", "ich bin eine frau", "je suis une femme",
    "je suis une fille", "soy mujer", "soy una mujer", "soy una chica", "sono una donna", "sono una ragazza",
    "ik ben een vrouw", "ik ben een meisje", "sou mulher", "sou uma mulher", "я девушка", "я женщина", "kadınım",
    "ben kadınım", "मैं लड़की हूँ", "मैं लड़की हूं", "मैं औरत हूँ", "我是女生", "我是女的", "我是女人", "女ですが",
    "私は女", "여자인데", "저는 여자", "나는 여자", "انا امراه", "انا فتاه",
];
#[rustfmt::skip]
const MALE_PARTNERS: &[&str] = &[
    "boyfriend", "husband", "petit ami", "petit copain", "novio", "fidanzato", "namorado", "мой парень", "моим парнем",
    "бойфренд*", "बॉयफ्रेंड", "男朋友", "男友", "彼氏", "남자친구*", "남친*", "erkek arkadaşım", "حبيبي",
];
#[rustfmt::skip]
const FEMALE_PARTNERS: &[&str] = &[
    "girlfriend", "wife", "petite amie", "petite copine", "novia", "fidanzata", "namorada", "моя девушка",
    "моей девушкой", "गर्लफ्रेंड", "女朋友", "女友", "여자친구*", "여친*", "kız arkadaşım", "حبيبتي",
];

/// Third-person pronouns: in the sentence right after a first-person one they are usually the
/// writer's people just named ("My mother called. She has cancer.", "我妈妈昨天去医院了。她得了
/// 癌症。"), so that sentence speaks of them as well.
#[rustfmt::skip]
const THIRD_PERSON: &[&str] = &[
    "he", "she", "he's", "she's", "they", "er", "sie", "il", "elle", "él", "ella", "lui", "lei", "hij", "zij", "ze",
    "ele", "ela", "他", "她", "彼", "彼女", "그는", "그녀*", "он", "она", "они", "ему", "ей", "него", "нее", "वह", "उसे",
    "उसको", "उसकी", "उसका", "उसके", "هو", "هي", "لديه", "لديها", "عنده", "عندها", "onun", "ona",
];

#[rustfmt::skip]
const TOPIC_TERMS: &[(Category, &[&str])] = &[
    (Category::Health, &[
        "diagnos*", "biops*", "biópsia", "chemo*", "cancer*", "tumor*", "tumour*", "fever", "rash", "infection*", "diabet*",
        "insulin*", "thyroid", "cholesterol", "pregnan*", "miscarr*", "surgery", "hospital*", "doctor*", "gp", "nurse",
        "medication*", "prescri*", "pills", "dose", "allerg*", "asthma", "cough*", "lump", "mri", "ecg", "x-ray", "blood*",
        "urine", "kidney*", "liver", "heart", "hiv", "hiv-positive", "seropositiv*", "séropositi*", "soropositiv*",
        "sieropositiv*", "injur*", "fractur*", "migraine*", "dizz*",
        "nause*", "vomit*", "swollen", "bleed*", "hepatit*", "arthrit*", "epilep*", "seizure*", "hernia", "physio*",
        "antibiot*", "statin*", "symptom*", "pain", "painful", "ache", "aches", "aching", "sick", "illness", "disease",
        "hba1c", "a1c", "egfr", "creatinine", "viral load", "cd4",
        "arzt", "ärzt*", "ärztin", "hausarzt", "hausärzt*", "krank*", "fieber", "schmerz*", "ausschlag", "blut*", "krebs",
        "*krebs", "schwanger*", "medikament*", "klinik*", "befund*", "*befund", "blutdruck", "tsh",
        "médecin*", "medecin*", "malad*", "douleur*", "diagnost*", "fièvre", "tumeur*", "enceinte", "hôpital", "hopital",
        "ordonnance", "médicament*",
        "médico", "medico", "enferm*", "dolor*", "fiebre", "cáncer", "embaraz*", "pastilla*", "medicament*", "sangre",
        "arritmia", "colesterol*", "glucosa", "glucose", "glicemia", "glicose",
        "malat*", "febbre", "cancro", "incinta", "ospedale", "farmac*", "sangue",
        "huisarts", "ziek*", "pijn*", "koorts", "kanker", "*kanker", "zwanger*", "ziekenhuis", "medicijn*", "bloed*",
        "doença*", "doenca*", "dor", "febre", "diagnóst*", "câncer", "grávida", "remédio*", "hepatite",
        "lekarz*", "chory", "chora", "chorob*", "ból*", "ciśnieni*", "gorączk*", "läkare", "sjuk*", "smärt*", "feber",
        "doktor*", "hastalı*", "hastayım", "ağrı*",
        // Specialists, vaccination and chronic conditions
        "cardiolog*", "kardiolog*", "rheumatolog*", "reumatolog*", "rhumatolog*", "neurolog*", "oncolog*", "oncólog*",
        "oncólog*", "onkolog*", "oncoloog", "dermatolog*", "gastroenterolog*", "endocrinolog*", "endokrinolog*",
        "urolog*", "gynaecolog*", "gynecolog*", "gynäkolog*", "gynécolog*", "ginecolog*", "gynaecoloog", "nefrolog*",
        "nephrolog*", "hematolog*", "haematolog*", "ematolog*", "hämatolog*", "ophthalmolog*", "oftalmolog*",
        "pneumolog*",
        "vaccin*", "vacun*", "vacin*", "impfung*", "geimpft", "szczepi*", "vaccinat*",
        "sclerosis", "sclerosi", "sclérose", "esclerosis", "esclerose", "sklerose", "stwardnieni*", "lupus", "dementia",
        "demenz", "démence", "demencia", "demenza", "dementie", "demência", "parkinson*", "alzheimer*", "crohn*",
        "zawał*", "udar*", "leki", "leków", "rak", "raka", "rakiem", "raku", "cukrzyc*", "nowotw*", "infarkt*", "herzinfarkt", "infarto", "infarctus",
        "chlamydia", "herpes", "hpv",
        // Drugs by generic and brand name: GLP-1 agonists, fertility, antiretrovirals, diabetes,
        // cancer, immunology and anticoagulants
        "semaglutid*", "ozempic", "wegovy", "rybelsus", "tirzepatid*", "mounjaro", "zepbound", "liraglutid*",
        "saxenda", "victoza", "dulaglutid*", "trulicity", "metformin*", "lantus", "novorapid", "humalog",
        "clomiphen*", "clomifen*", "clomid", "letrozol*", "létrozol*", "femara", "gonadotrop*", "follitropin*",
        "gonal-f", "menopur", "progesteron*", "ivf", "icsi", "fiv", "fivet", "in vitro", "kinderwunsch*",
        "fertilit*", "egg retrieval", "embryo transfer", "ovulation induction",
        "truvada", "descovy", "biktarvy", "emtricitabin*", "tenofovir*", "dolutegravir*", "antiretrovir*",
        "antirretrovir*", "antirétrovir*", "prophylaxis", "pre-exposure",
        "cisplatin*", "carboplatin*", "paclitaxel", "docetaxel", "doxorubicin*", "cyclophosphamid*", "tamoxifen*",
        "herceptin", "trastuzumab*", "pembrolizumab*", "keytruda", "immunotherap*", "methotrexat*", "humira",
        "adalimumab*", "prednison*", "warfarin*", "eliquis", "apixaban*", "levothyrox*", "thyroxin*", "epipen",
        "inhaler", "sildenafil", "viagra", "cialis", "tadalafil", "mifepriston*", "misoprostol", "morning-after pill",
        "pille danach", "pilule du lendemain", "abortion*", "avortement", "aborto", "abtreibung", "schwangerschaftsabbruch",
        "contracepti*", "birth control", "estradiol", "testosteron*", "hormone therapy", "hrt", "hormontherapie",
        "finasterid*", "isotretinoin*", "accutane", "ventolin", "salbutamol", "symbicort", "lisinopril", "amlodipin*",
        "ramipril", "levetiracetam", "keppra", "carbamazepin*", "oxycodon*", "oxycontin", "tramadol", "fentanyl",
        "morphin*", "codein*", "levodopa", "donepezil", "xarelto", "rivaroxaban", "clopidogrel", "tacrolimus",
        "ciclosporin*", "genvoya", "triumeq", "dovato", "cabotegravir", "imatinib", "anastrozol*", "capecitabin*",
        "palbociclib", "ibrance", "rituximab", "nivolumab", "opdivo", "jardiance", "januvia",
        // Drug-name stems shared by a class (INN suffixes): statins, monoclonal antibodies, kinase
        // inhibitors, platinum drugs, beta blockers, sartans, gliflozins, gliptins, GLP-1 agonists,
        // antivirals
        "*statin", "*statine", "*statina", "*umab", "*ximab", "*tinib", "*platin", "*olol", "*sartan", "*gliflozin",
        "*gliptin", "*glutide", "*glutid", "*glutida", "*ovir", "*avir", "*gravir",
        // Diagnoses as patient documents write them
        "carcinoma", "*carcinoma", "karzinom*", "*karzinom", "carcinome*", "*carcinoom", "lymphom*", "lymphoma*",
        "linfoma*", "leukämie", "leukemia", "leukaemia", "leucemia", "leucémie", "leukemie", "melanom*", "sarcoma*",
        "sarkom*", "metasta*", "malignant", "maligno", "maligna", "hypertension", "hypertonie",
        "hipertensión", "ipertensione", "hypertensie", "hipertensão", "copd", "bpco", "epoc", "pneumonia",
        "pneumonie", "neumonía", "polmonite", "longontsteking", "sepsis", "schlaganfall", "avc", "ictus",
        "beroerte", "myocardial", "angina", "fibrillation", "vorhofflimmern", "fibrillazione", "fibrilación",
        "fibrilação", "mellitus", "niereninsuffizienz", "herzinsuffizienz", "insuffisance", "insuficiencia",
        "insufficienza", "insuficiência",
        // Procedures, in every Latin-script locale
        "chimio*", "quimio*", "chemio*", "radiotherap*", "radiothérap*", "radioterap*", "strahlentherap*", "bestrahl*",
        "bestraling*", "dialys*", "dialyse", "dialisi", "diálisis", "diálise", "hemodiális*", "hémodialys*",
        "transplantation", "transplanté*", "transplante", "trasplant*", "colonoscop*", "endoscop*", "mastectom*", "lumpectom*", "hysterectom*",
        "mammogra*", "pacemaker",
        // Organs and body parts a treatment is done to, and operations, said of oneself ("they took
        // out part of my bowel", "injections to stimulate the ovaries")
        "bowel", "bowels", "stoma", "ostomy", "colostom*", "ileostom*", "prostate", "ovary", "ovaries",
        "uterus", "womb", "bladder", "pancreas", "lungs", "injections", "darm", "prostata", "eierstock*",
        "gebärmutter", "spritze*", "intestin*", "côlon", "ovaire*", "utérus", "vessie", "piqûre*",
        "intestino", "próstata", "ovario*", "útero", "vejiga", "inyecciones", "ovaie", "utero", "vescica", "iniezioni",
        "darmen", "eierstok*", "baarmoeder", "injecties", "ovário*", "bexiga", "injeções",
        "cirurgia", "cirugía", "chirurgia", "chirurgie", "operatie", "since the operation", "since my operation",
        "after my operation", "seit der operation", "seit der op", "nach der operation", "nach der op",
        "depuis l'opération", "depuis l’opération", "depuis mon opération", "après l'opération", "après l’opération",
        "après mon opération", "desde la operación", "después de la operación", "tras la operación",
        "dopo l'operazione", "dopo l’operazione", "dopo l'intervento", "dopo l’intervento", "sinds de operatie",
        "na de operatie", "desde a operação", "depois da operação",
        // A test that came back positive, and organs and glands treated
        "tested positive", "came back positive", "test was positive", "positiv getestet", "test war positiv",
        "testé positif", "testée positive", "dio positivo", "salió positivo", "risultato positivo", "positief getest",
        "deu positivo", "testei positivo", "положительный результат", "тест положительный", "анализ положительный",
        "pozitif çıktı", "tahlil*", "양성으로", "양성 반응*", "검사 결과*", "検査結果", "健康診断", "نتيجه التحليل",
        "تحليل الدم", "طلعت ايجابيه", "पॉजिटिव आई", "पॉजिटिव आया", "रिपोर्ट पॉजिटिव",
        "rene", "reni", "niere", "riñón", "nier", "почк*", "böbre*", "腎臓", "किडनी", "गुर्दा", "tiroide", "tiroides",
        "schilddrüse", "thyroïde", "schildklier", "щитовидк*", "tiroid*", "甲状腺", "갑상선*", "الغده الدرقيه", "थायराइड",
        "leber", "hígado", "fegato", "fígado", "karaciğer*", "肝臓", "الكبد", "लिवर", "stomie", "stomia", "estoma",
        "pillola", "pillole", "ormoni", "гормон*", "دواء", "ادويه", "ضغط الدم", "دواء للضغط",
        // Symptoms
        "husten", "erbrechen", "übelkeit", "durchfall", "schwindel*", "atemnot", "nachtschweiß", "toux", "tousse*",
        "vomi*", "nausée*", "diarrhée", "vertige*", "essouffl*", "toso", "vómito*", "náusea*", "diarrea",
        "mareo*", "tosse", "nausea", "vertigin*", "hoest*", "overgeven", "misselijk*", "diarree", "duizelig*",
        "kortademig*", "nachtzweet", "enjoo*", "diarreia", "tontura*", "falta de ar",
        // Care of the old and memory loss: a nursing home, forgetting one's people
        "nursing home", "care home", "pflegeheim", "altenheim", "maison de retraite", "ehpad", "residencia de ancianos",
        "casa di riposo", "verpleeghuis", "verzorgingshuis", "lar de idosos", "asilo de idosos",
        "ne me reconnaît plus", "ne me reconnait plus", "erkennt mich nicht", "no me reconoce", "non mi riconosce",
        "herkent me niet", "não me reconhece", "doesn't recognise me", "doesn't recognize me", "doesn’t recognize me",
        "blood sugar", "sugar levels", "insulin pump", "blutzucker", "glycémie", "glucemia", "bloedsuiker",
        "insulinpumpe", "pompe à insuline", "bomba de insulina", "microinfusore", "insulinepomp", "dexcom",
        "freestyle libre",
        // zh
        "艾滋", "阳性", "癌", "肿瘤", "活检", "化疗", "放疗", "透析", "糖尿病", "胰岛素", "确诊", "诊断", "手术", "怀孕",
        "流产", "乙肝", "高血压", "抗病毒", "吃药", "服药", "住院", "出院", "司美格鲁肽", "替尔泊肽", "二甲双胍", "试管婴儿",
        "促排卵", "克罗米芬", "来曲唑", "医生说", "医院", "看病", "看医生", "哪个科", "挂号", "咳嗽", "发烧", "发热",
        "呕吐", "腹泻", "拉肚子", "头晕", "咳血", "便血", "盗汗", "血糖", "认不出", "养老院", "注射", "打针",
        // ja
        "エイズ", "陽性", "がんだ", "がんと", "がんが", "がんの", "がんで", "がんを", "乳がん", "肺がん", "胃がん", "大腸がん",
        "抗がん剤", "腫瘍", "生検", "化学療法", "放射線治療", "透析", "糖尿病", "インスリン", "妊娠", "流産", "手術", "入院",
        "不妊治療", "体外受精", "オゼンピック", "マンジャロ", "抗ウイルス薬", "感染して", "病院", "通院", "咳が", "熱が",
        "発熱", "吐き気", "嘔吐", "下痢", "めまい", "血便", "寝汗", "血糖", "血をきれい", "老人ホーム", "介護施設",
        "認知症", "注射", "人工肛門", "ストーマ",
        // ko
        "에이즈", "양성이", "양성 판정", "암이", "암을", "암", "암에", "암으로", "암 진단", "유방암*", "폐암*", "위암*",
        "대장암*", "갑상선암*", "간암*", "췌장암*", "항암*", "조직검사*", "투석*", "당뇨*", "인슐린*", "임신*", "유산했*",
        "수술*", "입원*", "병원*", "기침*", "발열*", "구토*", "설사*", "어지러*", "혈변*", "혈당*", "요양원*", "치매*",
        "주사를*", "주사 맞*", "인슐린 펜*", "진단을 받*", "진단받*", "진단 받*", "확진*", "오젬픽*", "위고비*", "마운자로*", "시험관*", "난임*", "불임*",
        // ar
        "فيروس نقص المناعه", "ايدز*", "سرطان*", "ورم", "ورما", "الورم", "اورام*", "خزعه*", "كيميائي*", "كيماوي*", "اشعاعي*", "غسيل الكلي",
        "غسيل كلوي", "سكري*", "انسولين*", "اجهاض*", "عمليه جراحيه", "مستشفي*", "تشخيص*", "مصاب*", "اوزمبيك*", "مونجارو*",
        "ويجوفي*", "سعال", "كحه", "حمي", "تقيؤ", "استفراغ", "غثيان", "اسهال", "دوخه", "نزيف*", "جراحه", "منذ العمليه",
        "بعد العمليه", "سكر الدم", "حقن*", "غسيل كلي", "دار المسنين", "دار رعايه",
        // ru
        "вич", "спид", "рак", "рака", "раком", "раке", "онколог*", "опухол*", "биопси*", "химиотерап*", "лучев*",
        "радиотерап*", "диализ*", "гемодиализ*", "диабет*", "инсулин*", "беремен*", "выкидыш*", "аборт*", "больниц*",
        "врач*", "диагноз*", "диагност*", "гепатит*", "антиретровирус*", "лекарств*", "таблетк*", "оземпик*",
        "семаглутид*", "тирзепатид*", "экстракорпоральн*", "летрозол*", "симптом*", "болезн*", "болит", "болеет", "заболел*",
        "инфаркт*", "инсульт*", "кашель", "кашля", "кашляю", "рвот*", "тошнит", "тошнот*", "понос", "диаре*",
        "головокружени*", "одышк*", "после операции", "сахар в крови", "уровень сахара", "проверяю сахар", "помпу",
        "помпа", "укол*", "дом престарелых", "деменци*", "не узнает",
        // hi
        "एचआईवी", "एड्स", "कैंसर", "बायोप्सी", "कीमोथेरेपी", "कीमो", "रेडियोथेरेपी", "डायलिसिस", "मधुमेह", "डायबिटीज",
        "इंसुलिन", "गर्भवती", "गर्भपात", "ऑपरेशन", "अस्पताल", "डॉक्टर", "दवा", "दवाई", "बीमारी", "बीमार", "निदान",
        "ट्यूमर", "हेपेटाइटिस", "टीबी", "दिल का दौरा", "आईवीएफ", "खांसी", "खाँसी", "बुखार", "उल्टी", "दस्त", "चक्कर",
        "खून साफ", "खून की जांच", "शुगर", "इंजेक्शन", "वृद्धाश्रम",
        // tr
        "kanser*", "tümör*", "biyopsi*", "kemoterapi*", "kemo", "radyoterapi*", "ışın tedavi*", "diyaliz*", "diyabet*",
        "şeker hastası", "insülin*", "hamile*", "düşük yaptım", "ameliyat*", "hastane*", "teşhis*", "tanısı",
        "tanı kondu", "ilaç kullan*", "ilaçlarım*", "ilacım*", "ilaç alıyorum", "ilaç içiyorum", "hepatit*", "onkolo*", "kötü huylu", "tüp bebek",
        "öksür*", "kanlı", "ateşim", "bulantı*", "kusuyorum", "kusma", "ishal*", "baş dönme*", "nefes darlığı",
        "terleme*", "terliyorum", "kan şekeri", "şekerim", "iğne*", "huzurevi*", "bunama", "ameliyattan sonra",
    ]),
    (Category::MentalHealth, &[
        "depress*", "anxi*", "therap*", "psychiatr*", "psycholo*", "suicid*", "self-harm*", "ptsd", "trauma*",
        "ocd", "bipolar", "schizo*", "anorex*", "bulimi*", "burnout", "burn-out", "antidepress*", "relaps*", "sober",
        "sobriety", "addict*", "alcoholic", "alcoholism", "alkoholiker*", "alkoholsucht", "alcoolique*", "alcoolisme",
        "alcohólic*", "alcoholismo", "alcolista", "alcolizzat*", "alcolismo", "alcoholist*", "alcoolismo", "alcoólatra",
        "alkolik*", "酗酒", "酒精依赖", "アルコール依存", "알코올 중독*", "ادمان*", "مدمن*", "алкоголик*", "алкоголичк*",
        "hopeless*", "worthless", "lonely", "loneliness", "insomnia", "overwhelmed",
        "angst", "ängst*", "panik*", "therapie", "psychiater*", "einsam*", "selbstverletz*", "traurig*",
        "déprim*", "dépress*", "anxiét*", "angoiss*", "pleure*",
        "ansiedad", "depresi*", "ansios*", "pánico", "autolesi*", "trastorno",
        "ansia", "panico",
        "somber*", "depressie*", "paniek*",
        "ansiedade", "pânico", "choro",
        "depresj*", "lęk*", "ångest*",
        // Psychiatric and addiction drugs by generic and brand name
        "ssri*", "snri*", "sertralin*", "zoloft", "fluoxetin*", "fluoxétin*", "prozac", "escitalopram*", "cipralex",
        "lexapro", "citalopram*", "paroxetin*", "paxil", "seroxat", "venlafax*", "effexor", "duloxetin*", "cymbalta",
        "bupropion*", "wellbutrin", "mirtazapin*", "benzodiazep*", "diazepam", "valium", "lorazepam", "alprazolam",
        "xanax", "clonazepam", "quetiapin*", "seroquel", "olanzapin*", "risperidon*", "aripiprazol*", "abilify",
        "haloperidol", "clozapin*", "lithium", "litio", "lítio", "lamotrigin*", "valpro*", "methylphenidat*",
        "metilfenidat*", "ritalin", "concerta", "adderall", "atomoxetin*", "vyvanse", "antipsychot*", "antipsicot*",
        "neurolept*", "methadon*", "metadon*", "buprenorphin*", "suboxone", "naltrexon*", "antabuse", "disulfiram",
        // INN stems of benzodiazepines, SSRIs/SNRIs and atypical antipsychotics
        "*azepam", "*azolam", "*oxetin", "*oxetine", "*oxetina", "*apine", "*apin", "*italopram",
        // zh
        "抑郁", "焦虑症", "自杀", "自残", "心理医生", "心理咨询", "精神科", "惊恐", "强迫症", "失眠", "双相", "精神分裂",
        "舍曲林", "氟西汀", "艾司西酞普兰", "抗抑郁", "碳酸锂", "锂盐", "抗精神病",
        // ja
        "うつ病", "鬱", "抑うつ", "抗うつ薬", "不安障害", "パニック障害", "双極性", "統合失調症", "自殺", "精神科",
        "心療内科", "カウンセリング",
        // ko
        "우울*", "불안장애*", "공황*", "자살*", "자해*", "정신과*", "항우울제*", "조울증*", "양극성*",
        // ar
        "اكتئاب*", "انتحار*", "طبيب نفسي", "اضطراب*", "ذهان*", "ثنائي القطب",
        // ru
        "депресс*", "тревожн*", "психиатр*", "психотерапевт*", "психолог*", "суицид*", "самоубийств*", "паническ*",
        "биполяр*", "шизофрен*", "антидепрессант*", "сертралин*", "флуоксетин*", "литий", "лития", "литием",
        "кветиапин*", "бессонниц*", "анорекси*", "булими*", "алкоголизм*",
        // hi
        "डिप्रेशन", "अवसाद", "एंग्जायटी", "आत्महत्या", "मनोचिकित्सक", "मनोवैज्ञानिक", "थेरेपी", "पैनिक", "बाइपोलर",
        "सिजोफ्रेनिया",
        // tr
        "depresyon*", "anksiyete*", "panik atak*", "intihar*", "psikiyatr*", "psikolog*", "antidepresan*", "şizofreni*",
        "terapi*",
    ]),
    (Category::Sexuality, &[
        "gay", "lesbian*", "lesbisch*", "lesbienne*", "lesbiana*", "lesbica*", "lésbica*", "bisexual*", "bisexuel*",
        "bisessual*", "biseksu*", "bissexual*", "queer", "asexual*", "asexuel*", "transgender*", "nonbinary",
        "non-binary", "homosex*", "schwul*", "sexuality", "sexualité", "sexualidad", "polyamor*", "poliamor*",
        "attracted",
        // Gender identity
        "trans", "transsexu*", "transexu*", "transgênero", "transgénero", "transgenere", "non-binaire", "nicht-binär",
        "nonbinair", "não-binári*", "no-binari*", "pansexu*", "homo", "homoseksu*", "lesbijk*", "geju",
        // zh, ja, ko, ar, ru, hi, tr
        "同性恋", "双性恋", "男同", "女同", "跨性别", "出柜", "拉拉",
        "ゲイ", "レズビアン", "バイセクシャル", "同性愛", "トランスジェンダー", "カミングアウト",
        "동성애*", "게이*", "레즈비언*", "양성애*", "트랜스젠더*", "커밍아웃*",
        "مثلي*", "ثنائي الجنس", "متحول جنسي*", "عابر جنسي*",
        "гей", "геи", "лесбиянк*", "бисексуал*", "гомосексуал*", "трансгендер*", "квир", "каминг-аут",
        "समलैंगिक", "गे", "लेस्बियन", "बाइसेक्शुअल", "ट्रांसजेंडर", "किन्नर",
        "gey", "geyim", "geyler", "eşcinsel*", "lezbiyen*", "biseksüel*", "lgbt*",
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
        // Affiliation, conversion, practice and places of worship
        "jehov*", "jeov*", "geova", "quran", "koran", "rabbi", "imam", "pastor", "agnostic", "headscarf", "turban",
        "kippah", "shabbat", "sabbath", "hajj", "eid",
        "muslimin", "muslima", "kopftuch", "jude", "jüdin", "getauft", "moschee", "synagoge",
        "jeûne", "baptisé*", "rabbin", "bouddhiste*",
        "ayuno", "bautizad*", "sinagoga", "testigo", "creyente",
        "battezzat*", "testimone", "fede", "credente", "digiuno",
        "moslima", "hoofddoek", "gedoopt", "bekeerd", "gelovig*",
        "batizad*", "evangélic*", "espírita", "umbanda", "candomblé", "crente",
        "katolik*", "katoliczk*", "muzułman*", "żyd", "żydówk*", "świadk*", "jehow*", "kościół", "kościele", "kościoła",
        "meczet*", "modl*", "wierząc*", "ateist*", "judendom*", "kristen", "kyrka*", "moské*",
        // zh, ja, ko, ar, ru, hi, tr
        "基督徒", "穆斯林", "佛教徒", "信佛", "天主教", "伊斯兰", "教会", "清真", "斋月", "做礼拜", "受洗", "信教", "犹太",
        "キリスト教", "クリスチャン", "イスラム教", "ムスリム", "創価学会", "仏教徒", "信仰", "洗礼", "教会",
        "무슬림*", "기독교*", "천주교*", "불교*", "교회*", "이슬람*", "신자*", "성당*",
        "مسيحي*", "مسلم*", "يهودي*", "ملحد*", "كنيس*", "مسجد*", "صلاه", "صيام", "اصوم", "رمضان", "شيعي*",
        "حجاب*", "محجبه", "قبطي*", "درزي*",
        "мусульман*", "христиан*", "православн*", "католи*", "иудей*", "буддист*", "атеист*", "церковь", "церкви",
        "мечеть", "мечети", "молюсь", "молиться", "соблюдаю пост", "рамадан*", "крещен*", "крестил*", "свидетели иеговы",
        "свидетель иеговы",
        "मुसलमान", "मुस्लिम", "हिंदू", "हिन्दू", "ईसाई", "सिख", "जैन", "बौद्ध", "नास्तिक", "रोजे", "रमजान", "नमाज",
        "मस्जिद", "गुरुद्वारा",
        "müslüman*", "hristiyan*", "hıristiyan*", "yahudi*", "alevi*", "ateist*", "kilise*", "camiye", "camide",
        "namaz*", "oruç*", "başörtü*", "türban*",
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
        // Membership and parties by name
        "marched", "rally", "canvass*", "grüne", "fdp", "bsw", "sozialdemokrat*",
        "militan*", "adhérent*", "insoumis*", "afiliad*", "psoe", "tesserat*",
        "pvv", "vvd", "d66", "groenlinks", "partijlid", "filiad*", "konfederacj*", "lewic*", "partyjn*",
        "socialdemokrat*", "sverigedemokrat*", "moderaterna", "vänsterpartiet", "partiet",
        // zh, ja, ko, ar, ru, hi, tr
        "共产党员", "入党", "党员", "抗议", "游行", "示威",
        "党員", "デモに参加",
        "당원*", "시위*", "집회*",
        "حزب*", "مظاهره", "مظاهرات", "احتجاج*",
        "оппозиц*", "митинг*", "протест*", "голосовал*", "член партии", "кпрф",
        "भाजपा", "कांग्रेस", "पार्टी का सदस्य", "आंदोलन",
        "chp", "akp", "hdp", "mhp", "parti üyesi*", "partiye üye*", "protesto*", "oy verdim", "miting*", "partinin",
        "il başkan*", "ilçe başkan*",
        // Office in a party or a council
        "councillor", "councilor", "stadtrat", "stadträtin", "ortsverein", "conseiller municipal",
        "conseillère municipale", "concejal*", "consigliere comunale", "gemeenteraadslid", "vereador*",
        "депутат*", "पार्षद", "विधायक", "党支部", "市議", "区議",
    ]),
    (Category::Ethnicity, &[
        "ethnic*", "racis*", "racial*", "arab*", "romani", "gypsy", "gitano*", "sinti", "immigrant*", "migrant*",
        "refugee*", "indigenous", "aboriginal", "biracial", "mixed-race", "latino", "latina", "hispanic",
        "migrationshintergrund", "ausländer*", "rassis*", "ethnisch*",
        "racisme", "ethnique*", "immigré*", "racismo", "étnic*", "inmigrante*", "razzis*", "etnic*",
        "allochto*",
        // Roma, Sinti and origin words
        "romni", "romnja", "romsk*", "cigan*", "cygan*", "gitan*", "tsigane*", "zingar*", "zigeun*", "zigenar*",
        "maghrébin*", "marokkaan*", "marokkaans*", "surinaams*", "afrodescendient*", "afrodescendent*",
        "obcokrajow*", "cudzoziem*", "imigrant*", "immigrat*", "invandrar*", "rasism*", "rasist*", "racist*",
        // zh, ja, ko, ar, ru, hi, tr
        "少数民族", "维吾尔", "藏族", "回族", "种族歧视",
        "在日", "部落出身", "アイヌ",
        "조선족*", "혼혈*", "다문화*",
        "كردي*", "امازيغي*", "عنصري*",
        "чечен*", "цыган*", "еврей*", "национальност*", "расизм*",
        "दलित", "आदिवासी", "जाति", "अनुसूचित",
        "kürt", "kürtüm", "ermeni*", "çingene*", "suriyeli*", "ırkçı*",
    ]),
    (Category::Finances, &[
        // Money in trouble: a topic on its own next to a first-person word.
        "debt", "debts", "indebted", "overdrawn", "bankrupt*", "insolven*", "bailiff*", "arrears", "repossess*", "evict*",
        "owe", "owed", "owes", "owing", "payday",
        "schulden", "zwangsräumung", "verschuldet", "dispo", "pfändung", "inkasso", "mahnung*", "privatinsolvenz",
        "dette*", "endetté*", "découvert", "surendett*", "huissier*", "expuls*", "impayé*",
        "deuda*", "endeudad*", "moroso*", "embarg*", "desahucio",
        "debit*", "indebitat*", "pignoramento", "sfratt*",
        "schuld", "schuldsanering", "schuldhulp*", "deurwaarder", "betalingsregeling", "incasso", "bkr", "uitzetting",
        "dívida*", "divida*", "endividad*", "penhora*", "serasa", "despejo",
        "chwilówk*", "dług*", "zadłuż*", "komornik*", "skuld*", "kronofogden",
        // zh, ja, ko, ar, ru, hi, tr
        "欠债", "负债", "欠款", "欠了", "欠钱", "должен банку", "должна банку", "破产", "网贷", "借金", "自己破産", "滞納", "빚*", "연체*", "파산*", "ديون*", "مديون*", "افلاس*",
        "долги", "долгов", "долг", "микрозайм*", "задолженност*", "банкрот*", "коллектор*", "просрочк*", "कर्ज", "उधार", "दिवालिया",
        "borç*", "borcum", "iflas*", "icra*", "haciz*",
    ]),
    (Category::Legal, &[
        "police", "court", "lawyer*", "solicitor*", "attorney*", "sued", "sue", "lawsuit*", "custody", "warrant",
        "subpoena*", "summons", "fined",
        "polizei", "anwalt", "anwältin", "amtsgericht", "gerichtstermin", "vorladung", "betrug*", "klage",
        "avocat*", "plainte", "tribunal", "convocation", "procès", "amende", "commissariat",
        "policía", "policia", "abogad*", "denuncia*", "juicio", "juzgado", "multa",
        "polizia", "avvocat*", "tribunale", "querela",
        "politie", "advocaat", "aangifte", "rechtbank", "boete",
        "polícia", "advogad*", "denúncia", "policj*", "sąd*", "adwokat*", "polis", "advokat", "domstol", "åtal",
        // zh, ja, ko, ar, ru, hi, tr
        "律师", "起诉", "官司", "弁護士", "訴え", "변호사*", "소송*", "محامي*", "دعوى", "адвокат*", "суд", "суда", "судом",
        "иск", "वकील", "मुकदमा", "avukat*", "dava", "davası", "davayı", "dava aç*", "mahkeme*",
    ]),
    (Category::CriminalHistory, &[
        "arrest*", "criminal record", "police record", "conviction*", "convicted", "prison", "jail", "jailed", "probation",
        "parole", "felony", "felon", "misdemeanor", "misdemeanour", "charged with", "pleaded guilty", "sentenced",
        "community service", "dui", "dwi", "offender", "inmate", "incarcerat*", "offence", "offense", "bail",
        "vorstrafe*", "vorbestraft", "verurteil*", "gefängnis", "knast", "haft", "haftstrafe", "bewährung*",
        "festgenommen", "verhaftet", "strafbefehl", "führungszeugnis", "angeklagt", "anklage", "beschuldigt*",
        "strafanzeige", "sozialstunden",
        "casier judiciaire", "condamn*", "prison", "incarcér*", "garde à vue", "sursis", "interpellé*",
        "mis en examen", "liberté conditionnelle", "détenu*", "délit",
        "antecedentes penales", "antecedentes policiales", "condena*", "condenad*", "cárcel", "prisión", "detenid*",
        "arrestad*", "libertad condicional", "delito", "imputad*", "me van a juzgar",
        "precedenti penali", "fedina penale", "condann*", "carcere", "arrestat*", "detenut*", "galera",
        "libertà vigilata", "reato", "pregiudicat*", "avviso di garanzia",
        "strafblad", "veroordeeld", "veroordeling", "gevangenis", "gearresteerd", "taakstraf",
        "reclassering", "verdachte", "aangehouden",
        "registo criminal", "registro criminal", "antecedentes criminais", "ficha criminal", "condenad*", "prisão",
        "na cadeia", "detid*", "liberdade condicional",
        // zh, ja, ko, ar, ru, hi, tr
        "犯罪记录", "案底", "前科", "坐牢", "坐过牢", "入狱", "监狱", "被捕", "被逮捕", "拘留", "判刑", "缓刑", "假释", "定罪",
        "刑满释放", "逮捕", "刑務所", "服役", "執行猶予", "有罪判決", "仮釈放", "保護観察", "起訴",
        "전과", "전과가", "전과를", "전과자*", "전과 기록*", "체포*", "구속*", "교도소*", "감옥*", "집행유예*", "유죄*", "가석방*", "보호관찰*", "기소*", "범죄 기록*",
        "범죄경력*",
        "سجل جنائي", "سجل اجرامي", "سجن*", "اعتقال*", "اعتقلت", "معتقل*", "محكوم*", "ادانه", "مدان*", "سوابق*",
        "الافراج المشروط",
        "судимост*", "судим", "осужден*", "тюрьм*", "арест*", "условный срок", "условного срока", "уголовное дело",
        "уголовного дела", "уголовному делу", "отсидел*", "приговор*", "года условно", "лет условно", "год условно",
        "आपराधिक", "जेल", "गिरफ्तार*", "सजा हुई", "सजा सुनाई", "दोषी ठहराया", "पैरोल", "जमानत",
        "sabıka*", "adli sicil*", "hapis", "hapse", "hapiste", "cezaevi*", "tutukla*", "gözaltı*", "mahkum*",
        "mahkûm*", "denetimli serbestlik", "şartlı tahliye", "suç kaydı", "sicil kaydı",
    ]),
    (Category::Immigration, &[
        "undocumented", "overstay*", "asylum", "residence permit", "work permit", "green card", "deport*",
        "immigration status", "illegal immigrant", "removal order", "leave to remain", "daca", "naturalisation",
        "naturalization", "refugee status", "here illegally", "living illegally", "live illegally", "bin illegal",
        "lebe illegal", "illegal hier", "estoy ilegal", "vivo ilegalmente", "sono irregolare", "ben illegaal",
        "woon illegaal", "estou ilegal", "moro ilegalmente",
        "aufenthaltstitel", "aufenthaltserlaubnis", "aufenthaltsgenehmigung", "niederlassungserlaubnis", "duldung",
        "geduldet", "abschiebung*", "abgeschoben", "asyl*", "ausländerbehörde", "ohne papiere", "einbürgerung*",
        "aufenthaltsstatus", "blaue karte",
        "titre de séjour", "carte de séjour", "sans-papiers", "sans papiers", "oqtf", "reconduite à la frontière",
        "demandeur d'asile", "demandeuse d'asile", "asile", "régularisation", "clandestin*", "expulsé vers",
        "expulsée vers", "expulsion du territoire",
        "sin papeles", "indocumentad*", "permiso de residencia", "tarjeta de residencia", "arraigo", "asilo político",
        "asilo politico", "solicitud de asilo", "solicitante de asilo", "pedir asilo", "pedido de asilo", "pedi asilo",
        "richiesta di asilo", "richiedente asilo", "asilad*", "deportad*", "deportación", "situación irregular",
        "extranjería", "regularización",
        "permesso di soggiorno", "espulsione", "rimpatri*", "protezione internazionale", "sanatoria",
        "verblijfsvergunning", "verblijfsstatus", "ongedocumenteerd*", "asiel*", "ind", "vreemdelingenpolitie",
        "naturalisatie", "uitgeprocedeerd",
        "autorização de residência", "título de residência", "sem papéis", "deportação", "expulsão", "refugiad*",
        // zh, ja, ko, ar, ru, hi, tr
        "移民身份", "非法移民", "合法身份", "没有身份", "黑工", "非法居留", "非法滞留", "黑户", "居留证", "居留许可", "绿卡", "庇护", "难民", "遣返", "驱逐出境", "逾期居留", "偷渡",
        "入籍",
        "在留資格", "在留カード", "不法滞在", "オーバーステイ", "難民", "強制送還", "退去強制", "永住権", "亡命", "入管",
        "불법체류*", "체류자격*", "체류 자격*", "미등록 이주*", "미등록 체류*", "추방*", "난민*", "망명*", "영주권*",
        "ترحيل*", "لجوء*", "لاجئ*", "بدون اوراق", "غير شرعي*", "غير نظامي*",
        "вид на жительство", "внж", "рвп", "депортац*", "депортир*", "выдвор*", "нелегал*", "убежищ*", "беженц*",
        "беженец",
        "डिपोर्ट", "निर्वासन", "अवैध रूप से", "अवैध", "शरण", "शरणार्थी", "अवैध प्रवासी", "बिना दस्तावेज", "निवास परमिट", "ग्रीन कार्ड",
        "oturma izn*", "ikamet izn*", "sınır dışı", "kaçak göçmen*", "mülteci*", "sığınma*", "iltica*", "çalışma izn*",
        "kimliksiz", "geçici koruma*", "geri gönderme*", "geri gönderil*", "göç idaresi",
        // Protection short of asylum and detention before removal
        "temporary protection", "subsidiary protection", "detention centre", "detention center", "removal centre",
        "subsidiärer schutz", "abschiebehaft", "protection subsidiaire", "centre de rétention", "protección subsidiaria",
        "centro de internamiento", "protezione sussidiaria", "centro di permanenza", "tijdelijke bescherming",
        "detentiecentrum", "proteção temporária", "временное убежище", "仮放免", "収容", "보호소*", "مركز الترحيل",
        "مركز احتجاز",
    ]),
    (Category::Biometrics, &[
        "fingerprint*", "faceid", "facial", "retina*", "iris", "voiceprint*", "biometr*", "dna", "genom*",
        "fingerabdr*", "gesichtserkennung", "empreinte*", "faciale", "biométr*", "huella*", "rostro", "impronta*",
        "facciale", "volto", "vingerafdruk*", "gezichtsherkenning", "rosto",
        "指纹", "人脸识别", "指紋", "顔認証", "지문*", "안면인식*", "بصمه*", "отпечат*", "биометр*", "बायोमेट्रिक", "parmak izi*",
    ]),
];

/// Money words that are a topic only with a figure ("my salary is 48,000", "a loan of 9.000")
/// or a word of `MONEY_TROUBLE` in the sentence: "how does a savings account work, I want to
/// open one" is not (the rule "Money without figures" of crates/gate/data/README.md).
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
    "工资", "房贷", "贷款", "房租", "存款", "收入", "給料", "年収", "ローン", "家賃", "貯金", "월급*", "대출*", "연봉*",
    "월세*", "зарплат*", "ипотек*", "кредит*", "сбережени*", "सैलरी", "वेतन", "लोन", "किराया", "راتب*", "قرض*", "ايجار*",
    "maaş*", "kredi*", "kira*",
    "月薪", "年薪", "薪水", "车贷", "消费贷", "信用卡", "花呗", "借呗", "月収", "手取り", "奨学金", "カードローン", "リボ",
    "연봉*", "적금*", "예금*", "카드값*", "전세*", "학자금*", "마이너스 통장*", "займ*", "микрозайм*", "заём", "заем",
    "накоплени*", "оклад*", "рассрочк*", "кредитк*", "तनख्वाह", "कर्ज", "ईएमआई", "emi", "बचत", "اقساط*", "قسط*",
    "مدخرات*", "taksit*", "birikim*",
];

/// Units of an amount, counted right after a figure in digits or Chinese numerals ("一万二", "二十万",
/// "4천", "180 тысяч", "2 lakh"): with a money word, a figure like "48,000".
#[rustfmt::skip]
const AMOUNT_UNITS: &[&str] = &[
    "thousand", "million", "grand", "tausend", "mille", "mil", "mila", "duizend", "bin", "milyon", "lira",
    "万", "千", "亿", "元", "块钱", "万円", "円", "만*", "천*", "억*", "тысяч*", "тыс", "млн", "миллион*", "рубл*",
    "हजार", "लाख", "करोड", "करोड़", "रुपये", "रुपए", "الف", "مليون", "ريال", "درهم", "دينار", "جنيه",
];

/// Money in trouble without a figure: "we missed two mortgage payments", "three months of rent
/// behind".
#[rustfmt::skip]
const MONEY_TROUBLE: &[&str] = &[
    "behind", "missed", "overdue", "afford", "rückstand", "rückstände", "verzug", "retard", "atrasad*", "atraso",
    "retraso", "ritardo", "arretrat*", "achterstand", "achter", "zaległ*",
    "还不上", "拖欠", "逾期", "滞納", "払えない", "연체*", "못 갚*", "просроч*", "не могу платить", "задолжал*",
    "नहीं चुका", "متاخر*", "ödeyemiyorum", "gecikme*",
];

/// Visas: immigration only with a word of their status in trouble (`STATUS_TROUBLE`): "my visa
/// expired", not "I need a visa for Japan".
#[rustfmt::skip]
const VISA_TERMS: &[&str] = &[
    "visa", "visas", "visum", "visado", "visto", "vistos", "签证", "ビザ", "査証", "비자*", "تاشير*", "اقامه", "اقامتي",
    "виза", "визы", "визу", "визой", "визе", "वीजा", "vize*",
    // Residence papers: "meine Papiere sind abgelaufen", "انتهت أوراقي"
    "papiere", "papiers", "papeles", "papieren", "papéis", "اوراقي", "اوراق", "在留カード", "체류*", "외국인등록증*",
];
/// A status that ran out, was refused or is illegal: with a visa word, an immigration matter.
#[rustfmt::skip]
const STATUS_TROUBLE: &[&str] = &[
    "expired", "expires", "expiring", "overstay*", "ran out", "runs out", "refused", "denied", "rejected", "revoked",
    "cancelled", "canceled", "illegal*", "abgelaufen", "läuft", "ausgelaufen", "abgelehnt", "widerrufen", "expiré*",
    "expire", "périmé*", "refusé*", "caducad*", "vencid*", "denegad*", "expirad*", "caduca", "scadut*", "scade",
    "negat*", "rifiutat*", "verlopen", "verloopt", "afgewezen", "ingetrokken", "negad*", "recusad*",
    "过期", "到期", "被拒", "拒签", "逾期", "切れ", "期限", "不許可", "만료*", "거절*", "거부*", "انتهت", "انتهي*",
    "منتهي*", "رفض*", "закончил*", "истек*", "просроч*", "отказ*", "аннулир*", "खत्म", "समाप्त", "खारिज", "रद्द",
    "doldu", "bitti", "bitiyor", "reddedil*", "iptal*", "süresi", "끝나*", "끝났*", "안 해 준*", "切れる", "切れた",
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
    "儿子", "女儿", "孩子", "宝宝", "小孩", "息子", "娘", "子供", "子ども", "赤ちゃん", "아들*", "딸", "딸이", "딸은", "딸의",
    "딸아이*", "아이가", "아이는", "아이를", "아기*", "자녀*", "сын*", "дочь", "дочери", "дочк*", "ребен*", "дети", "детей",
    "детям", "малыш*", "बेटा", "बेटी", "बेटे", "बच्चा", "बच्ची", "बच्चे", "बच्चों", "ابنتي", "طفل*", "اطفال*", "بنتي",
    "çocuğum*", "çocuk*", "bebeğim*", "bebek*", "oğlum*", "kızım*",
];
#[rustfmt::skip]
const CHILD_DETAILS: &[&str] = &[
    "school", "schoolbag", "teacher*", "classmates", "grades", "nursery", "kindergarten", "daycare",
    "bullied", "bully*", "tantrum*", "behaviour*", "behavior*", "adhd", "autis*", "speech", "wets",
    "bedwetting", "nightmare*", "suspended", "expelled", "detention", "hits", "hitting", "bites", "biting",
    "schule", "schulranzen", "lehrer*", "kita", "gemobbt", "mobbing", "wutanf*",
    "adhs", "nässt", "einnässen", "albtr*", "verhalten*", "sprech*",
    "école", "ecole", "collège", "college", "maîtresse", "maitresse", "instit*", "crèche", "harcel*", "colère*",
    "tdah", "pipi", "cauchemar*", "comportement*",
    "colegio", "escuela", "instituto", "profesor*", "profe", "guardería", "acoso", "rabieta*", "moja",
    "pesadilla*", "comportamiento*",
    "scuola", "maestr*", "insegnant*", "asilo", "bullismo", "capricci", "pipì", "incubi", "comportamento",
    "juf", "meester", "klas", "kinderopvang", "gepest", "pesten", "driftbui*", "bedplassen", "plast",
    "nachtmerrie*", "gedrag*",
    "escola", "professor*", "professora", "turma", "creche", "birra*", "phda", "xixi", "pesadelo*",
    "szkoł*", "nauczyciel*", "przedszkol*", "skola*", "skolan", "lärar*", "förskola*", "klass*",
    "عمره", "عمرها", "学校", "老师", "幼儿园", "上学", "成绩", "多动症", "自闭症", "尿床", "被欺负", "霸凌", "幼稚園", "保育園", "いじめ",
    "発達障害", "おねしょ", "학교*", "선생님*", "유치원*", "어린이집*", "왕따*", "따돌림*", "자폐*", "школ*", "учител*",
    "детский сад", "детсад*", "травл*", "буллинг*", "сдвг", "аутизм*", "स्कूल", "विद्यालय", "शिक्षक", "टीचर", "مدرس*",
    "روضه", "حضانه", "تنمر", "الصف", "okul*", "sınıf*",
    "小学", "中学", "高校生", "年生", "クラス", "担任", "先生", "不登校", "部活", "宿題", "年级", "班主任", "同学", "初中",
    "作业", "학년*", "담임*", "초등학*", "중학*", "고등학*", "숙제*", "класс*", "одноклассник*", "कक्षा", "क्लास",
    "homework", "classmate*", "hausaufgaben", "mitschüler*", "klasse", "devoirs", "camarade*", "deberes",
    "compañeros", "compiti", "compagni", "huiswerk", "klasgeno*", "colegas", "öğretmen*", "anaokul*", "kreş*", "zorbalık*", "hiperaktivite*", "otizm*",
];

/// Fields of a patient document: with a health word anywhere in the text, the text discloses
/// its patient's health.
#[rustfmt::skip]
const DOCUMENT_FIELDS: &[&str] = &[
    "diagnosis:", "diagnoses:", "dx:", "patient:", "patient name:", "discharge diagnosis", "diagnose:", "diagnosen:",
    "entlassungsdiagnose*", "diagnostic :", "diagnostic:", "diagnóstico:", "diagnostico:", "diagnosi:", "diagnose :",
    "paciente:", "patiënt:", "paziente:", "诊断：", "诊断:", "患者：", "診断名", "傷病名", "진단명", "환자명",
    "التشخيص:", "диагноз:", "निदान:", "tanı:", "teşhis:",
];
/// Names of patient documents: with a health word they make a patient document of a text laid
/// out in lines or fields.
#[rustfmt::skip]
const DOCUMENT_NAMES: &[&str] = &[
    "discharge summary", "discharge letter", "lab report", "laboratory report", "lab results", "prescription",
    "entlassbrief", "entlassungsbrief", "entlassungsbericht", "arztbrief", "laborbefund", "rezept",
    "lettre de sortie", "compte rendu", "compte-rendu", "ordonnance", "informe de alta", "informe médico", "receta",
    "lettera di dimissione", "referto", "ricetta", "ontslagbrief", "labuitslag*", "alta hospitalar", "relatório médico",
    "receita", "出院小结", "出院记录", "诊断书", "病历", "化验单", "处方", "退院サマリー", "診断書", "検査結果", "処方箋",
    "紹介状", "퇴원 요약*", "진단서*", "처방전*", "검사 결과*", "تقرير طبي", "وصفه طبيه", "выписка", "эпикриз",
    "डिस्चार्ज", "पर्चा", "epikriz", "reçete", "taburcu",
];

/// Phrases in which a listed word means something else, in another language or another sense:
/// a match inside one counts for nothing ("pain" is bread in "du pain", "sono" is "they are" in
/// "quali sono", "mes" is a month in "el mes", "ma" is "but" in "ma non").
#[rustfmt::skip]
const NOT_CUES: &[&str] = &[
    "du pain", "le pain", "au pain", "pain au", "pain de", "pain d'", "pain d’", "de pain", "un pain", "les pains",
    "quali sono", "quale sono", "ci sono", "cosa sono", "come sono", "dove sono", "quanti sono", "quante sono",
    "che sono", "sono gli", "sono le", "sono i", "sono stati", "sono state", "non ci sono",
    "el mes", "al mes", "un mes", "este mes", "cada mes", "por mes", "del mes", "de mes", "mes de", "mes que",
    "ma il", "ma la", "ma lo", "ma non", "ma che", "ma se", "ma è", "ma anche", "ma i", "ma gli", "ma le", "ma come",
    "ma quali", "ma perché", "ma cosa",
    "sql injections", "code injections", "prompt injections", "command injections",
    "batería de litio", "batteria al litio", "bateria de lítio", "batterie au lithium", "pile au lithium",
    // Asking about a subject: the first-person word of the question frame discloses nothing ("I want
    // to know the side effects of sertraline"); another one in the sentence still counts.
    "i want to know", "i'd like to know", "i would like to know", "i wonder", "i was wondering", "i'm curious",
    "i am curious", "i want to understand", "i'd like to understand", "ich möchte wissen", "ich will wissen",
    "ich frage mich", "je voudrais savoir", "je veux savoir", "je me demande", "quiero saber", "me gustaría saber",
    "vorrei sapere", "voglio sapere", "mi chiedo", "quero saber", "gostaria de saber", "ik wil weten",
    "ik vraag me af", "我想知道", "我想了解", "我想问", "я хочу узнать", "я хочу знать", "мне интересно",
    "मैं जानना चाहता", "मैं जानना चाहती", "bilmek istiyorum", "öğrenmek istiyorum", "merak ediyorum",
    "と言われています", "と言われていますが", "知りたいのですが", "聞きたいのですが", "お聞きしたいのですが",
    "質問なのですが", "質問があるのですが", "調べているのですが", "질문이 있는데", "궁금한 게 있는데", "알고 싶은데",
    "조사하고 있는데", "اشعر بالفضول",
    "告诉我", "帮我", "给我讲", "给我解释", "请问", "расскажи мне", "расскажите мне", "скажи мне", "объясни мне",
    "объясните мне", "подскажи мне", "подскажите мне",
];

/// Work written or studied about a subject: in a sentence with one of these, a single topic word
/// is the subject of the work ("I'm writing a novel about a prison guard", "我在写一篇关于监狱改革
/// 的论文"), not something the writer discloses; two words of one topic still count.
#[rustfmt::skip]
const STUDY_FRAMES: &[&str] = &[
    "essay", "novel", "thesis", "dissertation", "paper", "article", "research", "homework", "assignment",
    "presentation", "screenplay", "podcast", "documentary", "school project", "for class", "short story",
    "referat", "hausarbeit", "aufsatz", "roman", "artikel", "bachelorarbeit", "masterarbeit", "präsentation",
    "exposé", "mémoire", "rédaction", "ensayo", "novela", "tesis", "redacción", "trabajo sobre", "trabajo de clase",
    "tesina", "tesi", "romanzo", "saggio", "ricerca", "relazione", "trabalho escolar", "trabalho sobre", "redação",
    "romance", "tese", "artigo", "werkstuk", "scriptie", "spreekbeurt", "ödev*", "tez", "tezim", "makale*",
    "论文", "小说", "作文", "研究", "論文", "小説", "レポート", "논문*", "소설*", "과제*", "발표*", "реферат*", "доклад*",
    "курсов*", "книг*", "роман*", "сочинени*", "निबंध", "शोध", "उपन्यास", "بحث", "روايه", "مقال*", "اطروحه",
];

/// Units of age in the scripts `has_age` does not read: an age when a figure comes right before
/// them ("7岁", "7살", "7 лет", "7 साल"), a plain word otherwise ("много лет").
#[rustfmt::skip]
const AGE_UNITS_AFTER_FIGURE: &[&str] = &[
    "岁", "歳", "살", "лет", "года", "год", "годика", "साल", "yaşında*", "سنوات", "سنه",
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

/// Words after a topic word that make it a technical term: "child process", "retina display".
#[rustfmt::skip]
const TECHNICAL_HEADS: &[&str] = &[
    "process", "processes", "element", "elements", "component", "components", "node", "nodes", "class", "classes",
    "thread", "threads", "window", "windows", "widget", "widgets", "table", "display", "screen", "theme", "item",
    "items", "key", "keys", "id", "span", "div", "battery", "batteries", "card", "cards", "البيانات",
];

/// What may precede an Arabic entry inside its word: the conjunctions و and ف, the prepositions
/// ب, ل and ك, the article ال, and their combinations (folded spelling).
#[rustfmt::skip]
const PROCLITICS: &[&str] = &[
    "", "و", "ف", "ب", "ل", "ك", "ال", "وال", "فال", "بال", "كال", "لل", "ولل", "وب", "ول", "فب", "فل", "وك",
];

/// What a lexicon entry tells about its sentence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    FirstPerson,
    Topic(Category),
    Money,
    MoneyTrouble,
    Visa,
    StatusTrouble,
    Child,
    ChildDetail,
    DocumentField,
    DocumentName,
    NotCue,
    StudyFrame,
    ThirdPerson,
    AgeUnit,
    Amount,
    MaleSelf,
    FemaleSelf,
    MalePartner,
    FemalePartner,
}

/// Where an entry may start inside a word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Start {
    /// At a word edge.
    Edge,
    /// After nothing but Arabic proclitics in its word.
    Proclitic,
    /// Anywhere: suffix entries, and scripts written without spaces.
    Anywhere,
}

#[derive(Debug, Clone, Copy)]
struct Rule {
    class: Class,
    start: Start,
    /// The entry must end at a word edge.
    whole_end: bool,
}

/// Writing systems whose words are not separated by spaces.
fn is_unspaced(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30FF}' | '\u{3400}'..='\u{4DBF}' | '\u{4E00}'..='\u{9FFF}' | '\u{F900}'..='\u{FAFF}')
}

fn is_arabic(c: char) -> bool {
    matches!(c, '\u{0600}'..='\u{06FF}')
}

/// Letters, digits and the marks that belong inside a word (Devanagari vowel signs and virama
/// are not all alphabetic to Rust).
fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
        || c == '_'
        || matches!(c, '\u{0300}'..='\u{036F}' | '\u{0900}'..='\u{097F}' | '\u{064B}'..='\u{065F}')
}

/// Which side of a script boundary a character is on: a Latin word right after a Chinese
/// character ("HIV阳性") starts a word.
fn script(c: char) -> u8 {
    if is_unspaced(c) {
        0
    } else if ('\u{AC00}'..='\u{D7AF}').contains(&c) || ('\u{1100}'..='\u{11FF}').contains(&c) {
        1
    } else {
        2
    }
}

/// Whether `neighbour` continues the word whose edge character is `edge`.
fn joins(neighbour: char, edge: char) -> bool {
    is_word_char(neighbour) && script(neighbour) == script(edge)
}

/// Case folding of the text and of the entries: lowercase, and the spelling variants that do not
/// change a word (the Turkish dotted capital's combining dot, the Devanagari nukta, ё, the
/// hamza forms of alef, alef maqsura, Arabic vowel marks and tatweel).
fn fold(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars().flat_map(char::to_lowercase) {
        match c {
            '\u{0307}' | '\u{093C}' | '\u{0640}' | '\u{064B}'..='\u{0652}' => {}
            'ё' => out.push('е'),
            'أ' | 'إ' | 'آ' => out.push('ا'),
            'ى' => out.push('ي'),
            'ة' => out.push('ه'),
            _ => out.push(c),
        }
    }
    out
}

/// Every list as one automaton; `rules[pattern]` says what its pattern means (one folded
/// spelling can be an entry of several lists).
struct Lexicon {
    automaton: AhoCorasick,
    rules: Vec<Vec<Rule>>,
}

fn lists() -> impl Iterator<Item = (Class, &'static [&'static str])> {
    TOPIC_TERMS
        .iter()
        .map(|&(category, terms)| (Class::Topic(category), terms))
        .chain([
            (Class::FirstPerson, FIRST_PERSON),
            (Class::Money, MONEY_TERMS),
            (Class::MoneyTrouble, MONEY_TROUBLE),
            (Class::Visa, VISA_TERMS),
            (Class::StatusTrouble, STATUS_TROUBLE),
            (Class::Child, CHILD_TERMS),
            (Class::ChildDetail, CHILD_DETAILS),
            (Class::DocumentField, DOCUMENT_FIELDS),
            (Class::DocumentName, DOCUMENT_NAMES),
            (Class::NotCue, NOT_CUES),
            (Class::StudyFrame, STUDY_FRAMES),
            (Class::ThirdPerson, THIRD_PERSON),
            (Class::AgeUnit, AGE_UNITS_AFTER_FIGURE),
            (Class::Amount, AMOUNT_UNITS),
            (Class::Topic(Category::MentalHealth), WISHES_TO_DIE),
            (Class::FirstPerson, WISHES_TO_DIE),
            (Class::MaleSelf, MALE_SELF),
            (Class::FemaleSelf, FEMALE_SELF),
            (Class::MalePartner, MALE_PARTNERS),
            (Class::FemalePartner, FEMALE_PARTNERS),
        ])
}

impl Lexicon {
    fn build() -> Lexicon {
        let mut patterns: Vec<String> = Vec::new();
        let mut rules: Vec<Vec<Rule>> = Vec::new();
        let mut index = std::collections::HashMap::new();
        for (class, entries) in lists() {
            for entry in entries {
                debug_assert!(
                    !entry.trim_matches('*').contains('*'),
                    "{entry}: `*` only at an end"
                );
                let prefix = entry.ends_with('*');
                let suffix = entry.starts_with('*');
                let text = fold(entry.trim_matches('*'));
                let first = text.chars().next().unwrap_or(' ');
                let last = text.chars().next_back().unwrap_or(' ');
                let start = if suffix || is_unspaced(first) {
                    Start::Anywhere
                } else if is_arabic(first) {
                    Start::Proclitic
                } else {
                    Start::Edge
                };
                let rule = Rule {
                    class,
                    start,
                    whole_end: !prefix && !is_unspaced(last),
                };
                let id = *index.entry(text.clone()).or_insert_with(|| {
                    patterns.push(text);
                    rules.push(Vec::new());
                    rules.len() - 1
                });
                rules[id].push(rule);
            }
        }
        Lexicon {
            // The lists are compile-time constants; a failure is a build defect caught by tests.
            automaton: AhoCorasick::new(&patterns).expect("the topic lexicon builds"),
            rules,
        }
    }
}

static LEXICON: LazyLock<Lexicon> = LazyLock::new(Lexicon::build);

/// Whether a match at `start..end` of `text` obeys `rule`'s word edges.
fn fits(text: &str, start: usize, end: usize, rule: &Rule) -> bool {
    let found = &text[start..end];
    let (Some(first), Some(last)) = (found.chars().next(), found.chars().next_back()) else {
        return false;
    };
    let before = &text[..start];
    let start_ok = match rule.start {
        Start::Anywhere => true,
        Start::Edge => before.chars().next_back().is_none_or(|c| !joins(c, first)),
        Start::Proclitic => {
            let word_start = before
                .char_indices()
                .rev()
                .find(|&(_, c)| !is_word_char(c))
                .map_or(0, |(i, c)| i + c.len_utf8());
            PROCLITICS.contains(&&before[word_start..])
        }
    };
    let end_ok = !rule.whole_end || text[end..].chars().next().is_none_or(|c| !joins(c, last));
    start_ok && end_ok
}

/// Whether a figure comes right before `start` (spaces between allowed), in digits or in Chinese
/// and Japanese numerals: "7 лет", "7岁", "4천", "一万二", "三百万円".
fn after_figure(text: &str, start: usize) -> bool {
    text[..start]
        .trim_end()
        .chars()
        .next_back()
        .is_some_and(|c| c.is_ascii_digit() || "一二三四五六七八九十两百千万零".contains(c))
}

/// The word after the one a match at `end` is in: "child process" -> "process".
fn next_word(text: &str, end: usize) -> &str {
    let rest = &text[end..];
    let rest = rest.trim_start_matches(|c: char| is_word_char(c) || matches!(c, '-' | '\'' | '’'));
    let rest = rest.trim_start();
    let len = rest
        .char_indices()
        .find(|&(_, c)| !is_word_char(c))
        .map_or(rest.len(), |(i, _)| i);
    &rest[..len]
}

/// The classes found in one sentence, each with the number of places it was found at.
#[derive(Default)]
struct Found {
    classes: Vec<(Class, Vec<usize>)>,
}

impl Found {
    fn has(&self, class: Class) -> bool {
        self.evidence(class) > 0
    }

    fn evidence(&self, class: Class) -> usize {
        self.classes
            .iter()
            .find(|(c, _)| *c == class)
            .map_or(0, |(_, starts)| starts.len())
    }
}

fn scan(sentence: &str) -> Found {
    let text = fold(sentence);
    let lexicon = &*LEXICON;
    let mut not_cues: Vec<(usize, usize)> = Vec::new();
    let mut candidates: Vec<(Class, usize, usize)> = Vec::new();
    for m in lexicon.automaton.find_overlapping_iter(&text) {
        for rule in &lexicon.rules[m.pattern().as_usize()] {
            if !fits(&text, m.start(), m.end(), rule) {
                continue;
            }
            if matches!(rule.class, Class::AgeUnit | Class::Amount)
                && !after_figure(&text, m.start())
            {
                continue;
            }
            if rule.class == Class::NotCue {
                not_cues.push((m.start(), m.end()));
                continue;
            }
            let technical = matches!(rule.class, Class::Topic(_) | Class::Child | Class::Visa)
                && TECHNICAL_HEADS.contains(&next_word(&text, m.end()));
            if !technical {
                candidates.push((rule.class, m.start(), m.end()));
            }
        }
    }
    let mut found = Found::default();
    for (class, start, end) in candidates {
        if not_cues.iter().any(|&(s, e)| s <= start && end <= e) {
            continue;
        }
        match found.classes.iter_mut().find(|(c, _)| *c == class) {
            Some((_, starts)) if !starts.contains(&start) => starts.push(start),
            Some(_) => {}
            None => found.classes.push((class, vec![start])),
        }
    }
    found
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
fn has_age(sentence: &str) -> bool {
    let words: Vec<String> = tokenize(sentence)
        .iter()
        .map(|t| t.text.to_lowercase())
        .collect();
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

const HEALTH: [Category; 2] = [Category::Health, Category::MentalHealth];

/// Topic lexicon + first-person backstop; see the module documentation.
pub struct TopicCues;

impl Detector for TopicCues {
    fn name(&self) -> &str {
        "topic-cues"
    }

    fn detect(&self, text: &str) -> Vec<Span> {
        let mut found: Vec<Span> = Vec::new();
        // One span per topic: the first place with the most evidence.
        let mut report = |category: Category, start: usize, end: usize, evidence: usize| {
            let confidence = cue_confidence(evidence);
            match found.iter_mut().find(|f| f.category == category) {
                Some(f) if f.confidence < confidence => {
                    (f.start, f.end, f.confidence) = (start, end, confidence);
                }
                Some(_) => {}
                None => found.push(Span {
                    start,
                    end,
                    category,
                    detector: "topic-cue".to_string(),
                    confidence,
                }),
            }
        };
        let (mut field, mut document_name) = (false, false);
        let mut health_words: BTreeSet<Category> = BTreeSet::new();
        let mut after_first_person = false;
        for (s, e) in sentences(text) {
            let sentence = &text[s..e];
            let hits = scan(sentence);
            field |= hits.has(Class::DocumentField);
            document_name |= hits.has(Class::DocumentName);
            health_words.extend(HEALTH.iter().filter(|c| hits.has(Class::Topic(**c))));
            let personal = hits.has(Class::FirstPerson)
                || (after_first_person && hits.has(Class::ThirdPerson));
            after_first_person = hits.has(Class::FirstPerson);
            if !personal {
                continue;
            }
            let health = HEALTH.iter().any(|c| hits.has(Class::Topic(*c)));
            let money = hits.has(Class::Money)
                && (has_figure(sentence)
                    || hits.has(Class::Amount)
                    || hits.has(Class::MoneyTrouble));
            let child = hits.has(Class::Child)
                && (health
                    || hits.has(Class::ChildDetail)
                    || hits.has(Class::AgeUnit)
                    || has_age(sentence));
            let needed = if hits.has(Class::StudyFrame) { 2 } else { 1 };
            for &(category, _) in TOPIC_TERMS {
                let evidence = hits.evidence(Class::Topic(category));
                if evidence >= needed {
                    report(category, s, e, evidence);
                }
            }
            if money {
                report(Category::Finances, s, e, 1);
            }
            if hits.has(Class::Visa) && hits.has(Class::StatusTrouble) {
                report(Category::Immigration, s, e, 2);
            }
            if child {
                report(Category::Children, s, e, 1);
            }
            let same_sex = (hits.has(Class::MaleSelf) && hits.has(Class::MalePartner))
                || (hits.has(Class::FemaleSelf) && hits.has(Class::FemalePartner));
            if same_sex {
                report(Category::Sexuality, s, e, 1);
            }
        }
        let laid_out = text.contains(['\n', ':', '：']);
        if field || (document_name && laid_out) {
            let start = text.len() - text.trim_start().len();
            let end = text.trim_end().len();
            for category in health_words {
                report(category, start, end.max(start), 2);
            }
        }
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn topics(text: &str) -> Vec<Category> {
        TopicCues.detect(text).iter().map(|s| s.category).collect()
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
        assert!(topics("私はがんばって日本語を勉強しています。").is_empty());
        assert!(topics("Я запускаю ракету в игре, мне нужен совет.").is_empty());
        assert!(topics("제 암호를 잊어버렸어요.").is_empty());
        assert!(topics("My meal prep for the week needs more protein.").is_empty());
        assert!(!topics("Ho subito una rapina in treno.").contains(&Category::MentalHealth));
        assert!(topics("Mon chat est maligne, il ouvre les portes.").is_empty());
        assert!(topics("Je veux apprendre à faire du pain au levain.").is_empty());
        assert!(topics("Quali sono gli effetti collaterali della sertralina?").is_empty());
        assert!(topics("I want to know the side effects of sertraline.").is_empty());
        assert!(topics("我想知道化疗有哪些副作用。").is_empty());
        assert!(topics("请告诉我化疗有哪些副作用。").is_empty());
        assert!(topics("Расскажи мне о химиотерапии.").is_empty());
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

    #[test]
    fn disclosures_in_scripts_without_spaces_and_with_attached_words() {
        assert_eq!(topics("我是HIV阳性，在吃药。"), [Category::Health]);
        assert_eq!(topics("我妈妈在做透析。"), [Category::Health]);
        assert_eq!(topics("私の夫は透析を受けています。"), [Category::Health]);
        assert_eq!(
            topics("HIVに感染していますが、仕事は続けられますか？"),
            [Category::Health]
        );
        assert_eq!(topics("저는 동성애자예요."), [Category::Sexuality]);
        assert_eq!(
            topics("وأنا أخاف من الترحيل بعد انتهاء الإقامة."),
            [Category::Immigration]
        );
        assert_eq!(
            topics("У меня есть судимость."),
            [Category::CriminalHistory]
        );
        assert_eq!(topics("मुझे एचआईवी है।"), [Category::Health]);
        assert_eq!(topics("Sabıka kaydım var."), [Category::CriminalHistory]);
        assert_eq!(topics("我儿子7岁了，在学校被欺负。"), [Category::Children]);
        assert_eq!(topics("Моему сыну 7 лет."), [Category::Children]);
        assert!(topics("我和孩子下周去北京玩。").is_empty());
        assert!(topics("Мы с сыном много лет ездим на море.").is_empty());
        assert_eq!(
            topics("I've been on Ozempic since May."),
            [Category::Health]
        );
        assert_eq!(
            topics("I take sertraline every morning."),
            [Category::MentalHealth]
        );
        // A drug the lexicon does not list, by the stem of its class.
        assert_eq!(
            topics("I was put on nebivolol last week."),
            [Category::Health]
        );
        assert_eq!(topics("Mujhe cancer hai."), [Category::Health]);
        // General questions on the same objects.
        assert!(topics("移民法是怎么规定的？").is_empty());
        assert!(topics("What are the side effects of SSRIs?").is_empty());
        assert!(topics("Как получить вид на жительство?").is_empty());
    }

    #[test]
    fn indirect_disclosures_by_class() {
        // A treatment, a symptom or an organ, said of oneself.
        assert_eq!(
            topics("Since they took out part of my bowel I have to change the bag often."),
            [Category::Health]
        );
        assert_eq!(
            topics("Мне поставили помпу, теперь я проверяю сахар."),
            [Category::Health]
        );
        assert_eq!(topics("Üç haftadır öksürüyorum."), [Category::Health]);
        // The speaker is dropped: the clause that sets out one's situation marks it.
        assert_eq!(
            topics("작년부터 투석을 받고 있는데 너무 힘들어요."),
            [Category::Health]
        );
        assert_eq!(
            topics("心療内科に通っていて、休職を相談したいのですが。"),
            [Category::MentalHealth]
        );
        assert_eq!(
            topics("사라지고 싶다는 생각만 들어요."),
            [Category::MentalHealth]
        );
        // A man with a boyfriend, a woman with a girlfriend.
        assert_eq!(
            topics("僕は男ですが、彼氏がいます。"),
            [Category::Sexuality]
        );
        assert!(topics("I'm a man and my girlfriend wants a dog.").is_empty());
        // Amounts in words.
        assert_eq!(
            topics("我月薪一万二，房贷每月还六千八。"),
            [Category::Finances]
        );
        assert_eq!(
            topics("У меня три микрозайма на 180 тысяч рублей."),
            [Category::Finances]
        );
        assert_eq!(
            topics("月給が少ないので、学資ローンが三百万円残っているのですが。"),
            [Category::Finances]
        );
        assert_eq!(topics("Tahlil sonucum pozitif çıktı."), [Category::Health]);
        assert_eq!(
            topics("抗がん剤の副作用で髪が抜けてきて、つらいです。"),
            [Category::Health]
        );
        assert_eq!(
            topics("연봉이 4천인데 대출이 1억이라 걱정돼요."),
            [Category::Finances]
        );
        // General questions and statistics stay benign.
        assert!(topics("糖尿病は遺伝すると言われていますか？").is_empty());
        assert!(topics("Türkiye'de geçen yıl kaç kişi tutuklandı?").is_empty());
        assert!(topics("How do I protect my app from SQL injections?").is_empty());
        assert!(topics("透析とはどんな治療ですか？").is_empty());
        assert!(topics("인슐린은 어떻게 작용하나요?").is_empty());
    }

    #[test]
    fn the_sentence_after_a_first_person_one_may_speak_of_the_writers_people() {
        assert_eq!(
            topics("My mother called yesterday. She has cancer."),
            [Category::Health]
        );
        assert_eq!(
            topics("我妈妈昨天去医院了。她得了癌症。"),
            [Category::Health]
        );
        assert!(topics("The news is on. She has cancer, the anchor said.").is_empty());
    }

    #[test]
    fn a_single_topic_word_in_a_study_frame_is_its_subject() {
        assert!(topics("I'm writing a novel about a prison guard.").is_empty());
        assert!(topics("我在写一篇关于监狱改革的论文。").is_empty());
        assert_eq!(
            topics("I'm writing my thesis during chemotherapy and my oncologist says to rest."),
            [Category::Health]
        );
    }

    #[test]
    fn a_patient_document_with_a_diagnosis_is_health_without_first_person() {
        assert_eq!(
            topics("Discharge summary\nPatient: <PERSON_1>\nDiagnosis: type 2 diabetes mellitus."),
            [Category::Health]
        );
        assert_eq!(
            topics("Entlassbrief\nDiagnose: Mammakarzinom links, Chemotherapie geplant."),
            [Category::Health]
        );
        assert_eq!(
            topics("出院小结\n姓名：<PERSON_1>\n诊断：2型糖尿病，胰岛素治疗。"),
            [Category::Health]
        );
        // A question about such documents is not one.
        assert!(topics("What does a lab report for cholesterol show?").is_empty());
    }

    #[test]
    fn immigration_and_criminal_history_are_their_own_topics() {
        assert_eq!(
            topics("I overstayed my visa and fear deportation."),
            [Category::Immigration]
        );
        assert_eq!(
            topics("Mein Aufenthaltstitel läuft ab."),
            [Category::Immigration]
        );
        assert_eq!(
            topics("Estoy sin papeles desde 2021."),
            [Category::Immigration]
        );
        assert_eq!(
            topics("I have a conviction for shoplifting."),
            [Category::CriminalHistory]
        );
        assert_eq!(
            topics("My lawyer says the custody hearing is in May."),
            [Category::Legal]
        );
    }
}
