"""Benchmark of the store's change feed (a script, not a test).

Prints a table:

- latency: from the commit of a write made by a SECOND PROCESS (a child holding
  its own ``GraphStore``, told over a pipe when to write; it reports the wall
  time right after its COMMIT) to the moment the watching store's listener has
  the event (feed thread), p50/p95/max over N writes. The writes are spaced at
  random so they fall anywhere in the poll interval;
- idle cost: CPU seconds per hour of a process that holds an open store with
  the feed running and does nothing else, against the same process without the
  feed (the difference is the feed's), measured with ``time.process_time``
  over ``--idle`` seconds; and the polls it made.

    python bench/change_feed.py                  # 60 writes, 60 s idle
    python bench/change_feed.py --writes 20 --idle 20
    PYTHONPATH=/some/other/tree python bench/change_feed.py
"""

from __future__ import annotations

import argparse
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

CHILD = r"""
import sys, time
from cks_desktop.graph.store import GraphStore
store = GraphStore.open(sys.argv[1])
sid = sys.argv[2]
n = 0
for line in sys.stdin:
    if not line.strip():
        break
    n += 1
    store.apply(sid, [{"op": "add_object", "type": "Thing", "name": f"thing {n}"}], origin="bench")
    print(time.time(), flush=True)
store.close()
"""


def measure_latency(db: Path, sid: str, writes: int, interval: float | None) -> list[float]:
    from cks_desktop.graph.events import GraphChanged, StoreEvent
    from cks_desktop.graph.store import GraphStore

    store = GraphStore.open(db)
    arrived: list[float] = []
    got = threading.Event()

    def on(event: StoreEvent) -> None:
        if isinstance(event, GraphChanged) and event.external:
            arrived.append(time.time())
            got.set()

    store.subscribe(on)
    store.start_feed(interval)
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(db), sid], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, text=True)
    assert child.stdin is not None and child.stdout is not None
    latencies = []
    try:
        for _ in range(writes):
            time.sleep(random.uniform(0.0, 0.25))  # land anywhere in the poll interval
            got.clear()
            child.stdin.write("go\n")
            child.stdin.flush()
            committed = float(child.stdout.readline())
            if not got.wait(5):
                raise SystemExit("a write was not seen within 5 s")
            latencies.append(arrived[-1] - committed)
    finally:
        child.stdin.write("\n")
        child.stdin.close()
        child.wait(30)
        store.close()
    return latencies


def measure_idle(db: Path, seconds: float, feed: bool, interval: float | None) -> tuple[float, int]:
    """CPU seconds per hour of this process while idle, and the feed's polls."""
    from cks_desktop.graph.store import GraphStore

    store = GraphStore.open(db)
    try:
        running = store.start_feed(interval) if feed else None
        start_cpu, start = time.process_time(), time.monotonic()
        threading.Event().wait(seconds)  # the main thread sleeps; only the feed (if any) works
        cpu, wall = time.process_time() - start_cpu, time.monotonic() - start
        polls = getattr(running, "polls", 0)
    finally:
        store.close()
    return cpu / wall * 3600, polls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writes", type=int, default=60)
    parser.add_argument("--idle", type=float, default=60.0, help="seconds of each idle measurement")
    parser.add_argument("--interval", type=float, default=None, help="poll interval (default: the store's)")
    args = parser.parse_args()

    from cks_desktop.graph.sqlite_feed import DEFAULT_INTERVAL_S
    from cks_desktop.graph.store import GraphStore

    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "cks.sqlite3"
        with GraphStore.open(db) as store:
            sid = store.create_session("bench").id
            store.apply(sid, [{"op": "add_object", "type": "Thing", "name": f"seed {i}"} for i in range(1000)],
                        origin="bench")
        lat = sorted(measure_latency(db, sid, args.writes, args.interval))
        base_cpu, _ = measure_idle(db, args.idle, False, args.interval)
        feed_cpu, polls = measure_idle(db, args.idle, True, args.interval)

    interval = args.interval if args.interval is not None else DEFAULT_INTERVAL_S
    p95 = lat[min(len(lat) - 1, int(round(0.95 * (len(lat) - 1))))]
    print(f"change feed, poll interval {interval * 1000:.0f} ms, {args.writes} writes by a second process")
    print(f"{'measure':<44}{'value':>14}")
    print(f"{'latency p50 (commit → listener)':<44}{statistics.median(lat) * 1000:>11.0f} ms")
    print(f"{'latency p95':<44}{p95 * 1000:>11.0f} ms")
    print(f"{'latency max':<44}{lat[-1] * 1000:>11.0f} ms")
    print(f"{'idle CPU without the feed':<44}{base_cpu:>10.2f} s/h")
    print(f"{'idle CPU with the feed':<44}{feed_cpu:>10.2f} s/h")
    print(f"{'the feed own idle cost':<44}{feed_cpu - base_cpu:>10.2f} s/h")
    print(f"{'polls per second idle':<44}{polls / args.idle:>14.1f}")
    print(f"{'ratio p95 / 500 ms budget':<44}{p95 / 0.5:>14.2f}")


if __name__ == "__main__":
    main()
