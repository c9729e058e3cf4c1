"""Compositional topic sentences: a first-person frame around a term of the topic, and general
frames around the same terms as negatives. Terms give the classifier vocabulary the
whole-sentence templates cannot; the paired negatives teach it that the term alone ("what is
diabetes?") is not personal. Training only: the evaluation corpus uses other sentences.
"""

LEX = {
    "health": {
        "en": {
            "terms": ["diabetes", "high blood pressure", "a kidney infection", "shingles", "endometriosis", "gout", "anaemia",
                      "hepatitis C", "a hernia", "arthritis", "glaucoma", "a heart murmur", "sleep apnea", "IBS", "lupus",
                      "a slipped disc", "pneumonia", "tinnitus", "high cholesterol", "a stomach ulcer"],
            "personal": ["I have {T}.", "I was diagnosed with {T} last week.", "My doctor thinks I have {T}.",
                         "My husband has {T} and it is getting worse.", "I've had {T} for years, what can I do?",
                         "My blood test shows {T}, what does it mean?", "Summarize my lab results, they mention {T}.",
                         "My mum was just told she has {T}.", "I'm worried my {T} is back.", "Since my surgery I have {T}."],
            "general": ["What is {T}?", "What causes {T}?", "How common is {T}?", "Explain {T} to a medical student.",
                        "What is the history of research into {T}?"],
        },
        "de": {
            "terms": ["Diabetes", "Bluthochdruck", "eine Nierenentzündung", "Gürtelrose", "Gicht", "Blutarmut", "Arthrose",
                      "einen Bandscheibenvorfall", "Lungenentzündung", "Tinnitus", "erhöhte Leberwerte", "eine Schilddrüsenunterfunktion"],
            "personal": ["Ich habe {T}.", "Bei mir wurde {T} festgestellt.", "Mein Arzt vermutet {T}.", "Mein Mann hat {T}.",
                         "Mein Blutbild zeigt {T}, was heißt das?", "Meine Mutter hat {T}."],
            "general": ["Was ist {T}?", "Wie entsteht {T}?", "Wie häufig ist {T}?"],
        },
        "fr": {
            "terms": ["du diabète", "de l'hypertension", "une hernie", "de l'arthrose", "une pneumonie", "de l'anémie", "un zona"],
            "personal": ["J'ai {T}.", "Mon médecin pense que j'ai {T}.", "Ma mère a {T}.", "Mes analyses montrent {T}."],
            "general": ["Qu'est-ce que {T} ?", "Comment se soigne {T} en général ?"],
        },
        "es": {
            "terms": ["diabetes", "hipertensión", "una hernia", "artrosis", "neumonía", "anemia", "herpes zóster"],
            "personal": ["Tengo {T}.", "Mi médico cree que tengo {T}.", "Mi madre tiene {T}.", "Mis análisis muestran {T}."],
            "general": ["¿Qué es {T}?", "¿Cómo se trata {T} en general?"],
        },
        "it": {
            "terms": ["il diabete", "l'ipertensione", "un'ernia", "l'artrosi", "una polmonite", "l'anemia"],
            "personal": ["Ho {T}.", "Il mio medico pensa che io abbia {T}.", "Mia madre ha {T}."],
            "general": ["Che cos'è {T}?", "Come si cura {T} in generale?"],
        },
        "nl": {
            "terms": ["diabetes", "hoge bloeddruk", "een hernia", "artrose", "longontsteking", "bloedarmoede"],
            "personal": ["Ik heb {T}.", "Mijn huisarts denkt dat ik {T} heb.", "Mijn moeder heeft {T}."],
            "general": ["Wat is {T}?", "Hoe wordt {T} meestal behandeld?"],
        },
        "pt": {
            "terms": ["diabetes", "hipertensão", "uma hérnia", "artrose", "pneumonia", "anemia"],
            "personal": ["Tenho {T}.", "O meu médico acha que tenho {T}.", "A minha mãe tem {T}."],
            "general": ["O que é {T}?", "Como se trata {T} em geral?"],
        },
    },
    "mental_health": {
        "en": {
            "terms": ["depression", "anxiety", "panic attacks", "OCD", "an eating disorder", "bipolar disorder", "PTSD",
                      "insomnia from stress", "burnout", "suicidal thoughts", "self-harm urges", "a gambling addiction",
                      "an alcohol problem", "social anxiety", "postpartum depression"],
            "personal": ["I have {T}.", "I've been struggling with {T} for months.", "My therapist says I have {T}.",
                         "I think I have {T} but I'm scared to tell anyone.", "My wife is dealing with {T}.",
                         "I feel so hopeless, is this {T}?", "I was hospitalised for {T} last year."],
            "general": ["What is {T}?", "How is {T} diagnosed?", "What does research say about {T}?"],
        },
        "de": {
            "terms": ["Depressionen", "Angstzustände", "Panikattacken", "eine Essstörung", "Burnout", "Suizidgedanken", "eine Alkoholsucht"],
            "personal": ["Ich habe {T}.", "Ich kämpfe seit Monaten mit {T}.", "Meine Therapeutin sagt, ich habe {T}.", "Meine Frau hat {T}."],
            "general": ["Was sind {T}?", "Wie werden {T} behandelt?"],
        },
        "fr": {"terms": ["une dépression", "des crises d'angoisse", "un burn-out", "des idées suicidaires"],
               "personal": ["J'ai {T}.", "Je souffre de {T} depuis des mois."], "general": ["Qu'est-ce que {T} ?"]},
        "es": {"terms": ["depresión", "ataques de ansiedad", "un trastorno alimentario", "pensamientos suicidas"],
               "personal": ["Tengo {T}.", "Llevo meses con {T}."], "general": ["¿Qué es {T}?"]},
        "it": {"terms": ["la depressione", "attacchi di panico", "un disturbo alimentare"],
               "personal": ["Soffro di {T}.", "Da mesi ho {T}."], "general": ["Che cos'è {T}?"]},
        "nl": {"terms": ["een depressie", "paniekaanvallen", "een burn-out"],
               "personal": ["Ik heb {T}.", "Ik worstel al maanden met {T}."], "general": ["Wat is {T}?"]},
        "pt": {"terms": ["depressão", "ataques de pânico", "um esgotamento"],
               "personal": ["Tenho {T}.", "Há meses que sofro de {T}."], "general": ["O que é {T}?"]},
    },
    "sexuality": {
        "en": {
            "terms": ["gay", "lesbian", "bisexual", "pansexual", "asexual", "queer", "trans", "non-binary"],
            "personal": ["I'm {T} and my family doesn't know.", "I recently realised I'm {T}.", "My partner and I are {T}.",
                         "How do I come out as {T} at work?", "My son told me he is {T}."],
            "general": ["What does the word {T} mean?", "What is the history of the {T} rights movement?"],
        },
        "de": {"terms": ["schwul", "lesbisch", "bisexuell", "queer", "trans"],
               "personal": ["Ich bin {T} und meine Familie weiß es nicht.", "Wie oute ich mich als {T}?"],
               "general": ["Was bedeutet {T}?"]},
        "fr": {"terms": ["gay", "lesbienne", "bisexuel", "trans"],
               "personal": ["Je suis {T} et ma famille ne le sait pas.", "Comment dire à mes parents que je suis {T} ?"],
               "general": ["Que signifie {T} ?"]},
        "es": {"terms": ["gay", "lesbiana", "bisexual", "trans"],
               "personal": ["Soy {T} y mi familia no lo sabe.", "¿Cómo le digo a mis padres que soy {T}?"],
               "general": ["¿Qué significa {T}?"]},
        "it": {"terms": ["gay", "lesbica", "bisessuale"], "personal": ["Sono {T} e la mia famiglia non lo sa."], "general": ["Cosa significa {T}?"]},
        "nl": {"terms": ["homo", "lesbisch", "biseksueel"], "personal": ["Ik ben {T} en mijn familie weet het niet."], "general": ["Wat betekent {T}?"]},
        "pt": {"terms": ["gay", "lésbica", "bissexual"], "personal": ["Sou {T} e a minha família não sabe."], "general": ["O que significa {T}?"]},
    },
    "religion": {
        "en": {
            "terms": ["Muslim", "Catholic", "Jewish", "Hindu", "Buddhist", "Sikh", "Mormon", "evangelical Christian", "atheist", "Orthodox"],
            "personal": ["I'm a practising {T} and need time off for a holiday.", "As a {T}, can I eat this?", "I'm {T} and my partner is not.",
                         "My family is {T} and they want me to marry within the faith.", "I became {T} last year."],
            "general": ["How many {T} people live in Europe?", "What are the main beliefs of a {T}?"],
        },
        "de": {"terms": ["Muslim", "Katholik", "Jude", "Hindu", "Buddhist", "Atheist"],
               "personal": ["Ich bin gläubiger {T}.", "Als {T} darf ich das nicht essen.", "Ich bin {T} geworden."],
               "general": ["Woran glaubt ein {T}?"]},
        "fr": {"terms": ["musulman", "catholique", "juif", "bouddhiste"], "personal": ["Je suis {T} pratiquant.", "En tant que {T}, puis-je manger ceci ?"], "general": ["Que croit un {T} ?"]},
        "es": {"terms": ["musulmán", "católico", "judío", "evangélico"], "personal": ["Soy {T} practicante.", "Como {T}, ¿puedo comer esto?"], "general": ["¿En qué cree un {T}?"]},
        "it": {"terms": ["musulmano", "cattolico", "ebreo"], "personal": ["Sono {T} praticante."], "general": ["In cosa crede un {T}?"]},
        "nl": {"terms": ["moslim", "katholiek", "joods"], "personal": ["Ik ben {T} en bid elke dag."], "general": ["Wat gelooft een {T}?"]},
        "pt": {"terms": ["muçulmano", "católico", "judeu"], "personal": ["Sou {T} praticante."], "general": ["Em que acredita um {T}?"]},
    },
    "politics": {
        "en": {
            "terms": ["the Greens", "the Conservatives", "the Socialists", "the Liberals", "the far right", "the Communist party", "a union"],
            "personal": ["I voted for {T} and my family is furious.", "I'm a member of {T}.", "I donate to {T} every month.",
                         "I campaign for {T} and my boss must not find out.", "My political views are close to {T}."],
            "general": ["What does {T} stand for?", "How did {T} do in the last election?"],
        },
        "de": {"terms": ["die Grünen", "die CDU", "die Linke", "die FDP", "eine Gewerkschaft"],
               "personal": ["Ich habe {T} gewählt.", "Ich bin Mitglied bei {T}.", "Ich spende jeden Monat an {T}."],
               "general": ["Wofür stehen {T}?"]},
        "fr": {"terms": ["les Verts", "la gauche", "l'extrême droite"], "personal": ["J'ai voté pour {T}.", "Je milite pour {T}."], "general": ["Que défendent {T} ?"]},
        "es": {"terms": ["el PSOE", "el PP", "Podemos"], "personal": ["Voté a {T}.", "Soy afiliado a {T}."], "general": ["¿Qué defiende {T}?"]},
        "it": {"terms": ["il PD", "Fratelli d'Italia"], "personal": ["Ho votato per {T}.", "Sono iscritto al partito, {T}."], "general": ["Cosa propone {T}?"]},
        "nl": {"terms": ["GroenLinks", "de VVD"], "personal": ["Ik heb op {T} gestemd.", "Ik ben lid van {T}."], "general": ["Waar staat {T} voor?"]},
        "pt": {"terms": ["o PS", "o PSD"], "personal": ["Votei n{T}.", "Sou militante d{T}."], "general": ["O que defende {T}?"]},
    },
    "ethnicity": {
        "en": {
            "terms": ["Black", "Roma", "Kurdish", "Turkish", "Moroccan", "Vietnamese", "Arab", "Latino", "Indigenous", "mixed race", "Asian"],
            "personal": ["As a {T} person I get treated differently at work.", "I'm {T} and my landlord discriminates against me.",
                         "My family is {T} and the school treats my kids differently.", "Being {T}, I feel excluded in my team."],
            "general": ["What is the history of {T} migration to Europe?", "Which languages do {T} communities speak?"],
        },
        "de": {"terms": ["schwarz", "türkischstämmig", "kurdisch", "Roma"],
               "personal": ["Ich bin {T} und werde bei der Wohnungssuche benachteiligt.", "Meine Familie ist {T} und wir werden diskriminiert."],
               "general": ["Was ist die Geschichte der Einwanderung?"]},
        "fr": {"terms": ["noir", "maghrébin", "rom"], "personal": ["Je suis {T} et on me discrimine au travail."], "general": ["Quelle est l'histoire de l'immigration en France ?"]},
        "es": {"terms": ["gitano", "latino", "negro"], "personal": ["Soy {T} y me discriminan en el trabajo."], "general": ["¿Cuál es la historia de la inmigración en España?"]},
        "it": {"terms": ["nero", "rom"], "personal": ["Sono {T} e mi discriminano al lavoro."], "general": ["Qual è la storia dell'immigrazione in Italia?"]},
        "nl": {"terms": ["zwart", "Marokkaans"], "personal": ["Ik ben {T} en word gediscrimineerd op mijn werk."], "general": ["Wat is de geschiedenis van migratie naar Nederland?"]},
        "pt": {"terms": ["negro", "cigano"], "personal": ["Sou {T} e sou discriminado no trabalho."], "general": ["Qual é a história da imigração em Portugal?"]},
    },
    "finances": {
        "en": {
            "terms": ["credit card debt", "payday loans", "rent arrears", "an overdraft", "a tax debt", "student loans", "gambling debts", "a mortgage I can't pay"],
            "personal": ["I have {AMT} in {T}.", "I'm drowning in {T}.", "My salary is {AMT} a year and I have {T}.",
                         "The bank wrote to me about my {T}.", "How do I hide my {T} from my partner?", "I earn {AMT} a month, can I afford this flat?"],
            "general": ["How does {T} work in general?", "What is the average amount of {T} in the UK?"],
        },
        "de": {"terms": ["Schulden", "einen Dispokredit", "Mietschulden", "Steuerschulden"],
               "personal": ["Ich habe {AMT} Euro {T}.", "Mein Gehalt ist {AMT} netto und ich habe {T}.", "Die Bank hat mir wegen {T} geschrieben."],
               "general": ["Wie funktioniert {T} im Allgemeinen?"]},
        "fr": {"terms": ["des dettes", "un découvert", "des impayés de loyer"], "personal": ["J'ai {AMT} euros {T}.", "Mon salaire est de {AMT} euros et j'ai {T}."], "general": ["Comment fonctionne un crédit ?"]},
        "es": {"terms": ["deudas", "un descubierto", "impagos del alquiler"], "personal": ["Tengo {AMT} euros en {T}.", "Gano {AMT} al mes y tengo {T}."], "general": ["¿Cómo funciona un préstamo?"]},
        "it": {"terms": ["debiti", "uno scoperto"], "personal": ["Ho {AMT} euro di {T}.", "Guadagno {AMT} al mese e ho {T}."], "general": ["Come funziona un mutuo?"]},
        "nl": {"terms": ["schulden", "een betalingsachterstand"], "personal": ["Ik heb {AMT} euro aan {T}.", "Ik verdien {AMT} per maand en heb {T}."], "general": ["Hoe werkt een hypotheek?"]},
        "pt": {"terms": ["dívidas", "rendas em atraso"], "personal": ["Tenho {AMT} euros em {T}.", "Ganho {AMT} por mês e tenho {T}."], "general": ["Como funciona um crédito?"]},
    },
    "legal": {
        "en": {
            "terms": ["shoplifting", "drunk driving", "assault", "fraud", "possession of drugs", "tax evasion", "a restraining order", "a custody battle", "an eviction lawsuit"],
            "personal": ["I was charged with {T}.", "I got arrested for {T} last night.", "I have a conviction for {T}.",
                         "My lawyer says I could go to prison for {T}.", "My brother is on trial for {T}.", "I'm being sued over {T}."],
            "general": ["What is the maximum sentence for {T}?", "How do courts handle {T} in general?"],
        },
        "de": {"terms": ["Ladendiebstahl", "Trunkenheit am Steuer", "Körperverletzung", "Betrug", "Steuerhinterziehung"],
               "personal": ["Ich wurde wegen {T} angezeigt.", "Ich bin wegen {T} vorbestraft.", "Mein Anwalt sagt, mir droht wegen {T} Gefängnis."],
               "general": ["Welche Strafe gibt es für {T}?"]},
        "fr": {"terms": ["vol", "conduite en état d'ivresse", "fraude"], "personal": ["J'ai été arrêté pour {T}.", "Je suis poursuivi pour {T}."], "general": ["Quelle est la peine pour {T} ?"]},
        "es": {"terms": ["robo", "conducir borracho", "fraude"], "personal": ["Me detuvieron por {T}.", "Tengo antecedentes por {T}."], "general": ["¿Cuál es la pena por {T}?"]},
        "it": {"terms": ["furto", "frode"], "personal": ["Mi hanno denunciato per {T}."], "general": ["Qual è la pena per {T}?"]},
        "nl": {"terms": ["diefstal", "fraude"], "personal": ["Ik ben opgepakt voor {T}."], "general": ["Wat is de straf voor {T}?"]},
        "pt": {"terms": ["furto", "fraude"], "personal": ["Fui detido por {T}."], "general": ["Qual é a pena por {T}?"]},
    },
    "children": {
        "en": {
            "terms": ["son", "daughter", "toddler", "stepson", "baby", "teenage daughter", "foster child", "twins"],
            "personal": ["My {T} is {AGE} and struggles at school.", "My {T} keeps having nightmares.", "My {T} was suspended from school today.",
                         "How do I talk to my {T} about our divorce?", "My {T} has no friends in class.", "My {T} is {AGE} and still can't read."],
            "general": ["At what age do children usually start to read?", "What are good games for a {T}?"],
        },
        "de": {"terms": ["Sohn", "Tochter", "Kleinkind", "Baby", "Pflegekind"],
               "personal": ["Mein {T} ist {AGE} und hat Probleme in der Schule.", "Mein {T} hat ständig Albträume.", "Wie rede ich mit meinem {T} über die Scheidung?"],
               "general": ["Ab wann lernen Kinder lesen?"]},
        "fr": {"terms": ["fils", "bébé"], "personal": ["Mon {T} a {AGE} ans et a des difficultés à l'école.", "Mon {T} fait des cauchemars."], "general": ["À quel âge les enfants apprennent-ils à lire ?"]},
        "es": {"terms": ["hijo", "bebé"], "personal": ["Mi {T} tiene {AGE} años y le cuesta el colegio.", "Mi {T} tiene pesadillas."], "general": ["¿A qué edad aprenden a leer los niños?"]},
        "it": {"terms": ["figlio", "bambino"], "personal": ["Mio {T} ha {AGE} anni e ha problemi a scuola."], "general": ["A che età i bambini imparano a leggere?"]},
        "nl": {"terms": ["zoon", "dochter"], "personal": ["Mijn {T} is {AGE} en heeft problemen op school."], "general": ["Op welke leeftijd leren kinderen lezen?"]},
        "pt": {"terms": ["filho", "bebé"], "personal": ["O meu {T} tem {AGE} anos e tem dificuldades na escola."], "general": ["Com que idade as crianças aprendem a ler?"]},
    },
    "biometrics": {
        "en": {
            "terms": ["fingerprint", "face scan", "iris scan", "voiceprint", "retina scan", "palm print", "facial geometry data", "gait recording"],
            "personal": ["Here is my {T}, can you check it?", "I uploaded my {T} to the app and regret it.", "My {T} was stolen in a data breach.",
                         "Compare my {T} with the one on file.", "My employer wants my {T} for clocking in."],
            "general": ["How does a {T} sensor work?", "How accurate is {T} recognition in general?"],
        },
        "de": {"terms": ["Fingerabdruck", "Gesichtsscan", "Irisscan", "Stimmprofil"],
               "personal": ["Hier ist mein {T}, kannst du ihn prüfen?", "Mein {T} wurde bei einem Datenleck gestohlen.", "Mein Arbeitgeber will meinen {T}."],
               "general": ["Wie funktioniert ein {T}-Sensor?"]},
        "fr": {"terms": ["empreinte digitale", "scan du visage"], "personal": ["Voici mon {T}, peux-tu la vérifier ?"], "general": ["Comment fonctionne un capteur d'{T} ?"]},
        "es": {"terms": ["huella dactilar", "escaneo facial"], "personal": ["Aquí está mi {T}, ¿puedes revisarla?"], "general": ["¿Cómo funciona un lector de {T}?"]},
        "it": {"terms": ["impronta digitale", "scansione del volto"], "personal": ["Ecco la mia {T}, puoi controllarla?"], "general": ["Come funziona un lettore di {T}?"]},
        "nl": {"terms": ["vingerafdruk", "gezichtsscan"], "personal": ["Hier is mijn {T}, kun je die controleren?"], "general": ["Hoe werkt een {T}-scanner?"]},
        "pt": {"terms": ["impressão digital", "digitalização facial"], "personal": ["Aqui está a minha {T}, podes verificar?"], "general": ["Como funciona um leitor de {T}?"]},
    },
}


