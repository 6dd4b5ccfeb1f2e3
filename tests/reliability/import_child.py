"""The process the import crash test kills: imports one cks-graph file with documents into a
session (``documents.exchange.import_json``, as ``graph import`` does) and is killed meanwhile,
by the parent's SIGKILL or by itself from an SQLite progress handler after a chosen number of
VM steps (an arbitrary statement of the import).

Run as ``python -m tests.reliability.import_child DB SESSION FILE DIE_AT``; DIE_AT 0: never.
Prints ``ready`` before the import and ``imported STEPS`` after it returns.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from cks_desktop.documents.exchange import import_json
from cks_desktop.graph.store import GraphStore

STEP = 100  # SQLite VM instructions between progress-handler calls


def main(argv: list[str]) -> int:
    db, session_id, file, die_at = argv[0], argv[1], Path(argv[2]), int(argv[3])
    data = file.read_text(encoding="utf-8")
    store = GraphStore.open(Path(db))
    calls = 0

    def progress() -> int:
        nonlocal calls
        calls += 1
        if calls == die_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return 0

    with store.connection_lock() as conn:
        conn.set_progress_handler(progress, STEP)
    print("ready", flush=True)
    import_json(store, session_id, data, "import")
    print(f"imported {calls}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
