"""Retrieval bench: the hybrid + graph retriever beside BM25-only and dense-only over plain chunks.

One run, one generated world (``bench/retrieval_world.py``): every system answers the same
questions; a gold span counts as found when a returned passage covers at least half of it.
Reports recall@1/3/5/10 (share of a question's gold spans found in the top k, averaged),
MRR (first passage holding any gold span), "all evidence found" in the top 5, characters
returned for the top 5, index time and query time; then query time at 100,000 synthetic
passages and indexing time for a 300-page text. Prints Markdown tables.

    python bench/retrieval.py [--big 100000]
"""

from __future__ import annotations

import argparse
import hashlib
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from bench.retrieval_world import World, build  # noqa: E402
from cks_desktop.documents.model import ReadDocument  # noqa: E402
from cks_desktop.documents.store import DocumentStore  # noqa: E402
from cks_desktop.graph.store import GraphStore  # noqa: E402
from cks_desktop.retrieval import embedder, lexical, passages  # noqa: E402
from cks_desktop.retrieval.index import PassageIndex  # noqa: E402
from cks_desktop.retrieval.service import retrieve  # noqa: E402

KS = (1, 3, 5, 10)
Ranked = list[tuple[str, int, int]]  # (document name, start, end), best first


def found(gold: tuple[str, int, int], ranked: Ranked, k: int) -> bool:
    name, gs, ge = gold
    for doc, s, e in ranked[:k]:
        if doc == name and min(e, ge) - max(s, gs) >= (ge - gs) / 2:
            return True
    return False


def score(world: World, run: Callable[[str], Ranked]) -> dict[str, object]:
    per_kind: dict[str, dict[str, list[float]]] = {}
    times: list[float] = []
    chars: list[int] = []
    for q in world.questions:
        began = time.perf_counter()
        ranked = run(q.text)
        times.append(time.perf_counter() - began)
        chars.append(sum(e - s for _, s, e in ranked[:5]))
        if not q.gold:
            continue
        row = per_kind.setdefault(q.kind, {})
        for k in KS:
            row.setdefault(f"r@{k}", []).append(sum(found(g, ranked, k) for g in q.gold) / len(q.gold))
        rank = next((i + 1 for i in range(len(ranked)) if any(found(g, ranked[i:i + 1], 1) for g in q.gold)), None)
        row.setdefault("mrr", []).append(1 / rank if rank else 0.0)
        row.setdefault("all", []).append(float(all(found(g, ranked, 5) for g in q.gold)))
    return {"kinds": per_kind, "ms": statistics.median(times) * 1000, "chars": statistics.mean(chars)}


def plain_chunks(world: World) -> list[tuple[str, int, int, str]]:
    out = []
    for d in world.docs:
        for s in range(0, len(d.text), 1000):
            out.append((d.name, s, min(len(d.text), s + 1000), d.text[s:s + 1000]))
    return out


def baselines(world: World) -> tuple[Callable[[str], Ranked], Callable[[str], Ranked], float]:
    began = time.perf_counter()
    chunks = plain_chunks(world)
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE c USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')")
    conn.executemany("INSERT INTO c (rowid, body) VALUES (?, ?)", [(i, c[3]) for i, c in enumerate(chunks)])
    matrix = embedder.embed([c[3] for c in chunks])
    index_s = time.perf_counter() - began

    def bm25(q: str) -> Ranked:
        words = lexical.terms(q)
        if not words:
            return []
        rows = conn.execute("SELECT rowid FROM c WHERE c MATCH ? ORDER BY bm25(c) LIMIT 10",
                            (" OR ".join(f'"{w}"' for w in words),)).fetchall()
        return [chunks[r[0]][:3] for r in rows]

    def dense(q: str) -> Ranked:
        sims = matrix @ embedder.embed([q])[0]
        return [chunks[i][:3] for i in np.argsort(-sims)[:10]]

    return bm25, dense, index_s


