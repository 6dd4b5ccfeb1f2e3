"""Evidence ops in a batch: where a fact came from, written with the fact.

Evidence rows (table ``evidence``, schema migration 7) are written through the same
planner, the same transaction and the same ``Change`` as the objects and relations they
support, so one revert takes a fact and its sources away together, and removing an
object takes its sources with it (the inverse restores both). The ops:

  {"op": "add_evidence", "object": ref-or-$label  XOR  "relation": relation_id-or-$label,
   "document_id": str|None, "chunk_index": int|None, "start": int|None, "end": int|None,
   "page": int|None, "quote": str, "alignment": "exact"|"fuzzy"|"unaligned"|"none",
   "review": "auto"|"accepted"|"edited"|"pending", "origin": "extraction"|"person"|"chat"|"import",
   "id"?: str}                      # "id", "created_at", "change_id": internal (reverts, imports)
  {"op": "remove_evidence", "evidence_id": str}
  {"op": "move_evidence", "evidence_id": str, "object"|"relation": ...}   # internal: merges
  {"op": "set_evidence_review", "evidence_id": str, "review": "auto"|"accepted"|"edited"|"pending"}
                                    # a person's check; inverse: the same op with the old state;
                                    # the state it already has: nothing (``outcome: unchanged``)

Rules (checked before anything is written):
- the target exists, or is a label an earlier op of the batch defined;
- a ``document_id`` names a document of the session; ``start``/``end`` come together, need a
  document and lie within its text; ``alignment: exact`` needs a span with
  ``text[start:end] == quote``; a page, when the document has pages, is one of them (and is
  derived from ``start`` when not given);
- adding a source the target already has (same document, span and quote) changes nothing
  (``outcome: reused``): re-importing or re-extracting a document adds no duplicates.

This module holds the evidence part of the batch state (``EvidenceView``, loaded lazily and
only for the targets a batch touches; a session without evidence costs one query) and the
row writes; ``graph/batch.py`` calls it from its op handlers. The SQL is here and in
``write_evidence`` only, so another backend replaces these two pieces.
"""

from __future__ import annotations

import sqlite3
from typing import Any, Literal, get_args

from cks_desktop.graph.validation import OpError, check_timestamp
from cks_desktop.graph.sqlite_util import is_id, json_list

Alignment = Literal["exact", "fuzzy", "unaligned", "none"]
Review = Literal["auto", "accepted", "edited", "pending"]
EvidenceOrigin = Literal["extraction", "person", "chat", "import"]
TargetKind = Literal["object", "relation"]
ALIGNMENTS: tuple[str, ...] = get_args(Alignment)
REVIEWS: tuple[str, ...] = get_args(Review)
ORIGINS: tuple[str, ...] = get_args(EvidenceOrigin)

EVIDENCE_OPS = ("add_evidence", "remove_evidence", "move_evidence", "set_evidence_review")
ADD_FIELDS = {"op", "object", "relation", "document_id", "chunk_index", "start", "end", "page", "quote",
              "alignment", "review", "origin", "id", "created_at", "change_id"}
REMOVE_FIELDS = {"op", "evidence_id"}
MOVE_FIELDS = {"op", "evidence_id", "object", "relation"}
REVIEW_FIELDS = {"op", "evidence_id", "review"}
MAX_QUOTE = 20000  # characters: a quote is a passage, not a document

COLS = ("id, target_kind, target_id, document_id, chunk_index, span_start, span_end, page, quote, "
        "alignment, review, origin, change_id, created_at")


class EvState:
    """One evidence row as the batch currently sees it."""

    __slots__ = ("id", "target_kind", "target_id", "document_id", "chunk_index", "start", "end", "page",
                 "quote", "alignment", "review", "origin", "change_id", "created_at", "existed", "alive", "dirty")

    def __init__(self, id: str, target_kind: str, target_id: str, document_id: str | None,
                 chunk_index: int | None, start: int | None, end: int | None, page: int | None, quote: str,
                 alignment: str, review: str, origin: str, change_id: str | None, created_at: str | None,
                 existed: bool) -> None:
        self.id = id
        self.target_kind = target_kind
        self.target_id = target_id
        self.document_id = document_id
        self.chunk_index = chunk_index
        self.start = start
        self.end = end
        self.page = page
        self.quote = quote
        self.alignment = alignment
        self.review = review
        self.origin = origin
        self.change_id = change_id  # None until written: the change that writes it
        self.created_at = created_at  # None until written: the change's time
        self.existed = existed
        self.alive = True
        self.dirty = False

    @property
    def key(self) -> tuple[Any, ...]:
        """What makes two sources of one target the same source."""
        return (self.document_id, self.start, self.end, self.quote)

    def snapshot(self) -> dict[str, Any]:
        """The op that re-creates this row exactly (inverse of its removal)."""
        return {"op": "add_evidence", "id": self.id, self.target_kind: self.target_id,
                "document_id": self.document_id, "chunk_index": self.chunk_index, "start": self.start,
                "end": self.end, "page": self.page, "quote": self.quote, "alignment": self.alignment,
                "review": self.review, "origin": self.origin, "change_id": self.change_id,
                "created_at": self.created_at}


