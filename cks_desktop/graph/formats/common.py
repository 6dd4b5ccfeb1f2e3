"""What every importer shares: a parsed graph, turned into ONE batch.

Importers only parse; this module decides ids and conflicts and reports
failures as one sentence that says where in the input the problem is.

- Ids are kept when importing into an EMPTY session, when every id has the
  shape of an id this app makes, and when none is used anywhere in the
  database (ids are global); otherwise every object and relation gets a new id.
- In a non-empty session an imported object with the same type and name as an
  existing one is merged into it (``on_conflict: update``); relations may also
  point at existing objects by name.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cks_desktop.graph.errors import StoreError, ValidationFailed
from cks_desktop.graph.sqlite_util import is_id, json_list

if TYPE_CHECKING:
    from cks_desktop.graph.store import ApplyResult, GraphStore


@dataclass(frozen=True)
class CarriedDocuments:
    """Documents an import brings with its graph, written in the import's OWN transaction.

    Why one transaction: the graph's sources cite the documents, so documents without their
    graph (or a graph whose sources were left out for want of its documents) must never be
    what a kill -9 leaves. ``write(conn)`` inserts them on the import's connection before the
    graph's first op and says whether it stored any; ``ids`` are the ids they are stored
    under; ``renamed`` maps an id the file carried to the id it is stored under (the
    evidence's ``document_id`` follows it, and nothing else in the file is touched)."""

    write: Callable[[sqlite3.Connection], bool]
    ids: frozenset[str]
    renamed: Mapping[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class ParsedObject:
    key: str  # the object's id inside the input (used by relations)
    type: str
    name: str
    properties: dict[str, Any]
    where: str | None  # "line 3", "node 'n0'", "object 2"; None: "object {i} ({key})" (made on need)


@dataclass(slots=True)
class ParsedRelation:
    id: str | None
    type: str
    source: str  # a ParsedObject.key, or a name/id of an object already in the session
    target: str
    properties: dict[str, Any]
    where: str | None  # None: "relation {i} ({id})"


@dataclass(slots=True)
class ParsedEvidence:
    """A source of an object or relation of the input (cks-graph version 2)."""

    kind: str  # "object" | "relation"
    target: str  # a ParsedObject.key or a ParsedRelation.id of the input
    fields: dict[str, Any]  # the add_evidence fields (document_id, start, end, page, quote, ...)
    where: str  # "evidence 3"


@dataclass
class ParsedGraph:
    objects: list[ParsedObject] = field(default_factory=list)
    relations: list[ParsedRelation] = field(default_factory=list)
    evidence: list[ParsedEvidence] = field(default_factory=list)


class ImportRefused(StoreError):
    """An import refused as a whole; ``problems`` names EVERY problem ("where: what"), never
    "and 20 more": the CLI prints the whole sentence, the window lists them all."""

    def __init__(self, problems: list[str], hint: str = "") -> None:
        self.problems = [p.rstrip(". ") for p in problems]
        self.hint = hint
        problems = self.problems
        if len(problems) == 1:
            text = f"Nothing was imported: {problems[0]}"
        else:
            text = f"Nothing was imported: {len(problems)} problems: " + "; ".join(problems)
        if hint:
            text += f" ({hint})"
        super().__init__(text if text.endswith((".", "?", "!")) else text + ".")


PREFIX = "Nothing was imported: "


class Problems:
    """Collects a parser's per-element problems so a refusal names all of them."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, exc: StoreError) -> None:
        text = str(exc)
        self.items.append(text[len(PREFIX):].rstrip(".") if text.startswith(PREFIX) else text.rstrip("."))

    def check(self) -> None:
        if self.items:
            raise ImportRefused(self.items)


def apply_import(store: "GraphStore", session_id: str, graph: ParsedGraph, origin: str,
                 on_conflict: str | None = None, documents: CarriedDocuments | None = None) -> "ApplyResult":
    """The parsed graph as ONE change, streamed: its ops are made chunk by chunk while the
    store plans and writes them (``GraphStore.apply_stream``), so the import never holds
    all its ops, their states and inverses at once.

    ``on_conflict`` None is the store's long-standing rule (merge into objects already in
    the session, refuse repeats inside the file into an empty one); ``skip`` / ``merge`` /
    ``rename`` / ``error`` are the person's choice (``formats/conflicts.py``). ``documents``:
    the documents the file carries, written first in the same transaction (``CarriedDocuments``)."""
    from cks_desktop.graph.formats.conflicts import existing_objects, name_taken_in, outcome_words, resolve

    empty = store.counts(session_id)["objects"] == 0
    keep_ids = empty and _ids_are_free(store, graph)
    index = {o.key: i for i, o in enumerate(graph.objects)}
    extra: dict[str, int] = {}
    if on_conflict is None:
        mode = "error" if empty else "update"
        refs = [f"$import{i}" for i in range(len(graph.objects))]

        def object_ops() -> Iterator[tuple[int, dict[str, Any]]]:
            for i, o in enumerate(graph.objects):
                op: dict[str, Any] = {"op": "add_object", "type": o.type, "name": o.name, "properties": o.properties,
                                      "label": f"$import{i}", "on_conflict": mode}
                if keep_ids:
                    op["id"] = o.key
                yield i, op
        dedupe = False
    else:
        plan = resolve(graph, existing_objects(store, session_id, graph), on_conflict, keep_ids,
                       name_taken_in(store, session_id))
        refs = plan.ref
        extra = dict(plan.counts)
        dedupe = plan.dedupe_relations

        def object_ops() -> Iterator[tuple[int, dict[str, Any]]]:
            for i, op in enumerate(plan.ops):
                if op is not None:
                    yield i, op
    # (type key, source, target) -> the relation already there (its id), or None for a repeat inside the file
    seen: dict[tuple[str, str, str], str | None] = (
        _existing_relations(store, session_id, graph, refs, index) if dedupe else {})
    cited = {e.target for e in graph.evidence if e.kind == "relation"}  # relations that need a label
    rel_ref: dict[str, str] = {}  # relation id in the input -> its label in this import
    carried = documents
    known = _session_documents(store, session_id) if graph.evidence else set()
    renamed: Mapping[str, str] = {}
    if carried is not None:
        known |= carried.ids
        renamed = carried.renamed

    def items() -> Iterator[tuple[int, dict[str, Any]]]:
        yield from object_ops()
        base = len(graph.objects)
        for j, r in enumerate(graph.relations):
            s, t = index.get(r.source), index.get(r.target)
            source = r.source if s is None else refs[s]
            target = r.target if t is None else refs[t]
            if dedupe:
                key = (r.type.strip().casefold(), source, target)
                if key in seen:
                    extra["relations_skipped"] = extra.get("relations_skipped", 0) + 1
                    there = seen[key]
                    if there is not None and r.id is not None and r.id in cited:
                        rel_ref[r.id] = there  # its sources go to the relation already there
                    continue
                seen[key] = None
            op: dict[str, Any] = {"op": "add_relation", "type": r.type, "properties": r.properties,
                                  "source": source, "target": target}
            if keep_ids and r.id is not None:
                op["id"] = r.id
            if r.id is not None and r.id in cited:
                op["label"] = rel_ref[r.id] = f"$importrel{j}"
            yield base + j, op
        yield from evidence_ops(graph, refs, index, rel_ref, known, extra, base + len(graph.relations),
                                renamed)

    try:
        result = store.apply_stream(session_id, items(), origin,
                                    prelude=carried.write if carried is not None else None)
    except ValidationFailed as exc:
        raise ImportRefused([f"{_where(graph, e['index'])}: {e['message']}" for e in exc.errors]) from None
    result.created = {}  # the import's own labels mean nothing to the caller
    if extra:
        result.counts.update(extra)
        words = outcome_words(extra)
        if words:
            result.summary = f"{result.summary}; {words}" if result.change is not None else words
    return result


def evidence_ops(graph: ParsedGraph, refs: list[str], index: dict[str, int], rel_ref: dict[str, str],
                 documents: set[str], extra: dict[str, int], base: int,
                 renamed: Mapping[str, str] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """The input's sources as ``add_evidence`` ops on the imported objects and relations
    (after them, so labels resolve). A source whose relation was left out as a repeat, or
    whose document is not in the session (an import without its documents), is left out and
    counted (``sources_skipped``): the facts still import, their passages cannot be shown.
    ``renamed``: a carried document id stored under another id (only ``document_id`` follows it)."""
    for k, e in enumerate(graph.evidence):  # (the parser checked that every target is in the input)
        ref = refs[index[e.target]] if e.kind == "object" else rel_ref.get(e.target)
        fields = e.fields
        doc = fields.get("document_id")
        if renamed and isinstance(doc, str) and doc in renamed:
            doc = renamed[doc]
            fields = {**fields, "document_id": doc}
        if ref is None or (isinstance(doc, str) and doc not in documents):
            extra["sources_skipped"] = extra.get("sources_skipped", 0) + 1
            continue
        yield base + k, {"op": "add_evidence", e.kind: ref, **fields}


def _session_documents(store: "GraphStore", session_id: str) -> set[str]:
    with store.connection_lock() as conn:
        return {r[0] for r in conn.execute("SELECT id FROM documents WHERE session_id = ?", (session_id,))}


def _existing_relations(store: "GraphStore", session_id: str, graph: ParsedGraph, refs: list[str],
                        index: dict[str, int]) -> dict[tuple[str, str, str], str | None]:
    """(type key, source id, target id) → relation id, of the session's relations between
    objects the file's relations reach that are already there (ids, not labels of this import)."""
    ends = set()
    for r in graph.relations:
        for end in (r.source, r.target):
            i = index.get(end)
            ref = end if i is None else refs[i]
            if not ref.startswith("$"):
                ends.add(ref)
    if not ends:
        return {}
    with store.connection_lock() as conn:
        rows = conn.execute("SELECT type, source_id, target_id, id FROM relations WHERE session_id = ? "
                            "AND source_id IN (SELECT value FROM json_each(?)) ORDER BY id",
                            (session_id, json_list(sorted(ends)))).fetchall()
    found: dict[tuple[str, str, str], str | None] = {}
    for t, s, d, ident in rows:
        found.setdefault((t.strip().casefold(), s, d), ident)
    return found


def _where(graph: ParsedGraph, index: int) -> str:
    """Where in the input op ``index`` of the import came from."""
    if index < len(graph.objects):
        o = graph.objects[index]
        return o.where if o.where is not None else f"object {index} ({o.key})"
    j = index - len(graph.objects)
    if j >= len(graph.relations):
        return graph.evidence[j - len(graph.relations)].where
    r = graph.relations[j]
    if r.where is not None:
        return r.where
    return f"relation {j} ({r.id})" if r.id is not None else f"relation {j}"


def _ids_are_free(store: "GraphStore", graph: ParsedGraph) -> bool:
    obj_ids = [o.key for o in graph.objects]
    rel_ids = [r.id for r in graph.relations if r.id is not None]
    if not all(is_id(i, "o_") for i in obj_ids) or not all(is_id(i, "r_") for i in rel_ids):
        return False
    if len(set(obj_ids)) != len(obj_ids) or len(set(rel_ids)) != len(rel_ids):
        return False
    if len(rel_ids) != len(graph.relations):
        return False
    with store.connection_lock() as conn:
        for table, ids in (("objects", obj_ids), ("relations", rel_ids)):
            if ids and conn.execute(f"SELECT 1 FROM {table} WHERE id IN (SELECT value FROM json_each(?)) LIMIT 1",
                                    (json_list(ids),)).fetchone():
                return False
    return True


def require_str(value: Any, what: str, where: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise StoreError(f"Nothing was imported: {where}: {what} must be a non-empty string.")
    return value


def require_props(value: Any, where: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise StoreError(f"Nothing was imported: {where}: properties must be a JSON object.")
    return value