def lexicon_sample(rng, locale):
    """(text, labels) from a random topic's frame: personal frames carry the topic, general ones
    none."""
    topic = rng.choice(list(LEX))
    entry = LEX[topic][locale]
    # Term lists and their frames go together: pick the base entry or one of the additions.
    entry = rng.choice([entry] + entry.get("extra", []))
    personal = rng.random() < 0.6
    frame = rng.choice(entry["personal"] if personal else entry["general"])
    text = (frame.replace("{T}", rng.choice(entry["terms"]))
            .replace("{AMT}", f"{rng.randint(2, 90)},{rng.randint(0, 9)}00")
            .replace("{AGE}", str(rng.randint(2, 16))))
    return text, [topic] if personal else [], frame


# More terms and frames per topic, merged into LEX: symptoms and results as people describe
# them, not only diagnoses.
MORE = {
    "health": {
        "en": ({"terms": ["chest pain", "a persistent cough", "blood in my stool", "night sweats", "swollen ankles",
                          "heart palpitations", "a vitamin B12 deficiency", "low iron", "high blood sugar", "a UTI",
                          "an STD", "erectile dysfunction", "a miscarriage", "constant dizziness", "a lump in my neck",
                          "unexplained weight loss", "a high fever", "kidney stones", "a torn ligament", "sciatica"],
                "personal": ["I've had {T} for two weeks.", "I keep getting {T}, should I see a doctor?",
                             "My latest results show {T}.", "My GP found {T} during my check-up.", "I noticed {T} this morning.",
                             "Why do I have {T} after my operation?", "My partner has {T} and won't go to the doctor.",
                             "I'm on medication for {T}, can I still exercise?"],
                 "general": ["What usually causes {T}?", "Which specialist treats {T}?", "Write a leaflet about {T} for a pharmacy."]}),
        "de": ({"terms": ["Rückenschmerzen", "Brustschmerzen", "Schwindel", "Blut im Stuhl", "einen Knoten in der Brust",
                          "Vitamin-B12-Mangel", "hohen Blutzucker", "Fieber", "Nierensteine", "Herzrasen"],
                "personal": ["Ich habe seit zwei Wochen {T}.", "Meine Werte zeigen {T}.", "Mein Hausarzt hat {T} festgestellt.",
                             "Ich habe ständig {T}, soll ich zum Arzt?"],
                "general": ["Was verursacht {T} im Allgemeinen?", "Welcher Facharzt behandelt {T}?"]}),
        "fr": ({"terms": ["des douleurs thoraciques", "des vertiges", "une carence en fer", "de la fièvre", "du sang dans les selles"],
                "personal": ["J'ai {T} depuis deux semaines.", "Mes résultats montrent {T}."],
                "general": ["Qu'est-ce qui cause {T} en général ?"]}),
        "es": ({"terms": ["dolor en el pecho", "mareos", "falta de hierro", "fiebre", "sangre en las heces"],
                "personal": ["Tengo {T} desde hace dos semanas.", "Mis resultados muestran {T}."],
                "general": ["¿Qué causa {T} en general?"]}),
        "nl": ({"terms": ["pijn op de borst", "duizeligheid", "ijzertekort", "koorts", "een vitamine B12-tekort"],
                "personal": ["Ik heb al twee weken {T}.", "Mijn uitslagen laten {T} zien."],
                "general": ["Wat veroorzaakt {T} meestal?"]}),
        "pt": ({"terms": ["dores no peito", "tonturas", "falta de ferro", "febre", "a glicose alta"],
                "personal": ["Tenho {T} há duas semanas.", "As minhas análises mostram {T}."],
                "general": ["O que causa {T} em geral?"]}),
        "it": ({"terms": ["dolore al petto", "vertigini", "carenza di ferro", "febbre"],
                "personal": ["Ho {T} da due settimane.", "Le mie analisi mostrano {T}."],
                "general": ["Cosa causa {T} in generale?"]}),
    },
    "mental_health": {
        "en": ({"terms": ["dark thoughts", "nightmares about the attack", "flashbacks", "mood swings", "no motivation at all",
                          "thoughts of hurting myself", "a breakdown", "crippling loneliness", "intrusive thoughts", "a constant sense of dread"],
                "personal": ["I keep having {T}.", "I've been struggling with {T} since the divorce.", "Lately I have {T} and cry every night.",
                             "I can't function at work because of {T}.", "How do I tell my doctor about my {T}?"],
                "general": ["How do psychologists study {T}?", "Write an article about {T} for a general audience."]}),
        "de": ({"terms": ["dunkle Gedanken", "Albträume", "Flashbacks", "keine Motivation", "ständige Angst", "Einsamkeit"],
                "personal": ["Ich habe seit Monaten {T}.", "Ich fühle mich leer und habe {T}.", "Wegen {T} schaffe ich es kaum zur Arbeit."],
                "general": ["Wie entstehen {T}?"]}),
        "fr": ({"terms": ["des idées noires", "des cauchemars", "une angoisse permanente"],
                "personal": ["J'ai {T} depuis des mois.", "Je n'arrive plus à travailler à cause de {T}."], "general": ["D'où viennent {T} ?"]}),
        "es": ({"terms": ["pensamientos oscuros", "pesadillas", "ansiedad constante"],
                "personal": ["Tengo {T} desde hace meses.", "No puedo trabajar por {T}."], "general": ["¿De dónde vienen {T}?"]}),
        "nl": ({"terms": ["sombere gedachten", "nachtmerries", "constante angst"],
                "personal": ["Ik heb al maanden {T}.", "Ik ben somber en heb {T}."], "general": ["Waar komen {T} vandaan?"]}),
        "pt": ({"terms": ["pensamentos sombrios", "pesadelos", "ansiedade constante"],
                "personal": ["Tenho {T} há meses.", "Não consigo sair de casa por causa de {T}."], "general": ["De onde vêm {T}?"]}),
        "it": ({"terms": ["pensieri cupi", "incubi", "ansia costante"],
                "personal": ["Ho {T} da mesi."], "general": ["Da dove vengono {T}?"]}),
    },
    "religion": {
        "de": ({"terms": ["zum Islam", "zum Christentum", "zum Judentum", "zum Buddhismus"],
                "personal": ["Ich bin vor kurzem {T} konvertiert.", "Ich bin {T} übergetreten und meine Eltern sind dagegen."],
                "general": ["Wie viele Menschen konvertieren jedes Jahr {T}?"]}),
        "en": ({"terms": ["Islam", "Christianity", "Judaism", "Buddhism", "Catholicism"],
                "personal": ["I recently converted to {T} and my parents are against it.", "I pray every day since I found {T}.",
                             "I left {T} and my family cut me off."],
                "general": ["When did {T} spread to Europe?", "What are the holidays of {T}?"]}),
        "es": ({"terms": ["evangélico", "ateo", "musulmana"],
                "personal": ["Soy {T} y mi pareja no, ¿cómo educamos a los niños?"], "general": ["¿Cuántos {T} hay en España?"]}),
    },
    "legal": {
        "en": ({"terms": ["a court summons", "a fine for speeding", "a lawsuit from my landlord", "a police caution", "a DUI charge", "an arrest warrant"],
                "personal": ["I received {T}, what should I do?", "I got {T} last week.", "My son got {T} and he's only 19."],
                "general": ["How does {T} work in general?"]}),
        "fr": ({"terms": ["une convocation au tribunal", "une amende", "une plainte"],
                "personal": ["J'ai reçu {T}, que faire ?", "On m'a envoyé {T}."], "general": ["Comment fonctionne {T} ?"]}),
        "de": ({"terms": ["einen Strafbefehl", "eine Vorladung", "eine Anzeige"],
                "personal": ["Ich habe {T} bekommen, was soll ich tun?"], "general": ["Was ist {T}?"]}),
    },
    "finances": {
        "es": ({"terms": ["alquiler", "la hipoteca", "la luz"],
                "personal": ["Debo cuatro meses de {T} y me amenazan con echarme.", "No puedo pagar {T} este mes."],
                "general": ["¿Cómo se calcula {T}?"]}),
        "en": ({"terms": ["rent", "my mortgage", "the electricity bill", "my car loan"],
                "personal": ["I can't pay {T} this month.", "I'm four months behind on {T}.", "I had to borrow from my parents to cover {T}."],
                "general": ["How is {T} usually calculated?"]}),
    },
    "children": {
        "pt": ({"terms": ["filha", "filho"],
                "personal": ["A minha {T} de {AGE} anos tem dificuldades de leitura.", "O meu {T} de {AGE} anos não dorme."],
                "general": ["Com que idade uma criança começa a falar?"]}),
        "en": ({"terms": ["son", "daughter", "kid"],
                "personal": ["My {AGE}-year-old {T} has trouble reading.", "My {T} ({AGE}) hits other children at daycare."],
                "general": ["What do {AGE}-year-olds usually learn at school?"]}),
    },
    "ethnicity": {
        "en": ({"terms": ["Black", "Roma", "Sinti", "Kurdish", "Somali", "Turkish"],
                "personal": ["As a {T} man I get stopped by security all the time.", "My family is {T} and the landlord refused us.",
                             "Because I'm {T}, my colleagues make jokes about me."],
                "general": ["What is the history of the {T} community in Europe?"]}),
    },
}

