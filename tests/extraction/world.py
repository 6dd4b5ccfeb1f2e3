"""A generated fictional world, rendered into Markdown, HTML, DOCX and PDF with an exact gold graph.

The world is people, places, organisations and events with facts between them, written as
sentences whose mentions are marked (``[[P_reyes]]`` is the entity's name, ``[[P_reyes|Reyes]]``
another surface form). ``render`` writes a document in one format and records, as it writes, the
exact character span of every mention and sentence in the text the app's reader will produce, and
the page of each (PDF: this module's own small PDF writer lays out the lines and pages, so it knows
them); ``check_against_reader`` reads the file back with the app's reader and asserts that text is
what was recorded, so the gold is exact by construction, not by search.

Traps: aliases and short forms ("Okonkwo"), an acronym defined once and used later ("NRC"), two
different people with one name (Alex Morgan the painter, Alex Morgan the senator), a fact split over
two documents (Tomas Reyes joins the company in one, "Reyes" designs the viaduct in another), and
entities already in the session before extraction (``SEEDED``).

Used by tests/extraction and by bench/extraction_quality.py and bench/documents.py.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from pathlib import Path

from tests.documents.files import pdf_escape, pdf_from_content

MARK = re.compile(r"\[\[([A-Za-z0-9_]+)(?:\|([^\]]+))?\]\]")


@dataclass(frozen=True)
class GoldEntity:
    id: str
    name: str
    type: str
    description: str
    aliases: tuple[str, ...] = ()


@dataclass
class Sentence:
    text: str  # with [[marks]]
    facts: list[tuple[str, str, str]] = field(default_factory=list)  # (source id, relation type, target id)


@dataclass
class Section:
    heading: str
    paragraphs: list[list[Sentence]]


@dataclass
class DocSpec:
    name: str
    title: str
    sections: list[Section]


@dataclass
class Mention:
    entity: str
    surface: str
    start: int
    end: int
    page: int | None
    sentence: int  # index into Rendered.sentences


@dataclass
class RenderedSentence:
    start: int
    end: int
    facts: list[tuple[str, str, str]]


@dataclass
class Rendered:
    """What the reader will produce for one file, with the gold spans in it."""

    name: str
    path: Path
    text: str
    page_starts: tuple[int, ...]
    mentions: list[Mention]
    sentences: list[RenderedSentence]


CORE: list[GoldEntity] = [
    GoldEntity("P_okonkwo", "Marguerite Okonkwo", "Person", "railway founder", ("Okonkwo",)),
    GoldEntity("P_reyes", "Tomas Reyes", "Person", "engineer", ("Reyes",)),
    GoldEntity("P_morgan_painter", "Alex Morgan", "Person", "painter"),
    GoldEntity("P_morgan_senator", "Alex Morgan", "Person", "senator"),
    GoldEntity("P_lind", "Ingrid Lind", "Person", "historian", ("Lind",)),
    GoldEntity("P_abara", "Kofi Abara", "Person", "banker"),
    GoldEntity("O_nrc", "Northern Rail Company", "Organization", "railway company", ("NRC",)),
    GoldEntity("O_bank", "Veloria Savings Bank", "Organization", "bank"),
    GoldEntity("O_guild", "Ostberg Painters Guild", "Organization", "guild of painters"),
    GoldEntity("C_veloria", "Veloria", "Place", "city"),
    GoldEntity("C_ostberg", "Ostberg", "Place", "town"),
    GoldEntity("C_kell", "Kell Marsh", "Place", "marshland"),
    GoldEntity("W_viaduct", "Ostberg Viaduct", "Work", "railway bridge"),
    GoldEntity("E_strike", "Great Rail Strike", "Event", "labour dispute"),
    GoldEntity("E_opening", "Opening of the Kell Line", "Event", "railway opening"),
]
SEEDED = ("P_okonkwo", "C_veloria")  # already in the session before extraction

_FIRST = ["Anneli", "Bruno", "Cecilia", "Dario", "Elif", "Farid", "Greta", "Hollis", "Ines", "Jarek", "Kaito",
          "Leona", "Matteo", "Nadia", "Oskar", "Priya", "Quentin", "Rasa", "Soren", "Talia", "Umar", "Vera",
          "Wendel", "Xenia", "Yusuf", "Zora"]
_LAST = ["Achterberg", "Brannigan", "Castellanos", "Dunmore", "Eriksdottir", "Fairweather", "Grunewald",
         "Halvorsen", "Ivanova", "Jablonski", "Kowalczyk", "Lindqvist", "Marchetti", "Nakashima", "Oyelaran",
         "Pemberton", "Quimby", "Rautenberg", "Szabo", "Thorvaldsen", "Underhill", "Valcourt", "Whitacre"]
_JOBS = ["clerk", "surveyor", "stonemason", "conductor", "cartographer", "telegraphist", "architect", "chemist",
         "printer", "signalman", "accountant", "glassblower"]
_SYLLABLES = ("ka lo mi ren tor va sel dun bri ox qua zen pa ti ru mo ne lis gar fen hol jun kes ber dal vin "
              "sor wel yar tam").split()
_PLACES = ["Dunmark", "Esterhollow", "Fennick", "Grayport", "Harrowgate", "Ilsbeck", "Jorvale", "Korrin",
           "Lastwater", "Moravel"]


@dataclass
class World:
    entities: dict[str, GoldEntity]
    docs: list[DocSpec]

    def facts(self) -> set[tuple[str, str, str]]:
        out: set[tuple[str, str, str]] = set()
        for doc in self.docs:
            for section in doc.sections:
                for para in section.paragraphs:
                    for s in para:
                        out.update(s.facts)
        return out


def _extras(rng: random.Random, count: int, entities: dict[str, GoldEntity]) -> list[Sentence]:
    """Filler people with a job and a home town: real facts, enough text for several chunks."""
    places = []
    for name in _PLACES:
        ident = "C_" + name.casefold()
        entities.setdefault(ident, GoldEntity(ident, name, "Place", "town"))
        places.append(ident)
    orgs = ["O_nrc", "O_bank", "O_guild"]
    out = []
    used = {e.name for e in entities.values()}
    misses = 0
    while len(out) < count:
        if misses < 50:  # the listed names first; once they run out, made-up surnames (600,000 more)
            name = f"{rng.choice(_FIRST)} {rng.choice(_LAST)}"
        else:
            name = f"{rng.choice(_FIRST)} " + "".join(rng.choice(_SYLLABLES) for _ in range(3)).capitalize()
        if name in used:
            misses += 1
            if misses > 100_000:
                raise ValueError("the world has no more distinct names")
            continue
        used.add(name)
        ident = "X_" + re.sub(r"\W", "_", name.casefold())
        job = rng.choice(_JOBS)
        entities[ident] = GoldEntity(ident, name, "Person", job)
        place, org = rng.choice(places), rng.choice(orgs)
        out.append(Sentence(f"[[{ident}]], a {job} born in [[{place}]], worked for the [[{org}]] for many years.",
                            [(ident, "born_in", place), (ident, "works_at", org)]))
    return out


def make_world(seed: int = 7, extras_per_doc: int = 40) -> World:
    rng = random.Random(seed)
    entities = {e.id: e for e in CORE}
    S = Sentence

    def filler() -> list[list[Sentence]]:
        people = _extras(rng, extras_per_doc, entities)
        return [people[i:i + 5] for i in range(0, len(people), 5)]

    doc_a = DocSpec("founding.md", "The founding of the Northern Rail Company", [
        Section("Beginnings", [
            [S("In 1871 [[P_okonkwo]] founded the [[O_nrc]] ([[O_nrc|NRC]]) in [[C_veloria]].",
               [("P_okonkwo", "founded", "O_nrc"), ("O_nrc", "located_in", "C_veloria")]),
             S("[[P_reyes]] joined the [[O_nrc|NRC]] as its first engineer.", [("P_reyes", "works_at", "O_nrc")])],
            [S("The painter [[P_morgan_painter]] was born in [[C_ostberg]] and painted the early stations.",
               [("P_morgan_painter", "born_in", "C_ostberg")]),
             S("[[P_morgan_painter]] was a member of the [[O_guild]].", [("P_morgan_painter", "member_of", "O_guild")])],
        ]),
        Section("The people of the line", filler()),
    ])
    doc_b = DocSpec("viaduct.html", "Building the viaduct", [
        Section("Design", [
            [S("[[P_reyes|Reyes]] designed the [[W_viaduct]] over the river at [[C_ostberg]].",
               [("P_reyes", "designed", "W_viaduct"), ("W_viaduct", "located_in", "C_ostberg")]),
             S("The [[O_bank]] financed the [[O_nrc|NRC]] when the works ran over budget.",
               [("O_bank", "financed", "O_nrc")])],
            [S("[[P_abara]] managed the loans of the [[O_bank]].", [("P_abara", "works_at", "O_bank")])],
        ]),
        Section("Workers", filler()),
    ])
    doc_c = DocSpec("strike.docx", "The strike", [
        Section("The Great Rail Strike", [
            [S("In 1890 the workers of the [[O_nrc]] began the [[E_strike]].", [("E_strike", "involved", "O_nrc")]),
             S("[[P_morgan_senator]], a senator from [[C_veloria]], opposed the [[E_strike|strike]] in parliament.",
               [("P_morgan_senator", "represents", "C_veloria"), ("P_morgan_senator", "opposed", "E_strike")])],
            [S("The historian [[P_lind]] later wrote the standard account of the [[E_strike]].",
               [("P_lind", "wrote_about", "E_strike")])],
        ]),
        Section("Aftermath", filler()),
    ])
    doc_d = DocSpec("kell.pdf", "The Kell Line", [
        Section("Opening", [
            [S("The [[E_opening]] took place at [[C_kell]] in 1895.", [("E_opening", "located_in", "C_kell")]),
             S("[[P_okonkwo|Okonkwo]] opened the line herself, with [[P_reyes]] beside her.",
               [("P_okonkwo", "attended", "E_opening"), ("P_reyes", "attended", "E_opening")])],
        ]),
        Section("Staff", filler()),
    ])
    return World(entities, [doc_a, doc_b, doc_c, doc_d])


# -- rendering ------------------------------------------------------------------------------------------

def _plain(sentence: str, world: World) -> tuple[str, list[tuple[str, str, int, int]]]:
    """The sentence without marks, and its mentions (entity, surface, start, end) in it."""
    out, marks, pos = [], [], 0
    length = 0
    for m in MARK.finditer(sentence):
        out.append(sentence[pos:m.start()])
        length += m.start() - pos
        surface = m.group(2) or world.entities[m.group(1)].name
        marks.append((m.group(1), surface, length, length + len(surface)))
        out.append(surface)
        length += len(surface)
        pos = m.end()
    out.append(sentence[pos:])
    return "".join(out), marks


class _Writer:
    """Builds the reader's text while recording spans (and, for PDF, lines and pages)."""

    def __init__(self, world: World, wrap: int | None = None, lines_per_page: int | None = None) -> None:
        self.world = world
        self.text = ""
        self.mentions: list[Mention] = []
        self.sentences: list[RenderedSentence] = []
        self.wrap = wrap
        self.lines_per_page = lines_per_page
        self.pages: list[list[str]] = [[]]
        self.page_starts: list[int] = [0] if lines_per_page else []

    def page(self) -> int | None:
        return len(self.pages) if self.lines_per_page else None

    def add(self, piece: str) -> None:
        self.text += piece

    def paragraph(self, sentences: list[Sentence]) -> tuple[str, list[tuple[str, str, int, int, int, list[tuple[str, str, str]]]]]:
        """One paragraph's plain text and its marks relative to the paragraph."""
        parts, marks, length = [], [], 0
        for i, s in enumerate(sentences):
            plain, ms = _plain(s.text, self.world)
            if i:
                parts.append(" ")
                length += 1
            for ent, surf, a, b in ms:
                marks.append((ent, surf, length + a, length + b, i, s.facts))
            parts.append(plain)
            length += len(plain)
        return "".join(parts), marks


