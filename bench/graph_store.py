"""Benchmark of the graph store (a script, not a test).

1. Inserts N objects and 2N relations through ``GraphStore.apply`` (batches
   of 10k ops) and the same rows with raw ``executemany`` into a fresh
   database with the same schema (indexes and full-text rows included),
   alternating batch by batch, and compares the rates (CPU time is the
   judge; wall time is printed too). Target: the batch path at least 1/3 of raw.
2. On a session of 50k objects (and 100k relations) times a 2-hop
   ``neighbors``, a ``search_objects`` and a ``find_path`` (median of many
   runs each). Target: each under 10 ms. Descriptions use a 2,000-word
   vocabulary with Zipf frequencies; searches take two words of it, and a
   worst case with two of the ten commonest words (~1,000 matches to rank)
   is shown for information.

    python bench/graph_store.py            # the full run (100k objects, 200k relations)
    python bench/graph_store.py --quick    # a smaller run (10k / 20k, 5k-object session)
    python bench/graph_store.py --backend both   # SQLite, then PostgreSQL, in one run

PostgreSQL (``--backend postgresql|both``): a throw-away local cluster
(``tests/pgcluster.py``: initdb + pg_ctl, as the ``postgres`` user when run as
root), or ``--pg-admin postgresql://admin@host/postgres`` to use a server that
may create databases. Its raw baseline is ``COPY`` (the fastest way in); the
server does most of the work in its own process, so WALL time is the judge
there (CPU time of this process is printed for information). Query target on
PostgreSQL: each under 20 ms; SQLite keeps its 10 ms.
"""

from __future__ import annotations

import argparse
import itertools
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

ROOT = Path(__file__).resolve().parents[1]

_SYLLABLES = ("ka", "lo", "mi", "ne", "ru", "ta", "shi", "po", "va", "ze", "qui", "dor", "fen", "gal", "hu", "jin")
# A 2,000-word vocabulary used with Zipf frequencies (the k-th word 1/k as often as the first),
# as words are in real text: a few very common, most rare.
VOCAB = tuple(sorted({"".join(random.Random(i).choices(_SYLLABLES, k=3)) for i in range(3000)}))[:2000]
_ZIPF = tuple(itertools.accumulate(1 / (k + 1) for k in range(len(VOCAB))))
OBJECT_TYPES = ("Person", "Organization", "Place", "Concept", "Event", "Document", "Project", "Tool")
RELATION_TYPES = ("knows", "works_at", "located_in", "mentions", "part_of", "uses")
BATCH = 10_000


def make_objects(n: int, rng: random.Random) -> list[dict[str, Any]]:
    return [{"op": "add_object", "type": OBJECT_TYPES[i % len(OBJECT_TYPES)], "name": f"Object {i}",
             "label": f"$o{i}",
             "properties": {"description": " ".join(rng.choices(VOCAB, cum_weights=_ZIPF, k=8)), "rank": i}}
            for i in range(n)]


def make_relation_ends(n_objects: int, n_relations: int, rng: random.Random) -> list[tuple[int, int, str]]:
    return [(rng.randrange(n_objects), rng.randrange(n_objects), RELATION_TYPES[i % len(RELATION_TYPES)])
            for i in range(n_relations)]


def insert_via_apply(store: GraphStore, session_id: str, objects: list[dict[str, Any]],
                     ends: list[tuple[int, int, str]]) -> list[str]:
    """Fill a session through the batch path; returns the object ids in order."""
    ids: list[str] = []
    for i in range(0, len(objects), BATCH):
        chunk = objects[i:i + BATCH]
        created = store.apply(session_id, chunk, "bench").created
        ids.extend(created[op["label"]] for op in chunk)
    for i in range(0, len(ends), BATCH):
        store.apply(session_id, [{"op": "add_relation", "source": ids[s], "target": ids[t], "type": ty}
                                 for s, t, ty in ends[i:i + BATCH]], "bench")
    return ids