# Frames only fit their own terms, so each addition stays a separate entry.
for _topic, _locales in MORE.items():
    for _loc, _add in _locales.items():
        LEX[_topic][_loc].setdefault("extra", []).append(_add)


# The smaller locales had one or two frames per topic; these give each a few more, in the
# words people use for money trouble, courts, children and doctors' results.
MORE_LOCALES = {
    "health": {
        "de": {"terms": ["Laborwerte", "Blutwerte", "Leberwerte", "Schilddrüsenwerte", "Entzündungswerte", "Zuckerwerte"],
               "personal": ["Meine {T} sind schlecht, was bedeutet das?", "Erkläre mir meine {T}.", "Der Arzt sagt, meine {T} sind erhöht."],
               "general": ["Was messen {T} allgemein?", "Welche {T} gibt es?"]},
        "fr": {"terms": ["ma prise de sang", "mon bilan hépatique", "mon taux de sucre", "ma tension"],
               "personal": ["Explique-moi {T}, le médecin est inquiet.", "Les résultats de {T} sont mauvais."],
               "general": ["Comment lire un bilan sanguin en général ?"]},
        "es": {"terms": ["mi analítica", "mis niveles de hierro", "mi tensión", "mi colesterol"],
               "personal": ["Explícame {T}, el médico está preocupado.", "Me preocupa {T}."],
               "general": ["¿Cómo se lee una analítica en general?"]},
        "it": {"terms": ["le mie analisi", "la mia glicemia", "il mio colesterolo"],
               "personal": ["Spiegami {T}, il medico è preoccupato.", "Sono preoccupato per {T}."],
               "general": ["Come si leggono le analisi del sangue in generale?"]},
        "nl": {"terms": ["mijn bloeduitslagen", "mijn leverwaarden", "mijn bloedsuiker"],
               "personal": ["Leg {T} uit, de dokter maakt zich zorgen.", "Ik maak me zorgen over {T}."],
               "general": ["Hoe lees je bloeduitslagen in het algemeen?"]},
        "pt": {"terms": ["as minhas análises", "o meu colesterol", "a minha tensão"],
               "personal": ["Explica-me {T}, o médico está preocupado.", "Estou preocupado com {T}."],
               "general": ["Como se leem análises ao sangue em geral?"]},
    },
    "mental_health": {
        "en": {"terms": ["psychiatrist", "therapist", "counsellor", "psychologist"],
               "personal": ["My {T} changed my medication.", "My {T} thinks I should be admitted.", "I told my {T} about the panic attacks."],
               "general": ["What does a {T} do?", "How do I become a {T}?"]},
        "de": {"terms": ["Psychiater", "Therapeut", "Psychologe"],
               "personal": ["Mein {T} hat meine Medikamente erhöht.", "Mein {T} meint, ich brauche eine Klinik."],
               "general": ["Was macht ein {T}?"]},
        "fr": {"terms": ["psychiatre", "psychologue"], "personal": ["Mon {T} a augmenté mon traitement."], "general": ["Que fait un {T} ?"]},
        "es": {"terms": ["psiquiatra", "psicólogo"], "personal": ["Mi {T} me ha subido la medicación."], "general": ["¿Qué hace un {T}?"]},
        "nl": {"terms": ["psychiater", "psycholoog"], "personal": ["Mijn {T} heeft mijn medicatie verhoogd."], "general": ["Wat doet een {T}?"]},
        "it": {"terms": ["psichiatra", "psicologo"], "personal": ["Il mio {T} mi ha aumentato i farmaci."], "general": ["Cosa fa uno {T}?"]},
        "pt": {"terms": ["psiquiatra", "psicólogo"], "personal": ["O meu {T} aumentou a medicação."], "general": ["O que faz um {T}?"]},
    },
    "legal": {
        "de": {"terms": ["das Sorgerecht", "Unterhalt", "die Scheidung", "eine Strafanzeige"],
               "personal": ["Mein Ex verklagt mich wegen {T}.", "Ich stehe wegen {T} vor Gericht.", "Mein Anwalt sagt, {T} sieht schlecht aus."],
               "general": ["Wie funktioniert {T} in Deutschland?"]},
        "fr": {"terms": ["la garde des enfants", "la pension alimentaire", "mon divorce", "une plainte pour vol"],
               "personal": ["Mon ex m'attaque en justice pour {T}.", "Je passe au tribunal pour {T}.", "Mon avocat dit que {T} va mal se passer."],
               "general": ["Comment fonctionne {T} en France ?"]},
        "es": {"terms": ["la custodia", "la pensión alimenticia", "mi divorcio", "una denuncia"],
               "personal": ["Mi ex me ha demandado por {T}.", "Tengo un juicio por {T}."],
               "general": ["¿Cómo funciona {T} en España?"]},
        "it": {"terms": ["l'affidamento", "il mantenimento", "il divorzio", "una denuncia"],
               "personal": ["Il mio ex mi ha fatto causa per {T}.", "Ho un processo per {T}."],
               "general": ["Come funziona {T} in Italia?"]},
        "nl": {"terms": ["de voogdij", "alimentatie", "mijn scheiding", "een aangifte"],
               "personal": ["Mijn ex heeft een rechtszaak tegen me aangespannen over {T}.", "Ik moet voor de rechter komen vanwege {T}."],
               "general": ["Hoe werkt {T} in Nederland?"]},
        "pt": {"terms": ["a guarda dos filhos", "a pensão de alimentos", "o meu divórcio", "uma queixa"],
               "personal": ["O meu ex processou-me por causa d{T}.", "Tenho um julgamento por {T}."],
               "general": ["Como funciona {T} em Portugal?"]},
        "en": {"terms": ["probation", "parole", "a suspended sentence", "community service"],
               "personal": ["I'm on {T} and want to move abroad.", "My brother is on {T}, can he visit us?", "I was given {T} last year."],
               "general": ["What is {T}?", "How does {T} work in Germany?"]},
    },
    "finances": {
        "de": {"terms": ["mein Konto", "meine Kreditkarte", "mein Dispo"],
               "personal": ["{T} ist überzogen und das Gehalt kommt erst nächste Woche.", "Ich kann {T} nicht mehr ausgleichen."],
               "general": ["Wie funktioniert ein Dispokredit?"]},
        "fr": {"terms": ["mon compte", "ma carte"], "personal": ["{T} est à découvert et mon salaire arrive lundi."], "general": ["Comment fonctionne un découvert ?"]},
        "it": {"terms": ["l'affitto", "il mutuo", "le bollette"],
               "personal": ["Sono in ritardo con {T} da due mesi.", "Non riesco a pagare {T}."], "general": ["Come si calcola {T}?"]},
        "pt": {"terms": ["a renda", "a prestação da casa", "as contas"],
               "personal": ["Estou com dois meses de {T} em atraso.", "Não consigo pagar {T} este mês."], "general": ["Como se calcula {T}?"]},
        "nl": {"terms": ["de huur", "de hypotheek", "de energierekening"],
               "personal": ["Ik loop drie maanden achter met {T}.", "Ik kan {T} niet betalen."], "general": ["Hoe wordt {T} berekend?"]},
    },
    "children": {
        "de": {"terms": ["Kind", "Sohn", "Tochter"],
               "personal": ["Unser {T} ist {AGE} und hat ADHS.", "Unser {T} ({AGE}) will nicht in die Kita.", "Mein {T} ist {AGE} und hat keine Freunde."],
               "general": ["Was lernen Kinder mit {AGE} in der Schule?"]},
        "fr": {"terms": ["fils", "enfant"], "personal": ["Notre {T} de {AGE} ans est hyperactif.", "Mon {T} a {AGE} ans et refuse d'aller à l'école."], "general": ["Que apprennent les enfants de {AGE} ans ?"]},
        "nl": {"terms": ["kind", "zoontje", "dochtertje"], "personal": ["Ons {T} is {AGE} en heeft ADHD.", "Mijn {T} van {AGE} wil niet naar school."], "general": ["Wat leren kinderen van {AGE}?"]},
        "es": {"terms": ["hijo", "niño"], "personal": ["Nuestro {T} de {AGE} años tiene TDAH."], "general": ["¿Qué aprenden los niños de {AGE} años?"]},
        "it": {"terms": ["figlio", "bambino"], "personal": ["Nostro {T} di {AGE} anni ha l'ADHD."], "general": ["Cosa imparano i bambini di {AGE} anni?"]},
    },
    "politics": {
        "en": {"terms": ["activist", "campaigner", "party member", "union rep"],
               "personal": ["I'm an {T} and got threatening messages.", "As a {T} for the opposition, I'm being followed.", "I work as a {T} and my employer found out."],
               "general": ["What does a {T} do in an election?"]},
        "de": {"terms": ["Aktivistin", "Parteimitglied", "Gewerkschafter"],
               "personal": ["Ich bin {T} und bekomme Drohungen.", "Als {T} werde ich bei der Arbeit benachteiligt."],
               "general": ["Was macht ein {T}?"]},
    },
}

