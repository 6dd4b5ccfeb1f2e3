"""tool outcomes and loop notices are typed, not read back out of text.

A denied, timed-out or cancelled call carries its outcome as ``ToolResult.outcome`` and the
model reads plain text (no ``{"denied": true}`` or other bookkeeping keys); the change a write
made is ``ToolResult.change_id``, recorded by the built-ins' write path on a real store; and the
iteration limit is a typed notice that a reopened chat recognises whatever its words.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
from typing import Any

import pytest

from cks_desktop.agent import events as ev
from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.loop import CANCELLED_TEXT, ai_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.llm.messages import Message, Text, ToolResultPart
from cks_desktop.tools.approval import ApprovalRequest, Decision, StaticApprover
from cks_desktop.tools.builtin import build_registry
from cks_desktop.tools.context import Run, ToolContext
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller, Outcome, Policy, Scope, ToolCall, ToolResult, ToolSpec
from cks_desktop.ui.chat.model import ChatModel
from cks_desktop.ui.chat.presenter import ChatPresenter

from tests.agent.helpers import Gate, Recorder, StubGraph, turn_options
from tests.fakes.script import ScriptedCall, Turn, call_turn, text_turn
from tests.fakes.scripted import ScriptedProvider

MAGIC_KEYS = {"denied", "cancelled", "timeout", "timed_out", "outcome", "change_id", "state"}


def assert_plain_for_the_model(content: str) -> None:
    """What the model reads says what happened in words; no app bookkeeping keys ride along."""
    try:
        data = json.loads(content)
    except ValueError:
        return
    assert not (isinstance(data, dict) and MAGIC_KEYS & set(data)), content


def _registry(store: Any, gate: Gate) -> ToolRegistry:
    registry = ToolRegistry(store)
    schema = {"type": "object", "properties": {}, "additionalProperties": False}

    async def risky(args: dict[str, Any], ctx: ToolContext) -> Any:
        raise AssertionError("a denied call must not run")

    async def stuck(args: dict[str, Any], ctx: ToolContext) -> Any:
        gate.started.set()
        await gate.release.wait()  # never released: the tool's own deadline ends it
        return "unreachable"

    async def slow(args: dict[str, Any], ctx: ToolContext) -> Any:
        gate.started.set()
        await gate.release.wait()  # never released: Stop cancels it
        return "unreachable"

    for name, handler, policy, timeout in (("risky", risky, Policy.ALWAYS, None), ("stuck", stuck, Policy.AUTO, 0.2),
                                           ("slow", slow, Policy.AUTO, None)):
        registry.register(ToolSpec(name=name, description=f"The {name} tool.", input_schema=schema,
                                   scopes=frozenset({Scope.GRAPH_READ}), default_policy=policy, llm_exposed=True,
                                   handler=handler, timeout=timeout))
    return registry


async def _chat(provider: ScriptedProvider, registry: ToolRegistry, store: Any, rec: Recorder,
                approver: Any = None, transcript: TranscriptStore | None = None) -> list[Message]:
    return await asyncio.wait_for(ai_chat(
        "S1", [], "go", ChatDeps(provider, registry, store, transcript), turn_options(),
        approver=approver or StaticApprover(Decision.DENY, denial_hint="Say yes next time."),
        on_event=rec), 10)


def _finished(rec: Recorder) -> ToolResult:
    [event] = rec.of(ev.ToolCallFinished)
    assert isinstance(event, ev.ToolCallFinished)
    return event.result


@pytest.mark.asyncio
async def test_a_denied_call_has_the_denied_outcome_and_plain_content(transcript: TranscriptStore) -> None:
    store, gate, rec = StubGraph(), Gate(), Recorder()
    provider = ScriptedProvider([call_turn("risky", {}), text_turn("Understood.")])
    out = await _chat(provider, _registry(store, gate), store, rec, transcript=transcript)
    result = _finished(rec)
    assert result.outcome is Outcome.DENIED and result.is_error and result.change_id is None
    assert result.structured is None  # was {"denied": True}, sent to the model and to MCP hosts
    assert "declined" in result.content and result.content.endswith("Say yes next time.")  # Approver.denial_hint
    assert_plain_for_the_model(result.content)
    [event] = rec.of(ev.ToolCallFinished)
    assert event.state is ev.CallState.DENIED
    sent = provider.requests[1].messages[-1].parts[0]  # what the model was sent back
    assert isinstance(sent, ToolResultPart) and sent.is_error and sent.content == result.content
    assert transcript.history("S1")[1].calls[0].state is ev.CallState.DENIED
    assert out[-1].text == "Understood."


@pytest.mark.asyncio
async def test_a_call_past_its_deadline_has_the_timeout_outcome(transcript: TranscriptStore) -> None:
    store, gate, rec = StubGraph(), Gate(), Recorder()
    provider = ScriptedProvider([call_turn("stuck", {}), text_turn("It was slow.")])
    await _chat(provider, _registry(store, gate), store, rec, transcript=transcript)
    result = _finished(rec)
    assert result.outcome is Outcome.TIMEOUT and result.is_error and result.structured is None
    assert "timed out after 0.2 s" in result.content
    assert_plain_for_the_model(result.content)
    # The row says "error" as before (its text says why); the stored state stays a known value.
    assert rec.of(ev.ToolCallFinished)[0].state is ev.CallState.ERROR
    assert transcript.history("S1")[1].calls[0].state is ev.CallState.ERROR


@pytest.mark.asyncio
async def test_a_call_stopped_while_running_has_the_cancelled_outcome(transcript: TranscriptStore) -> None:
    store, gate, rec = StubGraph(), Gate(), Recorder()
    provider = ScriptedProvider([Turn(tool_calls=[ScriptedCall("slow", {})])])
    task = asyncio.ensure_future(_chat(provider, _registry(store, gate), store, rec, transcript=transcript))
    await asyncio.wait_for(gate.started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    result = _finished(rec)
    assert result.outcome is Outcome.CANCELLED and result.is_error and result.structured is None
    assert result.content == CANCELLED_TEXT
    assert_plain_for_the_model(result.content)
    saved = transcript.history("S1")
    assert saved[1].calls[0].state is ev.CallState.CANCELLED
    assert saved[2].message.tool_results[0].content == CANCELLED_TEXT


@pytest.mark.asyncio
async def test_a_write_reports_its_change_id_as_a_field(graph: Any) -> None:
    registry = build_registry(graph)
    run = Run(graph.session.id, Caller.CLI, StaticApprover(Decision.ALLOW))
    added = await registry.invoke(ToolCall("c1", "add_object", {"type": "Person", "name": "Ada"}), run)
    assert added.outcome is Outcome.OK
    [change] = graph.list_changes(graph.session.id, 1)
    assert added.change_id == change.id
    found = await registry.invoke(ToolCall("c2", "search_objects", {"query": "Ada"}), run)
    assert found.outcome is Outcome.OK and found.change_id is None  # a read writes nothing
    reverted = await registry.invoke(ToolCall("c3", "revert_change", {"change_id": change.id}), run)
    assert reverted.outcome is Outcome.OK
    assert reverted.change_id == graph.list_changes(graph.session.id, 1)[0].id != change.id
    bad = await registry.invoke(ToolCall("c4", "add_object", {"type": "Person"}), run)
    assert bad.outcome is Outcome.ERROR and bad.change_id is None


@pytest.mark.asyncio
async def test_a_denial_hint_is_part_of_the_approver_protocol() -> None:
    class Asker:
        @property
        def denial_hint(self) -> str:
            return "Ask the admin."

        async def request_approval(self, request: ApprovalRequest) -> Decision:
            return Decision.DENY

    store, gate = StubGraph(), Gate()
    run = Run("S1", Caller.MODEL, Asker())
    result = await _registry(store, gate).invoke(ToolCall("c1", "risky", {}), run)
    assert result.outcome is Outcome.DENIED and result.content.endswith("Ask the admin.")


def test_the_iteration_limit_is_a_typed_notice_not_its_words(conn: sqlite3.Connection,
                                                             transcript: TranscriptStore) -> None:
    transcript.append("S1", [Message.user("go")])
    # Words that say nothing about a limit: the kind, not the text, decides.
    transcript.append("S1", [Message("assistant", [Text("Fertig für jetzt.")])], notice=ev.Notice.ITERATION_LIMIT)
    rows = transcript.history("S1")
    assert rows[1].notice is ev.Notice.ITERATION_LIMIT and rows[1].to_json()["notice"] is True
    presenter = ChatPresenter(ChatModel())
    presenter.load(rows)
    assert presenter.limit_reached
    transcript.append("S1", [Message("assistant", [Text("Reached the iteration limit, said the model.")])],
                      notice=ev.Notice.REPEATED_FAILURE)
    presenter.load(transcript.history("S1"))
    assert not presenter.limit_reached  # a repeated-failure notice mentioning the words is not the limit


def test_notices_written_by_older_builds_still_read(conn: sqlite3.Connection, transcript: TranscriptStore) -> None:
    """Older versions stored every notice as 1; such a file keeps offering Continue."""
    for seq, (role, text, notice) in enumerate([("user", "go", 0),
                                                ("assistant", "Reached the iteration limit (8 model turns). "
                                                              "Send another message to continue.", 1)], start=1):
        conn.execute("INSERT INTO chat_messages (session_id, seq, role, parts, notice, created_at) "
                     "VALUES ('S1', ?, ?, ?, ?, 'now')", (seq, role, json.dumps([{"kind": "text", "text": text}]),
                                                          notice))
    conn.execute("INSERT INTO chat_messages (session_id, seq, role, parts, notice, created_at) VALUES "
                 "('S2', 1, 'assistant', ?, 1, 'now')",
                 (json.dumps([{"kind": "text", "text": "Stopped: the call to X failed 3 times in a row."}]),))
    [_, limit] = transcript.history("S1")
    assert limit.notice is ev.Notice.ITERATION_LIMIT
    presenter = ChatPresenter(ChatModel())
    presenter.load(transcript.history("S1"))
    assert presenter.limit_reached
    assert transcript.history("S2")[0].notice is ev.Notice.REPEATED_FAILURE


@pytest.mark.asyncio
async def test_the_loop_writes_the_limit_notice_typed(transcript: TranscriptStore) -> None:
    store, gate, rec = StubGraph(), Gate(), Recorder()
    registry = ToolRegistry(store)

    async def noop(args: dict[str, Any], ctx: ToolContext) -> Any:
        return "fine"

    registry.register(ToolSpec(name="noop", description="Does nothing.", input_schema={"type": "object"},
                               scopes=frozenset({Scope.GRAPH_READ}), default_policy=Policy.AUTO, llm_exposed=True,
                               handler=noop))
    provider = ScriptedProvider([call_turn("noop", {})])
    await asyncio.wait_for(ai_chat("S1", [], "go", ChatDeps(provider, registry, store, transcript),
                                   turn_options(max_iterations=1), approver=StaticApprover(Decision.ALLOW),
                                   on_event=rec), 10)
    [limit] = rec.of(ev.IterationLimit)
    notices = [e for e in rec.of(ev.AssistantMessage) if e.notice is not None]
    assert limit.limit == 1 and [e.notice for e in notices] == [ev.Notice.ITERATION_LIMIT]
    assert ev.event_to_json(notices[0])["notice_kind"] == "iteration_limit"
    assert transcript.history("S1")[-1].notice is ev.Notice.ITERATION_LIMIT