def _state(row: tuple[Any, ...]) -> EvState:
    return EvState(row[0], row[1], row[2], row[3], row[4], row[5], row[6], row[7], row[8], row[9], row[10],
                   row[11], row[12], row[13], existed=True)


class EvidenceView:
    """The evidence rows a batch touches, plus what it adds; and the documents it cites."""

    def __init__(self, conn: sqlite3.Connection, session_id: str) -> None:
        self.conn = conn
        self.session_id = session_id
        self.items: dict[str, EvState] = {}
        self._by_target: dict[tuple[str, str], set[str]] = {}
        self._loaded: set[tuple[str, str]] = set()
        self._missing: set[str] = set()
        self._has_any: bool | None = None
        self._documents: dict[str, tuple[int, tuple[int, ...]] | None] = {}
        self._texts: dict[str, str] = {}  # document id -> its text, read on the first exact quote
        self.touched: set[str] = set()  # object ids whose sources changed (the change index)

    @property
    def has_any(self) -> bool:
        """Whether the session had any evidence before the batch (else nothing is loaded)."""
        if self._has_any is None:
            self._has_any = self.conn.execute("SELECT 1 FROM evidence WHERE session_id = ? LIMIT 1",
                                              (self.session_id,)).fetchone() is not None
        return self._has_any

    @property
    def changed(self) -> bool:
        return any(st.dirty for st in self.items.values())

    def _index(self, st: EvState) -> None:
        self.items[st.id] = st
        if st.alive:
            self._by_target.setdefault((st.target_kind, st.target_id), set()).add(st.id)

    def get(self, evidence_id: str) -> EvState | None:
        st = self.items.get(evidence_id)
        if st is None and evidence_id not in self._missing and self.has_any:
            row = self.conn.execute(f"SELECT {COLS} FROM evidence WHERE session_id = ? AND id = ?",
                                    (self.session_id, evidence_id)).fetchone()
            if row is None:
                self._missing.add(evidence_id)
            else:
                st = _state(row)
                self._index(st)
        return st

    def prefetch_ids(self, evidence_ids: list[str]) -> None:
        """Load many rows by id in one query (a revert removing thousands of sources)."""
        wanted = [i for i in set(evidence_ids) if i not in self.items and i not in self._missing]
        if not wanted or not self.has_any:
            return
        for row in self.conn.execute(f"SELECT {COLS} FROM evidence WHERE session_id = ? "
                                     "AND id IN (SELECT value FROM json_each(?))", (self.session_id, json_list(wanted))):
            self._index(_state(row))
        self._missing.update(set(wanted) - set(self.items))

    def prefetch(self, kind: str, target_ids: list[str]) -> None:
        """Load the evidence of many targets in one query (a removal of many objects)."""
        wanted = [t for t in set(target_ids) if (kind, t) not in self._loaded]
        if not wanted or not self.has_any:
            return
        for row in self.conn.execute(f"SELECT {COLS} FROM evidence WHERE session_id = ? AND target_kind = ? "
                                     "AND target_id IN (SELECT value FROM json_each(?))",
                                     (self.session_id, kind, json_list(wanted))):
            if row[0] not in self.items:
                self._index(_state(row))
        self._loaded.update((kind, t) for t in wanted)

    def of(self, kind: str, target_id: str, fresh: bool = False) -> list[EvState]:
        """Alive evidence of one target (rows plus the batch's edits), id order. ``fresh``: the
        target is new in this batch, so the database has none of its rows (no query)."""
        key = (kind, target_id)
        if key not in self._loaded:
            self._loaded.add(key)
            if self.has_any and not fresh:
                for row in self.conn.execute(f"SELECT {COLS} FROM evidence WHERE session_id = ? AND "
                                             "target_kind = ? AND target_id = ?", (self.session_id, kind, target_id)):
                    if row[0] not in self.items:
                        self._index(_state(row))
        return sorted((self.items[i] for i in self._by_target.get(key, ())), key=lambda s: s.id)

    def used_elsewhere(self, evidence_id: str) -> bool:
        """Whether another session already has a row with this id (ids are global)."""
        return self.conn.execute("SELECT 1 FROM evidence WHERE id = ? AND session_id != ?",
                                 (evidence_id, self.session_id)).fetchone() is not None

    def add(self, st: EvState) -> None:
        self._missing.discard(st.id)
        st.dirty = True
        self._index(st)

    def kill(self, st: EvState) -> None:
        st.alive = False
        st.dirty = True
        self._by_target.get((st.target_kind, st.target_id), set()).discard(st.id)

    def move(self, st: EvState, kind: str, target_id: str) -> None:
        self._by_target.get((st.target_kind, st.target_id), set()).discard(st.id)
        st.target_kind, st.target_id = kind, target_id
        st.dirty = True
        self._by_target.setdefault((kind, target_id), set()).add(st.id)

    def document(self, document_id: str) -> tuple[int, tuple[int, ...]] | None:
        """(characters, page starts) of a document of the session, or None."""
        if document_id not in self._documents:
            row = self.conn.execute("SELECT length(text), page_starts FROM documents WHERE session_id = ? AND id = ?",
                                    (self.session_id, document_id)).fetchone()
            if row is None:
                self._documents[document_id] = None
            else:
                import json

                self._documents[document_id] = (int(row[0]), tuple(int(s) for s in json.loads(row[1])))
        return self._documents[document_id]

    def passage(self, document_id: str, start: int, end: int) -> str:
        """``text[start:end]`` of a document. The text is read once per batch and sliced here:
        SQLite's ``substr`` walks the UTF-8 text from its start on every call, which made a
        batch of many sources in one long document quadratic."""
        text = self._texts.get(document_id)
        if text is None:
            row = self.conn.execute("SELECT text FROM documents WHERE session_id = ? AND id = ?",
                                    (self.session_id, document_id)).fetchone()
            text = self._texts[document_id] = str(row[0]) if row is not None else ""
        return text[start:end]


