"""A second app process for the feed tests: ``python -m tests.pg.feed_writer URL SESSION N OTHERS NAME``.

Opens a ``PgGraphStore``, starts its change feed, prints ``ready``, waits for ``go`` on
stdin, writes N changes (one object each, named NAME-i), then waits (bounded) until
its feed has shown OTHERS changes made by someone else, and prints one JSON line:
the ids it wrote, the external change ids it saw, and the session's object names.
"""

from __future__ import annotations

import json
import sys
import threading
import time

from cks_desktop.graph.events import GraphChanged, StoreEvent
from cks_desktop.graph.pg.store import PgGraphStore


def main() -> int:
    url, session_id, n, others, name = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    seen: list[str] = []
    done = threading.Event()

    def listener(event: StoreEvent) -> None:
        if isinstance(event, GraphChanged) and event.external and event.change_id:
            seen.append(event.change_id)
            if len(seen) >= others:
                done.set()

    with PgGraphStore.connect(url) as store:
        store.subscribe(listener)
        store.start_feed()
        print("ready", flush=True)
        if sys.stdin.readline().strip() != "go":
            return 2
        mine = []
        for i in range(n):
            result = store.apply(session_id, [{"op": "add_object", "type": "T", "name": f"{name}-{i}"}], name)
            assert result.change is not None
            mine.append(result.change.id)
        deadline = time.monotonic() + 60
        while not done.wait(0.1) and time.monotonic() < deadline:
            pass
        names = sorted(o.name for o in store.all_objects(session_id))
        print(json.dumps({"wrote": mine, "seen": seen, "names": names}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
