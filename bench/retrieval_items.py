"""Objects, relations and chat messages as search items: what keeping them current costs.

A generated session (N objects with descriptions, a chain of relations, 2,000 chat messages) in a
real SQLite store: the first sync (everything embedded), a sync when nothing changed (the
signature check), a sync after one object changed, and a search (words and meaning over
passages and items, no graph walk) beside a full retrieval (with the walk), in the same run.

    python bench/retrieval_items.py [--objects N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--objects", type=int, default=10_000)
    n = parser.parse_args().objects

    from cks_desktop.agent.transcript import TranscriptStore
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.llm.messages import Message
    from cks_desktop.retrieval import items
    from cks_desktop.retrieval.service import retrieve, search

    with tempfile.TemporaryDirectory() as folder:
        store = GraphStore.open(Path(folder) / "bench.sqlite3")
        sid = store.create_session("bench").id
        ops = [{"op": "add_object", "type": "Person", "name": f"Person {i}", "label": f"$p{i}",
                "properties": {"description": f"works on project {i % 97} in town {i % 31}"}} for i in range(n)]
        ops += [{"op": "add_relation", "source": f"$p{i}", "target": f"$p{i - 1}", "type": "knows"}
                for i in range(1, n)]
        store.apply(sid, ops, "bench")
        TranscriptStore.for_store(store).append(
            sid, [Message.user(f"message {i} about town {i % 31} and its mill") for i in range(2000)])

        def timed(fn: object) -> tuple[float, object]:
            start = time.perf_counter()
            out = fn()  # type: ignore[operator]
            return time.perf_counter() - start, out

        first, report = timed(lambda: items.sync(store, sid))
        noop, _ = timed(lambda: items.sync(store, sid))
        person = store.resolve(sid, "Person 7")
        store.apply(sid, [{"op": "update_object", "ref": person.id,
                           "set_properties": {"description": "builds boats"}}], "bench")
        one, changed = timed(lambda: items.sync(store, sid))
        search(store, sid, "warm up")
        found, _ = timed(lambda: search(store, sid, "project 5 town 3"))
        walked, _ = timed(lambda: retrieve(store, sid, "who works on project 5 in town 3?"))
        store.close()
    load = Path("/proc/loadavg").read_text().split()[:3] if Path("/proc/loadavg").exists() else ["?"] * 3
    print(f"{n:,} objects, {n - 1:,} relations, 2,000 messages; load {' '.join(load)}")
    print("| step | time | embedded |")
    print("|---|---:|---:|")
    print(f"| first sync | {first:.2f} s | {report.embedded:,} |")  # type: ignore[attr-defined]
    print(f"| sync, nothing changed | {noop * 1000:.1f} ms | 0 |")
    print(f"| sync after one object changed | {one:.2f} s | {changed.embedded} |")  # type: ignore[attr-defined]
    print(f"| search (words and meaning, no walk) | {found * 1000:.0f} ms | |")
    print(f"| retrieval with the graph walk | {walked * 1000:.0f} ms | |")
    print(f"ratio walk / search: {walked / found:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
