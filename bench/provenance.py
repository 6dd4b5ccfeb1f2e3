"""Benchmark of provenance: what sources cost in the batch path and the reads.

- N objects alone vs N objects + N ``add_evidence`` ops (exact quotes into a 1 MB document),
  each as one batch through ``GraphStore.apply``: the cost evidence adds to a write;
- ``sources_of`` one object, ``facts_in_span`` of a 200-character selection,
  ``orphans_of_document`` over the whole document (what removing it would leave unsourced);
- removing one sourced object and reverting that; reverting the whole N + N batch.

    python bench/provenance.py            # N = 5,000
    python bench/provenance.py -n 20000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from cks_desktop.documents.readers import read_bytes  # noqa: E402
from cks_desktop.documents.store import DocumentStore  # noqa: E402
from cks_desktop.graph.store import GraphStore  # noqa: E402
from cks_desktop.provenance import queries as Q  # noqa: E402


def timed(label: str, fn: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    result = fn()
    print(f"| {label} | {(time.perf_counter() - start) * 1000:,.0f} ms |")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=5000, help="objects (and sources) per batch")
    n = parser.parse_args().n
    words = [f"Name{i:06d}" for i in range(n)]
    text = " filler text here. ".join(words) + " "
    text += "x" * max(0, 1_000_000 - len(text))
    with tempfile.TemporaryDirectory() as tmp:
        store = GraphStore.open(Path(tmp) / "bench.sqlite3")
        plain, sourced = store.create_session("plain").id, store.create_session("sourced").id
        doc = read_bytes(text.encode(), "big.txt")
        DocumentStore(store).add(sourced, [doc])
        objects = [{"op": "add_object", "type": "T", "name": w, "label": f"$o{i}"} for i, w in enumerate(words)]
        evidence, pos = [], 0
        for i, w in enumerate(words):
            pos = text.index(w, pos)
            evidence.append({"op": "add_evidence", "object": f"$o{i}", "document_id": doc.sha256, "start": pos,
                             "end": pos + len(w), "quote": w, "alignment": "exact"})
        print("| step | time |\n|---|---|")
        timed(f"{n:,} add_object, no sources", lambda: store.apply(plain, objects, "bench"))
        batch = timed(f"{n:,} add_object + {n:,} add_evidence", lambda: store.apply(sourced, objects + evidence, "bench"))
        one = store.resolve(sourced, words[n // 2]).id
        timed("sources_of one object", lambda: Q.sources_of(store, sourced, "object", one))
        timed("facts_in_span, 200 characters", lambda: Q.facts_in_span(store, sourced, doc.sha256, 5000, 5200))
        timed("orphans_of_document, whole document", lambda: Q.orphans_of_document(store, sourced, doc.sha256))
        gone = timed("remove_object of one sourced object",
                     lambda: store.apply(sourced, [{"op": "remove_object", "ref": words[3]}], "bench"))
        timed("revert of that removal", lambda: store.revert(sourced, gone.change.id, "bench"))
        timed(f"revert of the {n:,} + {n:,} batch", lambda: store.revert(sourced, batch.change.id, "bench"))
        store.close()


if __name__ == "__main__":
    main()
