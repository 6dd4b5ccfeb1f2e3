"""A tool row's duration is the call's own time, not the time the person took to approve it.

A real turn: the real Anthropic adapter against the fake Anthropic server (real SSE wire
protocol), the real loop and registry, a tool whose policy asks every time, and an approver
that answers only after the person "thought" for a while. The row the chat shows (presenter →
model → ToolCallRow), the ``ToolCallFinished`` event and the transcript record all exclude the
wait; the live "running" ticker also restarts when the approval is given.
"""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.agent import events as ev
from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.loop import ai_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.schema import migrate
from cks_desktop.tools.approval import ApprovalRequest, Decision
from cks_desktop.ui.chat.model import ChatModel, RowState
from cks_desktop.ui.chat.presenter import ChatPresenter
from cks_desktop.ui.chat.tool_row import ToolCallRow

from tests.agent.helpers import Recorder, StubGraph, build_test_registry, turn_options
from tests.fakes.providers import fake_provider
from tests.fakes.script import call_turn, text_turn

THINK_S = 0.4  # how long the person looks at the approval dialog


class ThinkingApprover:
    """Allows every call, after the person has looked at it for ``THINK_S`` seconds."""

    denial_hint = ""

    def __init__(self) -> None:
        self.waited_ms: list[float] = []

    async def request_approval(self, request: ApprovalRequest) -> Decision:
        started = time.perf_counter()
        answer: asyncio.Future[Decision] = asyncio.get_running_loop().create_future()
        # the person's click, THINK_S from now (this is the behaviour under test, not a wait for it)
        asyncio.get_running_loop().call_later(THINK_S, answer.set_result, Decision.ALLOW)
        decision = await answer
        self.waited_ms.append((time.perf_counter() - started) * 1000)
        return decision


@pytest.fixture
def transcript(tmp_path: Path) -> Any:
    conn = sqlite3.connect(tmp_path / "t.sqlite3", isolation_level=None)
    conn.execute("PRAGMA foreign_keys = ON")
    migrate(conn, tmp_path / "t.sqlite3")
    conn.execute("INSERT INTO sessions (id, title, created_at) VALUES ('S1', 'one', 'now')")
    yield TranscriptStore.for_connection(conn)
    conn.close()


@pytest.mark.asyncio
async def test_duration_excludes_the_approval_wait(qtbot, transcript) -> None:
    import anthropic  # noqa: F401  (the SDK's first import is slow on a busy machine: not inside the turn)

    registry = build_test_registry(StubGraph())
    model = ChatModel()
    presenter = ChatPresenter(model)
    rec = Recorder()
    approver = ThinkingApprover()
    started_at: list[float] = []

    def on_event(event: ev.AgentEvent) -> None:
        rec(event)
        presenter.handle(event)
        if isinstance(event, (ev.ToolCallStarted, ev.ApprovalResolved)):
            row = model.tool(event.call_id)
            assert row is not None and row.state is RowState.RUNNING
            started_at.append(row.started_at or 0.0)

    presenter.add_user("do the risky thing")
    async with fake_provider("anthropic", call_turn("ask", {"what": "x"}), text_turn("Done.")) as (_fake, provider):
        await asyncio.wait_for(ai_chat("S1", [], "do the risky thing",
                                       ChatDeps(provider, registry, StubGraph(), transcript), turn_options(),
                                       approver=approver, on_event=on_event), 20)

    assert approver.waited_ms and approver.waited_ms[0] >= THINK_S * 1000 * 0.9
    finished = rec.of(ev.ToolCallFinished)
    assert len(finished) == 1 and finished[0].state == "done"
    waited = approver.waited_ms[0]
    # the call itself is a dictionary lookup: far less than the wait, whatever the machine's load
    assert finished[0].duration_ms < waited / 2, (finished[0].duration_ms, waited)
    row_item = model.tools()[0]
    assert row_item.duration_ms == finished[0].duration_ms  # the row shows the same number
    asked, approved = started_at  # the "running …" ticker restarted when the person said yes
    assert approved - asked >= THINK_S * 0.9
    row = ToolCallRow(row_item)
    qtbot.addWidget(row)
    assert row.state_label.text().startswith("done · ") and " ms" in row.state_label.text()
    saved = transcript.history("S1")
    record = next(c for m in saved for c in m.calls)
    assert record.duration_ms == pytest.approx(finished[0].duration_ms)  # and so does the reopened chat
