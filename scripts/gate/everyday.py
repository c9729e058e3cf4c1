"""Everyday first-person requests for the topic classifier's training data.

Benign: a first-person situation (code errors, outings with family, cooking, presents for
relatives, sport, study, work messages, hobbies, home repair, shopping, money questions without
figures) and a request, composed from slots per locale. Family and money words appear in them
on purpose: "my daughter", "my mum", "a savings account" without detail are not topics
(crates/gate/data/README.md, rules "Family mentioned without detail" and "Money without
figures"). Without these the classifier learns first-person narration itself as a health or
mental-health signal, since almost every first-person training sentence is a sensitive one.

Sensitive: first-person statements that carry the detail that makes them a topic (a child's age,
school or behaviour; a debt, salary or arrears with a figure; party membership; faith practice;
a diagnosis or medication), so that the same family and money words keep their weight when the
detail is there.

Training only (the evaluation corpus never uses these): `everyday_sample(rng, locale)` gives
(text, labels, template id); the template id is the situation or statement frame, so that
calibration holds out whole frames.
"""

# Slots shared by a locale's frames: {REL} a relative (possessive included), {PLACE} a place,
# {N} a small number that is not an age or an amount of money, {GADGET} a device.
SLOTS = {
    "en": {
        "GADGET": ["laptop", "phone", "tablet", "e-reader", "smartwatch", "printer", "router", "camera", "coffee machine", "car"],
        "REL": ["my son", "my daughter", "my kids", "my wife", "my husband", "my mum", "my dad", "my grandma",
                "my grandad", "my brother", "my sister", "my parents", "my family", "my partner", "my niece",
                "my nephew", "my aunt", "my best friend", "my boyfriend", "my girlfriend", "my children", "my stepdad"],
        "PLACE": ["Porto", "Edinburgh", "Vienna", "the Alps", "Crete", "Copenhagen", "Cornwall", "Seville", "Bruges",
                  "Lake Garda", "Dublin", "Kraków", "the Dolomites", "Brittany"],
        "N": ["two", "three", "four", "ten", "2", "3", "5", "20", "45"],
    },
    "de": {
        "GADGET": ["Laptop", "Handy", "Tablet", "Drucker", "Router", "Kamera", "Kaffeemaschine", "Auto"],
        "REL": ["mein Sohn", "meine Tochter", "meine Kinder", "meine Frau", "mein Mann", "meine Mutter", "mein Vater",
                "meine Oma", "mein Opa", "mein Bruder", "meine Schwester", "meine Eltern", "meine Familie",
                "mein Partner", "meine Nichte", "mein Neffe", "meine Freundin"],
        "PLACE": ["Hamburg", "Wien", "den Bodensee", "Rügen", "Südtirol", "Dresden", "die Ostsee", "Kopenhagen",
                  "den Schwarzwald", "Salzburg", "Amsterdam"],
        "N": ["zwei", "drei", "vier", "zehn", "2", "3", "5", "20"],
    },
    "fr": {
        "GADGET": ["ordinateur", "téléphone", "tablette", "imprimante", "routeur", "appareil photo", "vélo"],
        "REL": ["mon fils", "ma fille", "mes enfants", "ma femme", "mon mari", "ma mère", "mon père", "ma grand-mère",
                "mon grand-père", "mon frère", "ma sœur", "mes parents", "ma famille", "mon compagnon", "ma nièce",
                "mon neveu"],
        "PLACE": ["Lyon", "Bordeaux", "la Bretagne", "Marseille", "Nice", "la Corse", "Strasbourg", "Lille",
                  "les Vosges", "Biarritz"],
        "N": ["deux", "trois", "quatre", "dix", "2", "3", "5", "20"],
    },
    "es": {
        "GADGET": ["portátil", "móvil", "tablet", "impresora", "router", "coche", "cámara"],
        "REL": ["mi hijo", "mi hija", "mis hijos", "mi mujer", "mi marido", "mi madre", "mi padre", "mi abuela",
                "mi abuelo", "mi hermano", "mi hermana", "mis padres", "mi familia", "mi pareja", "mi sobrina",
                "mi sobrino"],
        "PLACE": ["Sevilla", "Granada", "Bilbao", "Mallorca", "Cádiz", "Salamanca", "los Pirineos", "Galicia",
                  "Málaga", "Toledo"],
        "N": ["dos", "tres", "cuatro", "diez", "2", "3", "5", "20"],
    },
    "it": {
        "GADGET": ["portatile", "telefono", "tablet", "router", "stampante", "macchina fotografica"],
        "REL": ["mio figlio", "mia figlia", "i miei figli", "mia moglie", "mio marito", "mia madre", "mio padre",
                "mia nonna", "mio nonno", "mio fratello", "mia sorella", "i miei genitori", "la mia famiglia",
                "il mio compagno", "mia nipote"],
        "PLACE": ["Firenze", "Torino", "la Sardegna", "Bologna", "Venezia", "il Lago di Como", "Palermo", "Verona",
                  "la Puglia", "Trieste"],
        "N": ["due", "tre", "quattro", "dieci", "2", "3", "5", "20"],
    },
    "nl": {
        "GADGET": ["laptop", "telefoon", "tablet", "printer", "router", "camera", "fiets"],
        "REL": ["mijn zoon", "mijn dochter", "mijn kinderen", "mijn vrouw", "mijn man", "mijn moeder", "mijn vader",
                "mijn oma", "mijn opa", "mijn broer", "mijn zus", "mijn ouders", "mijn gezin", "mijn partner",
                "mijn neefje", "mijn nichtje"],
        "PLACE": ["Utrecht", "Texel", "Maastricht", "de Ardennen", "Groningen", "Gent", "Zeeland", "Antwerpen",
                  "de Waddeneilanden", "Rotterdam"],
        "N": ["twee", "drie", "vier", "tien", "2", "3", "5", "20"],
    },
    "pt": {
        "GADGET": ["portátil", "telemóvel", "tablet", "router", "impressora", "carro"],
        "REL": ["o meu filho", "a minha filha", "os meus filhos", "a minha mulher", "o meu marido", "a minha mãe",
                "o meu pai", "a minha avó", "o meu avô", "o meu irmão", "a minha irmã", "os meus pais",
                "a minha família", "o meu namorado", "a minha sobrinha"],
        "PLACE": ["Lisboa", "Braga", "a Madeira", "Coimbra", "Évora", "os Açores", "Sintra", "Aveiro", "o Douro",
                  "Faro"],
        "N": ["dois", "três", "quatro", "dez", "2", "3", "5", "20"],
    },
}

