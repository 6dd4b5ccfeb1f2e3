"""Benchmark of the graph store (a script, not a test).

1. Inserts N objects and 2N relations through ``GraphStore.apply`` (batches
   of 10k ops) and the same rows with raw ``executemany`` into a fresh
   database with the same schema (triggers and indexes included), and
   compares the rates. Target: the batch path at least 1/3 of raw.
2. On a session of 50k objects (and 100k relations) times a 2-hop
   ``neighbors``, a ``search_objects`` and a ``find_path`` (median of many
   runs each). Target: each under 10 ms.

    python bench/graph_store.py            # the full run (100k objects, 200k relations)
    python bench/graph_store.py --quick    # a smaller run (10k / 20k, 5k-object session)
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cks_desktop.graph.sqlite_util import dumps, now_iso, search_text
from cks_desktop.graph.store import GraphStore
from cks_desktop.ids import new_id

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa "
         "quebec romeo sierra tango uniform victor whiskey xray yankee zulu quantum graph neuron protein "
         "river mountain castle engine violin galaxy harbor lantern meadow orchard pepper saddle thunder").split()
OBJECT_TYPES = ("Person", "Organization", "Place", "Concept", "Event", "Document", "Project", "Tool")
RELATION_TYPES = ("knows", "works_at", "located_in", "mentions", "part_of", "uses")
BATCH = 10_000


def make_objects(n: int, rng: random.Random) -> list[dict[str, Any]]:
    return [{"op": "add_object", "type": OBJECT_TYPES[i % len(OBJECT_TYPES)], "name": f"Object {i}",
             "label": f"$o{i}",
             "properties": {"description": " ".join(rng.choices(WORDS, k=8)), "rank": i}} for i in range(n)]


def make_relation_ends(n_objects: int, n_relations: int, rng: random.Random) -> list[tuple[int, int, str]]:
    return [(rng.randrange(n_objects), rng.randrange(n_objects), RELATION_TYPES[i % len(RELATION_TYPES)])
            for i in range(n_relations)]


def insert_via_apply(store: GraphStore, session_id: str, objects: list[dict[str, Any]],
                     ends: list[tuple[int, int, str]]) -> tuple[tuple[float, float], list[str]]:
    ids: list[str] = []
    start = (time.perf_counter(), time.process_time())
    for i in range(0, len(objects), BATCH):
        chunk = objects[i:i + BATCH]
        created = store.apply(session_id, chunk, "bench").created
        ids.extend(created[op["label"]] for op in chunk)
    for i in range(0, len(ends), BATCH):
        store.apply(session_id, [{"op": "add_relation", "source": ids[s], "target": ids[t], "type": ty}
                                 for s, t, ty in ends[i:i + BATCH]], "bench")
    return elapsed(start), ids


def insert_raw(store: GraphStore, session_id: str, objects: list[dict[str, Any]],
               ends: list[tuple[int, int, str]]) -> tuple[float, float]:
    """The same rows (objects, their full-text rows, relations) with plain executemany,
    one transaction per batch like apply. Search text and JSON are prepared outside the
    timed part, which favours raw."""
    now = now_iso()
    obj_rows = [(n, new_id("o_"), session_id, o["type"], o["name"], o["name"].casefold(), dumps(o["properties"]),
                 now, now) for n, o in enumerate(objects, start=1)]
    fts_rows = [(n, o["name"], search_text(o["properties"])) for n, o in enumerate(objects, start=1)]
    rel_rows = [(new_id("r_"), session_id, ty, obj_rows[s][1], obj_rows[t][1], "{}", now) for s, t, ty in ends]
    start = (time.perf_counter(), time.process_time())
    with store.connection_lock() as conn:
        for i in range(0, len(obj_rows), BATCH):
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT INTO objects (n, id, session_id, type, name, name_key, properties, created_at, "
                             "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", obj_rows[i:i + BATCH])
            conn.executemany("INSERT INTO objects_fts (rowid, name, body) VALUES (?, ?, ?)", fts_rows[i:i + BATCH])
            conn.execute("COMMIT")
        for i in range(0, len(rel_rows), BATCH):
            conn.execute("BEGIN IMMEDIATE")
            conn.executemany("INSERT INTO relations (id, session_id, type, source_id, target_id, properties, "
                             "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)", rel_rows[i:i + BATCH])
            conn.execute("COMMIT")
    return elapsed(start)


def elapsed(start: tuple[float, float]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) since ``start``. SQLite runs in this
    thread, so CPU time covers all the work and is robust when other jobs share the CPUs."""
    return time.perf_counter() - start[0], time.process_time() - start[1]


