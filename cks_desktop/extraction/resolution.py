"""Entity resolution in tiers: which mentions of a document are one thing, and which are already
in the session.

The anchors' trackers are full of the two opposite failures — duplicates ("Ada Lovelace", "Ada
Lovelace (mathematician)", "A. Lovelace") and wrong merges of different things with one name. So
the rules are conservative, and every decision says which tier made it:

1. Names are normalised (``name_key``: diacritics, case, punctuation, honorifics, legal suffixes).
2. Candidates come from three indexes over both the document's entities so far and the session's
   existing objects: the exact-key index (every known name and alias of an entity), the alias
   index (the aliases the model gave for a mention: "the Northern Rail Company (NRC)"), and a
   word index for fuzzy candidates (words shared with the name; words too common to tell things
   apart are not used as keys), and a three-letter-piece index (``names.GramIndex``, the matcher
   calibrated on FEBRL) for names that share no whole word: a typo, a name split or joined. The word index is built with the full-text search's own tokenizer
   (``graph/ranking.py``), in memory, because resolution asks it thousands of times per document
   and a SQLite query per name would dominate the run (see ``bench/documents.py``). A session too
   big to load whole (``runner.PRELOAD_LIMIT`` objects) is searched instead: the graph's full-text
   index (``GraphStore.search_objects``) once per distinct name, and the objects nearest the name in
   the session's search index (its embeddings, where it exists), their hits joining the indexes.
3. Automatic merges: a UNIQUE exact (or alias) match of the same type whose description does not
   contradict; or a very close fuzzy match (``FUZZY_AUTO`` of the characters, the only one that
   close) that is not a common short name (one word, or fewer than ``SHORT_NAME`` characters).
4. Ambiguous: several exact matches, an exact match with a contradicting description (two people
   with one name) or another type, a near fuzzy match, a part of a name ("Okonkwo"), an acronym.
   These become pairs that the model is asked about ONCE for the whole batch; "distinct" is the
   default when it is unsure or cannot be asked; what it could not settle goes to review.
5. No chained merges: a name that joined an entity by a fuzzy or model decision is not itself a
   fuzzy anchor, and an entity takes part in at most one model-decided merge per round.
6. Pairs the person said are different (``distinct``) are never merged, by any tier.

Merges keep everything: the merged names become aliases, every property is kept (a different value
for a known key is recorded in ``conflicts``, never overwritten), every mention and its evidence.
Each merge is recorded (``MergeRecord``) so the review can show it and split it again.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from cks_desktop.extraction.names import TITLES as _TITLE_WORDS
from cks_desktop.extraction.names import (GramIndex, given_names_differ, initials_fit, is_short_form, loose_key, loose_words,
                                          person_parts, plain_score, reading_order, strip_suffix)
from cks_desktop.graph.ranking import normalise as fts_normalise

FUZZY_AUTO = 0.92
FUZZY_ASK = 0.80
SHORT_NAME = 6
COMMON_WORD = 200  # a word shared by more entities than this is no blocking key
MAX_FUZZY_CANDIDATES = 12
DICE_FLOOR = 0.65  # shared character pairs below which two names cannot be 0.8 similar in practice
SURNAME_TYPO = 0.85  # a surname written this close to a known one (and 6+ letters) is that surname
PERSON = "person"
_ORG_CUES = frozenset({"company", "co", "works", "bank", "guild", "society", "sons", "bros", "brothers", "ltd", "inc",
                       "railway", "line", "corporation", "association", "union", "club", "museum", "board"})

_HONORIFICS = frozenset({"mr", "mrs", "ms", "miss", "dr", "prof", "professor", "sir", "dame", "lord", "lady", "the"})
_SUFFIXES = frozenset({"inc", "ltd", "llc", "plc", "gmbh", "ag", "sa", "corp"})
_SMALL = frozenset({"of", "the", "and", "for", "de", "la", "du", "von", "van", "&"})
_STOP = frozenset({"a", "an", "the", "of", "and", "in", "at", "on", "for", "to", "by", "with", "from", "its", "his",
                   "her", "their", "is", "was"})


@functools.lru_cache(maxsize=65536)
def name_key(name: str) -> str:
    """The normalised form names are compared by: "Dr. José  Núñez, Inc." → "jose nunez".

    Words are the full-text index's own (``graph/ranking.normalise``: case folded, diacritics
    removed, ``\\w+``), so a key's words are exactly the words FTS5 indexes for the name."""
    words = re.findall(r"\w+", fts_normalise(name.replace("&", " and ")))
    while len(words) > 1 and words[0] in _HONORIFICS:
        words.pop(0)
    while len(words) > 1 and words[-1] in _SUFFIXES:
        words.pop()
    return " ".join(words)


