"""A generated world for the retrieval bench: documents, the graph extraction would write, questions.

Deterministic (seeded). People work at companies, companies are based in cities, cities have a
population in an almanac's table; every fact is one sentence (or one table row) of one document,
surrounded by filler prose that names other people, companies and cities, so words alone do not
give the answer away. Each question carries its gold evidence: the exact character spans that
hold the facts it needs. Kinds: single fact, paraphrased wording, 2 hops, 3 hops, comparison, a
fact in a table row, and questions the documents cannot answer.

Fact sentences are worded so that a reading extraction model (tests/fakes/extraction_reader.py)
can read the employment and founding clauses; headcounts and the almanac's table rows are left
for retrieval to find without a graph edge. ``objects``/``relations``/``evidence`` are the graph a
perfect extraction would write: an upper bound only; the bench's graph comes from extraction.
Every question is in the tuning half or the held-out half (alternating within its kind).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

FIRST = ["Ada", "Bruno", "Clara", "Dmitri", "Elena", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Keiko",
         "Lars", "Mira", "Nils", "Olga", "Pavel"]
LAST = ["Varga", "Okafor", "Lindqvist", "Moreau", "Tanaka", "Brandt", "Silva", "Novak", "Haddad", "Keller",
        "Rossi", "Petrov", "Quinn", "Amari", "Dahl", "Sato"]
COMPANIES = ["Northwind Labs", "Copperleaf Foods", "Bluestone Freight", "Halcyon Optics", "Redfern Mills",
             "Sablewood Press", "Ironbridge Works", "Lumen Textiles"]
CITIES = ["Tallinn", "Porto", "Ghent", "Bergen", "Lyon", "Krakow", "Trieste", "Aarhus"]
FOUNDERS = ["Tomas Wirth", "Anja Leclerc", "Emil Varsi", "Sofia Brun", "Karel Jansen", "Marta Lund",
            "Oskar Fenn", "Leah Morrow"]
FILL = 3  # filler sentences per slot: documents of 5,000-7,000 characters
ROLES = ["chief engineer", "head of sales", "lead chemist", "finance director", "plant manager", "chief designer"]
FILLER = [
    "The winter that year was long, and the river froze as far as the old weir near {city}.",
    "{person} was often seen at the market on Saturdays, buying bread and newspapers.",
    "Visitors to {city} remember the trams, the bridges and the smell of the bakeries.",
    "A report on {company} praised its apprentices, though it said little about its accounts.",
    "Many letters from that decade survive in the archive, most of them about the weather.",
    "The museum in {city} keeps a collection of clocks, maps and ship models.",
    "{person} once wrote that a good workshop is a quiet one, with the tools put back.",
    "Rail links between the towns improved slowly, and the roads stayed poor until much later.",
    "An exhibition about {company} toured three countries and drew modest crowds.",
    "Local choirs, football clubs and reading societies flourished in {city} at the time.",
]


@dataclass
class Doc:
    name: str
    text: str = ""
    spans: dict[str, tuple[int, int]] = field(default_factory=dict)  # fact key → span

    def add(self, sentence: str, key: str | None = None) -> None:
        if self.text:
            self.text += " " if not self.text.endswith("\n") else ""
        start = len(self.text)
        self.text += sentence
        if key is not None:
            self.spans[key] = (start, len(self.text))

    def para(self) -> None:
        self.text += "\n\n"


@dataclass(frozen=True)
class Question:
    kind: str  # single, paraphrase, hop2, hop3, comparison, table, unanswerable
    text: str
    gold: tuple[tuple[str, int, int], ...]  # (document name, start, end)
    held_out: bool = False  # reported on; weights are chosen on the others


@dataclass
class World:
    docs: list[Doc]
    questions: list[Question]
    objects: list[tuple[str, str]]  # (type, name)
    relations: list[tuple[str, str, str, str]]  # (type, source name, target name, fact key)
    object_facts: list[tuple[str, str]]  # (object name, fact key): a property's evidence (staff, population)
    evidence: dict[str, tuple[str, int, int]]  # fact key → (document name, start, end)


def build(seed: int = 7) -> World:
    rnd = random.Random(seed)
    people = [f"{f} {l}" for f, l in zip(FIRST, LAST)]
    employer = {p: COMPANIES[i % len(COMPANIES)] for i, p in enumerate(people)}
    role = {p: ROLES[i % len(ROLES)] for i, p in enumerate(people)}
    joined = {p: 1950 + rnd.randrange(40) for p in people}
    base = {c: CITIES[i] for i, c in enumerate(COMPANIES)}
    staff = {c: 200 + rnd.randrange(4800) for c in COMPANIES}
    population = {c: 50_000 + rnd.randrange(900_000) for c in CITIES}
    founded = {c: 900 + rnd.randrange(800) for c in CITIES}
    founder = dict(zip(COMPANIES, FOUNDERS))
    founded_firm = {c: 1850 + rnd.randrange(80) for c in COMPANIES}

    def filler(doc: Doc, n: int) -> None:
        for _ in range(n * FILL):
            doc.add(rnd.choice(FILLER).format(person=rnd.choice(people), company=rnd.choice(COMPANIES),
                                              city=rnd.choice(CITIES)))

    docs: list[Doc] = []
    where: dict[str, str] = {}  # fact key → document name
    for i in range(0, len(people), 2):  # eight biographies, two people each
        doc = Doc(f"biographies-{i // 2 + 1}.txt")
        for p in people[i:i + 2]:
            doc.text += f"{p}\n\n" if not doc.text else f"\n\n{p}\n\n"
            filler(doc, 3)
            doc.add(f"{p} joined the {employer[p]} as its {role[p]}. That was in {joined[p]}.", f"works:{p}")
            filler(doc, 4)
            doc.para()
            filler(doc, 3)
            where[f"works:{p}"] = doc.name
        docs.append(doc)
    for i in range(0, len(COMPANIES), 2):  # four company histories
        doc = Doc(f"companies-{i // 2 + 1}.txt")
        for c in COMPANIES[i:i + 2]:
            doc.text += f"{c}\n\n" if not doc.text else f"\n\n{c}\n\n"
            filler(doc, 4)
            doc.add(f"In {founded_firm[c]} {founder[c]} founded the {c} in {base[c]}.", f"base:{c}")
            filler(doc, 3)
            doc.para()
            doc.add(f"By the end of the decade {c} employed {staff[c]:,} people.", f"staff:{c}")
            filler(doc, 4)
            where[f"base:{c}"] = where[f"staff:{c}"] = doc.name
        docs.append(doc)
    almanac = Doc("almanac.md")
    almanac.add("# City almanac")
    almanac.para()
    filler(almanac, 4)
    almanac.para()
    almanac.text += "| City | Population | Founded |\n|---|---|---|\n"
    for c in CITIES:
        start = len(almanac.text)
        almanac.text += f"| {c} | {population[c]:,} | {founded[c]} |\n"
        almanac.spans[f"pop:{c}"] = (start, len(almanac.text) - 1)
        where[f"pop:{c}"] = almanac.name
    almanac.para()
    filler(almanac, 5)
    docs.append(almanac)
    for n in range(3):  # unrelated travel notes: more text to search through
        doc = Doc(f"travel-notes-{n + 1}.txt")
        for _ in range(4):
            filler(doc, 6)
            doc.para()
        docs.append(doc)

    by_name = {d.name: d for d in docs}

    def gold(*keys: str) -> tuple[tuple[str, int, int], ...]:
        return tuple((where[k], *by_name[where[k]].spans[k]) for k in keys)

    qs: list[Question] = []
    for p in people:
        qs.append(Question("single", f"In what year did {p} join the {employer[p]}?", gold(f"works:{p}")))
    for p in people:
        qs.append(Question("paraphrase", f"Which firm hired {p}, and in what position?", gold(f"works:{p}")))
    for c in COMPANIES:
        qs.append(Question("paraphrase", f"How large was the workforce of {c}?", gold(f"staff:{c}")))
    for p in people:
        qs.append(Question("hop2", f"In which city is the employer of {p} based?",
                           gold(f"works:{p}", f"base:{employer[p]}")))
    for p in people:
        c = employer[p]
        qs.append(Question("hop3", f"How many inhabitants does the city have where {p}'s employer is based?",
                           gold(f"works:{p}", f"base:{c}", f"pop:{base[c]}")))
    for i, a in enumerate(COMPANIES):
        for step in (1, 3):
            b = COMPANIES[(i + step) % len(COMPANIES)]
            qs.append(Question("comparison", f"Which employed more people, {a} or {b}?",
                               gold(f"staff:{a}", f"staff:{b}")))
    for c in CITIES:
        qs.append(Question("table", f"What is the population of {c}?", gold(f"pop:{c}")))
        qs.append(Question("table", f"In what year was the city of {c} founded?", gold(f"pop:{c}")))
    for p in people:
        qs.append(Question("unanswerable", f"What was the name of {p}'s first dog?", ()))
    seen: dict[str, int] = {}
    for i, q in enumerate(qs):
        seen[q.kind] = seen.get(q.kind, 0) + 1
        qs[i] = Question(q.kind, q.text, q.gold, held_out=seen[q.kind] % 2 == 0)

    objects = [("Person", p) for p in people] + [("Person", f) for f in FOUNDERS] + \
              [("Organization", c) for c in COMPANIES] + [("City", c) for c in CITIES]
    relations = [("works_at", p, employer[p], f"works:{p}") for p in people] + \
                [("based_in", c, base[c], f"base:{c}") for c in COMPANIES]
    object_facts = [(c, f"staff:{c}") for c in COMPANIES] + [(c, f"pop:{c}") for c in CITIES]
    evidence = {k: (where[k], *by_name[where[k]].spans[k]) for k in where}
    return World(docs=docs, questions=qs, objects=objects, relations=relations, object_facts=object_facts,
                 evidence=evidence)