def _record(w: _Writer, base: int, para_sentences: list[Sentence], text: str, page_at: list[int | None]) -> None:
    """Spans of a paragraph written at ``base`` (page_at: the page of each character)."""
    offset = 0
    for s in para_sentences:
        plain, marks = _plain(s.text, w.world)
        start = offset
        end = start + len(plain)
        assert text[start:end] == plain
        idx = len(w.sentences)
        w.sentences.append(RenderedSentence(base + start, base + end, list(s.facts)))
        for ent, surf, a, b in marks:
            w.mentions.append(Mention(ent, surf, base + start + a, base + start + b, page_at[start + a], idx))
        offset = end + 1


def render(world: World, doc: DocSpec, directory: Path) -> Rendered:
    """Write ``doc`` in the format its name says; return the gold of the reader's text."""
    suffix = doc.name.rsplit(".", 1)[-1]
    path = directory / doc.name
    if suffix == "md":
        return _render_text(world, doc, path, "md")
    if suffix == "html":
        return _render_text(world, doc, path, "html")
    if suffix == "docx":
        return _render_text(world, doc, path, "docx")
    if suffix == "pdf":
        return _render_pdf(world, doc, path)
    raise ValueError(suffix)


def _render_text(world: World, doc: DocSpec, path: Path, fmt: str) -> Rendered:
    w = _Writer(world)
    sep = "\n" if fmt == "docx" else "\n\n"
    blocks: list[tuple[str, str]] = []  # (kind, text)
    title = f"# {doc.title}" if fmt == "md" else doc.title
    blocks.append(("h1", doc.title))
    w.add(title)
    for section in doc.sections:
        heading = f"## {section.heading}" if fmt == "md" else section.heading
        w.add(sep + heading)
        blocks.append(("h2", section.heading))
        for para in section.paragraphs:
            text, _ = w.paragraph(para)
            w.add(sep)
            base = len(w.text)
            w.add(text)
            _record(w, base, para, text, [None] * (len(text) + 1))
            blocks.append(("p", text))
    if fmt == "md":
        w.add("\n")
        path.write_text(w.text, encoding="utf-8")
    elif fmt == "html":
        from html import escape

        body = "".join(f"<{k}>{escape(t)}</{k}>" for k, t in blocks)
        path.write_text(f"<!doctype html><html><head><title>{escape(doc.title)}</title></head><body>{body}"
                        "<script>alert('not text')</script></body></html>", encoding="utf-8")
    else:
        import docx

        document = docx.Document()
        for kind, text in blocks:
            if kind == "p":
                document.add_paragraph(text)
            else:
                document.add_heading(text, 1 if kind == "h1" else 2)
        document.save(str(path))
    return Rendered(doc.name, path, w.text, (), w.mentions, w.sentences)


