"""Communities of a session graph, their content hashes, evidence and cached summaries.

- ``detect``: the communities of the session graph, by igraph's Leiden (modularity, a fixed seed
  on a private random generator, so the same graph always gives the same communities). Objects
  with no relation form no community: they have no theme to share. A community is numbered by
  size (largest first), then by its first member's id.
- ``content_hash``: sha256 of what a summary is written from (each member's id, type, name and
  description, and each relation inside the community with its ends), so a summary is redone
  only when that changes.
- ``evidence``: the passages that support a community's members and relations (the ``evidence``
  table extraction writes): document, page and ``[start, end)`` in the text ``documents show
  --text`` prints.
- ``SummaryCache``: summaries by ``(session, content hash)`` in the session's database (the table
  ``community_summaries``, created on first use).

Blocking work, no model call: callers run it on a worker thread.
"""

from __future__ import annotations

import hashlib
import json
import random
import threading
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cks_desktop.graph.model import Object, Relation
    from cks_desktop.graph.store import GraphStore

SEED = 20240601
MIN_MEMBERS = 2
EVIDENCE_PER_COMMUNITY = 6  # passages cited per community, most-supported first
_igraph_lock = threading.Lock()  # igraph's random generator is process-wide

CACHE_TABLE = """
CREATE TABLE IF NOT EXISTS community_summaries (
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    content_hash TEXT NOT NULL,
    title        TEXT NOT NULL,
    summary      TEXT NOT NULL,
    model        TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    PRIMARY KEY (session_id, content_hash)
)
"""


@dataclass(frozen=True)
class Citation:
    """A passage of a document: ``start``/``end`` are offsets in the text ``documents show --text`` prints."""

    document: str
    document_id: str
    page: int | None
    start: int
    end: int
    quote: str

    def to_json(self) -> dict[str, Any]:
        return {"document": self.document, "document_id": self.document_id, "page": self.page,
                "start": self.start, "end": self.end, "quote": self.quote}


@dataclass
class Community:
    """One community: its members (largest degree first), the relations inside it, its hash."""

    number: int
    members: list["Object"]
    relations: list["Relation"]
    content_hash: str
    evidence: list[Citation] = field(default_factory=list)


def description(obj: "Object") -> str:
    value = obj.properties.get("description")
    return value.strip() if isinstance(value, str) else ""


def content_hash(members: list["Object"], relations: list["Relation"]) -> str:
    """The hash of what a community's summary is written from (order does not matter)."""
    names = {o.id: o.name for o in members}
    payload = {
        "members": sorted([o.id, o.type, o.name, description(o)] for o in members),
        "relations": sorted([r.type, names.get(r.source_id, r.source_id), names.get(r.target_id, r.target_id)]
                            for r in relations),
    }
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False, sort_keys=True).encode()).hexdigest()


def partition(n: int, edges: list[tuple[int, int]]) -> list[int]:
    """Leiden (modularity) membership of ``n`` vertices, deterministic for the same input."""
    import igraph

    graph = igraph.Graph(n=n, edges=edges, directed=False)
    graph.simplify(multiple=True, loops=True)
    with _igraph_lock:
        igraph.set_random_number_generator(random.Random(SEED))
        try:
            clusters = graph.community_leiden(objective_function="modularity", n_iterations=-1)
        finally:
            igraph.set_random_number_generator(random)
    return list(clusters.membership)