# Benign first-person situations, by kind; each is completed by one of the locale's requests.
BENIGN = {
    "en": [
        # the frames sensitive statements are made of, with everyday content: "I have", "I got",
        # "my mum has", "since", "I keep getting"
        "I have a question about my new {GADGET}",
        "I have {N} tickets for a concert and one friend can't come",
        "I've had my {GADGET} for {N} years and it's getting slow",
        "I got a new {GADGET} for my birthday and can't set it up",
        "I just got back from {PLACE} and want to sort my photos",
        "I keep getting logged out of my email on my {GADGET}",
        "I was asked to organise the office party this year",
        "since the last update my {GADGET} drains the battery",
        "{REL} has a birthday next week and loves board games",
        "{REL} has a new job in {PLACE} and we want to visit",
        "{REL} was just told she got the flat she wanted",
        "my exam results came back and I passed, how do I celebrate cheaply",
        "I'm worried my {GADGET} won't survive another year",
        "my results in the pub quiz are always bad on history",
        "I have a presentation next week and my slides look boring",
        "I have an appointment at the bank to open an account for {REL}",
        "I was late for work twice because of the trains",
        # code and tools
        "My Flask app returns a 405 error when I submit the form",
        "I get 'ModuleNotFoundError: No module named requests' although I installed it",
        "My Go test hangs forever when I run it with the race detector",
        "My C program prints garbage after I copy a string with strncpy",
        "I keep getting a merge conflict in package-lock.json every time I pull",
        "My Java build fails with 'cannot find symbol' after I renamed a class",
        "My pandas groupby gives me NaN for every column I sum",
        "I wrote a regex for postcodes and it matches far too much",
        "My Android app crashes when I rotate the screen",
        "My SQL migration fails with a foreign key error on the second table",
        "My Terraform plan wants to destroy and recreate the whole database",
        "I'm learning Haskell and I don't get what a monad is for",
        "My CSS grid collapses into one column on my phone",
        # outings and trips with family
        "I'm taking {REL} to {PLACE} for {N} days in spring",
        "We're going to {PLACE} with {REL} over the long weekend",
        "I want to plan a day out with {REL} somewhere near {PLACE}",
        "{REL} and I are flying to {PLACE} next month",
        "I'm driving to {PLACE} with {REL} and the dog",
        # cooking and baking
        "I'm cooking a roast for {REL} on Sunday",
        "I promised {REL} I'd bake a lemon tart",
        "I want to make pancakes with {REL} tomorrow morning",
        "I have {N} friends coming for dinner and only one oven",
        "I bought too many courgettes and want to use them up",
        # presents
        "I'm looking for a present for {REL}, who is into birdwatching",
        "It's {REL}'s birthday on Friday and I have no idea what to get",
        "I want to give {REL} something handmade for Christmas",
        "I need a small thank-you gift for {REL}",
        # sport and workouts
        "I've started going to the climbing gym with {REL}",
        "I want to swim {N} lengths without stopping by summer",
        "I do yoga twice a week and want to add some strength training",
        "I'm training for a 10k with {REL}",
        # study
        "I'm revising for my chemistry exam on Monday",
        "I have to write an essay on the French Revolution for my history course",
        "I'm learning Portuguese before our trip",
        "I need to present my group project on climate policy in class",
        # work
        "I need to write an email to my team about the new holiday rota",
        "My manager asked me to prepare the agenda for Thursday's meeting",
        "I have to give feedback to a colleague who keeps missing deadlines",
        "I want to ask my boss for a day of remote work each week",
        "I'm writing the minutes of our project meeting",
        # hobbies
        "I've started painting with watercolours and my colours turn muddy",
        "I'm building a model railway with {REL}",
        "I play chess online and always lose in the endgame",
        "I want to start a vegetable patch on my balcony",
        "I've taken up photography and my night shots are blurry",
        # home repair
        "My washing machine won't drain and the filter is clean",
        "The bathroom fan in my flat makes a rattling noise",
        "I want to put up shelves on a plasterboard wall in my kitchen",
        "My front door sticks when it rains",
        "The radiator in my bedroom stays cold at the top",
        # shopping
        "I'm choosing a new phone for {REL} and they mostly use WhatsApp",
        "I want to buy a bike for my commute, about {N} km each way",
        "I need new running shoes, I run on trails mostly",
        "I'm comparing two laptops for my studies",
        # money without figures
        "I want to understand how pensions work before I change jobs",
        "I'm thinking of opening a savings account for {REL}",
        "We're saving up for a holiday and I want to set up a simple budget",
        "I'd like to know what a fixed-rate mortgage is",
        "I'm trying to understand how income tax brackets work",
    ],
    "de": [
        "ich habe eine Frage zu meinem neuen {GADGET}",
        "ich habe mir ein neues {GADGET} gekauft und komme mit der Einrichtung nicht klar",
        "ich habe seit {N} Jahren dasselbe {GADGET} und es wird langsam",
        "seit dem letzten Update ist mein {GADGET} ständig leer",
        "{REL} hat einen neuen Job in {PLACE} und wir wollen zu Besuch",
        "{REL} hat am Wochenende ein Konzert und ich will Blumen mitbringen",
        "meine Mutter hat sich ein {GADGET} gewünscht",
        "ich habe nächste Woche einen Termin bei der Bank für ein Girokonto",
        "ich habe meine Prüfung bestanden und will feiern",
        "Mein Python-Skript findet die Datei nicht, obwohl sie im selben Ordner liegt",
        "Mein Docker-Build bricht mit 'no space left on device' ab",
        "Meine Excel-Tabelle rechnet die Summe falsch, wenn ich Zeilen einfüge",
        "Ich bekomme bei git push immer 'rejected', was habe ich falsch gemacht",
        "Mein Handy lädt seit dem Update nur noch sehr langsam",
        "Ich fahre mit {REL} für {N} Tage nach {PLACE}",
        "{REL} und ich wollen am Wochenende nach {PLACE}",
        "Ich plane einen Ausflug mit {REL} in die Nähe von {PLACE}",
        "Ich koche am Sonntag für {REL} einen Braten",
        "Ich will mit {REL} Plätzchen backen",
        "Ich habe {N} Gäste zum Essen und nur einen kleinen Herd",
        "Ich suche ein Geschenk für {REL}, der gern wandert",
        "{REL} hat nächste Woche Geburtstag und ich habe keine Idee",
        "Ich möchte {REL} etwas Selbstgemachtes schenken",
        "Ich gehe seit Kurzem mit {REL} bouldern",
        "Ich will bis zum Sommer {N} Kilometer am Stück laufen",
        "Ich lerne für meine Chemieprüfung am Montag",
        "Ich muss für mein Studium ein Referat über die Weimarer Republik halten",
        "Ich muss meinem Team eine E-Mail zum neuen Urlaubsplan schreiben",
        "Mein Chef will bis Donnerstag eine Tagesordnung für das Meeting",
        "Ich habe mit Aquarellmalerei angefangen und die Farben werden matschig",
        "Ich will auf meinem Balkon Gemüse anbauen",
        "Meine Waschmaschine pumpt nicht mehr ab",
        "Ich will in meiner Küche Regale an eine Rigipswand hängen",
        "Meine Haustür klemmt, wenn es regnet",
        "Ich suche ein neues Handy für {REL}, das einfach zu bedienen ist",
        "Ich will ein Fahrrad für den Arbeitsweg kaufen",
        "Ich möchte verstehen, wie die Rente funktioniert, bevor ich den Job wechsle",
        "Ich überlege, für {REL} ein Sparkonto zu eröffnen",
        "Wir sparen auf einen Urlaub und ich will ein einfaches Haushaltsbuch anlegen",
    ],
    "fr": [
        "j'ai une question sur mon nouvel {GADGET}",
        "j'ai le même {GADGET} depuis {N} ans et il devient lent",
        "depuis la dernière mise à jour mon {GADGET} ne tient plus la charge",
        "{REL} a un nouveau travail à {PLACE} et on veut lui rendre visite",
        "ma mère a envie d'un {GADGET} pour Noël",
        "j'ai eu mes résultats d'examen et j'ai réussi",
        "Mon script Python ne trouve pas le fichier alors qu'il est dans le même dossier",
        "Mon build Docker échoue avec 'no space left on device'",
        "J'ai une erreur 'rejected' à chaque git push",
        "Mon téléphone se décharge très vite depuis la mise à jour",
        "Je pars {N} jours à {PLACE} avec {REL}",
        "{REL} et moi allons à {PLACE} ce week-end",
        "Je prépare un rôti pour {REL} dimanche",
        "Je veux faire des crêpes avec {REL} demain",
        "J'ai {N} invités à dîner et un seul four",
        "Je cherche un cadeau pour {REL}, qui adore la randonnée",
        "C'est l'anniversaire de {REL} vendredi et je n'ai pas d'idée",
        "J'ai commencé l'escalade en salle avec {REL}",
        "Je révise mon examen de chimie pour lundi",
        "Je dois écrire un mail à mon équipe sur le nouveau planning des congés",
        "Mon chef veut l'ordre du jour de la réunion pour jeudi",
        "J'ai commencé l'aquarelle et mes couleurs deviennent ternes",
        "Ma machine à laver ne vidange plus",
        "Je veux poser des étagères sur une cloison en placo",
        "Je cherche un nouveau téléphone pour {REL}",
        "Je veux comprendre comment marche la retraite avant de changer de poste",
        "Je pense ouvrir un livret d'épargne pour {REL}",
        "Nous économisons pour les vacances et je veux faire un petit budget",
    ],
    "es": [
        "tengo una pregunta sobre mi {GADGET} nuevo",
        "tengo el mismo {GADGET} desde hace {N} años y va lento",
        "desde la última actualización mi {GADGET} no aguanta la batería",
        "{REL} tiene un trabajo nuevo en {PLACE} y queremos ir a verle",
        "mi madre quiere un {GADGET} por Navidad",
        "me han dado las notas del examen y he aprobado",
        "Mi script de Python no encuentra el archivo aunque está en la misma carpeta",
        "Mi build de Docker falla con 'no space left on device'",
        "Me sale 'rejected' cada vez que hago git push",
        "Mi portátil se reinicia solo cuando abro muchas pestañas",
        "Me voy {N} días a {PLACE} con {REL}",
        "{REL} y yo vamos a {PLACE} este puente",
        "Voy a preparar un asado para {REL} el domingo",
        "Quiero hacer tortitas con {REL} mañana",
        "Tengo {N} invitados a cenar y un solo horno",
        "Busco un regalo para {REL}, que es muy aficionado al senderismo",
        "Es el cumpleaños de {REL} el viernes y no sé qué regalarle",
        "He empezado a escalar en rocódromo con {REL}",
        "Estoy repasando para mi examen de química del lunes",
        "Tengo que escribir un correo a mi equipo sobre el nuevo calendario de vacaciones",
        "Mi jefe quiere el orden del día de la reunión para el jueves",
        "He empezado a pintar con acuarelas y los colores se me quedan apagados",
        "Mi lavadora no desagua",
        "Quiero colgar estantes en una pared de pladur",
        "Busco un móvil nuevo para {REL}",
        "Quiero entender cómo funcionan las pensiones antes de cambiar de trabajo",
        "Estoy pensando en abrir una cuenta de ahorro para {REL}",
        "Estamos ahorrando para las vacaciones y quiero hacer un presupuesto sencillo",
    ],
    "it": [
        "ho una domanda sul mio nuovo {GADGET}",
        "ho lo stesso {GADGET} da {N} anni e ormai è lento",
        "{REL} ha un nuovo lavoro a {PLACE} e vogliamo andarla a trovare",
        "mia madre vorrebbe un {GADGET} per Natale",
        "Il mio script Python non trova il file anche se è nella stessa cartella",
        "Il mio build Docker si ferma con 'no space left on device'",
        "Ogni volta che faccio git push mi dà 'rejected'",
        "Parto {N} giorni per {PLACE} con {REL}",
        "{REL} e io andiamo a {PLACE} nel fine settimana",
        "Cucino un arrosto per {REL} domenica",
        "Voglio fare i biscotti con {REL} domani",
        "Cerco un regalo per {REL}, che ama le escursioni",
        "Venerdì è il compleanno di {REL} e non ho idee",
        "Ho iniziato ad arrampicare in palestra con {REL}",
        "Sto ripassando per l'esame di chimica di lunedì",
        "Devo scrivere una mail al mio team sul nuovo piano ferie",
        "La mia lavatrice non scarica più l'acqua",
        "Voglio montare delle mensole su una parete in cartongesso",
        "Cerco un telefono nuovo per {REL}",
        "Voglio capire come funziona la pensione prima di cambiare lavoro",
        "Sto pensando di aprire un conto di risparmio per {REL}",
    ],
    "nl": [
        "ik heb een vraag over mijn nieuwe {GADGET}",
        "ik heb al {N} jaar dezelfde {GADGET} en hij wordt traag",
        "{REL} heeft een nieuwe baan in {PLACE} en we willen op bezoek",
        "mijn moeder wil een {GADGET} voor haar verjaardag",
        "Mijn Python-script vindt het bestand niet terwijl het in dezelfde map staat",
        "Mijn Docker-build stopt met 'no space left on device'",
        "Ik krijg bij elke git push 'rejected'",
        "Ik ga {N} dagen naar {PLACE} met {REL}",
        "{REL} en ik gaan dit weekend naar {PLACE}",
        "Ik kook zondag een stoofpot voor {REL}",
        "Ik wil morgen pannenkoeken bakken met {REL}",
        "Ik zoek een cadeau voor {REL}, die graag wandelt",
        "{REL} is vrijdag jarig en ik heb geen idee wat ik moet geven",
        "Ik ben met {REL} begonnen met boulderen",
        "Ik leer voor mijn scheikunde-examen van maandag",
        "Ik moet mijn team mailen over het nieuwe vakantierooster",
        "Mijn wasmachine pompt het water niet meer weg",
        "Ik wil planken ophangen aan een gipswand",
        "Ik zoek een nieuwe telefoon voor {REL}",
        "Ik wil begrijpen hoe pensioen werkt voordat ik van baan wissel",
        "Ik denk erover een spaarrekening te openen voor {REL}",
    ],
    "pt": [
        "tenho uma pergunta sobre o meu {GADGET} novo",
        "tenho o mesmo {GADGET} há {N} anos e está lento",
        "{REL} tem um emprego novo em {PLACE} e queremos visitá-lo",
        "a minha mãe quer um {GADGET} no Natal",
        "O meu script em Python não encontra o ficheiro apesar de estar na mesma pasta",
        "O meu build do Docker falha com 'no space left on device'",
        "Dá-me 'rejected' sempre que faço git push",
        "Vou {N} dias a {PLACE} com {REL}",
        "{REL} e eu vamos a {PLACE} no fim de semana",
        "Vou fazer um assado para {REL} no domingo",
        "Quero fazer panquecas com {REL} amanhã",
        "Procuro um presente para {REL}, que adora caminhadas",
        "Sexta é o aniversário de {REL} e não sei o que oferecer",
        "Comecei a fazer escalada no ginásio com {REL}",
        "Estou a estudar para o exame de química de segunda",
        "Tenho de escrever um e-mail à minha equipa sobre o novo mapa de férias",
        "A minha máquina de lavar não escoa a água",
        "Quero pendurar prateleiras numa parede de pladur",
        "Procuro um telemóvel novo para {REL}",
        "Quero perceber como funcionam as reformas antes de mudar de emprego",
        "Estou a pensar abrir uma conta poupança para {REL}",
    ],
}

