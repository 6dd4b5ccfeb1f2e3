"""Loop logic of ``ai_chat`` against the in-process scripted provider."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from cks_desktop.agent import events as ev
from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.loop import CANCELLED_TEXT, ai_chat, limit_text
from cks_desktop.llm.messages import Message
from cks_desktop.tools.approval import Decision, StaticApprover

from tests.agent.helpers import PendingApprover, Recorder, turn_options
from tests.fakes.script import ScriptedCall, Turn, call_turn, text_turn
from tests.fakes.scripted import ScriptedProvider

pytestmark = pytest.mark.asyncio


async def chat(provider: ScriptedProvider, registry: Any, store: Any, prompt: str = "hi", *,
               messages: list[Message] | None = None, approver: Any = None, rec: Recorder | None = None,
               transcript: Any = None, **kw: Any) -> tuple[list[Message], Recorder]:
    rec = rec or Recorder()
    out = await asyncio.wait_for(ai_chat(
        "S1", messages or [], prompt, ChatDeps(provider, registry, store, transcript), turn_options(**kw),
        approver=approver or StaticApprover(Decision.ALLOW), on_event=rec), 10)
    return out, rec


def assert_consistent(messages: list[Message]) -> None:
    """Every assistant tool call has exactly one result, in the next message, in order."""
    for i, m in enumerate(messages):
        if m.role == "assistant" and m.tool_calls:
            nxt = messages[i + 1]
            assert nxt.role == "tool"
            assert [r.call_id for r in nxt.tool_results] == [c.id for c in m.tool_calls]


async def test_text_only(registry, stub_store) -> None:
    provider = ScriptedProvider([text_turn("Hel", "lo", "!")])
    out, rec = await chat(provider, registry, stub_store)
    assert [m.role for m in out] == ["user", "assistant"]
    assert out[-1].text == "Hello!" and rec.text() == "Hello!"
    assert rec.types() == ["turn_started", "context_usage", "text_delta", "text_delta", "text_delta", "assistant_message",
                           "finished"]
    assert rec.finished().reason == "stop" and rec.finished().iterations == 1


async def test_offers_exposed_tools_under_wire_names_without_session_id(registry, stub_store) -> None:
    provider = ScriptedProvider([text_turn("ok")])
    await chat(provider, registry, stub_store)
    request = provider.requests[0]
    names = [t.name for t in request.tools]
    assert names == sorted(names) and "hidden" not in names
    assert "mcp__files__read" in names and "echo" in names
    echo = next(t for t in request.tools if t.name == "echo")
    assert "session_id" not in echo.parameters["properties"] and echo.parameters["required"] == ["text"]
    assert "Be brief." in (request.system or "") and "3 objects" in (request.system or "")
    assert [m.role for m in request.messages] == ["user"]


async def test_one_tool_call_then_answer(registry, stub_store) -> None:
    provider = ScriptedProvider([call_turn("echo", {"text": "x"}, text="Let me check."), text_turn("Done.")])
    out, rec = await chat(provider, registry, stub_store)
    assert [m.role for m in out] == ["user", "assistant", "tool", "assistant"]
    assert out[1].text == "Let me check." and out[1].tool_calls[0].name == "echo"
    result = out[2].tool_results[0]
    assert not result.is_error and '"echo": "x"' in result.content
    finished = rec.of(ev.ToolCallFinished)[0]
    assert finished.state == "done" and finished.duration_ms >= 0
    # the second request carried the call and its result back
    assert [m.role for m in provider.requests[1].messages] == ["user", "assistant", "tool"]
    assert_consistent(out)


async def test_two_calls_in_one_turn_run_in_order(registry, stub_store) -> None:
    turn = Turn(tool_calls=[ScriptedCall("echo", {"text": "one"}), ScriptedCall("echo", {"text": "two"})])
    provider = ScriptedProvider([turn, text_turn("ok")])
    out, rec = await chat(provider, registry, stub_store)
    kinds = [(e.type, getattr(e, "call_id", None)) for e in rec.events
             if isinstance(e, (ev.ToolCallStarted, ev.ToolCallFinished))]
    first, second = (c.id for c in out[1].tool_calls)
    assert kinds == [("tool_call_started", first), ("tool_call_finished", first),
                     ("tool_call_started", second), ("tool_call_finished", second)]
    assert [a["text"] for _, a, _ in registry.calls] == ["one", "two"]
    assert_consistent(out)


async def test_pure_tool_call_turn_and_empty_arguments(registry, stub_store, gate) -> None:
    provider = ScriptedProvider([Turn(tool_calls=[ScriptedCall("slow", {})]), text_turn("fine")])
    task = asyncio.ensure_future(chat(provider, registry, stub_store))
    await asyncio.wait_for(gate.started.wait(), 5)
    gate.release.set()
    out, rec = await asyncio.wait_for(task, 5)
    assert out[1].text == "" and out[1].tool_calls[0].arguments == {}
    assert rec.finished().reason == "stop"


async def test_pinned_session_id_from_the_model(registry, stub_store) -> None:
    provider = ScriptedProvider([call_turn("echo", {"text": "x", "session_id": "OTHER"}), text_turn("ok")])
    out, _ = await chat(provider, registry, stub_store)
    assert registry.calls == [("echo", {"text": "x", "session_id": "S1"}, "S1")]
    assert '"session_id": "S1"' in out[2].tool_results[0].content


async def test_unknown_tool_is_an_error_result(registry, stub_store) -> None:
    provider = ScriptedProvider([call_turn("launch_rockets", {}), text_turn("Sorry, I cannot.")])
    out, rec = await chat(provider, registry, stub_store)
    started = rec.of(ev.ToolCallStarted)[0]
    assert started.name == "launch_rockets" and started.source == "unknown"
    result = out[2].tool_results[0]
    assert result.is_error and "Unknown tool 'launch_rockets'" in result.content
    assert rec.finished().reason == "stop"


async def test_hidden_tool_called_by_name_is_unknown(registry, stub_store) -> None:
    provider = ScriptedProvider([call_turn("hidden", {}), text_turn("ok")])
    out, _ = await chat(provider, registry, stub_store)
    assert out[2].tool_results[0].is_error and "Unknown tool" in out[2].tool_results[0].content
    assert registry.calls == []


async def test_mcp_wire_name_maps_back_to_internal(registry, stub_store) -> None:
    provider = ScriptedProvider([call_turn("mcp__files__read", {"path": "a.txt"}), text_turn("ok")])
    out, rec = await chat(provider, registry, stub_store)
    assert out[1].tool_calls[0].name == "mcp:files:read"
    started = rec.of(ev.ToolCallStarted)[0]
    assert started.display_name == "files · Read file" and started.source == "mcp:files"
    assert out[2].tool_results[0].content == "contents of a.txt"


async def test_invalid_json_arguments_never_reach_the_tool(registry, stub_store) -> None:
    bad = Turn(tool_calls=[ScriptedCall("echo", raw_arguments='{"text": "unterminated')])
    provider = ScriptedProvider([bad, text_turn("Let me fix that.")])
    out, rec = await chat(provider, registry, stub_store)
    assert registry.calls == []
    result = out[2].tool_results[0]
    assert result.is_error and "not a valid JSON object" in result.content
    assert rec.of(ev.ToolCallStarted)[0].arguments is None
    assert rec.finished().reason == "stop"
    assert_consistent(out)


async def test_iteration_cap(registry, stub_store) -> None:
    provider = ScriptedProvider([call_turn("echo", {"text": str(i)}) for i in range(3)])
    out, rec = await chat(provider, registry, stub_store, max_iterations=3)
    assert len(provider.requests) == 3
    limit = rec.of(ev.IterationLimit)[0]
    assert limit.limit == 3 and limit.message == limit_text(3)
    assert out[-1].role == "assistant" and out[-1].text == limit_text(3)
    assert "Reached the iteration limit (3 model turns)" in out[-1].text
    assert rec.of(ev.AssistantMessage)[-1].notice
    assert rec.finished().reason == "limit" and rec.finished().iterations == 3
    assert_consistent(out)
    # the next prompt continues from the saved conversation
    provider.add(text_turn("continuing"))
    out2, rec2 = await chat(provider, registry, stub_store, "go on", messages=out)
    assert out2[: len(out)] == out and out2[-1].text == "continuing"
    assert rec2.finished().reason == "stop"


async def test_default_cap_is_eight(registry, stub_store) -> None:
    provider = ScriptedProvider([call_turn("echo", {"text": str(i)}) for i in range(8)])
    out, rec = await chat(provider, registry, stub_store)
    assert len(provider.requests) == 8
    assert out[-1].text == "Reached the iteration limit (8 model turns); the answer may be unfinished."


async def test_repeated_failure_stops_early(registry, stub_store) -> None:
    provider = ScriptedProvider([call_turn("fail", {"what": "x"}) for _ in range(5)])
    out, rec = await chat(provider, registry, stub_store)
    assert len(provider.requests) == 3 and len(provider.turns) == 2
    assert rec.finished().reason == "repeated_failure"
    err = rec.of(ev.ErrorEvent)[0]
    assert err.kind == "repeated_failure" and "failed 3 times in a row" in err.message
    assert "nothing called 'x' exists" in err.message
    assert out[-1].text == err.message
    assert_consistent(out)


async def test_different_failures_do_not_trip(registry, stub_store) -> None:
    turns = [call_turn("fail", {"what": "a"}), call_turn("fail", {"what": "a"}), call_turn("echo", {"text": "t"}),
             call_turn("fail", {"what": "a"}), call_turn("fail", {"what": "b"}), text_turn("giving up")]
    provider = ScriptedProvider(turns)
    _, rec = await chat(provider, registry, stub_store)
    assert rec.finished().reason == "stop"


async def test_denial_goes_back_to_the_model(registry, stub_store) -> None:
    approver = StaticApprover(Decision.DENY, denial_hint="Run again with --yes to allow it.")
    provider = ScriptedProvider([call_turn("ask", {"what": "x"}), text_turn("You declined, so I stopped.")])
    out, rec = await chat(provider, registry, stub_store, approver=approver)
    result = out[2].tool_results[0]
    assert result.is_error and "declined" in result.content and "--yes" in result.content
    assert rec.of(ev.ToolCallFinished)[0].state == "denied"
    assert [e.decision for e in rec.of(ev.ApprovalResolved)] == ["deny"]
    assert out[-1].text == "You declined, so I stopped."
    assert registry.calls == [] and rec.finished().reason == "stop"


async def test_allowed_call_reports_change_id(registry, stub_store) -> None:
    provider = ScriptedProvider([call_turn("ask", {"what": "x"}), text_turn("ok")])
    _, rec = await chat(provider, registry, stub_store)
    req, res = rec.of(ev.ApprovalRequested)[0], rec.of(ev.ApprovalResolved)[0]
    assert req.reason and res.decision == "allow"
    assert rec.of(ev.ToolCallFinished)[0].change_id == "chg_1"


async def test_provider_error_keeps_streamed_text(registry, stub_store) -> None:
    provider = ScriptedProvider([Turn(text=["Partial "], error_mid_stream="overloaded_error")])
    out, rec = await chat(provider, registry, stub_store)
    err = rec.of(ev.ErrorEvent)[0]
    assert err.kind == "overloaded" and err.message.endswith(".")
    assert out[-1].text == "Partial " and rec.finished().reason == "error"


async def test_provider_error_after_tool_call_leaves_consistent_transcript(registry, stub_store) -> None:
    provider = ScriptedProvider([call_turn("echo", {"text": "x"}), Turn(status=429)])
    out, rec = await chat(provider, registry, stub_store)
    assert rec.of(ev.ErrorEvent)[0].kind == "rate_limited"
    assert [m.role for m in out] == ["user", "assistant", "tool"]
    assert_consistent(out)


async def test_cancel_during_streaming(registry, stub_store, transcript) -> None:
    provider = ScriptedProvider([Turn(text=["Thinking ", "about it"], stall_after_text=True)])
    rec = Recorder()
    task = asyncio.ensure_future(chat(provider, registry, stub_store, rec=rec, transcript=transcript))
    await asyncio.wait_for(provider.stalled.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    assert rec.finished().reason == "cancelled"
    saved = transcript.load("S1")
    assert [m.role for m in saved] == ["user", "assistant"] and saved[1].text == "Thinking about it"


async def test_cancel_during_pending_approval(registry, stub_store, transcript) -> None:
    approver = PendingApprover()
    provider = ScriptedProvider([Turn(text=["Asking."], tool_calls=[ScriptedCall("ask", {"what": "x"}),
                                                                    ScriptedCall("echo", {"text": "never"})])])
    rec = Recorder()
    task = asyncio.ensure_future(chat(provider, registry, stub_store, rec=rec, approver=approver,
                                      transcript=transcript))
    await rec.wait_for(ev.ApprovalRequested)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    assert approver.cancelled
    assert [e.decision for e in rec.of(ev.ApprovalResolved)] == ["cancelled"]
    finished = rec.of(ev.ToolCallFinished)
    assert len(finished) == 1 and finished[0].state == "cancelled"
    assert rec.finished().reason == "cancelled" and registry.calls == []
    saved = transcript.load("S1")
    assert [m.role for m in saved] == ["user", "assistant", "tool"]
    assert [c.name for c in saved[1].tool_calls] == ["ask"]  # the call that never started is dropped
    assert saved[2].tool_results[0].content == CANCELLED_TEXT and saved[2].tool_results[0].is_error
    rows = transcript.history("S1")
    assert rows[1].calls[0].state == "cancelled"
    assert_consistent(saved)


async def test_cancel_during_running_tool(registry, stub_store, transcript, gate) -> None:
    provider = ScriptedProvider([Turn(tool_calls=[ScriptedCall("echo", {"text": "first"}),
                                                  ScriptedCall("slow", {})])])
    rec = Recorder()
    task = asyncio.ensure_future(chat(provider, registry, stub_store, rec=rec, transcript=transcript))
    await asyncio.wait_for(gate.started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, 5)
    assert gate.cancelled
    states = [e.state for e in rec.of(ev.ToolCallFinished)]
    assert states == ["done", "cancelled"]
    saved = transcript.load("S1")
    assert [r.is_error for r in saved[2].tool_results] == [False, True]
    assert_consistent(saved)


async def test_transcript_saved_per_turn(registry, stub_store, transcript) -> None:
    provider = ScriptedProvider([call_turn("echo", {"text": "x"}, text="Checking."), text_turn("Done.")])
    out, _ = await chat(provider, registry, stub_store, transcript=transcript)
    assert transcript.load("S1") == out
    rows = transcript.history("S1")
    assert [r.seq for r in rows] == [1, 2, 3, 4]
    call = rows[1].calls[0]
    assert call.state == "done" and call.display_name == "echo" and call.duration_ms is not None


async def test_listener_errors_do_not_break_the_chat(registry, stub_store, caplog) -> None:
    def broken(event: ev.AgentEvent) -> None:
        raise RuntimeError("listener bug")

    provider = ScriptedProvider([text_turn("fine")])
    out = await ai_chat("S1", [], "hi", ChatDeps(provider, registry, stub_store), turn_options(),
                        approver=StaticApprover(Decision.ALLOW), on_event=broken)
    assert out[-1].text == "fine"


async def test_event_json_shapes(registry, stub_store) -> None:
    provider = ScriptedProvider([call_turn("echo", {"text": "x"}), text_turn("ok")])
    _, rec = await chat(provider, registry, stub_store)
    import json

    for event in rec.events:
        data = ev.event_to_json(event)
        assert data["type"] == event.type
        json.dumps(data)
    finished = ev.event_to_json(rec.of(ev.ToolCallFinished)[0])
    assert finished["result"]["content"] and finished["state"] == "done"


async def test_tool_definitions_follow_registry_changes(registry, stub_store) -> None:
    from cks_desktop.tools.types import Policy, Scope, ToolSpec

    provider = ScriptedProvider([text_turn("one"), text_turn("two"), text_turn("three")])
    await chat(provider, registry, stub_store)
    first = provider.requests[0].tools
    await chat(provider, registry, stub_store)
    assert provider.requests[1].tools is first or provider.requests[1].tools == first  # reused

    async def handler(args: dict, ctx: Any) -> str:
        return "new"

    registry.register(ToolSpec("mcp:web:fetch", "Fetch a page.", {"type": "object", "properties": {}},
                               frozenset({Scope.NET_FETCH}), Policy.ALWAYS, True, handler, pin_session=False,
                               source="mcp:web"))
    await chat(provider, registry, stub_store)
    assert "mcp__web__fetch" in [t.name for t in provider.requests[2].tools]
    # a run with fewer scopes is offered fewer tools
    provider.add(text_turn("four"))
    await chat(provider, registry, stub_store, granted_scopes=frozenset({Scope.GRAPH_READ}))
    assert "mcp__web__fetch" not in [t.name for t in provider.requests[3].tools]


async def test_retry_without_a_new_prompt(registry, stub_store, transcript) -> None:
    provider = ScriptedProvider([Turn(status=529), text_turn("Better now.")])
    out, rec = await chat(provider, registry, stub_store, "Hello?", transcript=transcript)
    assert rec.finished().reason == "error" and [m.role for m in out] == ["user"]
    out2, rec2 = await chat(provider, registry, stub_store, None, messages=transcript.load("S1"),
                            transcript=transcript)
    assert [m.role for m in out2] == ["user", "assistant"] and rec2.finished().reason == "stop"
    assert [m.role for m in provider.requests[1].messages] == ["user"]
    assert transcript.load("S1") == out2
