"""The issue's scenario list on every provider: real adapter, real SDK, fake server over a socket.

Each test runs ``ai_chat`` end to end: the SDK parses the fake's real wire
bytes, the adapter turns them into neutral events, the loop runs the test
tools through the real registry, and the next request carries the results
back in the provider's own shape.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from cks_desktop.agent import events as ev
from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.loop import CANCELLED_TEXT, ai_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.llm.messages import Message
from cks_desktop.tools.approval import Decision, StaticApprover

from tests.agent.helpers import PendingApprover, Recorder, build_test_registry, turn_options
from tests.fakes.providers import PROVIDER_NAMES, make_fake, provider_for
from tests.fakes.script import ScriptedCall, Turn, call_turn, text_turn

pytestmark = [pytest.mark.asyncio, pytest.mark.parametrize("name", PROVIDER_NAMES)]


class Rig:
    """One fake server, its real adapter, the real store and transcript, the test tools."""

    def __init__(self, name: str, graph: Any, **provider_kw: Any) -> None:
        self.fake = make_fake(name)
        self.provider = provider_for(self.fake, **provider_kw)
        self.graph = graph
        self.session_id = graph.session.id
        self.registry = build_test_registry(graph)
        self.transcript = TranscriptStore.for_store(graph)
        self.rec = Recorder()

    def queue(self, *turns: Turn) -> None:
        self.fake.queue(*turns)

    async def chat(self, prompt: str = "hi", *, approver: Any = None, **kw: Any) -> list[Message]:
        return await asyncio.wait_for(self.start(prompt, approver=approver, **kw), 15)

    def start(self, prompt: str = "hi", *, approver: Any = None, **kw: Any) -> Any:
        return ai_chat(self.session_id, self.transcript.load(self.session_id), prompt,
                       ChatDeps(self.provider, self.registry, self.graph, self.transcript), turn_options(**kw),
                       approver=approver or StaticApprover(Decision.ALLOW), on_event=self.rec)

    async def close(self) -> None:
        await self.provider.aclose()
        self.fake.close()
        assert not self.fake.problems, self.fake.problems


@pytest_asyncio.fixture
async def rig(name: str, graph: Any, asyncgen_hooks: None) -> AsyncIterator[Rig]:
    r = Rig(name, graph)
    try:
        yield r
    finally:
        await r.close()


def consistent(messages: list[Message]) -> None:
    for i, m in enumerate(messages):
        if m.role == "assistant" and m.tool_calls:
            assert messages[i + 1].role == "tool"
            assert [r.call_id for r in messages[i + 1].tool_results] == [c.id for c in m.tool_calls]


def sent_text(rig: Rig, index: int = -1) -> str:
    """The raw JSON body of a generation request, for 'was this sent back' checks."""
    return json.dumps(rig.fake.generation_requests[index].body)


async def test_text_only(rig: Rig) -> None:
    rig.queue(text_turn("Hello", " there", "!"))
    out = await rig.chat()
    assert out[-1].text == "Hello there!" and rig.rec.text() == "Hello there!"
    assert rig.rec.finished().reason == "stop"
    assert rig.transcript.load(rig.session_id) == out


async def test_one_tool_call(rig: Rig) -> None:
    rig.queue(call_turn("echo", {"text": "ping"}, text="Checking."), text_turn("It said ping."))
    out = await rig.chat()
    assert [m.role for m in out] == ["user", "assistant", "tool", "assistant"]
    assert rig.registry.calls == [("echo", {"text": "ping", "session_id": rig.session_id}, rig.session_id)]
    assert out[-1].text == "It said ping."
    assert '\\"echo\\": \\"ping\\"' in sent_text(rig)  # the result went back to the model
    consistent(out)


async def test_two_tool_calls_in_one_turn(rig: Rig) -> None:
    rig.queue(Turn(text=["Two at once."], tool_calls=[ScriptedCall("echo", {"text": "a"}),
                                                       ScriptedCall("echo", {"text": "b"})]),
              text_turn("Both done."))
    out = await rig.chat()
    assert [a["text"] for _, a, _ in rig.registry.calls] == ["a", "b"]
    assert len(out[1].tool_calls) == 2 and len(out[2].tool_results) == 2
    assert len({c.id for c in out[1].tool_calls}) == 2
    consistent(out)


async def test_tool_call_with_empty_arguments(rig: Rig) -> None:
    rig.queue(call_turn("noop", {}), text_turn("Nothing to do."))
    out = await rig.chat()
    assert out[1].tool_calls[0].arguments == {} and rig.registry.calls[0][:2] == ("noop", {})
    assert not out[2].tool_results[0].is_error


async def test_arguments_split_mid_token(rig: Rig) -> None:
    long_text = "a fairly long argument value with \"quotes\" and ünïcødé"
    rig.queue(Turn(tool_calls=[ScriptedCall("echo", {"text": long_text})], split_arguments=9), text_turn("ok"))
    await rig.chat()
    assert rig.registry.calls[0][1]["text"] == long_text


async def test_pure_tool_call_turn(rig: Rig) -> None:
    rig.queue(Turn(tool_calls=[ScriptedCall("echo", {"text": "x"})]), text_turn("done"))
    out = await rig.chat()
    assert out[1].text == "" and out[1].tool_calls and not rig.rec.of(ev.ErrorEvent)
    assert rig.rec.finished().reason == "stop"


async def test_mid_stream_error(rig: Rig) -> None:
    rig.queue(Turn(text=["Partial answer"], error_mid_stream="overloaded_error"))
    out = await rig.chat()
    err = rig.rec.of(ev.ErrorEvent)[0]
    assert err.kind in ("overloaded", "stream_cut", "server_error") and "\n" not in err.message
    assert rig.rec.finished().reason == "error"
    assert out[-1].role == "assistant" and out[-1].text == "Partial answer"


async def test_429_then_success(name: str, graph: Any, asyncgen_hooks: None) -> None:
    r = Rig(name, graph, max_retries=2)
    try:
        r.queue(Turn(status=429, retry_after=0), text_turn("Second time lucky."))
        out = await r.chat()
        assert out[-1].text == "Second time lucky." and r.rec.finished().reason == "stop"
        assert len(r.fake.generation_requests) == 2
    finally:
        await r.close()


async def test_cap_reached(rig: Rig) -> None:
    rig.queue(call_turn("echo", {"text": "1"}), call_turn("echo", {"text": "2"}))
    out = await rig.chat(max_iterations=2)
    assert rig.rec.finished().reason == "limit" and len(rig.fake.generation_requests) == 2
    assert out[-1].text == "Reached the iteration limit (2 model turns); the answer may be unfinished."
    consistent(out)
    rig.queue(text_turn("Picking up where I stopped."))
    out = await rig.chat("continue")
    assert out[-1].text == "Picking up where I stopped."
    assert "Reached the iteration limit" in sent_text(rig)  # the history went back whole


async def test_stop_during_streaming(rig: Rig) -> None:
    rig.queue(Turn(text=["Let me think"], stall_after_text=True))
    task = asyncio.ensure_future(rig.start())
    await rig.rec.wait_for(ev.TextDelta, 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert rig.rec.finished().reason == "cancelled"
    saved = rig.transcript.load(rig.session_id)
    assert [m.role for m in saved] == ["user", "assistant"] and saved[1].text == "Let me think"


async def test_stop_while_approval_pending(rig: Rig) -> None:
    approver = PendingApprover()
    rig.queue(call_turn("ask", {"what": "x"}))
    task = asyncio.ensure_future(rig.start(approver=approver))
    await rig.rec.wait_for(ev.ApprovalRequested, 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 10)
    assert approver.cancelled and rig.registry.calls == []
    saved = rig.transcript.load(rig.session_id)
    assert saved[-1].tool_results[0].content == CANCELLED_TEXT
    consistent(saved)
    # the saved history is accepted by the provider on the next prompt
    rig.queue(text_turn("Understood."))
    out = await rig.chat("never mind")
    assert out[-1].text == "Understood."
    assert CANCELLED_TEXT in sent_text(rig)


async def test_denial_the_model_explains(rig: Rig) -> None:
    rig.queue(call_turn("ask", {"what": "x"}), text_turn("You declined, so nothing changed."))
    out = await rig.chat(approver=StaticApprover(Decision.DENY, denial_hint="Use --yes to allow it."))
    assert rig.rec.of(ev.ToolCallFinished)[0].state == "denied"
    assert "declined" in sent_text(rig) and out[-1].text == "You declined, so nothing changed."


async def test_unknown_tool(rig: Rig) -> None:
    rig.queue(call_turn("format_disk", {"drive": "C"}), text_turn("I cannot do that."))
    out = await rig.chat()
    assert out[2].tool_results[0].is_error and "Unknown tool 'format_disk'" in sent_text(rig)
    assert out[-1].text == "I cannot do that."


async def test_session_id_from_the_model_is_pinned(rig: Rig) -> None:
    rig.queue(call_turn("echo", {"text": "x", "session_id": "s_SOMEONE_ELSES"}), text_turn("ok"))
    await rig.chat()
    assert rig.registry.calls[0][1]["session_id"] == rig.session_id


async def test_mcp_tool_offered_and_called_under_its_wire_name(rig: Rig) -> None:
    rig.queue(call_turn("mcp__files__read", {"path": "notes.txt"}), text_turn("Read it."))
    out = await rig.chat()
    offered = sent_text(rig, 0)
    assert '"name": "mcp__files__read"' in offered and '"name": "mcp:files:read"' not in offered
    assert out[1].tool_calls[0].name == "mcp:files:read"
    assert out[2].tool_results[0].content == "contents of notes.txt"