def load_world(store: GraphStore, world: World) -> str:
    sid = store.create_session("bench").id
    reads = [ReadDocument(sha256=hashlib.sha256(d.text.encode()).hexdigest(), name=d.name, size=len(d.text),
                          media_type="text/plain", source="", reader="text", text=d.text) for d in world.docs]
    DocumentStore(store).add(sid, reads)
    ids = {d.name: r.sha256 for d, r in zip(world.docs, reads)}
    ops: list[dict[str, object]] = [{"op": "add_object", "type": t, "name": n, "label": f"$o{i}"}
                                    for i, (t, n) in enumerate(world.objects)]
    label = {n: f"$o{i}" for i, (_, n) in enumerate(world.objects)}
    text = {d.name: d.text for d in world.docs}
    for j, (rtype, src, dst, key) in enumerate(world.relations):
        ops.append({"op": "add_relation", "type": rtype, "source": label[src], "target": label[dst], "label": f"$r{j}"})
        doc, s, e = world.evidence[key]
        ops.append({"op": "add_evidence", "relation": f"$r{j}", "document_id": ids[doc], "start": s, "end": e,
                    "quote": text[doc][s:e], "alignment": "exact", "origin": "extraction"})
    for name, key in world.object_facts:
        doc, s, e = world.evidence[key]
        ops.append({"op": "add_evidence", "object": label[name], "document_id": ids[doc], "start": s, "end": e,
                    "quote": text[doc][s:e], "alignment": "exact", "origin": "extraction"})
    store.apply(sid, ops, "bench")
    return sid