REQUESTS = {
    "en": ["what should I do?", "can you help?", "any tips?", "how do I fix it?", "what do you suggest?",
           "can you give me a plan?", "where do I start?", "what am I doing wrong?", "any ideas?",
           "can you explain it simply?", "what would you recommend?"],
    "de": ["was soll ich tun?", "kannst du helfen?", "hast du Tipps?", "wie löse ich das?", "was schlägst du vor?",
           "wo fange ich an?", "hast du Ideen?"],
    "fr": ["que faire ?", "tu peux m'aider ?", "des conseils ?", "comment je règle ça ?", "tu as des idées ?",
           "par où commencer ?"],
    "es": ["¿qué hago?", "¿me ayudas?", "¿algún consejo?", "¿cómo lo arreglo?", "¿alguna idea?", "¿por dónde empiezo?"],
    "it": ["cosa faccio?", "mi aiuti?", "qualche consiglio?", "come lo risolvo?", "idee?", "da dove comincio?"],
    "nl": ["wat moet ik doen?", "kun je helpen?", "tips?", "hoe los ik dat op?", "ideeën?", "waar begin ik?"],
    "pt": ["o que faço?", "podes ajudar?", "alguma dica?", "como resolvo isto?", "ideias?", "por onde começo?"],
}

# Sensitive first-person statements with the detail that makes them a topic. {AGE} a child's
# age, {AMT} an amount of money, {PARTY} a party.
SENSITIVE = {
    "en": [
        # said in plain words, without a clinical or legal term
        ("mental_health", "since {LOSS} I can't sleep and I cry most days"),
        ("mental_health", "since {LOSS} nothing is fun any more and I've stopped seeing friends"),
        ("mental_health", "I wake up at four every night with my heart racing and can't stop worrying"),
        ("mental_health", "I have to check the door is locked again and again before I can go to bed"),
        ("mental_health", "some mornings I can't face getting out of bed at all"),
        ("health", "I've lost a lot of weight without trying and I'm tired all the time"),
        ("health", "I've had a headache every day for three weeks and nothing helps"),
        ("health", "I get out of breath after one flight of stairs since last month"),
        ("legal", "I've been accused of taking money from the till at work"),
        ("legal", "I'm charged with assault after a fight last weekend"),
        ("legal", "I have a hearing next week because I drove without insurance"),
        ("religion", "I lost my faith years ago but still go to church for my parents"),
        ("religion", "I'm thinking of converting to Judaism and haven't told my family"),
        ("politics", "I was at the demonstration against the government and my photo is in the paper"),
        ("children", "{REL_CHILD} is {AGE} and the school says he can't sit still in class"),
        ("children", "{REL_CHILD} is {AGE} and still wets the bed most nights"),
        ("children", "{REL_CHILD} ({AGE}) has been refusing to go to school for weeks"),
        ("children", "the teacher called because {REL_CHILD} bit another child at nursery"),
        ("children", "{REL_CHILD} is {AGE} and her reading is two years behind her class"),
        ("children", "{REL_CHILD} has tantrums every evening since he started year {AGE}"),
        ("finances", "I owe {AMT} on my credit card and can't make the minimum payment"),
        ("finances", "I'm {AMT} behind on my mortgage and the bank keeps calling"),
        ("finances", "my salary is {AMT} and half of it goes on loan repayments"),
        ("finances", "I took out a payday loan of {AMT} and now owe twice that"),
        ("finances", "we have {AMT} of debt and the bailiffs wrote to us"),
        ("politics", "I've been a member of the {PARTY} for years and my colleagues don't know"),
        ("politics", "I canvass for the {PARTY} at weekends"),
        ("religion", "I pray five times a day and need somewhere quiet at work"),
        ("religion", "I keep kosher and my team always orders pork for lunch"),
        ("religion", "I go to mass every Sunday and my partner thinks it's a waste of time"),
        ("health", "I was diagnosed with coeliac disease and I'm on a strict diet now"),
        ("health", "my doctor put me on {MED} after my blood tests"),
        ("mental_health", "I've been on antidepressants since my breakdown last winter"),
        ("legal", "I've got a court date next month for a drink-driving charge"),
    ],
    "de": [
        ("mental_health", "seit {LOSS} kann ich nicht mehr schlafen und weine fast jeden Tag"),
        ("mental_health", "seit {LOSS} macht mir nichts mehr Freude und ich treffe niemanden mehr"),
        ("health", "ich habe ohne Grund stark abgenommen und bin ständig müde"),
        ("legal", "mir wird vorgeworfen, Geld aus der Kasse genommen zu haben"),
        ("religion", "ich glaube nicht mehr an Gott, gehe aber meinen Eltern zuliebe in die Kirche"),
        ("children", "{REL_CHILD} ist {AGE} und die Lehrerin sagt, er stört ständig den Unterricht"),
        ("children", "{REL_CHILD} ist {AGE} und nässt noch jede Nacht ein"),
        ("children", "{REL_CHILD} ({AGE}) will seit Wochen nicht mehr in die Schule"),
        ("finances", "ich habe {AMT} Euro Schulden auf der Kreditkarte und kann die Rate nicht zahlen"),
        ("finances", "ich bin mit {AMT} Euro Miete im Rückstand"),
        ("finances", "mein Gehalt ist {AMT} Euro und die Hälfte geht für Kredite drauf"),
        ("politics", "ich bin seit Jahren Mitglied der {PARTY} und auf der Arbeit weiß es keiner"),
        ("religion", "ich bete fünfmal am Tag und brauche bei der Arbeit einen ruhigen Raum"),
        ("health", "mein Arzt hat mir nach dem Bluttest {MED} verschrieben"),
    ],
    "fr": [
        ("mental_health", "depuis {LOSS} je n'arrive plus à dormir et je pleure presque tous les jours"),
        ("mental_health", "depuis {LOSS} plus rien ne me fait plaisir et je ne vois plus personne"),
        ("health", "j'ai beaucoup maigri sans raison et je suis tout le temps fatigué"),
        ("legal", "on m'accuse d'avoir pris de l'argent dans la caisse au travail"),
        ("children", "{REL_CHILD} a {AGE} ans et la maîtresse dit qu'il ne tient pas en place"),
        ("children", "{REL_CHILD} a {AGE} ans et fait encore pipi au lit"),
        ("finances", "j'ai {AMT} euros de dettes sur ma carte et je ne peux plus rembourser"),
        ("finances", "j'ai {AMT} euros de loyer en retard"),
        ("politics", "je suis membre du {PARTY} depuis des années et mes collègues l'ignorent"),
        ("religion", "je prie cinq fois par jour et j'ai besoin d'un endroit calme au travail"),
        ("health", "mon médecin m'a prescrit {MED} après ma prise de sang"),
    ],
    "es": [
        ("mental_health", "desde {LOSS} no duermo y lloro casi todos los días"),
        ("mental_health", "desde {LOSS} nada me hace ilusión y ya no quedo con nadie"),
        ("health", "he adelgazado mucho sin querer y estoy siempre cansado"),
        ("legal", "me acusan de haber cogido dinero de la caja en el trabajo"),
        ("children", "{REL_CHILD} tiene {AGE} años y la profesora dice que no para quieto en clase"),
        ("children", "{REL_CHILD} tiene {AGE} años y todavía moja la cama"),
        ("finances", "debo {AMT} euros de la tarjeta y no llego al pago mínimo"),
        ("finances", "llevo {AMT} euros de alquiler sin pagar"),
        ("politics", "soy militante de {PARTY} desde hace años y en el trabajo no lo saben"),
        ("religion", "rezo cinco veces al día y necesito un sitio tranquilo en el trabajo"),
        ("health", "mi médico me ha recetado {MED} después del análisis de sangre"),
    ],
    "it": [
        ("mental_health", "da quando {LOSS} non dormo e piango quasi ogni giorno"),
        ("health", "sono dimagrito molto senza motivo e sono sempre stanco"),
        ("legal", "mi accusano di aver preso soldi dalla cassa al lavoro"),
        ("children", "{REL_CHILD} ha {AGE} anni e la maestra dice che disturba sempre la classe"),
        ("children", "{REL_CHILD} ha {AGE} anni e fa ancora la pipì a letto"),
        ("finances", "ho {AMT} euro di debiti sulla carta e non riesco a pagare la rata"),
        ("finances", "sono indietro di {AMT} euro con l'affitto"),
        ("politics", "sono iscritto alla {PARTY} da anni e i colleghi non lo sanno"),
        ("health", "il medico mi ha prescritto {MED} dopo gli esami del sangue"),
    ],
    "nl": [
        ("mental_health", "sinds {LOSS} slaap ik niet meer en huil ik bijna elke dag"),
        ("health", "ik ben zonder reden veel afgevallen en ben altijd moe"),
        ("legal", "ik word ervan beschuldigd geld uit de kassa te hebben gepakt"),
        ("children", "{REL_CHILD} is {AGE} en de juf zegt dat hij niet stil kan zitten"),
        ("children", "{REL_CHILD} is {AGE} en plast nog elke nacht in bed"),
        ("finances", "ik heb {AMT} euro schuld op mijn creditcard en kan de aflossing niet betalen"),
        ("finances", "ik sta {AMT} euro achter met de huur"),
        ("politics", "ik ben al jaren lid van de {PARTY} en op mijn werk weet niemand het"),
        ("health", "mijn huisarts heeft me {MED} voorgeschreven na het bloedonderzoek"),
    ],
    "pt": [
        ("mental_health", "desde {LOSS} não durmo e choro quase todos os dias"),
        ("health", "emagreci muito sem razão e ando sempre cansado"),
        ("legal", "acusam-me de ter tirado dinheiro da caixa no trabalho"),
        ("children", "{REL_CHILD} tem {AGE} anos e a professora diz que não pára quieto na aula"),
        ("children", "{REL_CHILD} tem {AGE} anos e ainda faz xixi na cama"),
        ("finances", "devo {AMT} euros no cartão e não consigo pagar a prestação"),
        ("finances", "tenho {AMT} euros de renda em atraso"),
        ("politics", "sou militante do {PARTY} há anos e no trabalho ninguém sabe"),
        ("health", "o meu médico receitou-me {MED} depois das análises"),
    ],
}

