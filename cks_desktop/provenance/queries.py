"""Reading provenance: the sources of a fact, the facts of a passage, what a document alone
supports, and who wrote a fact.

All reads go through ``GraphStore.connection_lock`` on the store's one connection; the
``evidence`` table's indexes (by target, by document and span start) serve every query here.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cks_desktop.graph.evidence import COLS
from cks_desktop.provenance.model import Authorship, Evidence, Source, author_of

if TYPE_CHECKING:
    from cks_desktop.graph.model import Object, Relation
    from cks_desktop.graph.store import GraphStore

_SELECT = f"SELECT {', '.join('e.' + c.strip() for c in COLS.split(','))}, e.session_id FROM evidence e "


def _row(row: tuple[Any, ...]) -> Evidence:
    return Evidence(id=row[0], target_kind=row[1], target_id=row[2], document_id=row[3], chunk_index=row[4],
                    start=row[5], end=row[6], page=row[7], quote=row[8], alignment=row[9], review=row[10],
                    origin=row[11], change_id=row[12], created_at=row[13], session_id=row[14])


def _fetch(conn: sqlite3.Connection, where: str, params: tuple[Any, ...]) -> list[Evidence]:
    return [_row(r) for r in conn.execute(_SELECT + where, params)]


def evidence_of(store: "GraphStore", session_id: str, kind: str, target_id: str) -> list[Evidence]:
    """Every source of one object or relation, oldest first."""
    store.get_session(session_id)
    with store.connection_lock() as conn:
        return _fetch(conn, "WHERE e.session_id = ? AND e.target_kind = ? AND e.target_id = ? ORDER BY e.id",
                      (session_id, kind, target_id))


def sources_of(store: "GraphStore", session_id: str, kind: str, target_id: str) -> list[Source]:
    """The sources of one object or relation with their documents' names, in document order
    (then by position in the document)."""
    store.get_session(session_id)
    with store.connection_lock() as conn:
        rows = conn.execute(
            _SELECT.replace("FROM evidence e", ", d.name FROM evidence e LEFT JOIN documents d "
                            "ON d.session_id = e.session_id AND d.id = e.document_id")
            + "WHERE e.session_id = ? AND e.target_kind = ? AND e.target_id = ? "
            "ORDER BY d.n IS NULL, d.n, e.span_start, e.id", (session_id, kind, target_id)).fetchall()
    return [Source(_row(r[:15]), r[15]) for r in rows]


def evidence_of_document(store: "GraphStore", session_id: str, document_id: str) -> list[Evidence]:
    """Every source citing one document, in text order."""
    store.get_session(session_id)
    with store.connection_lock() as conn:
        return _fetch(conn, "WHERE e.session_id = ? AND e.document_id = ? ORDER BY e.span_start, e.id",
                      (session_id, document_id))


def in_span(store: "GraphStore", session_id: str, document_id: str, start: int, end: int) -> list[Evidence]:
    """The sources whose passage overlaps ``[start, end)`` of a document (a selection in the
    viewer; an empty selection at ``start`` finds the passages around that point)."""
    store.get_session(session_id)
    end = max(end, start + 1)
    with store.connection_lock() as conn:
        return _fetch(conn, "WHERE e.session_id = ? AND e.document_id = ? AND e.span_start < ? AND e.span_end > ? "
                      "ORDER BY e.span_start, e.id", (session_id, document_id, end, start))


@dataclass
class SpanFacts:
    """What came from a passage: the objects and relations whose sources overlap it."""

    objects: list["Object"] = field(default_factory=list)
    relations: list["Relation"] = field(default_factory=list)


def facts_in_span(store: "GraphStore", session_id: str, document_id: str, start: int, end: int) -> SpanFacts:
    """The objects and relations that came from ``[start, end)`` of a document (each once)."""
    from cks_desktop.graph.errors import NotFound

    out = SpanFacts()
    seen: set[str] = set()
    for e in in_span(store, session_id, document_id, start, end):
        if e.target_id in seen:
            continue
        seen.add(e.target_id)
        try:
            if e.target_kind == "object":
                out.objects.append(store.get_object(session_id, e.target_id))
            else:
                out.relations.append(store.get_relation(session_id, e.target_id))
        except NotFound:
            continue
    return out


@dataclass
class Orphans:
    """What removing a document would leave without any source."""

    objects: list["Object"] = field(default_factory=list)
    relations: list["Relation"] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)  # every source citing the document

    @property
    def empty(self) -> bool:
        return not self.objects and not self.relations


def orphans_of_document(store: "GraphStore", session_id: str, document_id: str) -> Orphans:
    """The document's sources, and the objects and relations whose ONLY sources cite it
    (facts that never had a source — typed in by hand — are not orphans: nothing changed
    for them)."""
    from cks_desktop.graph.errors import NotFound

    out = Orphans(evidence=evidence_of_document(store, session_id, document_id))
    with store.connection_lock() as conn:
        rows = conn.execute(
            "SELECT DISTINCT e.target_kind, e.target_id FROM evidence e WHERE e.session_id = ? AND e.document_id = ? "
            "AND NOT EXISTS (SELECT 1 FROM evidence o WHERE o.session_id = e.session_id "
            "AND o.target_kind = e.target_kind AND o.target_id = e.target_id "
            "AND (o.document_id IS NULL OR o.document_id != e.document_id)) ORDER BY e.target_id",
            (session_id, document_id)).fetchall()
    for kind, ident in rows:
        try:
            if kind == "object":
                out.objects.append(store.get_object(session_id, ident))
            else:
                out.relations.append(store.get_relation(session_id, ident))
        except NotFound:
            continue
    removed = {o.id for o in out.objects}  # their relations go with them
    out.relations = [r for r in out.relations if r.source_id not in removed and r.target_id not in removed]
    return out


def authorship(store: "GraphStore", session_id: str, object_id: str, limit: int = 20) -> list[Authorship]:
    """Who wrote an object or its relations, newest first: derived from the change log (the
    change's origin) and, for chat writes, the chat message whose tool call made the change."""
    changes = store.changes_touching(session_id, object_id, limit)
    if not changes:
        return []
    with store.connection_lock() as conn:
        try:
            messages = dict(conn.execute(
                "SELECT change_id, message_id FROM chat_tool_calls WHERE session_id = ? AND change_id IN "
                "(SELECT value FROM json_each(?))", (session_id, _json([c.id for c in changes]))).fetchall())
        except sqlite3.Error:  # (connection_lock turns errors into DatabaseError; kept for clarity)
            messages = {}
    return [Authorship(c.id, c.at, author_of(c.origin), c.origin, c.summary, messages.get(c.id)) for c in changes]


def _json(values: list[str]) -> str:
    from cks_desktop.graph.sqlite_util import json_list

    return json_list(values)
