"""Compositional sentences for the names tagger: a verb phrase, an entity phrase and a tail,
drawn independently, so that the tagger meets names in many more contexts than whole-sentence
templates give and cannot just memorise the words around a slot.

Slots as in names_templates.py. The last HELDOUT entries of every fragment list are reserved
for the evaluation corpus.
"""

FRAGMENTS = {
    "en": {
        "lead": ["Remind", "Tell", "Ask", "Email", "Call", "Thank", "Invite", "Please ask", "Can you remind",
                 "Could you email", "Write a note to", "Send the slides to", "Schedule a call with", "Book a table for",
                 "Forward this to", "Reply to", "Please thank", "Can you ping", "Let", "Warn", "Notify", "Update", "Meet", "Congratulate", "Text", "Apologise to", "Introduce me to"],
        "who": ["{P}", "{P}", "{P}", "my colleague {P}", "{P} from {O}", "{P} at {O}", "my sister {PF}", "my boss {P}",
                "our new hire {P}", "Mr {PS}", "Ms {PS}", "Dr {PS}", "Dr. {P}", "Prof. {PS}", "Mrs {P}", "Sir {P}",
                "{P}, who lives in {L},", "{P} ({O})", "{PF} and {PF}", "{P} and {P}", "the {PS} family", "Uncle {PF}", "Aunt {PF}", "{PF}", "{P} in {L}", "coach {PS}", "Professor {PS}"],
        "tail": ["that the meeting moved to Tuesday.", "about the invoice.", "that the offsite in {L} starts at nine.",
                 "about the contract with {O}.", "that I will be late.", "about dinner on Friday.", "and say thanks for the help.",
                 "that the parcel arrived.", "about the trip to {L}.", "that {O} approved the budget.", "before noon.", "that {PF} can't come.", "about {P}'s farewell party.", "that we moved to {L}.",
                 "that the office in {L} is closed.", "about the {O} account.", "that {P} will call back.",
                 "about the flat in {L}.", "and mention the {PROD} is broken.", "that {PF} says hi."],
    },
    "de": {
        "lead": ["Erinnere", "Sag", "Frag", "Schreib", "Ruf", "Bedank dich bei", "Lade", "Bitte frag", "Kannst du",
                 "Schick die Folien an", "Informiere", "Benachrichtige", "Bitte erinnere", "Triff", "Vereinbare einen Termin mit", "Leite das an", "Antworte", "Gratuliere"],
        "who": ["{P}", "{P}", "meinen Kollegen {P}", "{P} von der {O}", "{P} bei {O}", "meine Schwester {PF}", "meinen Chef {P}",
                "Herrn {PS}", "Frau {PS}", "Dr. {PS}", "Herrn Dr. {P}", "Frau {P}", "{P} und {P}", "{P}, die in {L} wohnt,", "Onkel {PF}", "Tante {PF}", "{PF}", "{P} aus {L}", "Professorin {PS}"],
        "tail": ["daran, dass das Meeting auf Dienstag verschoben ist.", "wegen der Rechnung.", "dass {PF} nicht kommen kann.", "dass wir nach {L} umgezogen sind.", "wegen des {O}-Kontos.", "wegen des Vertrags mit der {O}.",
                 "dass ich später komme.", "wegen des Abendessens am Freitag.", "dass das Paket angekommen ist.",
                 "wegen der Reise nach {L}.", "dass die {O} das Budget freigegeben hat.", "vor zwölf Uhr.",
                 "wegen der Wohnung in {L}.", "dass das {PROD} kaputt ist.", "dass {PF} grüßen lässt."],
    },
    "fr": {
        "lead": ["Rappelle à", "Dis à", "Demande à", "Écris à", "Appelle", "Remercie", "Invite", "Transfère ceci à", "Réponds à"],
        "who": ["{P}", "{P}", "mon collègue {P}", "{P} de {O}", "ma sœur {PF}", "mon chef {P}", "Monsieur {PS}", "Madame {PS}",
                "le docteur {PS}", "{PF}", "{P} à {L}"],
        "tail": ["que la réunion est déplacée à mardi.", "pour la facture.", "pour le contrat avec {O}.", "que je serai en retard.",
                 "pour le dîner de vendredi.", "que le colis est arrivé.", "pour le voyage à {L}.", "avant midi.",
                 "pour l'appartement à {L}."],
    },
    "es": {
        "lead": ["Recuérdale a", "Dile a", "Pregúntale a", "Escribe a", "Llama a", "Dale las gracias a", "Invita a", "Reenvía esto a", "Responde a"],
        "who": ["{P}", "{P}", "mi compañero {P}", "{P} de {O}", "mi hermana {PF}", "mi jefe {P}", "el señor {PS}", "la señora {PS}",
                "la doctora {PS}", "{PF}", "{P} en {L}"],
        "tail": ["que la reunión pasa al martes.", "lo de la factura.", "lo del contrato con {O}.", "que llegaré tarde.",
                 "lo de la cena del viernes.", "que el paquete ha llegado.", "lo del viaje a {L}.", "antes del mediodía.",
                 "lo del piso en {L}."],
    },
    "it": {
        "lead": ["Ricorda a", "Di' a", "Chiedi a", "Scrivi a", "Chiama", "Ringrazia", "Invita", "Inoltra questo a", "Rispondi a"],
        "who": ["{P}", "{P}", "il mio collega {P}", "{P} di {O}", "mia sorella {PF}", "il mio capo {P}", "il signor {PS}",
                "la signora {PS}", "la dottoressa {PS}", "{PF}", "{P} a {L}"],
        "tail": ["che la riunione è spostata a martedì.", "per la fattura.", "per il contratto con {O}.", "che farò tardi.",
                 "per la cena di venerdì.", "che il pacco è arrivato.", "per il viaggio a {L}.", "prima di mezzogiorno."],
    },
    "nl": {
        "lead": ["Herinner", "Zeg tegen", "Vraag", "Schrijf", "Bel", "Bedank", "Nodig", "Stuur dit door naar", "Antwoord"],
        "who": ["{P}", "{P}", "mijn collega {P}", "{P} van {O}", "mijn zus {PF}", "mijn baas {P}", "meneer {PS}", "mevrouw {PS}",
                "dokter {PS}", "{PF}", "{P} in {L}"],
        "tail": ["dat de vergadering naar dinsdag is verplaatst.", "over de factuur.", "over het contract met {O}.",
                 "dat ik later kom.", "over het etentje op vrijdag.", "dat het pakket is aangekomen.", "over de reis naar {L}.",
                 "voor twaalf uur."],
    },
    "pt": {
        "lead": ["Lembra", "Diz ao", "Pergunta ao", "Escreve ao", "Liga ao", "Agradece ao", "Convida", "Reencaminha isto para", "Responde ao"],
        "who": ["{P}", "{P}", "meu colega {P}", "{P} da {O}", "minha irmã {PF}", "meu chefe {P}", "senhor {PS}", "senhora {PS}",
                "doutora {PS}", "{PF}", "{P} em {L}"],
        "tail": ["que a reunião passou para terça.", "sobre a fatura.", "sobre o contrato com a {O}.", "que vou chegar atrasado.",
                 "sobre o jantar de sexta.", "que a encomenda chegou.", "sobre a viagem a {L}.", "antes do meio-dia."],
    },
}
HELDOUT = 2


def compose(rng, locale, heldout):
    parts = FRAGMENTS[locale]

    def pick(xs):
        return rng.choice(xs[-HELDOUT:] if heldout else xs[:-HELDOUT])

    return f"{pick(parts['lead'])} {pick(parts['who'])} {pick(parts['tail'])}"