class Clock:
    """Accumulated wall and CPU seconds. SQLite runs in this thread, so the process's CPU
    time covers all the work, and is robust when other jobs share the CPUs."""

    def __init__(self) -> None:
        self.wall = self.cpu = 0.0

    def run(self, fn: Any, *args: Any) -> Any:
        t, c = time.perf_counter(), time.process_time()
        try:
            return fn(*args)
        finally:
            self.wall += time.perf_counter() - t
            self.cpu += time.process_time() - c


def insert_both(raw: GraphStore, raw_session: str, store: GraphStore, session_id: str,
                objects: list[dict[str, Any]], ends: list[tuple[int, int, str]]) -> tuple[Clock, Clock]:
    """The same rows through both paths, batch by batch in alternation (so both see the
    same machine load): raw = plain executemany of the objects, their full-text rows and
    the relations, one transaction per batch; apply = ``GraphStore.apply`` per batch.
    Raw rows (ids, JSON, search text) are prepared outside the timed part, which favours raw."""
    now = now_iso()
    obj_rows = [(n, new_id("o_"), raw_session, o["type"], o["name"], o["name"].casefold(), dumps(o["properties"]),
                 now, now) for n, o in enumerate(objects, start=1)]
    fts_rows = [(n, o["name"], search_text(o["properties"])) for n, o in enumerate(objects, start=1)]
    rel_rows = [(new_id("r_"), raw_session, ty, obj_rows[s][1], obj_rows[t][1], "{}", now) for s, t, ty in ends]
    raw_clock, apply_clock = Clock(), Clock()

    def raw_batch(*statements: tuple[str, list[tuple[Any, ...]]]) -> None:
        if raw.backend == "postgresql":
            return copy_batch(raw, statements)
        with raw.connection_lock() as conn:
            conn.execute("BEGIN IMMEDIATE")
            for sql, rows in statements:
                conn.executemany(sql, rows)
            conn.execute("COMMIT")

    ids: list[str] = []
    for i in range(0, len(objects), BATCH):
        raw_clock.run(raw_batch, (
            "INSERT INTO objects (n, id, session_id, type, name, name_key, properties, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", obj_rows[i:i + BATCH]), (
            "INSERT INTO objects_fts (rowid, name, body) VALUES (?, ?, ?)", fts_rows[i:i + BATCH]))
        chunk = objects[i:i + BATCH]
        created = apply_clock.run(store.apply, session_id, chunk, "bench").created
        ids.extend(created[op["label"]] for op in chunk)
    for i in range(0, len(ends), BATCH):
        raw_clock.run(raw_batch, (
            "INSERT INTO relations (id, session_id, type, source_id, target_id, properties, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)", rel_rows[i:i + BATCH]))
        ops = [{"op": "add_relation", "source": ids[s], "target": ids[t], "type": ty}
               for s, t, ty in ends[i:i + BATCH]]
        apply_clock.run(store.apply, session_id, ops, "bench")
    return raw_clock, apply_clock


def copy_batch(raw: GraphStore, statements: tuple[tuple[str, list[tuple[Any, ...]]], ...]) -> None:
    """PostgreSQL's raw path: one ``COPY … FROM STDIN`` per table, in one transaction."""
    with raw.raw_connection() as conn:  # type: ignore[attr-defined]
        with conn.transaction():
            for sql, rows in statements:
                table_cols = sql.split(" VALUES", 1)[0].replace("INSERT INTO ", "")
                with conn.cursor().copy(f"COPY {table_cols} FROM STDIN") as copy:
                    for row in rows:
                        copy.write_row(row)


def median_ms(fn: Any, args: list[tuple[Any, ...]]) -> tuple[float, float]:
    """Median (wall ms, CPU ms) of ``fn(*a)`` over ``args``."""
    wall, cpu = [], []
    for a in args:
        t, c = time.perf_counter(), time.process_time()
        fn(*a)
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def walk(store: GraphStore, session_id: str, start: str, steps: int, rng: random.Random) -> str:
    """The end of a random walk: a target at most ``steps`` hops from ``start``."""
    node = start
    for _ in range(steps):
        objects, _ = store.neighbors(session_id, node, depth=1)
        if len(objects) < 2:
            break
        node = rng.choice(objects[1:]).id
    return node