def median_ms(fn: Any, args: list[tuple[Any, ...]]) -> float:
    times = []
    for a in args:
        t = time.perf_counter()
        fn(*a)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k objects / 20k relations, 5k-object session")
    parser.add_argument("--runs", type=int, default=200, help="query repetitions (median)")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    n_objects = 10_000 if args.quick else 100_000
    n_query = 5_000 if args.quick else 50_000
    rng = random.Random(args.seed)

    with tempfile.TemporaryDirectory(prefix="cks-bench-") as tmp:
        objects = make_objects(n_objects, rng)
        ends = make_relation_ends(n_objects, 2 * n_objects, rng)
        raw_store = GraphStore.open(Path(tmp) / "raw.sqlite3")
        raw_time = insert_raw(raw_store, raw_store.create_session("raw").id, objects, ends)
        raw_store.close()
        store = GraphStore.open(Path(tmp) / "apply.sqlite3")
        apply_time, _ = insert_via_apply(store, store.create_session("apply").id, objects, ends)
        store.close()

        qstore = GraphStore.open(Path(tmp) / "query.sqlite3")
        qsession = qstore.create_session("queries").id
        qobjects = make_objects(n_query, rng)
        _, qids = insert_via_apply(qstore, qsession, qobjects, make_relation_ends(n_query, 2 * n_query, rng))
        runs = args.runs
        t_neighbors = median_ms(lambda ref: qstore.neighbors(qsession, ref, depth=2),
                                [(rng.choice(qids),) for _ in range(runs)])
        t_search = median_ms(lambda q: qstore.search_objects(qsession, q),
                             [(" ".join(rng.sample(WORDS, 2)),) for _ in range(runs)])
        t_path = median_ms(lambda a, b: qstore.find_path(qsession, a, b),
                           [(rng.choice(qids), rng.choice(qids)) for _ in range(runs)])
        found = sum(qstore.find_path(qsession, rng.choice(qids), rng.choice(qids)) is not None for _ in range(50))
        qstore.close()

    items = n_objects * 3
    ratio_wall = raw_time[0] / apply_time[0]
    ratio = raw_time[1] / apply_time[1]
    rows = [
        ("insert, raw executemany", f"{items / raw_time[0]:,.0f} rows/s",
         "", f"wall {raw_time[0]:.2f} s, CPU {raw_time[1]:.2f} s"),
        ("insert, GraphStore.apply", f"{items / apply_time[0]:,.0f} rows/s", ">= 1/3 of raw",
         f"wall {apply_time[0]:.2f} s, CPU {apply_time[1]:.2f} s"),
        ("apply rate / raw rate", f"{ratio:.2f} (CPU), {ratio_wall:.2f} (wall)", ">= 0.33",
         "OK" if ratio >= 1 / 3 else "MISS"),
        ("neighbors depth 2", f"{t_neighbors:.2f} ms", "< 10 ms", "OK" if t_neighbors < 10 else "MISS"),
        ("search_objects (2 words)", f"{t_search:.2f} ms", "< 10 ms", "OK" if t_search < 10 else "MISS"),
        ("find_path (max_depth 6)", f"{t_path:.2f} ms", "< 10 ms",
         f"{'OK' if t_path < 10 else 'MISS'} ({found}/50 pairs connected)"),
    ]
    print(f"Graph store: {n_objects:,} objects + {2 * n_objects:,} relations inserted in batches of {BATCH:,}; "
          f"queries on a {n_query:,}-object session, median of {runs} runs")
    widths = [max(len(r[i]) for r in rows + [("measure", "value", "target", "result")]) for i in range(4)]
    for r in [("measure", "value", "target", "result"), tuple("-" * w for w in widths), *rows]:
        print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |")
    ok = ratio >= 1 / 3 and max(t_neighbors, t_search, t_path) < 10
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