def page_of(page_starts: tuple[int, ...], offset: int) -> int | None:
    """The 1-based page holding character ``offset``; None for a document without pages."""
    if not page_starts:
        return None
    import bisect

    return max(1, bisect.bisect_right(page_starts, offset))


def _opt_int(op: dict[str, Any], field: str, minimum: int) -> int | None:
    value = op.get(field)
    if value is None:
        return None
    if type(value) is not int or value < minimum:
        raise OpError(f"'{field}' must be a whole number of at least {minimum}, or null")
    return value


def choice(op: dict[str, Any], field: str, allowed: tuple[str, ...], default: str) -> str:
    value = op.get(field, default)
    if value is None:
        value = default
    if value not in allowed:
        raise OpError(f"'{field}' must be one of {', '.join(allowed)}, got {value!r}")
    return str(value)


def check_passage(op: dict[str, Any], view: EvidenceView) -> tuple[str | None, int | None, int | None, int | None,
                                                                   int | None, str, str]:
    """The validated document fields of an ``add_evidence`` op:
    ``(document_id, chunk_index, start, end, page, quote, alignment)``."""
    document_id = op.get("document_id")
    if document_id is not None and (not isinstance(document_id, str) or not document_id):
        raise OpError("'document_id' must be a document's id (its sha256) or null")
    chunk_index = _opt_int(op, "chunk_index", 0)
    start, end = _opt_int(op, "start", 0), _opt_int(op, "end", 0)
    page = _opt_int(op, "page", 1)
    quote = op.get("quote", "")
    if not isinstance(quote, str):
        raise OpError("'quote' must be a string")
    if len(quote) > MAX_QUOTE:
        raise OpError(f"'quote' is {len(quote)} characters long; the limit is {MAX_QUOTE}")
    try:
        quote.encode("utf-8")
    except UnicodeEncodeError:
        raise OpError("'quote' contains text that is not valid Unicode (a lone surrogate)") from None
    alignment = choice(op, "alignment", ALIGNMENTS, "none")
    if (start is None) != (end is None):
        raise OpError("'start' and 'end' come together (a character span [start, end))")
    if start is not None and end is not None and start > end:
        raise OpError(f"the span [{start}, {end}) ends before it starts")
    if document_id is None:
        if start is not None or page is not None or chunk_index is not None:
            raise OpError("a span, page or chunk needs a 'document_id'")
        if alignment in ("exact", "fuzzy"):
            raise OpError(f"alignment {alignment!r} needs a document and a span")
        return None, None, None, None, None, quote, alignment
    doc = view.document(document_id)
    if doc is None:
        raise OpError(f"the session has no document {document_id!r}")
    length, starts = doc
    if end is not None and end > length:
        raise OpError(f"the span [{start}, {end}) lies outside the document ({length} characters)")
    if alignment in ("exact", "fuzzy") and start is None:
        raise OpError(f"alignment {alignment!r} needs a span (start and end)")
    if alignment == "exact" and start is not None and end is not None:
        found = view.passage(document_id, start, end)
        if found != quote:
            raise OpError(f"the quote is not the document's text at [{start}, {end}) (alignment 'exact')")
    if page is not None and starts and page > len(starts):
        raise OpError(f"page {page} is past the document's last page ({len(starts)})")
    if page is None and start is not None:
        page = page_of(starts, start)
    return document_id, chunk_index, start, end, page, quote, alignment


