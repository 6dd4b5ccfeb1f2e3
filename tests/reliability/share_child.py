"""A second (third…) app instance on the same data folder, as far as the store and the
settings file go: ``python -m tests.reliability.share_child HOME SESSION TAG ROUNDS``.

Each round writes one small batch (objects named ``TAG-round-i``), every fifth round
a 10,000-operation batch that holds the write lock for a while, and rewrites the
settings file. Prints ``ok N`` or ``failed N <message>`` per round."""

from __future__ import annotations

import sys
from pathlib import Path

from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.store import GraphStore
from cks_desktop.settings import Settings


def main(home: str, session_id: str, tag: str, rounds: int) -> None:
    store = GraphStore.open(Path(home) / "cks.sqlite3")
    for r in range(rounds):
        size = 5000 if r % 5 == 4 else 5
        ops = [{"op": "add_object", "type": "Note", "name": f"{tag}-{r}-{i}"} for i in range(size)]
        try:
            store.apply(session_id, ops, "user")
            print(f"ok {r} {size}", flush=True)
        except StoreError as exc:
            print(f"failed {r} {size} {exc}", flush=True)
        settings = Settings.load(Path(home) / "settings.json")
        settings.data.setdefault("instances", {})[tag] = r
        settings.save()
    store.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]))