def detect(objects: list["Object"], relations: list["Relation"]) -> list[Community]:
    """The communities of at least ``MIN_MEMBERS`` objects (see the module docstring)."""
    position = {o.id: i for i, o in enumerate(objects)}
    inside = [r for r in relations if r.source_id in position and r.target_id in position]
    edges = [(position[r.source_id], position[r.target_id]) for r in inside]
    if not edges:
        return []
    membership = partition(len(objects), edges)
    degree = [0] * len(objects)
    for a, b in edges:
        degree[a] += 1
        degree[b] += 1
    groups: dict[int, list[int]] = {}
    for i, c in enumerate(membership):
        groups.setdefault(c, []).append(i)
    by_group: dict[int, list["Relation"]] = {}
    for r in inside:
        a, b = membership[position[r.source_id]], membership[position[r.target_id]]
        if a == b:
            by_group.setdefault(a, []).append(r)
    kept = [(c, sorted(ix, key=lambda i: (-degree[i], objects[i].name.casefold(), objects[i].id)))
            for c, ix in groups.items() if len(ix) >= MIN_MEMBERS]
    kept.sort(key=lambda item: (-len(item[1]), objects[item[1][0]].id))
    out: list[Community] = []
    for number, (c, ix) in enumerate(kept, 1):
        members = [objects[i] for i in ix]
        rels = sorted(by_group.get(c, []), key=lambda r: r.id)
        out.append(Community(number, members, rels, content_hash(members, rels)))
    return out


def attach_evidence(store: "GraphStore", session_id: str, communities: list[Community]) -> None:
    """Fill each community's ``evidence``: the spans most of its members and relations cite."""
    with store.connection_lock() as conn:
        names = {str(i): str(n) for i, n in conn.execute("SELECT id, name FROM documents WHERE session_id = ?",
                                                         (session_id,))}
        for community in communities:
            targets = [("object", o.id) for o in community.members] + [("relation", r.id) for r in community.relations]
            counted: dict[tuple[str, int, int], tuple[int, int | None, str]] = {}
            for kind, target in targets:
                for doc_id, start, end, page, quote in conn.execute(
                        "SELECT document_id, span_start, span_end, page, quote FROM evidence WHERE session_id = ? "
                        "AND target_kind = ? AND target_id = ? AND document_id IS NOT NULL AND span_start IS NOT NULL "
                        "AND span_end IS NOT NULL", (session_id, kind, target)):
                    key = (str(doc_id), int(start), int(end))
                    seen = counted.get(key)
                    counted[key] = ((seen[0] if seen else 0) + 1, None if page is None else int(page), str(quote))
            best = sorted(counted.items(), key=lambda kv: (-kv[1][0], kv[0]))[:EVIDENCE_PER_COMMUNITY]
            community.evidence = [Citation(names.get(doc, doc), doc, page, start, end, quote)
                                  for (doc, start, end), (_n, page, quote) in sorted(best, key=lambda kv: kv[0])
                                  if doc in names]


def communities_of(store: "GraphStore", session_id: str) -> list[Community]:
    """The session graph's communities with their evidence."""
    found = detect(store.all_objects(session_id), store.all_relations(session_id))
    attach_evidence(store, session_id, found)
    return found


@dataclass(frozen=True)
class Summary:
    title: str
    summary: str
    model: str


class SummaryCache:
    """Community summaries by content hash, in the session's database."""

    def __init__(self, store: "GraphStore") -> None:
        self.store = store
        with store.transaction() as conn:
            conn.execute(CACHE_TABLE)

    def get(self, session_id: str, hashes: list[str]) -> dict[str, Summary]:
        out: dict[str, Summary] = {}
        with self.store.connection_lock() as conn:
            for i in range(0, len(hashes), 500):
                part = hashes[i:i + 500]
                marks = ",".join("?" * len(part))
                for h, title, summary, model in conn.execute(
                        f"SELECT content_hash, title, summary, model FROM community_summaries WHERE session_id = ? "
                        f"AND content_hash IN ({marks})", (session_id, *part)):
                    out[str(h)] = Summary(str(title), str(summary), str(model))
        return out

    def put(self, session_id: str, content: str, summary: Summary) -> None:
        now = datetime.now(timezone.utc).isoformat(timespec="seconds")
        with self.store.transaction() as conn:
            conn.execute("INSERT OR REPLACE INTO community_summaries (session_id, content_hash, title, summary, model, "
                         "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                         (session_id, content, summary.title, summary.summary, summary.model, now))