for _topic, _locales in MORE_LOCALES.items():
    for _loc, _add in _locales.items():
        LEX[_topic][_loc].setdefault("extra", []).append(_add)


# Religion, ethnicity and politics as people state them in every locale: affiliation, practice,
# origin and party membership, in words of their own (the base entries of the smaller locales had
# one frame and three terms each). Drawn by `identity_sample`, rows of their own.
IDENTITY = {
    "religion": {
        "en": {"terms": ["a Jehovah's Witness", "a practising Sikh", "an observant Jew", "a convert to Islam", "a born-again Christian", "a Quaker"],
               "personal": ["I'm {T} and my manager keeps asking about it.", "I've been {T} since my teens.", "My husband is {T}, what should I cook for his family?"],
               "general": ["What does being {T} involve?", "How many people are {T} worldwide?"]},
        "de": {"terms": ["Zeugin Jehovas", "gläubige Muslimin", "praktizierender Jude", "Buddhistin", "evangelisch getauft", "Hinduistin"],
               "personal": ["Ich bin {T} und möchte das im Job nicht erwähnen.", "Meine Frau ist {T}, wie feiern wir Hochzeit?", "Seit drei Jahren bin ich {T}."],
               "general": ["Was glauben Menschen, die {T} sind?"]},
        "fr": {"terms": ["témoin de Jéhovah", "musulmane pratiquante", "juif pratiquant", "bouddhiste", "protestant", "converti à l'islam"],
               "personal": ["Je suis {T} et mon employeur l'a appris.", "Mon mari est {T}, comment préparer le repas de famille ?", "Je suis devenue {T} l'an dernier."],
               "general": ["Que signifie être {T} ?"]},
        "es": {"terms": ["testigo de Jehová", "musulmana practicante", "judío practicante", "budista", "evangélica", "adventista"],
               "personal": ["Soy {T} y en el trabajo no lo saben.", "Mi pareja es {T}, ¿cómo organizamos la boda?", "Desde hace dos años soy {T}."],
               "general": ["¿Qué significa ser {T}?"]},
        "it": {"terms": ["testimone di Geova", "musulmana praticante", "ebreo osservante", "buddhista", "valdese", "convertito all'islam"],
               "personal": ["Sono {T} e al lavoro non lo sa nessuno.", "Mio marito è {T}, cosa cucino per i suoi?", "Da due anni sono {T}."],
               "general": ["Cosa significa essere {T}?"]},
        "nl": {"terms": ["Jehova's getuige", "praktiserend moslima", "joods", "boeddhist", "gereformeerd", "bekeerd tot de islam"],
               "personal": ["Ik ben {T} en mijn collega's weten het niet.", "Mijn vrouw is {T}, hoe vieren we de bruiloft?", "Sinds vorig jaar ben ik {T}."],
               "general": ["Wat houdt het in om {T} te zijn?"]},
        "pt": {"terms": ["testemunha de Jeová", "muçulmana praticante", "judeu praticante", "budista", "evangélica", "espírita"],
               "personal": ["Sou {T} e no trabalho ninguém sabe.", "O meu marido é {T}, o que cozinho para a família dele?", "Há dois anos que sou {T}."],
               "general": ["O que significa ser {T}?"]},
    },
    "ethnicity": {
        "en": {"terms": ["Romani", "Sinti", "Traveller", "of Pakistani descent", "Afro-Caribbean", "Kurdish"],
               "personal": ["I'm {T} and the estate agent stopped answering my emails.", "Being {T}, I get searched at every airport.", "My wife is {T} and her school treated her badly."],
               "general": ["What is the history of people who are {T}?"]},
        "de": {"terms": ["Romni", "Sinto", "türkischer Herkunft", "afrodeutsch", "Kurdin", "polnischer Abstammung"],
               "personal": ["Ich bin {T} und bekomme keine Wohnung.", "Weil ich {T} bin, werde ich ständig kontrolliert.", "Mein Mann ist {T} und wird im Job benachteiligt."],
               "general": ["Wie viele Menschen in Deutschland sind {T}?"]},
        "fr": {"terms": ["rom", "d'origine maghrébine", "d'origine africaine", "gitane", "kurde", "d'origine asiatique"],
               "personal": ["Je suis {T} et les agences ne me rappellent jamais.", "Parce que je suis {T}, on me contrôle sans cesse.", "Ma femme est {T} et son chef la traite mal."],
               "general": ["Quelle est l'histoire des personnes {T} en France ?"]},
        "es": {"terms": ["gitana", "de origen marroquí", "afrodescendiente", "indígena", "de origen latinoamericano", "romaní"],
               "personal": ["Soy {T} y no me alquilan ningún piso.", "Por ser {T} me paran siempre en el metro.", "Mi marido es {T} y en su empresa lo tratan peor."],
               "general": ["¿Cuál es la historia de las personas {T} en España?"]},
        "it": {"terms": ["rom", "sinti", "di origine marocchina", "afroitaliana", "di origine cinese", "curda"],
               "personal": ["Sono {T} e nessuno mi affitta casa.", "Essendo {T} vengo fermata spesso dalla polizia.", "Mio marito è {T} e al lavoro lo discriminano."],
               "general": ["Qual è la storia delle persone {T} in Italia?"]},
        "nl": {"terms": ["Marokkaans-Nederlands", "Surinaams", "Roma", "Turks-Nederlands", "Moluks", "Antilliaans"],
               "personal": ["Ik ben {T} en word nooit uitgenodigd voor een gesprek.", "Omdat ik {T} ben, word ik vaak aangehouden.", "Mijn vrouw is {T} en haar baas discrimineert haar."],
               "general": ["Wat is de geschiedenis van mensen die {T} zijn?"]},
        "pt": {"terms": ["cigana", "de origem cabo-verdiana", "afrodescendente", "de origem brasileira", "indígena", "de etnia roma"],
               "personal": ["Sou {T} e ninguém me quer arrendar casa.", "Por ser {T}, a polícia manda-me parar muitas vezes.", "O meu marido é {T} e no trabalho tratam-no pior."],
               "general": ["Qual é a história das pessoas {T} em Portugal?"]},
    },
    "politics": {
        "en": {"terms": ["the Labour Party", "the Lib Dems", "Reform UK", "the Green Party", "a far-left group", "the SNP"],
               "personal": ["I've been a member of {T} for years and my landlord just found out.", "I canvass for {T} every weekend.", "My partner works for {T}, will that affect my job?"],
               "general": ["What are the policies of {T}?"]},
        "de": {"terms": ["der SPD", "der AfD", "den Grünen", "der Linken", "dem BSW", "der FDP"],
               "personal": ["Ich bin Mitglied in {T} und mein Arbeitgeber soll es nicht wissen.", "Ich mache Wahlkampf bei {T}.", "Mein Vater ist seit Jahren in {T} aktiv."],
               "general": ["Wie viele Mitglieder gibt es in {T}?"]},
        "fr": {"terms": ["LFI", "Renaissance", "Reconquête", "EELV", "Horizons"],
               "personal": ["Je suis membre de {T} et j'ai peur pour mon poste.", "Je milite chez {T} depuis trois ans.", "Mon frère tracte pour {T} tous les samedis."],
               "general": ["Que propose {T} ?"]},
        "es": {"terms": ["Vox", "Sumar", "Podemos", "Bildu", "ERC", "Junts"],
               "personal": ["Estoy afiliada a {T} y no quiero que mi jefe lo sepa.", "Hago campaña para {T} cada fin de semana.", "Mi padre es concejal de {T}."],
               "general": ["¿Qué propone {T}?"]},
        "it": {"terms": ["la Lega", "il Movimento 5 Stelle", "il PD", "Fratelli d'Italia", "Sinistra Italiana"],
               "personal": ["Sono tesserato con {T} e temo per il mio lavoro.", "Faccio volantinaggio per {T} ogni sabato.", "Mio padre è consigliere per {T}."],
               "general": ["Cosa propone {T}?"]},
        "nl": {"terms": ["de PVV", "GroenLinks-PvdA", "de SP", "D66", "BBB", "de VVD"],
               "personal": ["Ik ben lid van {T} en wil dat mijn werkgever het niet weet.", "Ik flyer elk weekend voor {T}.", "Mijn vader zit namens {T} in de gemeenteraad."],
               "general": ["Waar staat {T} voor?"]},
        "pt": {"terms": ["o Chega", "o Bloco de Esquerda", "o PCP", "a Iniciativa Liberal", "o Livre", "o PS"],
               "personal": ["Sou militante d{T} e tenho medo de que no trabalho saibam.", "Faço campanha pel{T} todos os fins de semana.", "O meu pai é vereador pel{T}."],
               "general": ["O que defende {T}?"]},
    },
}



def identity_sample(rng, locale):
    """(text, labels, frame) from IDENTITY, like lexicon_sample. Kept out of LEX so that the rows
    drawn from LEX (topic and names training data) stay what they were."""
    topic = rng.choice(list(IDENTITY))
    entry = IDENTITY[topic][locale]
    personal = rng.random() < 0.6
    frame = rng.choice(entry["personal"] if personal else entry["general"])
    return frame.replace("{T}", rng.choice(entry["terms"])), [topic] if personal else [], frame
