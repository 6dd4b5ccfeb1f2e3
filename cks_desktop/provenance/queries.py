"""Reading provenance: the sources of a fact, the facts of a passage, what a document alone
supports, and who wrote a fact.

All reads go through ``GraphStore.connection_lock`` on the store's one connection; the
``evidence`` table's indexes (by target, by document and span start) serve every query here.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
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


def _targets(store: "GraphStore", session_id: str, pairs: list[tuple[str, str]]) -> tuple[list["Object"],
                                                                                          list["Relation"]]:
    """The objects and relations ``(kind, id)`` names, in that order, in two queries (gone ones left out)."""
    from cks_desktop.graph import rows as R
    from cks_desktop.graph.sqlite_util import json_list

    out: dict[str, list[Any]] = {"object": [], "relation": []}
    with store.connection_lock() as conn:
        for kind, table, cols, make in (("object", "objects", R.OBJECT_COLS, R.obj),
                                        ("relation", "relations", R.RELATION_COLS, R.relation)):
            ids = [i for k, i in pairs if k == kind]
            if not ids:
                continue
            found = {r[0]: make(r) for r in conn.execute(
                f"SELECT {cols} FROM {table} WHERE session_id = ? AND id IN (SELECT value FROM json_each(?))",
                (session_id, json_list(ids)))}
            out[kind] = [found[i] for i in ids if i in found]
    return out["object"], out["relation"]


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


def sources_of_many(store: "GraphStore", session_id: str, kind: str, target_ids: list[str]) -> dict[str, list[Source]]:
    """``sources_of`` for many targets in one query (an object's relations, for the inspector:
    a hub's thousands of relations would otherwise be a query each)."""
    from cks_desktop.graph.sqlite_util import json_list

    if not target_ids:
        return {}
    store.get_session(session_id)
    with store.connection_lock() as conn:
        rows = conn.execute(
            _SELECT.replace("FROM evidence e", ", d.name FROM evidence e LEFT JOIN documents d "
                            "ON d.session_id = e.session_id AND d.id = e.document_id")
            + "WHERE e.session_id = ? AND e.target_kind = ? AND e.target_id IN (SELECT value FROM json_each(?)) "
            "ORDER BY d.n IS NULL, d.n, e.span_start, e.id", (session_id, kind, json_list(target_ids))).fetchall()
    out: dict[str, list[Source]] = {}
    for r in rows:
        out.setdefault(str(r[2]), []).append(Source(_row(r[:15]), r[15]))
    return out


def evidence_of_document(store: "GraphStore", session_id: str, document_id: str) -> list[Evidence]:
    """Every source citing one document, in text order."""
    store.get_session(session_id)
    with store.connection_lock() as conn:
        return _fetch(conn, "WHERE e.session_id = ? AND e.document_id = ? ORDER BY e.span_start, e.id",
                      (session_id, document_id))


def cited_documents(store: "GraphStore", session_id: str) -> dict[str, int]:
    """document id -> how many sources cite it (documents nothing cites are left out)."""
    store.get_session(session_id)
    with store.connection_lock() as conn:
        return {str(r[0]): int(r[1]) for r in conn.execute(
            "SELECT document_id, count(*) FROM evidence WHERE session_id = ? AND document_id IS NOT NULL "
            "GROUP BY document_id ORDER BY document_id", (session_id,))}


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
    pairs = list(dict.fromkeys((e.target_kind, e.target_id) for e in in_span(store, session_id, document_id,
                                                                               start, end)))
    objects, relations = _targets(store, session_id, pairs)
    return SpanFacts(objects, relations)


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
    out = Orphans(evidence=evidence_of_document(store, session_id, document_id))
    with store.connection_lock() as conn:
        rows = conn.execute(
            "SELECT DISTINCT e.target_kind, e.target_id FROM evidence e WHERE e.session_id = ? AND e.document_id = ? "
            "AND NOT EXISTS (SELECT 1 FROM evidence o WHERE o.session_id = e.session_id "
            "AND o.target_kind = e.target_kind AND o.target_id = e.target_id "
            "AND (o.document_id IS NULL OR o.document_id != e.document_id)) ORDER BY e.target_id",
            (session_id, document_id)).fetchall()
    out.objects, out.relations = _targets(store, session_id, [(str(k), str(i)) for k, i in rows])
    removed = {o.id for o in out.objects}  # their relations go with them
    out.relations = [r for r in out.relations if r.source_id not in removed and r.target_id not in removed]
    return out


MessagesOf = Callable[[str, list[str]], dict[str, int]]  # (session, change ids) -> change id -> chat message id


def authorship(store: "GraphStore", session_id: str, object_id: str, limit: int = 20,
               messages_of: MessagesOf | None = None) -> list[Authorship]:
    """Who wrote an object or its relations, newest first: derived from the change log (the
    change's origin). ``messages_of`` (the transcript's ``messages_for_changes``: the chat
    tables belong to ``agent/transcript.py``) adds, for chat writes, the chat message whose
    tool call made the change; callers below the agent layer (the tools) go without it."""
    changes = store.changes_touching(session_id, object_id, limit)
    messages = messages_of(session_id, [c.id for c in changes]) if changes and messages_of else {}
    return [Authorship(c.id, c.at, author_of(c.origin), c.origin, c.summary, messages.get(c.id)) for c in changes]