def check_review(op: dict[str, Any]) -> str:
    """The required ``review`` of a ``set_evidence_review`` op."""
    value = op.get("review")
    if value not in REVIEWS:
        raise OpError(f"'review' must be one of {', '.join(REVIEWS)}, got {value!r}")
    return str(value)


def check_evidence_id(value: Any, field: str = "evidence_id") -> str:
    if not isinstance(value, str) or not is_id(value, "e_"):
        raise OpError(f"'{field}' must be an evidence id made by CKS Desktop (e_…), got {value!r}")
    return value


def check_internal(op: dict[str, Any]) -> tuple[str | None, str | None]:
    """``(created_at, change_id)`` of a restored row (reverts), both None for a new one."""
    created = check_timestamp(op.get("created_at"), "created_at")
    change_id = op.get("change_id")
    if change_id is not None and (not isinstance(change_id, str) or not is_id(change_id, "c_")):
        raise OpError(f"'change_id' must be a change id (c_…), got {change_id!r}")
    return created, change_id


def write_evidence(conn: sqlite3.Connection, session_id: str, view: EvidenceView, change_id: str, at: str) -> bool:
    """Write the batch's net evidence rows; True when any row changed."""
    delete: list[tuple[str, str]] = []
    insert: list[tuple[Any, ...]] = []
    update: list[tuple[Any, ...]] = []
    for st in view.items.values():
        if not st.dirty:
            continue
        if not st.alive:
            if st.existed:
                delete.append((session_id, st.id))
            continue
        if st.change_id is None:
            st.change_id = change_id
        if st.created_at is None:
            st.created_at = at
        row = (st.target_kind, st.target_id, st.document_id, st.chunk_index, st.start, st.end, st.page,
               st.quote, st.alignment, st.review, st.origin, st.change_id, st.created_at)
        if st.existed:
            update.append(row + (session_id, st.id))
        else:
            insert.append((st.id, session_id) + row)
    if delete:
        conn.executemany("DELETE FROM evidence WHERE session_id = ? AND id = ?", delete)
    if update:
        conn.executemany("UPDATE evidence SET target_kind = ?, target_id = ?, document_id = ?, chunk_index = ?, "
                         "span_start = ?, span_end = ?, page = ?, quote = ?, alignment = ?, review = ?, origin = ?, "
                         "change_id = ?, created_at = ? WHERE session_id = ? AND id = ?", update)
    if insert:
        conn.executemany("INSERT INTO evidence (id, session_id, target_kind, target_id, document_id, chunk_index, "
                         "span_start, span_end, page, quote, alignment, review, origin, change_id, created_at) "
                         "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", insert)
    return bool(delete or update or insert)


def export_rows(conn: sqlite3.Connection, session_id: str) -> list[dict[str, Any]]:
    """The session's evidence as cks-graph version 2 entries (targets by id, no evidence or
    change ids: an importing session mints its own), in target then text order."""
    out: list[dict[str, Any]] = []
    for row in conn.execute("SELECT target_kind, target_id, document_id, chunk_index, span_start, span_end, page, "
                            "quote, alignment, review, origin, created_at FROM evidence WHERE session_id = ? "
                            "ORDER BY target_kind, target_id, document_id, span_start, id", (session_id,)):
        out.append({row[0]: row[1], "document_id": row[2], "chunk_index": row[3], "start": row[4], "end": row[5],
                    "page": row[6], "quote": row[7], "alignment": row[8], "review": row[9], "origin": row[10],
                    "created_at": row[11]})
    return out