def _wrap(text: str, width: int) -> list[str]:
    lines, current = [], ""
    for word in text.split(" "):
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines


def _render_pdf(world: World, doc: DocSpec, path: Path, width: int = 90, per_page: int = 44) -> Rendered:
    pages: list[list[str]] = [[]]
    w = _Writer(world)
    page_text = [""]

    def put_line(line: str) -> int:
        """Place a line; returns its page (1-based). Pages are joined by a blank line (the reader's)."""
        if len(pages[-1]) >= per_page:
            pages.append([])
            page_text.append("")
        pages[-1].append(line)
        return len(pages)

    parts: list[tuple[str, list[Sentence] | None]] = [(doc.title, None)]
    for section in doc.sections:
        parts.append((section.heading, None))
        for para in section.paragraphs:
            parts.append((w.paragraph(para)[0], para))
    placed: list[tuple[list[tuple[str, int]], list[Sentence] | None]] = []
    for text, para in parts:
        lines = _wrap(text, width) if para is not None else [text]
        placed.append(([(line, put_line(line)) for line in lines], para))
    # the reader's text: lines joined by "\n", pages by "\n\n"
    text = ""
    starts: list[int] = []
    current_page = 0
    for lines, para in placed:
        para_base = None
        para_text = ""
        page_at: list[int | None] = []
        for line, page in lines:
            if page != current_page:
                if current_page:
                    text += "\n\n"
                starts.append(len(text))
                current_page = page
            elif text:
                text += "\n"
            if para_base is None:
                para_base = len(text)
            elif page_at:
                para_text += " "  # the wrap point: a newline (or page break) in the text, a space in the sentence
                page_at.append(page)
            text += line
            para_text += line
            page_at.extend([page] * len(line))
        if para is not None and para_base is not None:
            _record_pdf(w, text, para_base, para, para_text, page_at + [current_page])
    path.write_bytes(pdf_bytes(pages))
    return Rendered(doc.name, path, text, tuple(starts), w.mentions, w.sentences)


