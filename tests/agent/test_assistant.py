"""The core's ``Assistant``: one object built once, one call per turn (``run`` or ``stream``).

Driven directly against the Anthropic fake server (the real SDK on the real wire protocol), on a
real data folder composed by ``runtime.AppServices`` exactly as the window composes it; the
events it streams are compared with what the window's chat controller hands its presenter for
the same script, so "the GUI, the CLI and tests share one runtime" is checked, not assumed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from cks_desktop.agent import events as ev
from cks_desktop.paths import resolve
from cks_desktop.runtime import AppServices
from cks_desktop.secrets import SecretStore
from cks_desktop.tools.approval import Decision, StaticApprover

from tests.fakes.providers import make_fake, provider_for
from tests.fakes.script import Turn, call_turn, text_turn

TIMEOUT = 30


@pytest.fixture
def fake() -> Iterator[Any]:
    import anthropic  # noqa: F401  # the SDK's first import is slow on a loaded machine: not inside a timed wait

    with make_fake("anthropic") as server:
        yield server


@pytest_asyncio.fixture
async def services(tmp_path: Path, fake: Any) -> AsyncIterator[AppServices]:
    home = tmp_path / "home"
    home.mkdir()
    made = AppServices.open(resolve(home), secrets=SecretStore(secure=False),
                            provider_factory=lambda *_a: provider_for(fake))
    made.settings.default_provider = "anthropic"
    try:
        yield made
    finally:
        await made.aclose()


def shape(events: list[ev.AgentEvent]) -> list[tuple[str, Any]]:
    """What a listener sees, without what differs between two runs (ids, timings)."""
    out: list[tuple[str, Any]] = []
    for e in events:
        if isinstance(e, ev.TextDelta):
            if out and out[-1][0] == "text":
                out[-1] = ("text", out[-1][1] + e.text)
            else:
                out.append(("text", e.text))
        elif isinstance(e, ev.ToolCallPreparing):  # its growing size differs with the fragments: once per call
            if not out or out[-1] != (e.type, (e.name, e.source)):
                out.append((e.type, (e.name, e.source)))
        elif isinstance(e, ev.ToolCallStarted):
            out.append((e.type, (e.name, e.source, json.dumps(e.arguments, sort_keys=True))))
        elif isinstance(e, ev.ToolCallFinished):
            out.append((e.type, (str(e.state), e.change_id is not None)))
        elif isinstance(e, ev.AssistantMessage):
            out.append((e.type, (e.message.text, [c.name for c in e.message.tool_calls])))
        elif isinstance(e, ev.Finished):
            out.append((e.type, (e.reason, e.iterations)))
        elif isinstance(e, ev.ContextUsage):  # the composer's meter: not part of this shape
            continue
        else:
            out.append((e.type, None))
    return out


ADD_ADA = {"type": "Person", "name": "Ada Lovelace"}


def queue_two_turns(fake: Any) -> None:
    fake.queue(call_turn("add_object", ADD_ADA), text_turn("Added ", "Ada."),
               text_turn("You asked me ", "to add Ada."))


@pytest.mark.asyncio
async def test_two_turns_on_one_session_carry_the_history_and_stream_the_gui_events(
        services: AppServices, fake: Any) -> None:
    assistant = services.assistant
    session = services.store.create_session("Assistant").id
    queue_two_turns(fake)
    approver = StaticApprover(Decision.ALLOW)

    first: list[ev.AgentEvent] = []
    turn = await asyncio.wait_for(assistant.run(session, "Add Ada Lovelace.", approver=approver,
                                                on_event=first.append), TIMEOUT)
    assert turn.reason == "stop"
    assert shape(first) == [
        ("turn_started", None), ("tool_call_preparing", ("add_object", "builtin")),
        ("assistant_message", ("", ["add_object"])),
        ("tool_call_started", ("add_object", "builtin", json.dumps(ADD_ADA, sort_keys=True))),
        ("tool_call_finished", ("done", True)),
        ("turn_started", None), ("text", "Added Ada."), ("assistant_message", ("Added Ada.", [])),
        ("finished", ("stop", 2)),
    ]
    assert services.store.resolve(session, "Ada Lovelace").type == "Person"
    assert turn.messages == services.transcripts.load(session)  # what was returned is what was saved

    # Turn two, as an iterator, continues from the saved transcript (no history passed in).
    second: list[ev.AgentEvent] = []
    async with contextlib.aclosing(assistant.stream(session, "What did I ask?", approver=approver)) as events:
        async for event in events:
            second.append(event)
    assert shape(second) == [("turn_started", None), ("text", "You asked me to add Ada."),
                             ("assistant_message", ("You asked me to add Ada.", [])), ("finished", ("stop", 1))]
    sent = json.dumps(fake.generation_requests[-1].body)
    assert "Add Ada Lovelace." in sent and "Added Ada." in sent and "What did I ask?" in sent
    assert [m.role for m in services.transcripts.load(session)] == [
        "user", "assistant", "tool", "assistant", "user", "assistant"]

    # Revert, as the chat row's button does it.
    change = next(e.change_id for e in first if isinstance(e, ev.ToolCallFinished))
    assert change is not None and assistant.can_revert("add_object", "builtin")
    assert await assistant.revert(session, change) is None
    assert services.store.all_objects(session) == []
    assert any(c.reverted for row in services.transcripts.history(session) for c in row.calls)

    # The window's chat controller hands its presenter exactly these events for the same script.
    from cks_desktop.ui.chat.controller import ChatController

    gui_session = services.store.create_session("Window").id
    queue_two_turns(fake)
    controller = ChatController(gui_session, assistant, approver)
    seen: list[ev.AgentEvent] = []
    handle = controller.presenter.handle
    controller.presenter.handle = lambda e: (seen.append(e), handle(e))  # type: ignore[method-assign]
    for prompt in ("Add Ada Lovelace.", "What did I ask?"):
        task = controller.send(prompt)
        assert task is not None
        await asyncio.wait_for(task, TIMEOUT)
    assert shape(seen) == shape(first) + shape(second)
    assert controller.messages == services.transcripts.load(gui_session)


@pytest.mark.asyncio
async def test_no_provider_is_an_error_event_not_an_exception(services: AppServices) -> None:
    services.settings.default_provider = ""
    session = services.store.create_session("No provider").id
    events: list[ev.AgentEvent] = []
    turn = await services.assistant.run(session, "Hello?", approver=StaticApprover(Decision.DENY),
                                        on_event=events.append)
    assert turn.reason == "error" and turn.messages == []
    assert [e.type for e in events] == ["error", "finished"]
    assert isinstance(events[0], ev.ErrorEvent) and "Settings → Providers" in events[0].message
    assert services.transcripts.load(session) == []  # nothing was sent, so nothing is saved


@pytest.mark.asyncio
async def test_leaving_the_stream_early_is_stop(services: AppServices, fake: Any) -> None:
    session = services.store.create_session("Stop").id
    fake.queue(Turn(text=["Partial ", "answer"], stall_after_text=True))
    seen: list[str] = []

    async def read_until_text() -> None:
        async with contextlib.aclosing(services.assistant.stream(session, "Tell me a long story.",
                                                                 approver=StaticApprover(Decision.DENY))) as events:
            async for event in events:
                seen.append(event.type)
                if isinstance(event, ev.TextDelta) and "answer" in event.text:
                    break  # the person pressed Stop

    await asyncio.wait_for(read_until_text(), TIMEOUT)
    saved = services.transcripts.load(session)
    assert [m.role for m in saved] == ["user", "assistant"] and saved[1].text == "Partial answer"


def test_mcp_serve_is_composed_by_the_runtime_with_the_host_toolset(tmp_path: Path) -> None:
    """``mcp serve`` builds its registry and run through ``AppServices.build(toolset="host")``:
    the chat's tools without the agent's own (a host brings its own model)."""
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.settings import Settings
    from cks_desktop.tools.types import Caller

    paths = resolve(tmp_path / "home")
    paths.ensure()
    store = GraphStore.open(paths.database)
    try:
        settings = Settings.load(paths.settings_file)
        host = AppServices.build(paths, settings, store, secrets=SecretStore(secure=False), toolset="host")
        chat = AppServices.build(paths, settings, store, secrets=SecretStore(secure=False))
        assert chat.registry.get("construct_knowledge") is not None
        # A host brings its own model (no construct_knowledge) and cannot reach our MCP servers.
        assert {s.name for s in host.registry.specs()} == {s.name for s in chat.registry.specs()} - {
            "construct_knowledge", "read_mcp_resource"}
        session = store.create_session("Served").id
        run = host.host_run(session)
        assert run.session_id == session and run.caller is Caller.MCP_CLIENT
    finally:
        store.close()
