"""The process the crash tests kill: applies batches of ``crash_batches`` to a
database until it is killed (by the parent's SIGKILL, or by itself from an
SQLite progress handler after a chosen number of VM steps, which lands the
kill at an arbitrary point inside the write transaction).

Run as ``python -m tests.reliability.crash_child DB SESSION N MODE BATCHES DIE_AT``:
MODE is ``store`` (``GraphStore.apply``) or ``registry`` (``evolve_knowledge``
through ``ToolRegistry.invoke``, as a model would); DIE_AT is a progress-handler
count (0: never). It prints ``committed K STEPS SECONDS`` after each batch returns.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path

from cks_desktop.graph.store import GraphStore
from tests.reliability.crash_batches import batch_ops, relation_ids_to_remove

STEP = 200  # SQLite VM instructions between progress-handler calls


def main(argv: list[str]) -> int:
    db, session_id, n, mode, batches, die_at = argv[0], argv[1], int(argv[2]), argv[3], int(argv[4]), int(argv[5])
    store = GraphStore.open(Path(db))
    calls = 0

    def progress() -> int:
        nonlocal calls
        calls += 1
        if calls == die_at:
            os.kill(os.getpid(), signal.SIGKILL)
        return 0

    with store.connection_lock() as conn:
        (done,) = conn.execute("SELECT count(*) FROM changes WHERE session_id = ?", (session_id,)).fetchone()
    registry = run = None
    if mode == "registry":
        from cks_desktop.tools.approval import Decision, StaticApprover
        from cks_desktop.tools.builtin import build_registry
        from cks_desktop.tools.context import Run
        from cks_desktop.tools.types import Caller

        registry = build_registry(store)
        # The batches remove objects and relations, so the call asks: the person allows it.
        run = Run(session_id=session_id, caller=Caller.MODEL, approver=StaticApprover(Decision.ALLOW))
    print("ready", flush=True)
    for k in range(done, done + batches):
        started = time.monotonic()
        with store.connection_lock() as conn:
            ops = batch_ops(k, n, relation_ids_to_remove(conn, session_id, k, n))
            conn.set_progress_handler(progress, STEP)
        if registry is not None:
            from cks_desktop.tools.types import ToolCall

            result = asyncio.run(registry.invoke(
                ToolCall(f"call_{k}", "evolve_knowledge", {"session_id": session_id, "operations": ops}), run))
            if result.is_error:
                print(f"error {result.content[:500]}", flush=True)
                return 1
        else:
            store.apply(session_id, ops, "crash-test")
        print(f"committed {k} {calls} {time.monotonic() - started:.3f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