def _record_pdf(w: _Writer, text: str, base: int, para: list[Sentence], para_text: str, page_at: list[int | None]) -> None:
    """Paragraph spans in the reader's text: wrap points add one or two characters, so map offsets."""
    mapping: list[int] = []  # offset in para_text (single spaces) → offset in text
    pos = base
    for ch in para_text:
        while text[pos] != ch and not (ch == " " and text[pos] == "\n"):
            pos += 1
        mapping.append(pos)
        pos += 1
        if ch == " " and pos < len(text) and text[pos - 1] == "\n" and text[pos] == "\n":
            pos += 1
    mapping.append(pos)
    offset = 0
    for s in para:
        plain, marks = _plain(s.text, w.world)
        start = para_text.index(plain, offset)
        end = start + len(plain)
        idx = len(w.sentences)
        w.sentences.append(RenderedSentence(mapping[start], mapping[end - 1] + 1, list(s.facts)))
        for ent, surf, a, b in marks:
            w.mentions.append(Mention(ent, surf, mapping[start + a], mapping[start + b - 1] + 1,
                                      page_at[start + a], idx))
        offset = end


def pdf_bytes(pages: list[list[str]]) -> bytes:
    """A small PDF: Helvetica lines, ``T*`` between them (tests/documents/files.py writes the file)."""
    streams = []
    for lines in pages:
        body = ["BT /F1 10 Tf 14 TL 48 760 Td"]
        body += [("T* " if j else "") + f"({pdf_escape(line)}) Tj" for j, line in enumerate(lines)]
        body.append("ET")
        streams.append("\n".join(body).encode("latin-1"))
    return pdf_from_content(streams)


def check_against_reader(rendered: Rendered) -> None:
    """The app's reader produces exactly the recorded text, pages and spans (the gold is exact)."""
    from cks_desktop.documents.readers import read_path

    read = read_path(rendered.path, 200 * 1024 * 1024)
    assert read.text == rendered.text, (rendered.name, read.text[:300], rendered.text[:300])
    assert tuple(read.page_starts) == rendered.page_starts, (read.page_starts, rendered.page_starts)
    for m in rendered.mentions:
        got = read.text[m.start:m.end]
        assert " ".join(got.split()) == m.surface, (rendered.name, got, m.surface)


def render_world(world: World, directory: Path) -> list[Rendered]:
    directory.mkdir(parents=True, exist_ok=True)
    out = [render(world, doc, directory) for doc in world.docs]
    for r in out:
        check_against_reader(r)
    return out
