"""Benchmark of a member's writes on a team database (a script, not a test).

What the members' rules (``graph/pg/privileges.py``: row-level security on the
history index, the history trigger, the insert check) cost the app: as a member
of a fresh team database on a throw-away cluster (tests/pgcluster.py), times

- 10 applies of 1,000 new objects each, and a streamed import of those 10,000;
- 200 ``changes_touching`` (the inspector's per-click query);
- compacting the history to its newest change (9 changes, 9,000 index rows);
- deleting the imported 10,000-object session.

Prints the best of ``--repeat`` runs in milliseconds. Run it on another tree to
compare (the numbers in docs/reliability.md came from HEAD before and after):

    python bench/team_member_writes.py
    PYTHONPATH=/some/other/tree python bench/team_member_writes.py --repeat 3
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.append(str(Path(__file__).resolve().parents[1]))  # after PYTHONPATH: another tree can be measured

from cks_desktop.graph.pg.store import PgGraphStore  # noqa: E402
from cks_desktop.graph.pg.team import init_team  # noqa: E402
from tests import pgcluster  # noqa: E402


def _timed(label: str, run: Callable[[], Any], out: dict[str, float]) -> Any:
    start = time.perf_counter()
    result = run()
    out[label] = time.perf_counter() - start
    return result


def one_run(cluster: pgcluster.Cluster) -> dict[str, float]:
    name = pgcluster.new_database(cluster)
    out: dict[str, float] = {}
    try:
        url = cluster.dsn(name)
        init_team(url, {"bench_bob": None})
        with PgGraphStore.connect(cluster.dsn(name, user="bench_bob")) as bob:
            big = bob.create_session("big")

            def applies() -> None:
                for k in range(10):
                    bob.apply(big.id, [{"op": "add_object", "type": "T", "name": f"n{k}_{i}"}
                                       for i in range(1000)], "bench")

            _timed("apply 10 x 1,000 objects", applies, out)
            data = bob.export(big.id, "json")
            copy = bob.create_session("imported")
            _timed("streamed import, 10,000 objects", lambda: bob.import_data(copy.id, "json", data, "bench"), out)
            some = bob.all_objects(big.id)[:200]
            _timed("200 changes_touching", lambda: [bob.changes_touching(big.id, o.id) for o in some], out)
            _timed("compact to the newest change", lambda: bob.compact_history(big.id, keep_last=1), out)
            _timed("delete a 10,000-object session", lambda: bob.delete_session(copy.id), out)
    finally:
        pgcluster.drop_database(cluster, name)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    cluster = pgcluster.acquire()
    try:
        best: dict[str, float] = {}
        for _ in range(args.repeat):
            for label, seconds in one_run(cluster).items():
                best[label] = min(seconds, best.get(label, seconds))
    finally:
        pgcluster.release()
    for label, seconds in best.items():
        print(f"{label:<34} {seconds * 1000:8.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
