"""The open window follows writes of OTHER processes (issue 12 item 1): the real MainWindow,
real `python -m cks_desktop` subprocesses writing to the same data folder.

Waits are futures resolved by the store bridge's signal (the feed's events hop to the GUI
thread through it), bounded; no sleeps.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.graph.events import GraphChanged, SessionEvent
from cks_desktop.graph.store import GraphStore
from cks_desktop.ui.chat.model import RowState, ToolItem

from tests.ui.conftest import open_window
from tests.ui.helpers import signal_future, wait

LATENCY_S = 0.5


def cks(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), *args],
                          capture_output=True, text=True, timeout=120)


async def written_elsewhere(home: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run a CLI process off the loop; returns it and when it had finished (its commit is before)."""
    proc = await asyncio.to_thread(cks, home, *args)
    return proc, time.monotonic()


@pytest.mark.asyncio
async def test_the_window_shows_what_a_terminal_writes(qtbot: Any, home: Path) -> None:
    async with open_window(home) as window:
        sid = window.sidebar.create_session()
        window.open_session(sid)
        view = window.graph_view
        await wait(view.sync.opened.wait())
        assert view.session_id == sid

        # an object added by `tools call` in another process: graph view + glow
        arrived = signal_future(window.store_bridge.event,
                                lambda e: isinstance(e, GraphChanged) and e.external and e.session_id == sid)
        proc, done = await written_elsewhere(home, "tools", "call", "add_object", "--session", sid,
                                             "--args", json.dumps({"type": "Person", "name": "Grace Hopper"}))
        assert proc.returncode == 0, proc.stderr
        (event,) = await wait(arrived)
        seen = time.monotonic()
        assert seen - done < LATENCY_S, f"the window saw it {seen - done:.2f} s after the writer exited"
        grace = event.added_objects[0].id
        assert grace in view.model.index and "Grace Hopper" in view.model.names
        assert grace in view.state.flashes  # the same glow as for the assistant's writes

        # the inspector open on it follows a rename made elsewhere
        await wait(view.inspect(grace))
        assert view.inspector.title.text() == "Grace Hopper"
        reloaded = signal_future(view.inspector.loaded)
        proc, _ = await written_elsewhere(home, "tools", "call", "update_object", "--session", sid, "--yes",
                                          "--args", json.dumps({"ref": grace, "name": "Admiral Hopper"}))
        assert proc.returncode == 0, proc.stderr
        await wait(reloaded)
        assert view.inspector.title.text() == "Admiral Hopper"
        assert view.model.names[view.model.index[grace]] == "Admiral Hopper"

        # a session created from the terminal appears in the sidebar, a rename and a delete follow
        created = signal_future(window.store_bridge.event,
                                lambda e: isinstance(e, SessionEvent) and e.external and e.kind == "created")
        proc, done = await written_elsewhere(home, "sessions", "create", "From the terminal")
        assert proc.returncode == 0, proc.stderr
        (event,) = await wait(created)
        assert time.monotonic() - done < LATENCY_S
        new_id = proc.stdout.strip()
        assert (new_id, "From the terminal") in window.sidebar._shown()

        gone = signal_future(window.store_bridge.event,
                             lambda e: isinstance(e, SessionEvent) and e.external and e.kind == "deleted")
        assert (await written_elsewhere(home, "sessions", "delete", new_id))[0].returncode == 0
        await wait(gone)
        assert new_id not in [i for i, _ in window.sidebar._shown()]
        assert view.session_id == sid  # the open session is untouched


@pytest.mark.asyncio
async def test_a_chat_row_reverted_elsewhere_offers_revert_no_more(qtbot: Any, home: Path) -> None:
    store = GraphStore.open(home / "cks.sqlite3")
    try:
        session = store.create_session("With a chat")
    finally:
        store.close()
    async with open_window(home) as window:
        window.open_session(session.id)
        view = window.graph_view
        await wait(view.sync.opened.wait())
        controller = window.controllers[session.id]
        # the assistant's write, as the chat records it
        result = window.services.store.apply(session.id, [{"op": "add_object", "type": "T", "name": "x"}],
                                             origin="assistant")
        assert result.change is not None
        item = ToolItem(call_id="call_1", name="add_object", display_name="add_object", source="builtin",
                        arguments={}, state=RowState.DONE, change_id=result.change.id, revertable=True)
        controller.model.append(item)
        assert item.can_revert
        reverted = signal_future(window.store_bridge.event,
                                 lambda e: isinstance(e, GraphChanged) and e.external and e.reverts is not None)
        proc, _ = await written_elsewhere(home, "tools", "call", "revert_change", "--session", session.id,
                                          "--yes", "--args", json.dumps({"change_id": result.change.id}))
        assert proc.returncode == 0, proc.stderr
        await wait(reverted)
        assert item.reverted and not item.can_revert
        assert "x" not in view.model.names
