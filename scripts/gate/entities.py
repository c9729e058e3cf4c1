"""Fillers for the templates: names, places, organisations, and the hard negatives.

Names come partly from the runtime gazetteers and partly from UNSEEN lists the tagger never
sees as gazetteer entries, so it has to learn context and shape, not just the lists. The
UNSEEN lists are split in half: the first half trains, the second only appears in evaluation.
"""

import random

from features import GAZ_DIR, _read_list

GAZ_FIRST = _read_list("first_names.txt")
GAZ_LAST = _read_list("surnames.txt")
GAZ_PLACES = _read_list("places.txt")
PUBLIC = _read_list("public_names.txt")

UNSEEN_FIRST = [
    "Brennan", "Kaylee", "Torsten", "Wiebke", "Gwenaëlle", "Maëlys", "Iñaki", "Ainhoa", "Ettore",
    "Ludovica", "Wessel", "Jorien", "Gaspar", "Iara", "Cem", "Dilara", "Tariq", "Rania", "Bogdan",
    "Zofia", "Arnav", "Kavya", "Jun", "Mei", "Obinna", "Folake", "Siobhan", "Oisín", "Rasmus",
    "Astrid", "Imke", "Hauke", "Solène", "Enzo", "Xabier", "Nerea", "Ottavio", "Benedetta",
    "Hidde", "Roos", "Tomás", "Leonel", "Baran", "Eylül", "Anouar", "Salma", "Mateusz", "Zuzanna",
    "Aditya", "Ishaan", "Tao", "Lian", "Emeka", "Yetunde", "Declan", "Niamh", "Björn", "Freja",
]
UNSEEN_LAST = [
    "Ashworth", "Pemberton", "Kettler", "Brinkmann", "Ostendorf", "Leclercq", "Vasseur",
    "Echeverría", "Arrieta", "Zanetti", "Bellandi", "Hoekstra", "Zwart", "Quaresma", "Valadares",
    "Korkmaz", "Aksoy", "El-Amin", "Bouzid", "Zieliński", "Dąbrowski", "Chaudhary", "Menon",
    "Xu", "Gao", "Nwosu", "Eze", "Gallagher", "Byrne", "Lindqvist", "Sandberg", "Tiedemann",
    "Harms", "Marchand", "Poulain", "Goikoetxea", "Urrutia", "Pellegrini", "Sartori", "Wijnands",
    "Verbruggen", "Magalhães", "Pacheco", "Erdoğan", "Kılıç", "Haddadi", "Benali", "Wróbel",
    "Mazur", "Banerjee", "Pillai", "Lin", "Tang", "Obi", "Afolabi", "Doherty", "Kavanagh",
    "Holmberg", "Nyström",
]
UNSEEN_PLACES = [
    "Kleinmachnow", "Bad Homburg", "Wolfenbüttel", "Zwickau", "Villefranche-sur-Saône", "Annecy",
    "Quimper", "Alcobendas", "Getafe", "Ponferrada", "Castelfranco", "Lecco", "Pordenone",
    "Zoetermeer", "Amersfoort", "Deventer", "Vila Nova de Gaia", "Aveiro", "Viseu", "Bury",
    "Stockport", "Ithaca", "Boise", "Sankt Pölten", "Winterthur", "Aarhus", "Tampere", "Gdańsk",
    "Brno", "Cluj-Napoca", "Plovdiv", "Esbjerg", "Namur", "Eupen", "Gouda", "Leer", "Celle",
    "Vannes", "Cuenca", "Lugo", "Matera", "Treviso", "Zwolle", "Évora", "Guimarães", "Bath",
]
BRANDS = _read_list("organisations.txt")
LEGAL = ["GmbH", "AG", "Inc.", "Ltd", "LLC", "SA", "SAS", "SARL", "S.p.A.", "Srl", "BV", "NV", "Lda", "PLC", "GmbH & Co. KG"]
ORG_WORDS = ["Solutions", "Systems", "Consulting", "Logistics", "Software", "Bau", "Technik", "Partners", "Immobilien", "Services", "Digital", "Media"]
INSTITUTIONS = [
    "University of {C}", "Universität {C}", "Université de {C}", "Universidad de {C}", "Università di {C}",
    "Universiteit {C}", "Universidade de {C}", "Klinikum {C}", "Hôpital de {C}", "Hospital de {C}",
    "Ospedale di {C}", "Ziekenhuis {C}", "Stadtwerke {C}", "Sparkasse {C}", "{C} City Council",
]
PRODUCTS = [
    "iPhone 15 Pro", "Galaxy S24", "Pixel 8", "ThinkPad X1 Carbon", "PlayStation 5", "Xbox Series X",
    "MacBook Air", "Kindle Paperwhite", "AirPods Pro", "Model Y", "Golf GTI", "Thermomix TM6",
    "Dyson V15", "Surface Pro 9", "Nintendo Switch", "Fairphone 5", "Roomba j7", "Apple Watch Ultra",
    "Clio E-Tech", "Vespa Primavera",
]
FICTIONAL = [p for p in PUBLIC if p in {
    "Harry Potter", "Hermione Granger", "Sherlock Holmes", "Frodo Baggins", "Gandalf", "Luke Skywalker",
    "Darth Vader", "James Bond", "Tony Stark", "Elizabeth Bennet", "Don Quijote", "Madame Bovary",
    "Anna Karenina", "Pippi Langstrumpf", "Asterix", "Tintin", "Homer Simpson", "Jon Snow",
    "Hercule Poirot", "Atticus Finch", "Ebenezer Scrooge", "Walter White", "Daenerys Targaryen"}]