def _content(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.casefold()) if w not in _STOP and len(w) > 2}


def descriptions_conflict(a: str, b: str) -> bool:
    """Both say what the thing is, and share no content word: "painter" vs "senator"."""
    ca, cb = _content(a), _content(b)
    return bool(ca) and bool(cb) and not (ca & cb)


def acronym_of(short: str, long: str) -> bool:
    """``short`` (as written, e.g. "NRC") is the initials of ``long`` ("Northern Rail Company")."""
    s = short.strip().replace(".", "")
    if not (2 <= len(s) <= 6) or not s.isupper() or " " in s:
        return False
    words = [w for w in re.findall(r"\w+", long) if w.casefold() not in _SMALL]
    return len(words) >= 2 and "".join(w[0] for w in words).upper() == s.upper()


def bigrams(key: str) -> frozenset[str]:
    return frozenset(key[i:i + 2] for i in range(len(key) - 1))


def similarity(a: str, b: str, ga: frozenset[str] | None = None, gb: frozenset[str] | None = None) -> float:
    """Character similarity of two normalised names (difflib's ratio), with two cheap bounds first
    (length, and shared character pairs) so most candidates never reach difflib."""
    if a == b:
        return 1.0
    la, lb = len(a), len(b)
    if 2 * min(la, lb) / (la + lb) < FUZZY_ASK:
        return 0.0
    ga, gb = ga if ga is not None else bigrams(a), gb if gb is not None else bigrams(b)
    if ga and gb and 2 * len(ga & gb) / (len(ga) + len(gb)) < DICE_FLOOR:
        return 0.0
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


@dataclass(frozen=True)
class Existing:
    """An object already in the session, as resolution needs it."""

    id: str
    name: str
    type: str
    aliases: tuple[str, ...] = ()
    description: str = ""


@dataclass
class Mention:
    """One object the model found in one chunk (``ref`` is the model's chunk-local reference)."""

    chunk: int
    ref: str
    name: str
    type: str
    said_type: str = ""
    description: str = ""
    aliases: list[str] = field(default_factory=list)
    properties: dict[str, Any] = field(default_factory=dict)
    evidence: list[Any] = field(default_factory=list)  # plan.Evidence
    held: bool = False  # its name is nowhere in its part: held for review, never merged or written unticked

    @property
    def answer(self) -> tuple[int, str]:
        """Which answer listed it: the part, and the piece of a halved part ("p1.o3" → "p1")."""
        return self.chunk, self.ref.rsplit(".", 1)[0] if "." in self.ref else ""


# Every tier a merge decision can name: the review shows each in plain words (ui/extraction/review.py).
MergeTier = Literal["exact", "alias", "fuzzy", "model", "spelling", "short form", "source"]
MERGE_TIERS: tuple[str, ...] = get_args(MergeTier)


@dataclass
class MergeRecord:
    """One merge decision: what joined which entity, by which tier, how sure."""

    name: str  # the name that joined
    into: str  # the entity's name at the time
    tier: str  # one of MERGE_TIERS
    score: float
    chunk: int | None = None
    existing: bool = False  # into an object already in the session


@dataclass
class Entity:
    """A resolved thing: an existing object (``existing_id``) or a new one, with all its mentions."""

    index: int
    name: str
    type: str
    existing_id: str | None = None
    aliases: list[str] = field(default_factory=list)
    description: str = ""
    properties: dict[str, Any] = field(default_factory=dict)
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    mentions: list[Mention] = field(default_factory=list)
    merges: list[MergeRecord] = field(default_factory=list)
    said_types: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)  # keys that match exactly
    anchors: set[str] = field(default_factory=set)  # keys fuzzy matching may compare against
    merged_into: int | None = None
    grams: dict[str, frozenset[str]] = field(default_factory=dict)  # anchor key → its character pairs
    base: str = ""  # the name without the app's disambiguating suffix
    held: bool = False
    answers: dict[tuple[int, str], set[str]] = field(default_factory=dict)  # answer → refs it listed here
    _identity: str = ""

    @property
    def identity(self) -> str:
        """How a "these are different" answer names this entity."""
        if not self._identity:
            self._identity = f"o:{self.existing_id}" if self.existing_id else \
                f"n:{self.type.casefold()}:{name_key(self.name)}"
        return self._identity

    @property
    def is_new(self) -> bool:
        return self.existing_id is None