def table(results: dict[str, dict[str, object]], index_s: dict[str, float]) -> None:
    print("| system | kind | n | R@1 | R@3 | R@5 | R@10 | MRR | all evidence@5 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for system, res in results.items():
        kinds = res["kinds"]
        assert isinstance(kinds, dict)
        groups = {**kinds, "multi-hop": {m: kinds["hop2"][m] + kinds["hop3"][m] for m in kinds["hop2"]},
                  "overall": {m: sum((v[m] for v in kinds.values()), []) for m in next(iter(kinds.values()))}}
        for kind, row in groups.items():
            cells = " | ".join(f"{statistics.mean(row[m]):.2f}" for m in ("r@1", "r@3", "r@5", "r@10", "mrr", "all"))
            print(f"| {system} | {kind} | {len(row['mrr'])} | {cells} |")
    print()
    print("| system | chars returned (top 5, mean) | query (median) | index |")
    print("|---|---|---|---|")
    for system, res in results.items():
        print(f"| {system} | {res['chars']:,.0f} | {res['ms']:.1f} ms | {index_s[system]:.2f} s |")


def big(n: int) -> None:
    """Query time over ``n`` synthetic passages (random words and unit vectors) in one session."""
    rnd = random.Random(1)
    vocab = [f"w{i}" for i in range(20_000)]
    with tempfile.TemporaryDirectory() as tmp:
        store = GraphStore.open(Path(tmp) / "big.sqlite3")
        sid = store.create_session("big").id
        text = "x" * 600
        DocumentStore(store).add(sid, [ReadDocument(sha256="b" * 64, name="big.txt", size=600, media_type="text/plain",
                                                    source="", reader="text", text=text)])
        vecs = np.random.default_rng(1).standard_normal((n, embedder.DIMS)).astype(np.float32)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        began = time.perf_counter()
        with store.transaction() as conn:
            for i in range(n):
                cur = conn.execute(
                    "INSERT INTO passages (session_id, document_id, idx, span_start, span_end, page, text_hash, cut, "
                    "model, dims, vector) VALUES (?, ?, ?, 0, 600, NULL, ?, ?, ?, ?, ?)",
                    (sid, "b" * 64, i, str(i), passages.CUT, embedder.MODEL, embedder.DIMS, vecs[i].tobytes()))
                conn.execute("INSERT INTO passages_fts (rowid, body) VALUES (?, ?)",
                             (cur.lastrowid, " ".join(rnd.choices(vocab, k=80))))
        fill = time.perf_counter() - began
        questions = [" ".join(rnd.choices(vocab, k=8)) + " and what happened then?" for _ in range(20)]
        began = time.perf_counter()
        retrieve(store, sid, questions[0])  # the first loads the vector matrix
        first = time.perf_counter() - began
        times = []
        for q in questions[1:]:
            began = time.perf_counter()
            retrieve(store, sid, q)
            times.append(time.perf_counter() - began)
        store.close()
    print(f"| {n:,} passages | first query (loads the matrix) {first * 1000:,.0f} ms | median "
          f"{statistics.median(times) * 1000:,.0f} ms | p95 {sorted(times)[int(len(times) * 0.95)] * 1000:,.0f} ms "
          f"| (filling the synthetic index: {fill:.0f} s) |")


def book(pages: int) -> None:
    """Indexing time of a ``pages``-page text (about 3,000 characters a page) from scratch."""
    world = build(seed=3)
    body = "\n\n".join(d.text for d in world.docs)
    text = ""
    starts = []
    while len(starts) < pages:
        starts.append(len(text))
        text += body[(len(starts) * 3000) % max(1, len(body) - 3000):][:3000] + f" (page {len(starts)})\n\n"
    with tempfile.TemporaryDirectory() as tmp:
        store = GraphStore.open(Path(tmp) / "book.sqlite3")
        sid = store.create_session("book").id
        DocumentStore(store).add(sid, [ReadDocument(sha256="c" * 64, name="book.pdf", size=len(text),
                                                    media_type="application/pdf", source="", reader="pdf", text=text,
                                                    page_starts=tuple(starts))])
        began = time.perf_counter()
        report = PassageIndex(store).sync(sid)
        took = time.perf_counter() - began
        store.close()
    print(f"| {pages}-page text ({len(text):,} characters) | {report.passages:,} passages, {report.embedded:,} embedded "
          f"| {took:.1f} s |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", type=int, default=100_000, help="synthetic passages for the query-time row")
    parser.add_argument("--pages", type=int, default=300, help="pages of the indexing-time row")
    args = parser.parse_args()
    world = build()
    answerable = [q for q in world.questions if q.gold]
    print(f"World: {len(world.docs)} documents, {sum(len(d.text) for d in world.docs):,} characters, "
          f"{len(world.questions)} questions ({len(answerable)} answerable), {len(world.objects)} objects, "
          f"{len(world.relations)} relations\n")
    bm25, dense, base_index = baselines(world)
    with tempfile.TemporaryDirectory() as tmp:
        store = GraphStore.open(Path(tmp) / "world.sqlite3")
        sid = load_world(store, world)
        began = time.perf_counter()
        PassageIndex(store).sync(sid)
        ours_index = time.perf_counter() - began
        names = {d.id: d.name for d in DocumentStore(store).list_documents(sid)}

        def ours(graph: bool) -> Callable[[str], Ranked]:
            def run(q: str) -> Ranked:
                hits = retrieve(store, sid, q, k=10, budget_chars=10**6, use_graph=graph).passages
                return [(names[h.document_id], h.start, h.end) for h in hits]
            return run

        results = {"BM25, 1,000-char chunks": score(world, bm25), "dense, 1,000-char chunks": score(world, dense),
                   "hybrid (BM25 + dense), passages": score(world, ours(False)),
                   "hybrid + graph, passages": score(world, ours(True))}
        store.close()
    table(results, {"BM25, 1,000-char chunks": base_index, "dense, 1,000-char chunks": base_index,
                    "hybrid (BM25 + dense), passages": ours_index, "hybrid + graph, passages": ours_index})
    print()
    print("| scale | | | | |\n|---|---|---|---|---|")
    big(args.big)
    print()
    print("| indexing | | |\n|---|---|---|")
    book(args.pages)


if __name__ == "__main__":
    main()