PUBLIC_FIGURES = [p for p in PUBLIC if p not in FICTIONAL]


def half(xs, heldout):
    mid = len(xs) // 2
    return xs[mid:] if heldout else xs[:mid]


class Filler:
    """Draws slot values; `heldout` selects the evaluation halves of the UNSEEN lists."""

    def __init__(self, rng: random.Random, heldout: bool):
        self.rng = rng
        # Training also uses invented names; evaluation only real ones.
        self.synthetic = not heldout
        # Evaluation names mix gazetteer entries with names the model has never seen.
        self.first = GAZ_FIRST + half(UNSEEN_FIRST, heldout) * 3
        self.last = GAZ_LAST + half(UNSEEN_LAST, heldout) * 3
        self.places = GAZ_PLACES + half(UNSEEN_PLACES, heldout) * 3
        # Institutions are named after towns, not countries ("Universität Köln").
        cities = GAZ_PLACES[: GAZ_PLACES.index("Kyiv") + 1]
        self.cities = cities + half(UNSEEN_PLACES, heldout) * 3

    def invented(self):
        """A pronounceable name that is on no list, so the tagger must learn the context."""
        syl = ["ba", "lo", "ren", "ka", "mi", "tor", "vel", "sa", "dri", "no", "ga", "lin", "ze", "mar", "tu", "bek", "ho", "ria", "sten", "ul"]
        word = "".join(self.rng.choice(syl) for _ in range(self.rng.randint(2, 3)))
        return word.capitalize()

    def place(self):
        if self.synthetic and self.rng.random() < 0.25:
            return self.invented() + self.rng.choice(["burg", "dorf", "ville", "ham", "stad", "ona", "hausen", "ford", "polis", ""])
        return self.rng.choice(self.places)

    def first_name(self):
        return self.invented() if self.synthetic and self.rng.random() < 0.3 else self.rng.choice(self.first)

    def last_name(self):
        return self.invented() if self.synthetic and self.rng.random() < 0.3 else self.rng.choice(self.last)

    def person(self):
        r = self.rng.random()
        f, l = self.first_name(), self.last_name()
        if r < 0.65:
            name = f"{f} {l}"
        elif r < 0.75:
            name = f"{f} {self.first_name()} {l}"
        else:
            name = f
        if self.rng.random() < 0.04:
            name = name.lower()
        return name

    def org(self):
        r = self.rng.random()
        if r < 0.35:
            return self.rng.choice(BRANDS)
        if r < 0.65:
            return self.rng.choice(INSTITUTIONS).replace("{C}", self.rng.choice(self.cities))
        if r < 0.85:
            return f"{self.rng.choice(self.last)} {self.rng.choice(LEGAL)}"
        return f"{self.rng.choice(self.last)} {self.rng.choice(ORG_WORDS)} {self.rng.choice(LEGAL)}"

    def isbn(self):
        digits = [9, 7, 8] + [self.rng.randrange(10) for _ in range(9)]
        check = (10 - sum(d * (1 if i % 2 == 0 else 3) for i, d in enumerate(digits)) % 10) % 10
        d = "".join(map(str, digits + [check]))
        return f"{d[:3]}-{d[3]}-{d[4:6]}-{d[6:12]}-{d[12]}" if self.rng.random() < 0.7 else d

    def code(self):
        letters = "ABCDEFGHJKLMNPQRSTUVWXYZ"
        a = "".join(self.rng.choice(letters) for _ in range(self.rng.randint(2, 3)))
        return f"{a}-{self.rng.randint(1000, 99999)}-{self.rng.choice(letters)}"

    def fill(self, template, kinds):
        """Returns (text, spans) with spans as (start_byte, end_byte, category)."""
        out, spans = "", []
        i = 0
        while i < len(template):
            if template[i] == "{":
                j = template.index("}", i)
                slot = template[i + 1 : j]
                value, cat = self.slot(slot)
                start = len(out.encode("utf-8"))
                out += value
                if cat in kinds:
                    spans.append((start, len(out.encode("utf-8")), cat))
                i = j + 1
            else:
                out += template[i]
                i += 1
        return out, spans

    def slot(self, slot):
        rng = self.rng
        if slot == "P":
            return self.person(), "person"
        if slot == "PF":
            return self.first_name(), "person"
        if slot == "PS":
            return self.last_name(), "person"
        if slot == "L":
            return self.place(), "location"
        if slot == "O":
            return self.org(), "organization"
        if slot == "PUB":
            return rng.choice(PUBLIC_FIGURES), None
        if slot == "FIC":
            return rng.choice(FICTIONAL), None
        if slot == "PROD":
            return rng.choice(PRODUCTS), None
        if slot == "ISBN":
            return self.isbn(), None
        if slot == "CODE":
            return self.code(), None
        if slot == "N":
            return str(rng.randint(2019, 2026)), None
        raise KeyError(slot)
