"""The one retrieval function every door calls (the ``ask`` use case, the tool, ``mcp serve``).

``retrieve`` brings the session's passages index up to date, then ranks passages three ways —
BM25 over the words, cosine over the local embeddings, and graph expansion from the objects the
question names — fuses them by reciprocal rank, merges overlapping passages, and returns the best
within ``k`` passages and a character budget, with the objects and relations the walk reached.

Blocking: run it on a worker thread. Bad input is one sentence (``RetrievalError``).
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cks_desktop.graph.errors import DatabaseError, NotFound
from cks_desktop.retrieval import dense, embedder, fusion, graph, items, lexical, repair
from cks_desktop.retrieval.index import PassageIndex, Progress

if TYPE_CHECKING:
    from cks_desktop.graph.model import Object, Relation
    from cks_desktop.graph.store import GraphStore

MAX_QUESTION_CHARS = 4000
DEFAULT_K = 5
MAX_K = 50
DEFAULT_BUDGET_CHARS = 4000
CANDIDATES = 50
# objects, relations and messages matched by their words and their meaning (``_add_items``): reciprocal
# rank, the words weighing twice the meaning (not tuned by a bench)
ITEM_WEIGHTS = {"lexical": 1.0, "dense": 0.5}
# The voices that rank the candidates in turns (``_ranked``): relative-score fusion with a graph that
# barely votes (best for words: a table row, a comparison), then with the graph's weight 2 (a second
# or third hop). Both chosen on the tuning half of bench/retrieval.py's questions.
VOICES: list[tuple["fusion.Method", dict[str, float]]] = [
    ("relative", {"lexical": 1.0, "dense": 0.25, "graph": 0.25}),
    ("relative", {"lexical": 1.0, "dense": 0.25, "graph": 2.0}),
]
ITEM_DENSE_FLOOR = 0.35  # cosine below which an object, relation or message is no match by meaning


class RetrievalError(Exception):
    """A question that cannot be searched for, in one sentence."""


@dataclass(frozen=True)
class Hit:
    """One passage returned: ``text == document text[start:end]``; ``score`` in [0, 1], best 1."""

    document: str
    document_id: str
    page: int | None
    start: int
    end: int
    text: str
    score: float

    def to_json(self) -> dict[str, Any]:
        return {"document": self.document, "document_id": self.document_id, "page": self.page,
                "start": self.start, "end": self.end, "text": self.text, "score": self.score}


@dataclass
class Retrieval:
    """What a question found."""

    passages: list[Hit] = field(default_factory=list)
    objects: list["Object"] = field(default_factory=list)
    relations: list["Relation"] = field(default_factory=list)
    messages: list[items.MessageHit] = field(default_factory=list)
    documents: int = 0  # how many documents the session has (0: nothing to search)
    notes: list[str] = field(default_factory=list)  # sentences for the person (an index rebuilt)

    def to_json(self) -> dict[str, Any]:
        return {"passages": [h.to_json() for h in self.passages],
                "objects": [{"id": o.id, "type": o.type, "name": o.name} for o in self.objects],
                "relations": [{"id": r.id, "type": r.type, "source": r.source_id, "target": r.target_id}
                              for r in self.relations],
                "messages": [m.to_json() for m in self.messages]}


def check_question(question: str) -> str:
    """The question stripped, or one sentence saying why it cannot be searched for."""
    text = question.strip()
    if not text:
        raise RetrievalError("The question is empty; ask something.")
    if len(text) > MAX_QUESTION_CHARS:
        raise RetrievalError(f"The question is {len(text):,} characters long; ask in at most "
                             f"{MAX_QUESTION_CHARS:,} characters.")
    return text


def retrieve(store: "GraphStore", session_id: str, question: str, *, k: int = DEFAULT_K,
             budget_chars: int = DEFAULT_BUDGET_CHARS, use_graph: bool = True,
             progress: Progress | None = None) -> Retrieval:
    """The passages (and objects, relations) that best answer ``question`` in the session."""
    try:
        try:
            return _retrieve(store, session_id, question, k, budget_chars, use_graph, progress)
        except repair.IndexDamaged as exc:
            note = repair.rebuild(store, exc.problem)
        try:
            found = _retrieve(store, session_id, question, k, budget_chars, use_graph, progress)
        except repair.IndexDamaged as exc:
            raise RetrievalError(f"The search index could not be rebuilt ({exc.problem}).") from None
        found.notes.append(note)
        return found
    except embedder.EmbedderError as exc:  # a broken install: the same one sentence as bad input
        raise RetrievalError(str(exc)) from None


def _retrieve(store: "GraphStore", session_id: str, question: str, k: int, budget_chars: int, use_graph: bool,
              progress: Progress | None) -> Retrieval:
    text = check_question(question)
    if not 1 <= k <= MAX_K:
        raise RetrievalError(f"k must be between 1 and {MAX_K}; it was {k}.")
    store.get_session(session_id)  # an unknown session is the store's one sentence
    with repair.reading(store) as conn:
        if not isinstance(conn, sqlite3.Connection):
            raise RetrievalError("Retrieval searches a session in a SQLite database; on a team (PostgreSQL) "
                                 "database it is not built yet.")
    PassageIndex(store).sync(session_id, progress, sweep=False)
    try:
        items.sync(store, session_id)
        with_items = True
    except DatabaseError:  # a database that takes no writes (damaged, read-only): the passages still answer
        with_items = items.searchable(store)
    query = embedder.embed([text])[0]
    with repair.reading(store) as conn:
        documents = int(conn.execute("SELECT count(*) FROM documents WHERE session_id = ?",
                                     (session_id,)).fetchone()[0])
        lex = lexical.search(conn, session_id, text, CANDIDATES)
        near = dense.top(dense.vectors(conn, id(store), session_id), query, CANDIDATES)
    expansion = graph.expand(store, lambda: repair.reading(store), session_id, text, query) if use_graph \
        else graph.Expansion()
    best = _ranked(lex, near, expansion.passages[:CANDIDATES])
    hits = _hits(store, session_id, best, k, budget_chars)
    found = Retrieval(passages=hits, objects=expansion.objects, relations=expansion.relations, documents=documents)
    if with_items:
        _add_items(store, session_id, text, query, k, found)
    return found


def _ranked(lex: list[tuple[int, float]], near: list[tuple[int, float]],
            walked: list[tuple[int, float]]) -> list[tuple[int, float]]:
    """The candidate passages, best first, each with a score for the budget's order. Each voice
    (``VOICES``: a fusion and its weights) ranks the lexical, dense and graph lists; the voices take
    turns, each adding its best passage not yet taken, so a question the words answer (a table row,
    a comparison) and one whose answer lies a hop off its names (the graph's voice) both keep their
    best passages near the top. One voice: its ranking."""
    rankings = []
    for method, weights in VOICES:
        lists: list[tuple[float, list[tuple[int, float]]]] = [
            (weights["lexical"], [(n, -s) for n, s in lex]),  # BM25: lower is better
            (weights["dense"], near)]
        if walked:
            lists.append((weights["graph"], walked))
        fused = fusion.fuse(lists, method)
        rankings.append(sorted(fused, key=lambda n: (-fused[n], n)))
    out: list[int] = []
    taken: set[int] = set()
    position = [0] * len(rankings)
    while len(out) < CANDIDATES and any(position[i] < len(r) for i, r in enumerate(rankings)):
        for i, ranking in enumerate(rankings):
            while position[i] < len(ranking) and ranking[position[i]] in taken:
                position[i] += 1
            if position[i] < len(ranking) and len(out) < CANDIDATES:
                taken.add(ranking[position[i]])
                out.append(ranking[position[i]])
                position[i] += 1
    return [(n, 1.0 / (rank + 1)) for rank, n in enumerate(out)]


def _add_items(store: "GraphStore", session_id: str, text: str, query: "dense.Matrix", k: int,
               found: Retrieval) -> None:
    """Objects, relations and messages matched by their own words or meaning, after what the walk
    reached (objects, relations) and best first (messages): at most ``k`` of each kind added."""
    with repair.reading(store) as conn:
        fused = fusion.rrf([(ITEM_WEIGHTS["lexical"], items.lexical_ranking(conn, session_id, text, CANDIDATES)),
                            (ITEM_WEIGHTS["dense"], items.dense_ranking(conn, id(store), session_id, query, CANDIDATES,
                                                                   ITEM_DENSE_FLOOR))])
        ranked = sorted(fused.items(), key=lambda kv: -kv[1])
        kinds = items.resolve(conn, session_id, [n for n, _ in ranked])
        top = ranked[0][1] if ranked else 1.0
        by_kind: dict[str, list[tuple[str, float]]] = {"object": [], "relation": [], "message": []}
        for n, score in ranked:
            if n in kinds:
                kind, ref = kinds[n]
                by_kind[kind].append((ref, round(score / top, 4)))
        found.messages = items.message_hits(conn, session_id, by_kind["message"][:k])
    have = {o.id for o in found.objects}
    for ref, _ in by_kind["object"][:k]:
        if ref not in have:
            try:
                found.objects.append(store.get_object(session_id, ref))
            except NotFound:  # deleted meanwhile
                continue
            have.add(ref)
    have_rel = {r.id for r in found.relations}
    for ref, _ in by_kind["relation"][:k]:
        if ref not in have_rel:
            try:
                found.relations.append(store.get_relation(session_id, ref))
            except NotFound:
                continue
            have_rel.add(ref)


def _hits(store: "GraphStore", session_id: str, best: list[tuple[int, float]], k: int,
          budget_chars: int) -> list[Hit]:
    if not best:
        return []
    score_of = dict(best)
    with repair.reading(store) as conn:
        marks = ",".join("?" * len(best))
        rows = conn.execute(f"SELECT n, document_id, span_start, span_end, page FROM passages WHERE n IN ({marks})",
                            [n for n, _ in best]).fetchall()
    spans = [fusion.Span(str(doc), int(start), int(end), None if page is None else int(page), score_of[int(n)])
             for n, doc, start, end, page in rows]
    chosen = fusion.within_budget(fusion.merge_overlaps(spans), k, budget_chars)
    top = max((s.score for s in chosen), default=1.0) or 1.0
    out: list[Hit] = []
    with repair.reading(store) as conn:
        for s in chosen:
            row = conn.execute("SELECT name, substr(text, ?, ?) FROM documents WHERE session_id = ? AND id = ?",
                               (s.start + 1, s.end - s.start, session_id, s.document_id)).fetchone()
            if row is None:  # removed meanwhile
                continue
            out.append(Hit(document=str(row[0]), document_id=s.document_id, page=s.page, start=s.start, end=s.end,
                           text=str(row[1]), score=round(s.score / top, 4)))
    return out


def search(store: "GraphStore", session_id: str, words: str, *, k: int = DEFAULT_K,
           progress: Progress | None = None) -> Retrieval:
    """What the session holds that matches ``words``: objects and relations (by their own text),
    passages and chat messages (tool results too), each best first — a search box's answer, so
    the graph walk a question needs is left out."""
    text = words.strip()
    if not text:
        raise RetrievalError("The search is empty; type some words to search for.")
    if len(text) > MAX_QUESTION_CHARS:
        raise RetrievalError(f"The search is {len(text):,} characters long; search for at most "
                             f"{MAX_QUESTION_CHARS:,} characters.")
    return retrieve(store, session_id, text, k=k, use_graph=False, progress=progress)