LOSS = {
    "en": ["the divorce", "my father died", "the break-up", "I lost my job", "we lost the baby"],
    "de": ["der Trennung", "dem Tod meines Vaters", "der Scheidung", "ich meinen Job verloren habe"],
    "fr": ["le divorce", "la mort de mon père", "la rupture", "que j'ai perdu mon travail"],
    "es": ["el divorcio", "que murió mi padre", "la ruptura", "que perdí el trabajo"],
    "it": ["è morto mio padre", "ci siamo lasciati", "ho perso il lavoro"],
    "nl": ["de scheiding", "mijn vader is overleden", "ik mijn baan kwijt ben"],
    "pt": ["o divórcio", "o meu pai morreu", "perdi o emprego"],
}

CHILD = {
    "en": ["my son", "my daughter", "our boy", "our girl", "my eldest", "my youngest"],
    "de": ["mein Sohn", "meine Tochter", "unser Kleiner", "unsere Große"],
    "fr": ["mon fils", "ma fille", "notre petit"],
    "es": ["mi hijo", "mi hija", "nuestro pequeño"],
    "it": ["mio figlio", "mia figlia", "il nostro bambino"],
    "nl": ["mijn zoon", "mijn dochter", "ons zoontje"],
    "pt": ["o meu filho", "a minha filha", "o nosso pequeno"],
}
PARTY = {
    "en": ["Green Party", "Labour Party", "Conservative Party", "Liberal Democrats", "Socialist Party"],
    "de": ["Grünen", "SPD", "CDU", "Linken", "FDP"],
    "fr": ["Parti socialiste", "Parti communiste", "parti écologiste"],
    "es": ["PSOE", "Sumar", "Partido Popular"],
    "it": ["Lega", "Partito Democratico", "Sinistra Italiana"],
    "nl": ["PvdA", "VVD", "GroenLinks", "SP"],
    "pt": ["Bloco de Esquerda", "Partido Socialista", "PSD"],
}
MED = ["statins", "blood thinners", "beta blockers", "iron tablets", "thyroid tablets"]
MED_LOCAL = {
    "en": MED,
    "de": ["Statine", "Blutverdünner", "Betablocker", "Eisentabletten"],
    "fr": ["des statines", "des anticoagulants", "des bêtabloquants"],
    "es": ["estatinas", "anticoagulantes", "betabloqueantes"],
    "it": ["le statine", "gli anticoagulanti", "i betabloccanti"],
    "nl": ["statines", "bloedverdunners", "bètablokkers"],
    "pt": ["estatinas", "anticoagulantes", "betabloqueadores"],
}


