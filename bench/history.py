"""Benchmark of the change history after a big import (a script, not a test).

Imports a cks-graph JSON file of N objects and 3N relations (4N operations,
one change) into an empty session, then reverts it, and prints:

- the database size (main file after a WAL checkpoint) after the import and
  after the revert, and the size of the history in it (op lists and the
  object → change index);
- the peak memory of the import (``resource.getrusage`` max RSS of a process
  that only reads the file and imports it; the growth over the RSS it had
  with the file read is printed too);
- the time of the inspector's history query (``changes_touching``: what every
  click on an object runs while holding the store's lock), median of 20,
  after the import and after the revert;
- the time of the import and of the revert.

Each phase runs in a fresh process, so one phase's peak is not another's.

    python bench/history.py                 # 100k objects, 300k relations
    python bench/history.py --objects 20000 # a smaller run
    PYTHONPATH=/some/other/tree python bench/history.py   # measure another version
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

WORDS = ("alpha", "beta", "gamma", "delta", "omega", "kappa", "sigma", "theta", "lambda", "zeta")


def _write_input(path: Path, n: int) -> None:
    from cks_desktop.ids import new_id

    ids = [new_id("o_") for _ in range(n)]
    objects = [{"id": ids[i], "type": f"Type{i % 8}", "name": f"object {i}",
                "properties": {"description": " ".join(WORDS[(i + k) % 10] for k in range(8)), "rank": i}}
               for i in range(n)]
    relations = [{"id": new_id("r_"), "type": f"rel{j % 5}", "source_id": ids[j % n],
                  "target_id": ids[(j * 7 + 1) % n], "properties": {}} for j in range(3 * n)]
    doc = {"format": "cks-graph", "version": 1, "session": {"id": "s", "title": "bench"},
           "objects": objects, "relations": relations}
    path.write_text(json.dumps(doc))


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: kilobytes


def _db_mb(db: Path, store: Any) -> float:
    with store.connection_lock() as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return db.stat().st_size / 1e6


def _history_mb(store: Any) -> float:
    """Bytes of the change log itself: op lists plus the object → change index rows."""
    with store.connection_lock() as conn:
        ops = conn.execute("SELECT coalesce(sum(length(ops) + length(inverse_ops)), 0) FROM changes").fetchone()[0]
        index = conn.execute("SELECT count(*) FROM change_objects").fetchone()[0]
    return (ops + index * 56) / 1e6  # an index row: two 28-character ids


def _inspector_ms(store: Any, session_id: str, object_id: str) -> float:
    times = []
    for _ in range(20):
        t = time.perf_counter()
        store.changes_touching(session_id, object_id, 30)
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def _phase_import(db: Path, data: Path) -> dict[str, Any]:
    from cks_desktop.graph.store import GraphStore

    store = GraphStore.open(db)
    session = store.create_session("bench")
    text = data.read_text()
    base = _rss_mb()
    t = time.perf_counter()
    result = store.import_data(session.id, "json", text, "bench")
    seconds = time.perf_counter() - t
    peak = _rss_mb()
    first = json.loads(text)["objects"][0]["id"]
    out = {"session": session.id, "change": result.change.id, "object": first, "import_s": seconds,
           "peak_mb": peak, "growth_mb": peak - base, "db_import_mb": _db_mb(db, store),
           "history_import_mb": _history_mb(store)}
    store.close()
    return out


def _phase_revert(db: Path, info: dict[str, Any]) -> dict[str, Any]:
    from cks_desktop.graph.store import GraphStore

    store = GraphStore.open(db)
    out = {"inspector_import_ms": _inspector_ms(store, info["session"], info["object"])}
    t = time.perf_counter()
    store.revert(info["session"], info["change"], "bench")
    out["revert_s"] = time.perf_counter() - t
    out["revert_peak_mb"] = _rss_mb()
    out["db_revert_mb"] = _db_mb(db, store)
    out["history_revert_mb"] = _history_mb(store)
    out["inspector_revert_ms"] = _inspector_ms(store, info["session"], info["object"])
    store.close()
    return out


def _child(phase: str, *args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, __file__, "--phase", phase, *args], capture_output=True, text=True,
                          check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=100_000)
    parser.add_argument("--phase", choices=("input", "import", "revert"), help=argparse.SUPPRESS)
    parser.add_argument("args", nargs="*", help=argparse.SUPPRESS)
    ns = parser.parse_args(argv)
    if ns.phase == "input":
        _write_input(Path(ns.args[0]), int(ns.args[1]))
        print("{}")
        return 0
    if ns.phase == "import":
        print(json.dumps(_phase_import(Path(ns.args[0]), Path(ns.args[1]))))
        return 0
    if ns.phase == "revert":
        print(json.dumps(_phase_revert(Path(ns.args[0]), json.loads(ns.args[1]))))
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        data, db = Path(tmp) / "graph.json", Path(tmp) / "cks.sqlite3"
        _child("input", str(data), str(ns.objects))
        info = _child("import", str(db), str(data))
        info.update(_child("revert", str(db), json.dumps(info)))
    n = ns.objects
    print(f"history after importing {n} objects and {3 * n} relations ({4 * n} ops, one change)")
    rows = [("database after the import", f"{info['db_import_mb']:.1f} MB"),
            ("database after one revert", f"{info['db_revert_mb']:.1f} MB (freed graph pages are reused)"),
            ("history (op lists + index) after the import", f"{info['history_import_mb']:.1f} MB"),
            ("history (op lists + index) after the revert", f"{info['history_revert_mb']:.1f} MB"),
            ("peak RSS of the import", f"{info['peak_mb']:.0f} MB (+{info['growth_mb']:.0f} MB over the read file)"),
            ("peak RSS of the revert", f"{info['revert_peak_mb']:.0f} MB"),
            ("inspector history query after the import", f"{info['inspector_import_ms']:.2f} ms"),
            ("inspector history query after the revert", f"{info['inspector_revert_ms']:.2f} ms"),
            ("import time", f"{info['import_s']:.1f} s"),
            ("revert time", f"{info['revert_s']:.1f} s")]
    width = max(len(r[0]) for r in rows)
    for label, value in rows:
        print(f"  {label:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