@dataclass
class Pair:
    """An ambiguous pair for the model (and, if it cannot settle it, for the person)."""

    a: int  # the newer entity
    b: int  # the candidate it may be
    reason: str
    score: float
    verdict: str = "pending"  # "same" | "distinct" | "unsure" | "pending"


def identity_pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a <= b else (b, a)


class Resolver:
    """Resolves mentions one by one, in document order; ``pairs`` collects the ambiguous ones."""

    def __init__(self, existing: Iterable[Existing] = (), distinct: Iterable[tuple[str, str]] = (),
                 lookup: Callable[[str], list[Existing]] | None = None, *,
                 sourced: dict[tuple[int, int], list[str]] | None = None) -> None:
        """``existing``: the session's objects, indexed up front. ``lookup``: for sessions too large
        to load whole, a search (the graph's full-text index, ``GraphStore.search_objects``) asked
        once per distinct name; what it finds joins the indexes as existing objects. ``sourced``:
        where the document being extracted already sources objects (span → object ids)."""
        self.entities: list[Entity] = []
        self.pairs: list[Pair] = []
        self.distinct = {identity_pair(a, b) for a, b in distinct}
        self._exact: dict[str, list[int]] = {}
        self._loose: dict[str, list[int]] = {}
        self._surnames: dict[str, list[int]] = {}  # a person's surname (loose) → people with a given name
        self._short_surnames: dict[str, list[int]] = {}  # → people named so far only by a short form
        self._words: dict[str, list[int]] = {}
        self._grams: GramIndex[int] = GramIndex()  # three-letter pieces: a typo'd or joined name's candidates
        self._taken: dict[tuple[str, str], int] = {}  # (type, name) casefolded → entity: names stay unique
        self._lookup = lookup
        self._looked: set[str] = set()
        self._known_ids: set[str] = set()
        self._by_existing: dict[str, int] = {}
        self.sourced = sourced or {}
        for obj in existing:
            self._add_existing(obj)

    def _add_existing(self, obj: Existing) -> None:
        if obj.id in self._known_ids:
            return
        self._known_ids.add(obj.id)
        ent = self._new(obj.name, obj.type, existing_id=obj.id, description=obj.description)
        self._by_existing[obj.id] = ent.index
        for alias in obj.aliases:
            self._index_name(ent, alias, anchor=True)
            if alias not in ent.aliases:
                ent.aliases.append(alias)

    def _look_up(self, names: list[str]) -> None:
        if self._lookup is None:
            return
        for name in names:
            key = name_key(name)
            if key and key not in self._looked:
                self._looked.add(key)
                for obj in self._lookup(name):
                    self._add_existing(obj)

    # -- indexes -----------------------------------------------------------------------------
    def _new(self, name: str, type_: str, *, existing_id: str | None = None, description: str = "") -> Entity:
        ent = Entity(index=len(self.entities), name=name, type=type_, existing_id=existing_id,
                     description=description, base=strip_suffix(name) if existing_id else name)
        self.entities.append(ent)
        self._taken[(type_.casefold(), name.casefold())] = ent.index
        self._index_name(ent, name, anchor=True)
        return ent

    def _index_name(self, ent: Entity, name: str, *, anchor: bool) -> None:
        key = name_key(name)
        if not key:
            return
        loose = loose_key(name)
        if loose and ent.index not in self._loose.get(loose, ()):
            self._loose.setdefault(loose, []).append(ent.index)
            given, surname = person_parts(name)
            if ent.type.casefold() == PERSON and given and all(len(g) > 1 for g in given) and \
                    ent.index not in self._surnames.get(surname, ()):
                self._surnames.setdefault(surname, []).append(ent.index)
            elif ent.type.casefold() == PERSON and is_short_form(name) and \
                    ent.index not in self._short_surnames.get(surname, ()):
                self._short_surnames.setdefault(surname, []).append(ent.index)
        if key not in ent.names:
            ent.names.add(key)
            self._exact.setdefault(key, []).append(ent.index)
        if anchor and key not in ent.anchors:
            ent.anchors.add(key)
            ent.grams[key] = bigrams(key)
            self._grams.add(ent.index, name)
            for word in set(key.split()):
                posting = self._words.setdefault(word, [])
                if len(posting) <= COMMON_WORD:
                    posting.append(ent.index)

    def find(self, index: int) -> Entity:
        ent = self.entities[index]
        while ent.merged_into is not None:
            ent = self.entities[ent.merged_into]
        return ent

    def _live(self, indexes: Iterable[int]) -> list[Entity]:
        seen: dict[int, Entity] = {}
        for i in indexes:
            ent = self.find(i)
            seen.setdefault(ent.index, ent)
        return list(seen.values())

    def _is_distinct(self, m_identity: str, ent: Entity) -> bool:
        return identity_pair(m_identity, ent.identity) in self.distinct

    # -- one mention ------------------------------------------------------------------------------
    def add(self, m: Mention) -> Entity:
        """The entity the mention belongs to (an existing one it merged into, or a new one)."""
        self._look_up([m.name, *m.aliases])
        key = name_key(m.name)
        again = self._sourced_here(m, key)
        if again is not None:
            return self._join(again, m, "source", 1.0)
        if m.held:
            ent = self._provisional(m)
            ent.held = True
            return ent
        self._repair_type(m)
        ident = f"n:{m.type.casefold()}:{key}"
        exact = [e for e in self._live(self._exact.get(key, ())) if not self._is_distinct(ident, e)
                 and not self._blocked(m, e)]
        same_type = [e for e in exact if e.type.casefold() == m.type.casefold()]
        fitting = [e for e in same_type if not descriptions_conflict(m.description, e.description)]
        if len(fitting) == 1 and not self._other_fits(m, fitting[0]):
            return self._join(fitting[0], m, "exact", 1.0)
        alias_hits = self._alias_hits(m, ident)
        if not exact and len(alias_hits) == 1:
            return self._join(alias_hits[0], m, "alias", 1.0)
        if exact or alias_hits:
            ent = self._provisional(m)
            for other in (fitting if len(fitting) > 1 else same_type) or exact or alias_hits:
                reason = ("same name, another type" if other.type.casefold() != m.type.casefold() else
                          "same name, another description" if descriptions_conflict(m.description, other.description)
                          else "several objects with this name" if len(fitting) > 1 else "alias")
                self.pairs.append(Pair(ent.index, other.index, reason, 1.0))
            return ent
        loose = self._loose_hits(m, ident)
        if len(loose) == 1:
            return self._join(loose[0], m, "spelling", 1.0)
        if m.type.casefold() == PERSON and is_short_form(m.name):
            found = self._short_form(m, ident)
            if isinstance(found, Entity):
                return self._join(found, m, "short form", 1.0)
            if found:
                ent = self._provisional(m)
                for other in found:
                    self.pairs.append(Pair(ent.index, other.index, "short form of a name", 0.9))
                return ent
        if m.type.casefold() == PERSON and not is_short_form(m.name):
            fuller = self._fuller_form(m, ident)
            if fuller is not None:
                return self._join(fuller, m, "short form", 1.0)
        best, near = self._fuzzy(m, key, ident)
        if best is not None:
            ent_b, score = best
            if score >= FUZZY_AUTO and not near and not self._short(key) and not self._short(min(ent_b.anchors, key=len)):
                return self._join(ent_b, m, "fuzzy", score, anchor=False)
        asks = near or ([(best[0], best[1], "similar name")] if best is not None else [])
        if asks:
            ent = self._provisional(m)
            for other, score, reason in asks:
                self.pairs.append(Pair(ent.index, other.index, reason, round(score, 3)))
            return ent
        return self._provisional(m)

    # -- guards and the careful reader's candidates ---------------------------------------------------
    def _blocked(self, m: Mention, ent: Entity) -> bool:
        """Never one thing: listed as two in one answer, two people with different given names, or
        a held entity. No tier and no model answer overrides this."""
        if ent.held:
            return True
        refs = ent.answers.get(m.answer)
        if refs and (len(refs) > 1 or m.ref not in refs):
            return True
        return m.type.casefold() == PERSON and ent.type.casefold() == PERSON and given_names_differ(m.name, ent.base or ent.name)

    def _entities_blocked(self, a: Entity, b: Entity) -> bool:
        if a.held or b.held:
            return True
        if any(answer in a.answers and a.answers[answer] != refs for answer, refs in b.answers.items()):
            return True
        if a.type.casefold() != b.type.casefold() or descriptions_conflict(a.description, b.description):
            return True
        return a.type.casefold() == PERSON and given_names_differ(a.base or a.name, b.base or b.name)

    def _repair_type(self, m: Mention) -> None:
        """A type the name itself contradicts, where the session knows the name under one other type:
        "Northern Rail Company" said to be a Place is the company; "Karin Lind" said to be an
        Organization is the person. A name that could be either ("Veloria": city, ship) is left.
        An "organization" the passage calls by a form of address ("Mrs Okonkwo", "Herr Schmidt") is a
        person, also where the session does not know the name yet (but not where it knows it as
        an organization: that object, not a second one)."""
        key = loose_key(m.name)
        hits = self._live(self._loose.get(key, ()))
        types = {e.type for e in hits}
        if any(t.casefold() == m.type.casefold() for t in types):
            return
        if m.type.casefold() == "organization" and addressed_as_person([m.name, *m.aliases]):
            m.type = next((e.type for e in self.entities if e.type.casefold() == PERSON), "Person")
            return
        if not hits or len(types) != 1:
            return
        other = next(iter(types))
        words = set(loose_words(m.name))
        if other.casefold() == "organization" and words & _ORG_CUES:
            m.type = other
        elif other.casefold() == PERSON and len(words) >= 2 and not words & _ORG_CUES \
                and m.type.casefold() != "ship":
            m.type = other

    def _loose_hits(self, m: Mention, ident: str) -> list[Entity]:
        """Entities whose name is this one spelled another way (transliteration, another script,
        inverted, a title, telegraph capitals) — same type, no contradiction, no guard."""
        hits: dict[int, Entity] = {}
        for name in [m.name, *m.aliases]:
            for ent in self._live(self._loose.get(loose_key(name), ())):
                if ent.type.casefold() == m.type.casefold() and not self._is_distinct(ident, ent) \
                        and not descriptions_conflict(m.description, ent.description) and not self._blocked(m, ent):
                    hits.setdefault(ent.index, ent)
        return list(hits.values())

    def _short_form(self, m: Mention, ident: str) -> Entity | list[Entity]:
        """A surname alone, initials or a title with a surname: the person of that surname named in
        this document (the only one), else the only one in the session; several → ask."""
        given, surname = person_parts(m.name)
        if not surname:
            return []
        indexes = list(self._surnames.get(surname, ()))
        if not indexes and len(surname) >= 6:
            for known, posting in self._surnames.items():
                if known[:1] == surname[:1] and abs(len(known) - len(surname)) <= 1 and \
                        difflib.SequenceMatcher(None, known, surname).ratio() >= SURNAME_TYPO:
                    indexes.extend(posting)
        fits = [e for e in self._live(indexes) if e.type.casefold() == PERSON and not self._is_distinct(ident, e)
                and not self._blocked(m, e) and not descriptions_conflict(m.description, e.description)
                and initials_fit(m.name, e.base or e.name)]
        here = [e for e in fits if e.mentions]  # named in this document already
        if len(here) == 1:
            return here[0]
        if not here and len(fits) == 1:
            return fits[0]
        return here or fits

    def _fuller_form(self, m: Mention, ident: str) -> Entity | None:
        """A full name after its short form ("Capt. Ward" … "Thomas Ward"): the one person named in
        this document only by that surname, when no other person of that surname is known."""
        given, surname = person_parts(m.name)
        if self._live(self._surnames.get(surname, ())):
            return None
        fits = [e for e in self._live(self._short_surnames.get(surname, ())) if e.mentions and e.is_new
                and e.base == e.name and is_short_form(e.name) and not self._is_distinct(ident, e)
                and not self._blocked(m, e) and not descriptions_conflict(m.description, e.description)
                and initials_fit(e.name, m.name)]
        return fits[0] if len(fits) == 1 else None

    def _sourced_here(self, m: Mention, key: str) -> Entity | None:
        """The object this document already sources at the mention's own quote under the mention's
        name: extracting a document again lands every mention where it went the first time, whatever
        the pairs and verdicts around it (no second object, no new question)."""
        if not self.sourced:
            return None
        keys = {key, *(name_key(a) for a in m.aliases)} - {""}
        found: dict[int, Entity] = {}
        for ev in m.evidence:
            if getattr(ev, "start", None) is None:
                continue
            for oid in self.sourced.get((ev.start, ev.end), ()):
                index = self._by_existing.get(oid)
                if index is None:
                    continue
                ent = self.find(index)
                if keys & ent.names:
                    found.setdefault(ent.index, ent)
        return next(iter(found.values())) if len(found) == 1 else None

    def _other_fits(self, m: Mention, ent: Entity) -> bool:
        """An alias the model gave points at ANOTHER entity too: not a unique match."""
        for alias in m.aliases:
            for other in self._live(self._exact.get(name_key(alias), ())):
                if other.index != ent.index and other.type.casefold() == m.type.casefold() \
                        and not descriptions_conflict(m.description, other.description):
                    return True
        return False

    def _alias_hits(self, m: Mention, ident: str) -> list[Entity]:
        hits: dict[int, Entity] = {}
        for alias in m.aliases:
            for ent in self._live(self._exact.get(name_key(alias), ())):
                if ent.type.casefold() == m.type.casefold() and not self._is_distinct(ident, ent) \
                        and not descriptions_conflict(m.description, ent.description) and not self._blocked(m, ent):
                    hits.setdefault(ent.index, ent)
        return list(hits.values())

    @staticmethod
    def _short(key: str) -> bool:
        return len(key) < SHORT_NAME or " " not in key

    def _fuzzy(self, m: Mention, key: str, ident: str) -> tuple[tuple[Entity, float] | None,
                                                                   list[tuple[Entity, float, str]]]:
        """The best fuzzy candidate, and every candidate close enough to ask about."""
        counts: dict[int, int] = {}
        for word in set(key.split()):
            posting = self._words.get(word, ())
            if len(posting) > COMMON_WORD:
                continue
            for i in posting:
                counts[i] = counts.get(i, 0) + 1
        ranked = sorted(counts, key=counts.__getitem__, reverse=True)[:MAX_FUZZY_CANDIDATES]
        scored: list[tuple[Entity, float, str]] = []
        words = set(key.split())
        grams = bigrams(key)
        caps = m.name.strip().replace(".", "").isupper()
        mtype = m.type.casefold()
        looked: set[int] = set()
        for pieces in (False, True):
            if pieces:  # no close name shares a whole word: a typo in every word, a name split or joined
                if any(score >= FUZZY_ASK for _, score, _ in scored):
                    break
                ranked = self._grams.candidates(m.name)
            for ent in self._live(ranked):
                if ent.index in looked:
                    continue
                looked.add(ent.index)
                if ent.type.casefold() != mtype or self._is_distinct(ident, ent) or self._blocked(m, ent):
                    continue
                score = max(similarity(key, anchor, grams, ent.grams.get(anchor)) for anchor in ent.anchors)
                if score >= FUZZY_ASK:
                    scored.append((ent, score, "similar name"))
                elif any(words < set(a.split()) or set(a.split()) < words for a in ent.anchors):
                    scored.append((ent, score, "part of a name"))
                elif (caps or ent.name.isupper()) and (acronym_of(m.name, ent.name) or acronym_of(ent.name, m.name)):
                    scored.append((ent, score, "acronym"))
        for alias_ent in self._acronym_candidates(m, ident):
            if all(alias_ent.index != e.index for e, _, _ in scored):
                scored.append((alias_ent, 0.5, "acronym"))
        scored.sort(key=lambda t: -t[1])
        if not scored:
            return None, []
        best = scored[0]
        close = [s for s in scored if s[1] >= FUZZY_ASK]
        if best[1] >= FUZZY_AUTO and len(close) == 1:
            return (best[0], best[1]), []
        return (best[0], best[1]) if best[1] >= FUZZY_ASK else None, scored[:5]

    def _acronym_candidates(self, m: Mention, ident: str) -> list[Entity]:
        """An all-capitals name ("NRC") against entities whose initials spell it."""
        short = m.name.strip().replace(".", "")
        if not (2 <= len(short) <= 6 and short.isupper()):
            return []
        found = []
        for ent in self.entities:
            if ent.merged_into is None and ent.type.casefold() == m.type.casefold() and \
                    acronym_of(short, ent.name) and not self._is_distinct(ident, ent):
                found.append(ent)
                if len(found) >= 5:
                    break
        return found

    def _provisional(self, m: Mention) -> Entity:
        name = _plain_form(m.name.strip(), m.type)
        holder = self._taken.get((m.type.casefold(), name.casefold()))
        if holder is not None and not m.held and self.entities[holder].held:
            self._step_aside(self.entities[holder])  # a held object never takes a real object's name
        if (m.type.casefold(), name.casefold()) in self._taken:  # the graph keeps (type, name) unique
            base = f"{name} ({m.description.strip()[:40]})" if m.description.strip() else name
            name, n = base, 2
            while (m.type.casefold(), name.casefold()) in self._taken:
                name, n = f"{base} ({n})", n + 1
        plain = _plain_form(m.name.strip(), m.type)
        ent = self._new(name, m.type, description=m.description)
        ent.base = plain
        if name != plain:
            self._index_name(ent, plain, anchor=False)
            ent.aliases.append(plain)
        self._absorb(ent, m, anchor=True)
        return ent

    def _step_aside(self, ent: Entity) -> None:
        """A held object (its name is nowhere in its part) gives its name up to a real object of the
        same name: it moves to a suffixed form ("Name (2)"), its plain name stays an alias of it."""
        base, n = ent.name, 2
        while (ent.type.casefold(), f"{base} ({n})".casefold()) in self._taken:
            n += 1
        del self._taken[(ent.type.casefold(), ent.name.casefold())]
        ent.name = f"{base} ({n})"
        self._taken[(ent.type.casefold(), ent.name.casefold())] = ent.index
        if base not in ent.aliases:
            ent.aliases.append(base)

    def _rename(self, ent: Entity, name: str) -> None:
        """A new entity takes the fullest plain form of its names as its name (the old one stays an
        alias, unless it was only the app's suffixed form)."""
        plain = _plain_form(name.strip(), ent.type)
        if not ent.is_new or ent.base != ent.name or plain_score(plain) <= plain_score(ent.name):
            return
        slot = (ent.type.casefold(), plain.casefold())
        holder = self._taken.get(slot)
        if holder is not None and not ent.held and self.entities[holder].held:
            self._step_aside(self.entities[holder])
        if slot in self._taken:
            return
        del self._taken[(ent.type.casefold(), ent.name.casefold())]
        self._taken[slot] = ent.index
        old = ent.name
        ent.name = ent.base = plain
        ent._identity = ""
        ent.aliases = [a for a in ent.aliases if a.casefold() != plain.casefold()]
        if old.casefold() not in {a.casefold() for a in ent.aliases}:
            ent.aliases.append(old)
        self._index_name(ent, plain, anchor=True)

    def _join(self, ent: Entity, m: Mention, tier: str, score: float, *, anchor: bool = True) -> Entity:
        if name_key(m.name) != name_key(ent.name) or m.name.strip() != ent.name:
            ent.merges.append(MergeRecord(m.name, ent.name, tier, round(score, 3), m.chunk, ent.existing_id is not None))
        elif ent.existing_id is not None or ent.mentions:
            ent.merges.append(MergeRecord(m.name, ent.name, tier, 1.0, m.chunk, ent.existing_id is not None))
        self._absorb(ent, m, anchor=anchor)
        return ent

    def _absorb(self, ent: Entity, m: Mention, *, anchor: bool) -> None:
        ent.mentions.append(m)
        ent.answers.setdefault(m.answer, set()).add(m.ref)
        self._rename(ent, m.name)
        if m.said_type:
            ent.said_types.add(m.said_type)
        for alias in [m.name, *m.aliases]:
            alias = alias.strip()
            if alias and alias.casefold() != ent.name.casefold() and alias.casefold() not in \
                    {a.casefold() for a in ent.aliases}:
                ent.aliases.append(alias)
            self._index_name(ent, alias, anchor=anchor)
        if m.description and not ent.description:
            ent.description = m.description
        _merge_props(ent, m.properties, f"chunk {m.chunk + 1}")

    # -- the model's verdicts ----------------------------------------------------------------------
    def settle(self, verdicts: dict[int, str]) -> None:
        """Apply the model's verdict per pair index; "same" merges (no chains), else distinct."""
        touched: set[int] = set()
        for i, pair in enumerate(self.pairs):
            verdict = verdicts.get(i, "unsure")
            pair.verdict = verdict
            if verdict != "same":
                continue
            a, b = self.find(pair.a), self.find(pair.b)
            if a.index == b.index:
                continue
            if self._entities_blocked(a, b):
                pair.verdict = "distinct"  # a guard no answer overrides
                continue
            if a.index in touched or b.index in touched or (not a.is_new and not b.is_new):
                pair.verdict = "unsure"  # one model merge per entity per round: no chains
                continue
            keep, gone = (b, a) if a.is_new else (a, b)
            self.merge(keep, gone, "model", pair.score)
            touched.update({keep.index, gone.index})

    def merge(self, keep: Entity, gone: Entity, tier: str, score: float) -> None:
        """Fold ``gone`` into ``keep``: names, properties (conflicts kept), mentions, merges."""
        keep.merges.append(MergeRecord(gone.name, keep.name, tier, score, gone.mentions[0].chunk if gone.mentions else None,
                                       keep.existing_id is not None))
        keep.merges.extend(gone.merges)
        for alias in [gone.base or gone.name, *gone.aliases]:
            if alias.casefold() != keep.name.casefold() and alias.casefold() not in {a.casefold() for a in keep.aliases}:
                keep.aliases.append(alias)
            self._index_name(keep, alias, anchor=False)
        if keep.is_new:
            self._rename(keep, gone.base or gone.name)
        keep.mentions.extend(gone.mentions)
        for answer, refs in gone.answers.items():
            keep.answers.setdefault(answer, set()).update(refs)
        keep.said_types |= gone.said_types
        if not keep.description:
            keep.description = gone.description
        _merge_props(keep, gone.properties, gone.name)
        keep.conflicts.extend(gone.conflicts)
        gone.merged_into = keep.index

    def live(self) -> list[Entity]:
        return [e for e in self.entities if e.merged_into is None]


