"""The window on a team database (PostgreSQL) shows what another member writes, live:
a real second process (``python -m cks_desktop --database postgresql://…``) adds an object — the
graph view shows it with the glow — and adds a document — the Documents panel lists it. A real
server (tests/pgcluster.py); bounded waits on the window's own signals, no sleeps."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.graph.events import GraphChanged
from tests import pgcluster
from tests.pg.test_pg_cli import cks
from tests.pgfixtures import pg_cluster, pg_url  # noqa: F401
from tests.ui.conftest import open_window
from tests.ui.helpers import signal_future, wait
from tests.ui.test_team_window import _choose_team

pytestmark = pytest.mark.skipif(pgcluster.missing_reason() is not None,
                                reason=pgcluster.missing_reason() or "")


@pytest.mark.slow
@pytest.mark.asyncio
async def test_another_members_object_and_document_show_live(qtbot: Any, home: Path, tmp_path: Path,
                                                           pg_url: str) -> None:
    _choose_team(home, pg_url)
    (tmp_path / "notes.txt").write_text("Grace Hopper wrote the first compiler.")
    elsewhere = tmp_path / "elsewhere"  # the other member's own data folder: only the database is shared
    async with open_window(home) as window:
        assert window.services.store.backend == "postgresql"
        sid = window.sidebar.create_session()
        window.open_session(sid)
        view = window.graph_view
        await wait(view.sync.opened.wait())
        assert view.session_id == sid

        arrived = signal_future(window.store_bridge.arrived,
                                lambda e: isinstance(e, GraphChanged) and e.external and e.session_id == sid)
        proc = await asyncio.to_thread(cks, elsewhere, "--database", pg_url, "tools", "call", "add_object",
                                       "--session", sid, "--args",
                                       json.dumps({"type": "Person", "name": "Grace Hopper"}))
        assert proc.returncode == 0, proc.stderr
        (event,) = await wait(arrived)
        grace = event.added_objects[0].id
        assert grace in view.model.index and "Grace Hopper" in view.model.names
        assert grace in view.state.flashes  # the same glow as for the assistant's writes

        panel = window.documents_panel
        window.documents_dock.show()
        await wait(signal_future(panel.reloaded))
        assert panel.table.rowCount() == 0
        reloaded = signal_future(panel.reloaded, lambda: panel.table.rowCount() == 1)
        proc = await asyncio.to_thread(cks, elsewhere, "--database", pg_url, "documents", "add",
                                       "--session", sid, str(tmp_path / "notes.txt"))
        assert proc.returncode == 0, proc.stderr
        await wait(reloaded, 15)
        assert panel.table.item(0, 0).text() == "notes.txt"