def _fill(rng, locale, frame):
    slots = SLOTS[locale]
    text = frame
    for key in ("REL", "PLACE", "N", "GADGET"):
        while "{" + key + "}" in text:
            text = text.replace("{" + key + "}", rng.choice(slots[key]), 1)
    text = (text.replace("{REL_CHILD}", rng.choice(CHILD[locale]))
            .replace("{AGE}", str(rng.randint(2, 16)))
            .replace("{AMT}", rng.choice([f"{rng.randint(2, 60)},{rng.randint(0, 9)}00", f"{rng.randint(3, 95)}00"]))
            .replace("{PARTY}", rng.choice(PARTY[locale]))
            .replace("{MED}", rng.choice(MED_LOCAL[locale]))
            .replace("{LOSS}", rng.choice(LOSS[locale])))
    return text[0].upper() + text[1:]


def benign_sentence(rng, locale):
    frame = rng.choice(BENIGN[locale])
    return f"{_fill(rng, locale, frame)}, {rng.choice(REQUESTS[locale])}", frame


def everyday_sample(rng, locale, sensitive_share=0.3):
    """(text, labels, template id): a benign first-person request, or a sensitive statement
    (sometimes after a benign sentence, so the detail, not the frame, carries the label)."""
    if rng.random() >= sensitive_share:
        text, frame = benign_sentence(rng, locale)
        return text, [], frame
    topic, frame = rng.choice(SENSITIVE[locale])
    text = _fill(rng, locale, frame) + "."
    if rng.random() < 0.3:
        text = benign_sentence(rng, locale)[0] + " " + text
    return text, [topic], frame
