"""A generated archive — letters, minutes, a register, telegrams, an encyclopedia page, e-mails —
written with the names real collections have, and its exact gold.

Each document is rendered (Markdown, DOCX, PDF, HTML) with every mention's span and every fact's
sentence recorded as it is written (``tests/extraction/world.py``'s marks: ``[[P_ward|Captain
Ward]]``); ``world.check_against_reader`` reads each file back with the app's reader, so the gold is
exact by construction. What the archive holds, on purpose:

- a person by full name, surname alone, initials ("K. Lind"), with a title ("Herr Schmidt",
  "Captain Ward"), a nickname given once ("known as Nell"), inverted in the register ("Lind, Karin");
- transliterations (Søren Håkonsen / Soeren Haakonsen / Soren Hakonsen, Lena Müller / Lena Mueller,
  Østberg / Oestberg) and another script (Иван Петров for Ivan Petrov);
- an exonym (Leghorn for Livorno, said once as "Leghorn (Livorno)"); telegraph capitals without
  diacritics; short firm forms ("Smith Mech. Works", "S.S. Co."); an event under another name;
  a typo in one document ("Okonkow");
- two people with one name (Alex Morgan the painter, Alex Morgan the senator), three people sharing a
  surname (Karin, Erik and Ingrid Lind); one word for a place, a ship and a bank (Veloria);
- running headers and footers on every PDF page (the printer "Halvorsen & Sons" only there) and site
  chrome in the HTML; the same fact in several documents; a quote that occurs twice in one document.

Nothing here is shown to the fake model: it is sent only the parts (tests/fakes/extraction_reader.py).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

from tests.extraction.world import (DocSpec, GoldEntity, Mention, Rendered, RenderedSentence, Section, Sentence,
                                    World, _plain, _wrap, check_against_reader, pdf_bytes)

ENTITIES: list[GoldEntity] = [
    GoldEntity("P_okonkwo", "Marguerite Okonkwo", "Person", "railway founder"),
    GoldEntity("P_lind_karin", "Karin Lind", "Person", "archivist"),
    GoldEntity("P_lind_erik", "Erik Lind", "Person", "harbour pilot"),
    GoldEntity("P_lind_ingrid", "Ingrid Lind", "Person", "historian"),
    GoldEntity("P_morgan_painter", "Alex Morgan", "Person", "painter"),
    GoldEntity("P_morgan_senator", "Alex Morgan", "Person", "senator"),
    GoldEntity("P_schmidt", "Johann Schmidt", "Person", "engineer"),
    GoldEntity("P_ward", "Thomas Ward", "Person", "ship's captain"),
    GoldEntity("P_hakonsen", "Søren Håkonsen", "Person", "shipowner"),
    GoldEntity("P_petrov", "Ivan Petrov", "Person", "merchant"),
    GoldEntity("P_muller", "Lena Müller", "Person", "translator"),
    GoldEntity("P_dubois", "Hélène Dubois", "Person", "museum director"),
    GoldEntity("C_veloria", "Veloria", "Place", "city"),
    GoldEntity("C_livorno", "Livorno", "Place", "port"),
    GoldEntity("C_ostberg", "Østberg", "Place", "town"),
    GoldEntity("S_veloria", "Veloria", "Ship", "steamer"),
    GoldEntity("S_aurora", "Aurora", "Ship", "barque"),
    GoldEntity("O_nrc", "Northern Rail Company", "Organization", "railway company"),
    GoldEntity("O_bank", "Veloria Savings Bank", "Organization", "bank"),
    GoldEntity("O_smith", "Smith Mechanical Works", "Organization", "engine works"),
    GoldEntity("O_sss", "Southern Steamship Company", "Organization", "shipping line"),
    GoldEntity("O_guild", "Painters Guild", "Organization", "guild"),
    GoldEntity("E_strike", "Great Rail Strike", "Event", "labour dispute"),
]
BOILERPLATE_ONLY = ("Halvorsen & Sons",)  # named only in the register's running footer

_FIRST = ["Anneli", "Bruno", "Cecilia", "Dario", "Elif", "Farid", "Greta", "Hollis", "Ines", "Jarek", "Kaito",
          "Leona", "Matteo", "Nadia", "Oskar", "Priya", "Quentin", "Rasa", "Talia", "Umar", "Vera", "Wendel"]
_LAST = ["Achterberg", "Brannigan", "Castellanos", "Dunmore", "Fairweather", "Grunewald", "Jablonski", "Kowalczyk",
         "Marchetti", "Nakashima", "Oyelaran", "Pemberton", "Quimby", "Rautenberg", "Szabo", "Thorvaldsen",
         "Underhill", "Valcourt", "Whitacre"]
_JOBS = ["clerk", "surveyor", "stonemason", "conductor", "telegraphist", "architect", "chemist", "signalman"]
_TOWNS = ["Dunmark", "Fennick", "Grayport", "Harrowgate", "Jorvale", "Korrin", "Lastwater", "Moravel"]
_ORGS = ["O_nrc", "O_bank", "O_smith"]


@dataclass
class ArchiveRendered(Rendered):
    """A rendered document and the spans of its boilerplate (running lines, site chrome)."""

    boilerplate: list[tuple[int, int]] = field(default_factory=list)


def _people(rng: random.Random, count: int, entities: dict[str, GoldEntity], used: set[str],
            register: bool = False) -> list[Sentence]:
    """Filler people with a job and a home town (a register writes them inverted, "Surname, First")."""
    towns = []
    for town in _TOWNS:
        ident = "C_" + town.casefold()
        entities.setdefault(ident, GoldEntity(ident, town, "Place", "town"))
        towns.append(ident)
    out: list[Sentence] = []
    while len(out) < count:
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        name = f"{first} {last}"
        if name in used or len(used) > len(_FIRST) * len(_LAST) - 5:
            if len(used) > len(_FIRST) * len(_LAST) - 5:
                raise ValueError("the archive has no more distinct names")
            continue
        used.add(name)
        ident = "X_" + re.sub(r"\W", "_", name.casefold())
        job, town, org = rng.choice(_JOBS), rng.choice(towns), rng.choice(_ORGS)
        entities[ident] = GoldEntity(ident, name, "Person", job)
        if register:
            out.append(Sentence(f"[[{ident}|{last}, {first}]], {job}, born in [[{town}]].", [(ident, "born_in", town)]))
        else:
            out.append(Sentence(f"[[{ident}]], a {job} born in [[{town}]], worked for the [[{org}]].",
                                [(ident, "born_in", town), (ident, "works_at", org)]))
    return out


def make_archive(seed: int = 11, extras_per_doc: int = 30) -> World:
    rng = random.Random(seed)
    entities = {e.id: e for e in ENTITIES}
    used = {e.name for e in ENTITIES}
    S = Sentence

    def filler(register: bool = False) -> list[list[Sentence]]:
        people = _people(rng, extras_per_doc, entities, used, register)
        return [people[i:i + 4] for i in range(0, len(people), 4)]

    quote_twice = S("[[P_okonkwo|Mrs Okonkwo]] wrote to [[P_schmidt|Herr Schmidt]] about the [[E_strike]].",
                    [("P_okonkwo", "wrote_to", "P_schmidt"), ("P_okonkwo", "wrote_about", "E_strike")])
    letters = DocSpec("letters.md", "Letters of the Northern Rail Company", [
        Section("To Johann Schmidt, 1888", [
            [S("In 1871 [[P_okonkwo]] founded the [[O_nrc]] in [[C_veloria]].",
               [("P_okonkwo", "founded", "O_nrc"), ("O_nrc", "located_in", "C_veloria")]),
             S("[[P_schmidt]], an engineer born in [[C_ostberg]], worked for the [[O_smith]].",
               [("P_schmidt", "born_in", "C_ostberg"), ("P_schmidt", "works_at", "O_smith")]),
             S("[[P_schmidt|Herr Schmidt]] was a member of the [[O_nrc]].", [("P_schmidt", "member_of", "O_nrc")])],
            [S("[[P_lind_karin]], an archivist born in [[C_veloria]], worked for the [[O_bank]].",
               [("P_lind_karin", "born_in", "C_veloria"), ("P_lind_karin", "works_at", "O_bank")]),
             S("[[P_lind_karin|K. Lind]] wrote to [[P_okonkwo|Mrs Okonkwo]] about the [[E_strike]].",
               [("P_lind_karin", "wrote_to", "P_okonkwo"), ("P_lind_karin", "wrote_about", "E_strike")])],
        ]),
        Section("From the harbour", [
            [S("[[P_lind_erik]], a pilot born in [[C_livorno|Leghorn (Livorno)]], worked for the [[O_sss]].",
               [("P_lind_erik", "born_in", "C_livorno"), ("P_lind_erik", "works_at", "O_sss")]),
             S("[[P_ward]] was captain of the [[S_veloria]].", [("P_ward", "captain_of", "S_veloria")]),
             S("The [[S_veloria]] sailed to [[C_livorno|Leghorn]].", [("S_veloria", "sailed_to", "C_livorno")]),
             S("[[P_lind_erik|Lind]] was a member of the [[O_guild]].", [("P_lind_erik", "member_of", "O_guild")])],
            [quote_twice],
        ]),
        Section("Clerks of the company", filler()),
        Section("A copy kept", [[quote_twice]]),
    ])
    minutes = DocSpec("minutes.docx", "Minutes of the board", [
        Section("Meeting of 3 May 1890", [
            [S("[[P_okonkwo|M. Okonkow]] was a member of the [[O_bank]].", [("P_okonkwo", "member_of", "O_bank")]),
             S("The [[O_bank]] financed the [[O_nrc]].", [("O_bank", "financed", "O_nrc")]),
             S("[[P_morgan_senator]], a senator born in [[C_veloria]], worked for the [[O_nrc]].",
               [("P_morgan_senator", "born_in", "C_veloria"), ("P_morgan_senator", "works_at", "O_nrc")]),
             S("[[P_morgan_senator|Alex Morgan]] opposed the [[E_strike|Rail Strike of 1890]].",
               [("P_morgan_senator", "opposed", "E_strike")])],
            [S("[[P_morgan_painter]], a painter born in [[C_ostberg|Ostberg]], worked for the [[O_guild]].",
               [("P_morgan_painter", "born_in", "C_ostberg"), ("P_morgan_painter", "works_at", "O_guild")]),
             S("[[P_hakonsen|Soren Hakonsen]], a shipowner born in [[C_ostberg|Ostberg]], worked for the [[O_sss|S.S. Co.]].",
               [("P_hakonsen", "born_in", "C_ostberg"), ("P_hakonsen", "works_at", "O_sss")]),
             S("The [[O_smith|Smith Mech. Works]] built the [[S_aurora]].", [("O_smith", "built", "S_aurora")])],
        ]),
        Section("Present", filler()),
    ])
    register = DocSpec("register.pdf", "Register of the port of Veloria", [
        Section("Masters and owners", [
            [S("[[P_lind_karin|Lind, Karin]], archivist, born in [[C_veloria]].", [("P_lind_karin", "born_in", "C_veloria")])],
            [S("[[P_ward|Ward, Thomas]], captain, born in [[C_livorno]].", [("P_ward", "born_in", "C_livorno")])],
            [S("[[P_lind_ingrid|Lind, Ingrid]], historian, born in [[C_ostberg|Oestberg]].",
               [("P_lind_ingrid", "born_in", "C_ostberg")])],
        ]),
        Section("Residents", filler(register=True)),
        Section("Vessels", [
            [S("[[P_ward|Capt. Ward]] was captain of the [[S_aurora]].", [("P_ward", "captain_of", "S_aurora")])],
            [S("The [[S_aurora]] sailed to [[C_veloria]].", [("S_aurora", "sailed_to", "C_veloria")])],
        ]),
    ])
    telegrams = DocSpec("telegrams.md", "TELEGRAMS RECEIVED", [
        Section("NO 14", [
            [S("[[P_hakonsen|SOEREN HAAKONSEN]] ARRIVED [[C_livorno|LIVORNO]] ABOARD [[S_veloria|VELORIA]] STOP",
               [("P_hakonsen", "arrived_in", "C_livorno")])],
            [S("[[P_ward|WARD]] WAS CAPTAIN OF THE [[S_veloria|VELORIA]] STOP", [("P_ward", "captain_of", "S_veloria")])],
            [S("[[P_petrov|IVAN PETROV]] ARRIVED [[C_ostberg|OSTBERG]] ABOARD [[S_aurora|AURORA]] STOP",
               [("P_petrov", "arrived_in", "C_ostberg")])],
        ]),
        Section("NO 15", [
            [S("[[P_okonkwo|MARGUERITE OKONKWO]] FOUNDED THE [[O_nrc|NORTHERN RAIL COMPANY]] IN [[C_veloria|VELORIA]] STOP",
               [("P_okonkwo", "founded", "O_nrc"), ("O_nrc", "located_in", "C_veloria")])],
        ]),
    ])
    encyclopedia = DocSpec("encyclopedia.html", "Veloria (city)", [
        Section("History", [
            [S("In 1871 [[P_okonkwo]] founded the [[O_nrc]] in [[C_veloria]].",
               [("P_okonkwo", "founded", "O_nrc"), ("O_nrc", "located_in", "C_veloria")]),
             S("[[P_dubois]], a director born in [[C_veloria]], worked for the [[O_bank]].",
               [("P_dubois", "born_in", "C_veloria"), ("P_dubois", "works_at", "O_bank")]),
             S("[[P_dubois|Hélène Dubois]] was known as [[P_dubois|Nell]].", [])],
            [S("[[P_petrov|Иван Петров]], a merchant born in [[C_livorno]], worked for the [[O_sss]].",
               [("P_petrov", "born_in", "C_livorno"), ("P_petrov", "works_at", "O_sss")]),
             S("[[P_lind_ingrid]], a historian born in [[C_ostberg]], worked for the [[O_nrc]].",
               [("P_lind_ingrid", "born_in", "C_ostberg"), ("P_lind_ingrid", "works_at", "O_nrc")]),
             S("[[P_lind_ingrid|Lind]] wrote to [[P_lind_karin|Karin Lind]] about the [[E_strike]].",
               [("P_lind_ingrid", "wrote_to", "P_lind_karin"), ("P_lind_ingrid", "wrote_about", "E_strike")])],
        ]),
        Section("Notable people", filler()),
    ])
    mails = DocSpec("mails.md", "Mail of the museum", [
        Section("Re: the loan", [
            [S("[[P_dubois|Helene Dubois]] wrote to [[P_muller]] about the [[E_strike|Rail Strike of 1890]].",
               [("P_dubois", "wrote_to", "P_muller"), ("P_dubois", "wrote_about", "E_strike")]),
             S("[[P_muller|Lena Mueller]], a translator born in [[C_ostberg|Østberg]], worked for the [[O_bank]].",
               [("P_muller", "born_in", "C_ostberg"), ("P_muller", "works_at", "O_bank")]),
             S("[[P_dubois|Nell]] was a member of the [[O_guild]].", [("P_dubois", "member_of", "O_guild")])],
            [S("[[P_hakonsen]], a shipowner born in [[C_ostberg]], worked for the [[O_sss]].",
               [("P_hakonsen", "born_in", "C_ostberg"), ("P_hakonsen", "works_at", "O_sss")]),
             S("[[P_petrov|I. Petrov]] was a member of the [[O_sss|S.S. Co.]].", [("P_petrov", "member_of", "O_sss")])],
        ]),
        Section("Staff list", filler()),
    ])
    return World(entities, [letters, minutes, register, telegrams, encyclopedia, mails])


# -- rendering --------------------------------------------------------------------------------------

NAV = "Home | Collections | Research | About us | Contact"
FOOTER_HTML = "© 2026 Veloria Historical Society · Privacy · Cookies · Terms of use"
HEADER_PDF = "PORT REGISTER OF VELORIA, 1891"
FOOTER_PDF = "Printed by Halvorsen & Sons, Veloria. Page {n}"


def _paragraph(world: World, sentences: list[Sentence]) -> tuple[str, list[tuple[Sentence, int, str, list[tuple[str, str, int, int]]]]]:
    parts, out, length = [], [], 0
    for i, s in enumerate(sentences):
        plain, marks = _plain(s.text, world)
        if i:
            parts.append(" ")
            length += 1
        out.append((s, length, plain, marks))
        parts.append(plain)
        length += len(plain)
    return "".join(parts), out


class _Gold:
    def __init__(self) -> None:
        self.mentions: list[Mention] = []
        self.sentences: list[RenderedSentence] = []

    def record(self, base: int, pieces: list[tuple[Sentence, int, str, list[tuple[str, str, int, int]]]],
               page: int | None, where: list[int] | None = None) -> None:
        """Spans of a paragraph whose character i sits at ``base + i`` (or ``where[i]``)."""
        def at(i: int) -> int:
            return base + i if where is None else where[i]

        for s, offset, plain, marks in pieces:
            idx = len(self.sentences)
            self.sentences.append(RenderedSentence(at(offset), at(offset + len(plain) - 1) + 1, list(s.facts)))
            for ent, surf, a, b in marks:
                self.mentions.append(Mention(ent, surf, at(offset + a), at(offset + b - 1) + 1, page, idx))


def render_archive(world: World, directory: Path) -> list[ArchiveRendered]:
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for doc in world.docs:
        kind = doc.name.rsplit(".", 1)[-1]
        rendered = _render_pdf(world, doc, directory / doc.name) if kind == "pdf" else \
            _render_flow(world, doc, directory / doc.name, kind)
        check_against_reader(rendered)
        out.append(rendered)
    return out


def _render_flow(world: World, doc: DocSpec, path: Path, kind: str) -> ArchiveRendered:
    gold = _Gold()
    text = ""
    sep = "\n" if kind == "docx" else "\n\n"
    blocks: list[tuple[str, str]] = []
    boiler: list[tuple[int, int]] = []
    if kind == "html":
        blocks.append(("nav", NAV))
        boiler.append((0, len(NAV)))
        text = NAV + sep + doc.title
    else:
        text = f"# {doc.title}" if kind == "md" else doc.title
    blocks.append(("h1", doc.title))
    for section in doc.sections:
        text += sep + (f"## {section.heading}" if kind == "md" else section.heading)
        blocks.append(("h2", section.heading))
        for para in section.paragraphs:
            body, pieces = _paragraph(world, para)
            text += sep
            gold.record(len(text), pieces, None)
            text += body
            blocks.append(("p", body))
    if kind == "html":
        text += sep
        boiler.append((len(text), len(text) + len(FOOTER_HTML)))
        text += FOOTER_HTML
        blocks.append(("footer", FOOTER_HTML))
        body_html = "".join(f"<{k}>{escape(t)}</{k}>" for k, t in blocks)
        path.write_text(f"<!doctype html><html><body>{body_html}"
                        "</body></html>", encoding="utf-8")
    elif kind == "md":
        text += "\n"
        path.write_text(text, encoding="utf-8")
    else:
        import docx

        document = docx.Document()
        for k, t in blocks:
            if k == "p":
                document.add_paragraph(t)
            else:
                document.add_heading(t, 1 if k == "h1" else 2)
        document.save(str(path))
    return ArchiveRendered(doc.name, path, text, (), gold.mentions, gold.sentences, boiler)


def _render_pdf(world: World, doc: DocSpec, path: Path, width: int = 90, per_page: int = 22) -> ArchiveRendered:
    """Pages with a running header and footer; a paragraph never crosses a page."""
    gold = _Gold()
    items: list[tuple[list[str], list[tuple[Sentence, int, str, list[tuple[str, str, int, int]]]] | None]] = \
        [([doc.title], None)]
    for section in doc.sections:
        items.append(([section.heading], None))
        for para in section.paragraphs:
            body, pieces = _paragraph(world, para)
            items.append((_wrap(body, width), pieces))
    pages: list[list[tuple[list[str], list[tuple[Sentence, int, str, list[tuple[str, str, int, int]]]] | None]]] = [[]]
    used = 0
    for lines, pieces in items:
        if used + len(lines) > per_page - 2 and pages[-1]:
            pages.append([])
            used = 0
        pages[-1].append((lines, pieces))
        used += len(lines)
    text = ""
    starts: list[int] = []
    boiler: list[tuple[int, int]] = []
    pdf_pages: list[list[str]] = []
    for n, page in enumerate(pages, start=1):
        if n > 1:
            text += "\n\n"
        starts.append(len(text))
        boiler.append((len(text), len(text) + len(HEADER_PDF)))
        text += HEADER_PDF
        pdf_lines = [HEADER_PDF]
        for lines, pieces in page:
            where: list[int] = []
            for j, line in enumerate(lines):
                text += "\n"
                if j:
                    where.append(len(text) - 1)  # the wrap point: the newline stands for a space
                where.extend(range(len(text), len(text) + len(line)))
                text += line
                pdf_lines.append(line)
            if pieces is not None:
                gold.record(0, pieces, n, where)
        footer = FOOTER_PDF.format(n=n)
        text += "\n"
        boiler.append((len(text), len(text) + len(footer)))
        text += footer
        pdf_lines.append(footer)
        pdf_pages.append(pdf_lines)
    path.write_bytes(pdf_bytes(pdf_pages))
    return ArchiveRendered(doc.name, path, text, tuple(starts), gold.mentions, gold.sentences, boiler)
