"""Graph expansion: from the objects a question names to the passages that support their neighbours.

HippoRAG 2's shape, on the session graph as it is:
1. seeds: objects whose name or one of whose aliases (``properties["aliases"]``) occurs in the
   question as whole words (or partly, by its proper nouns: "Ada" for "Ada Lovelace"), and the objects whose names are nearest to the question in the
   embedding space (weighted by similarity, so a weak match barely counts);
2. a personalised PageRank (igraph, damping 0.5: half the walk stays near the seeds) over the
   objects and relations, restarting at the seeds;
3. the evidence (``evidence`` table, written by extraction) of the objects and relations reached,
   mapped onto the passages whose span overlaps each quoted span; a passage scores the sum of the
   PageRank of what it supports.
Objects and relations with no document evidence still rank and are returned as objects/relations.
"""

from __future__ import annotations

import re
import sqlite3
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from cks_desktop.retrieval import embedder

if TYPE_CHECKING:
    from cks_desktop.graph.model import Object, Relation
    from cks_desktop.graph.store import GraphStore

DAMPING = 0.5
DENSE_SEEDS = 3
DENSE_FLOOR = 0.45  # cosine below which an object name is no seed
MAX_NGRAM = 8
REACHED = 12  # objects kept from the walk
PASSAGES = 5  # passages the walk proposes at most (a longer list would outvote the words in the fusion)
PASSAGE_FLOOR = 0.25  # a passage scoring below this share of the walk's best is not proposed
_WORD = re.compile(r"\w+")


@dataclass
class Expansion:
    """What the walk reached: objects and relations (best first) and passage scores."""

    objects: list["Object"] = field(default_factory=list)
    relations: list["Relation"] = field(default_factory=list)
    passages: list[tuple[int, float]] = field(default_factory=list)  # (passage n, score), best first


def _words(text: str) -> tuple[str, ...]:
    return tuple(_WORD.findall(text.casefold()))


def _names(obj: "Object") -> list[str]:
    names = [obj.name]
    aliases: Any = obj.properties.get("aliases")
    if isinstance(aliases, str):
        aliases = [aliases]
    if isinstance(aliases, list):
        names.extend(a for a in aliases if isinstance(a, str))
    return names


def named_in(question: str, objects: list["Object"]) -> dict[int, float]:
    """Index → weight of the objects the question names.

    A name or alias occurring whole (as words) weighs 1; a name only partly named ("Ada" for
    "Ada Lovelace") weighs the share of its words named, counting only words written with a capital
    in the question and at least three letters long (a proper noun, not a common word).
    """
    words = _words(question)
    grams = {words[i:i + k] for k in range(1, MAX_NGRAM + 1) for i in range(len(words) - k + 1)}
    proper = {w.casefold() for w in _WORD.findall(question) if w[:1].isupper() and len(w) >= 3}
    found: dict[int, float] = {}
    for i, obj in enumerate(objects):
        best = 0.0
        for name in _names(obj):
            key = _words(name)
            if not key:
                continue
            if key in grams:
                best = 1.0
                break
            named = sum(1 for w in key if w in proper)
            if named:
                best = max(best, named / len(key))
        if best > 0:
            found[i] = best
    return found


_name_cache: dict[tuple[int, str], tuple[tuple[str, ...], npt.NDArray[np.float32]]] = {}
_name_lock = threading.Lock()


def _name_vectors(store_key: int, session_id: str, objects: list["Object"]) -> npt.NDArray[np.float32]:
    names = tuple(o.name for o in objects)
    key = (store_key, session_id)
    with _name_lock:
        hit = _name_cache.get(key)
        if hit is not None and hit[0] == names:
            return hit[1]
    vectors = embedder.embed(list(names))
    with _name_lock:
        _name_cache[key] = (names, vectors)
    return vectors


def expand(store: "GraphStore", conn_reader: Any, session_id: str, question: str,
           query: npt.NDArray[np.float32]) -> Expansion:
    """Seeds, the walk and the evidence passages (see the module docstring)."""
    objects = store.all_objects(session_id)
    if not objects:
        return Expansion()
    relations = store.all_relations(session_id)
    seeds = named_in(question, objects)
    sims = _name_vectors(id(store), session_id, objects) @ query.reshape(-1)
    for i in np.argsort(-sims)[:DENSE_SEEDS]:
        if sims[i] >= DENSE_FLOOR:
            seeds[int(i)] = max(seeds.get(int(i), 0.0), float(sims[i]) ** 2)
    if not seeds:
        return Expansion()
    scores = _pagerank(objects, relations, seeds)
    order = [i for i in np.argsort(-scores) if scores[i] > 0][:REACHED]
    reached = {objects[i].id: float(scores[i]) for i in order}
    kept_relations = [r for r in relations if r.source_id in reached and r.target_id in reached]
    kept_relations.sort(key=lambda r: -(reached[r.source_id] + reached[r.target_id]))
    weights: dict[tuple[str, str], float] = {("object", oid): s for oid, s in reached.items()}
    for r in kept_relations:
        weights[("relation", r.id)] = (reached[r.source_id] + reached[r.target_id]) / 2
    with conn_reader() as conn:
        passages = _evidence_passages(conn, session_id, weights)
    if passages:
        floor = passages[0][1] * PASSAGE_FLOOR
        passages = [p for p in passages if p[1] >= floor][:PASSAGES]
    return Expansion(objects=[objects[i] for i in order], relations=kept_relations, passages=passages)


def _pagerank(objects: list["Object"], relations: list["Relation"], seeds: dict[int, float]) -> npt.NDArray[np.float64]:
    import igraph

    position = {o.id: i for i, o in enumerate(objects)}
    edges = [(position[r.source_id], position[r.target_id]) for r in relations
             if r.source_id in position and r.target_id in position]
    graph = igraph.Graph(n=len(objects), edges=edges, directed=False)
    reset = [0.0] * len(objects)
    for i, w in seeds.items():
        reset[i] = w
    result = graph.personalized_pagerank(damping=DAMPING, reset=reset, directed=False)
    return np.asarray(result, dtype=np.float64)


def _evidence_passages(conn: sqlite3.Connection, session_id: str,
                       weights: dict[tuple[str, str], float]) -> list[tuple[int, float]]:
    spans: list[tuple[str, int, int, float]] = []
    for (kind, target), weight in weights.items():
        for doc_id, start, end in conn.execute(
                "SELECT document_id, span_start, span_end FROM evidence WHERE session_id = ? AND target_kind = ? "
                "AND target_id = ? AND document_id IS NOT NULL AND span_start IS NOT NULL AND span_end IS NOT NULL",
                (session_id, kind, target)):
            spans.append((str(doc_id), int(start), int(end), weight))
    scores: dict[int, float] = {}
    for doc_id, start, end, weight in spans:
        for (n,) in conn.execute("SELECT n FROM passages WHERE session_id = ? AND document_id = ? AND span_start < ? "
                                 "AND span_end > ?", (session_id, doc_id, max(end, start + 1), start)):
            scores[int(n)] = scores.get(int(n), 0.0) + weight
    return sorted(scores.items(), key=lambda kv: -kv[1])