# Forms of address only a person is called by (no rank or office: "Captain Cook" may be a ship,
# "Director General" an office, "Dr" a brand).
_ADDRESS = frozenset({"mr", "mrs", "ms", "miss", "herr", "frau", "fraulein", "monsieur", "madame", "mme", "mlle",
                      "signor", "signora"})


def addressed_as_person(names: list[str]) -> bool:
    """One of the names is a form of address and a surname or two ("Mrs Okonkwo", "Herr J. Schmidt"),
    and none has a word of a firm's name ("Mr Smith & Sons")."""
    addressed = False
    for name in names:
        words = re.findall(r"\w+", fts_normalise(name))
        if set(words) & _ORG_CUES:
            return False
        addressed = addressed or (2 <= len(words) <= 3 and words[0] in _ADDRESS)
    return addressed


def _plain_form(name: str, type_: str) -> str:
    """A person's name in reading order without a leading title ("Lind, Karin" → "Karin Lind",
    "Herr Schmidt" → "Schmidt"); other names as written."""
    if type_.casefold() != PERSON:
        return name
    name = reading_order(name)
    words = name.split()
    while len(words) > 1 and words[0].rstrip(".").casefold() in _TITLE_WORDS:
        words.pop(0)
    return " ".join(words)


def _merge_props(ent: Entity, props: dict[str, Any], source: str) -> None:
    for k, v in props.items():
        if k not in ent.properties:
            ent.properties[k] = v
        elif ent.properties[k] != v and not any(c["property"] == k and c["value"] == v for c in ent.conflicts):
            ent.conflicts.append({"property": k, "kept": ent.properties[k], "value": v, "source": source})