class Backend:
    """Fresh stores of one backend for the benchmark: SQLite files in a temporary folder,
    or new databases on a PostgreSQL server (a throw-away cluster unless --pg-admin)."""

    def __init__(self, name: str, tmp: Path, pg_admin: str | None) -> None:
        self.name = name
        self.tmp = tmp
        self.cluster: Any = None
        self.admin = pg_admin
        self.made: list[str] = []
        if name == "postgresql" and pg_admin is None:
            sys.path.insert(0, str(ROOT))
            from tests import pgcluster

            self.cluster = pgcluster.start_cluster()
            self.admin = self.cluster.dsn()

    def open(self, label: str) -> GraphStore:
        if self.name == "sqlite":
            return GraphStore.open(self.tmp / f"{label}.sqlite3")
        import psycopg
        from psycopg import conninfo

        from cks_desktop.graph.pg.store import PgGraphStore

        assert self.admin is not None
        db = f"cks_bench_{label}"
        with psycopg.connect(self.admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
            conn.execute(f"CREATE DATABASE {db} TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'")
        self.made.append(db)
        return PgGraphStore.connect(conninfo.make_conninfo(self.admin, dbname=db))

    def close(self) -> None:
        if self.name == "postgresql" and self.admin is not None:
            import psycopg

            with psycopg.connect(self.admin, autocommit=True) as conn:
                for db in self.made:
                    conn.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
        if self.cluster is not None:
            self.cluster.stop()


def run_backend(name: str, args: argparse.Namespace) -> tuple[list[tuple[str, str, str, str]], bool, str]:
    n_objects = 10_000 if args.quick else 100_000
    n_query = 5_000 if args.quick else 50_000
    limit_ms = 10.0 if name == "sqlite" else 20.0
    rng = random.Random(args.seed)

    with tempfile.TemporaryDirectory(prefix="cks-bench-") as tmp:
        backend = Backend(name, Path(tmp), args.pg_admin)
        try:
            objects = make_objects(n_objects, rng)
            ends = make_relation_ends(n_objects, 2 * n_objects, rng)
            raw_store = backend.open("raw")
            store = backend.open("apply")
            raw_clock, apply_clock = insert_both(raw_store, raw_store.create_session("raw").id,
                                                 store, store.create_session("apply").id, objects, ends)
            raw_store.close()
            store.close()
            raw_time, apply_time = (raw_clock.wall, raw_clock.cpu), (apply_clock.wall, apply_clock.cpu)

            qstore = backend.open("query")
            qsession = qstore.create_session("queries").id
            qobjects = make_objects(n_query, rng)
            qids = insert_via_apply(qstore, qsession, qobjects, make_relation_ends(n_query, 2 * n_query, rng))
            if name == "postgresql":
                with qstore.raw_connection() as conn:  # type: ignore[attr-defined]
                    conn.execute("ANALYZE")  # autovacuum would, a moment later; the bench does not wait
            runs = args.runs
            common = VOCAB[:10]
            typical_queries = [(" ".join(rng.sample(VOCAB, 2)),) for _ in range(runs)]
            worst_queries = [(" ".join(rng.sample(common, 2)),) for _ in range(runs)]
            hits = {kind: statistics.median(len(qstore.search_objects(qsession, q, limit=1000)) for (q,) in qs[:20])
                    for kind, qs in (("typical", typical_queries), ("worst", worst_queries))}
            random_pairs = [(rng.choice(qids), rng.choice(qids)) for _ in range(runs)]
            near_pairs = [(a, walk(qstore, qsession, a, 5, rng)) for a, _ in random_pairs]
            timings = {
                "neighbors": median_ms(lambda ref: qstore.neighbors(qsession, ref, depth=2),
                                       [(rng.choice(qids),) for _ in range(runs)]),
                "search": median_ms(lambda q: qstore.search_objects(qsession, q), typical_queries),
                "search_worst": median_ms(lambda q: qstore.search_objects(qsession, q), worst_queries),
                "path_random": median_ms(lambda a, b: qstore.find_path(qsession, a, b), random_pairs),
                "path_near": median_ms(lambda a, b: qstore.find_path(qsession, a, b), near_pairs),
            }
            connected = sum(qstore.find_path(qsession, a, b) is not None for a, b in random_pairs[:50])
            qstore.close()
        finally:
            backend.close()

    items = n_objects * 3
    ratio_wall = raw_time[0] / apply_time[0]
    ratio_cpu = raw_time[1] / apply_time[1]
    ratio = ratio_cpu if name == "sqlite" else ratio_wall  # PostgreSQL works in its own process
    raw_label = "raw executemany" if name == "sqlite" else "raw COPY"
    target = f"< {limit_ms:.0f} ms"

    def query_row(label: str, key: str, info: bool = False, note: str = "") -> tuple[str, str, str, str]:
        wall, cpu = timings[key]
        verdict = "info" if info else ("OK" if wall < limit_ms else "MISS")
        return (label, f"{wall:.2f} ms (CPU {cpu:.2f} ms)", "(info)" if info else target, f"{verdict}{note}")

    rows = [
        (f"insert, {raw_label}", f"{items / raw_time[0]:,.0f} rows/s",
         "", f"wall {raw_time[0]:.2f} s, CPU {raw_time[1]:.2f} s"),
        ("insert, GraphStore.apply", f"{items / apply_time[0]:,.0f} rows/s", ">= 1/3 of raw",
         f"wall {apply_time[0]:.2f} s, CPU {apply_time[1]:.2f} s"),
        ("apply rate / raw rate", f"{ratio_cpu:.2f} (CPU), {ratio_wall:.2f} (wall)", ">= 0.33",
         ("OK" if ratio >= 1 / 3 else "MISS") + (" (wall)" if name != "sqlite" else " (CPU)")),
        query_row("neighbors, depth 2", "neighbors"),
        query_row("search_objects, 2 words", "search", note=f" (median {hits['typical']:.0f} matches)"),
        query_row("search, 2 of the 10 commonest words", "search_worst", True,
                  f" (median {hits['worst']:.0f} matches)"),
        query_row("find_path, random pairs", "path_random", note=f" ({connected}/50 connected within 6 hops)"),
        query_row("find_path, pairs <= 5 hops apart", "path_near"),
    ]
    title = (f"{name}: {n_objects:,} objects + {2 * n_objects:,} relations inserted in batches of {BATCH:,}; "
             f"queries on a {n_query:,}-object session, median of {args.runs} runs")
    ok = ratio >= 1 / 3 and max(timings[k][0] for k in ("neighbors", "search", "path_random", "path_near")) < limit_ms
    return rows, ok, title


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10k objects / 20k relations, 5k-object session")
    parser.add_argument("--runs", type=int, default=200, help="query repetitions (median)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--backend", choices=("sqlite", "postgresql", "both"), default="sqlite")
    parser.add_argument("--pg-admin", metavar="ADDRESS", help="a PostgreSQL server the bench may create "
                        "databases on (default: a throw-away local cluster)")
    args = parser.parse_args(argv)
    names = ("sqlite", "postgresql") if args.backend == "both" else (args.backend,)
    all_ok = True
    for name in names:
        rows, ok, title = run_backend(name, args)
        all_ok = all_ok and ok
        print(f"Graph store, {title}")
        widths = [max(len(r[i]) for r in rows + [("measure", "value", "target", "result")]) for i in range(4)]
        for r in [("measure", "value", "target", "result"), tuple("-" * w for w in widths), *rows]:
            print("| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |")
        print()
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
