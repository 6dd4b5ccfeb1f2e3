"""Shared pieces for the agent tests: small real tools, approvers, an event recorder.

The tools are ordinary ``ToolSpec``s run by the real ``ToolRegistry``; only
their bodies are tiny, so each loop behaviour can be seen in isolation.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cks_desktop.agent import events as ev
from cks_desktop.agent.chat_inputs import TurnOptions
from cks_desktop.graph.model import Session
from cks_desktop.tools.approval import ApprovalRequest, Decision
from cks_desktop.tools.context import ToolContext
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.scopes import ChatGrant
from cks_desktop.tools.types import ALL_SCOPES, Policy, Scope, ToolError, ToolSpec

SESSION = {"type": "string", "description": "The session."}


def turn_options(*, granted_scopes: frozenset[Scope] = ALL_SCOPES,
                 source_grants: Mapping[str, frozenset[Scope]] | None = None,
                 allowed_folders: Sequence[Path] = (), scope_setting: str = "", **options: Any) -> TurnOptions:
    """``TurnOptions`` for a test turn: every scope unless the test narrows it (the person's
    choice is the Assistant's business, tested there); ``options`` are TurnOptions' own fields."""
    grant = ChatGrant(frozenset(granted_scopes), dict(source_grants or {}), tuple(allowed_folders), scope_setting)
    return TurnOptions(grant, **options)


class Recorder:
    """Collects agent events; lets a test await the first event of a kind."""

    def __init__(self) -> None:
        self.events: list[ev.AgentEvent] = []
        self._waiters: list[tuple[Callable[[ev.AgentEvent], bool], asyncio.Future[ev.AgentEvent]]] = []

    def __call__(self, event: ev.AgentEvent) -> None:
        self.events.append(event)
        for match, fut in list(self._waiters):
            if not fut.done() and match(event):
                fut.set_result(event)

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of(self, cls: type) -> list[Any]:
        return [e for e in self.events if isinstance(e, cls)]

    def text(self) -> str:
        return "".join(e.text for e in self.of(ev.TextDelta))

    def finished(self) -> ev.Finished:
        last = self.events[-1]
        assert isinstance(last, ev.Finished), self.types()
        return last

    async def wait_for(self, cls: type, timeout: float = 5.0) -> Any:
        for e in self.events:
            if isinstance(e, cls):
                return e
        fut: asyncio.Future[ev.AgentEvent] = asyncio.get_running_loop().create_future()
        self._waiters.append((lambda e: isinstance(e, cls), fut))
        return await asyncio.wait_for(fut, timeout)


class PendingApprover:
    """An approver that waits until the test answers (or the task is cancelled)."""

    denial_hint = ""

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []
        self.future: asyncio.Future[Decision] | None = None
        self.cancelled = False

    async def request_approval(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        self.future = asyncio.get_running_loop().create_future()
        try:
            return await self.future
        except asyncio.CancelledError:
            self.cancelled = True
            raise


class Gate:
    """What the ``slow`` tool waits on; ``started`` tells the test it is running."""

    def __init__(self) -> None:
        self.started = asyncio.Event()
        self.release = asyncio.Event()
        self.cancelled = False


def _obj(props: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": required or [], "additionalProperties": False}


def build_test_registry(store: Any, gate: Gate | None = None) -> ToolRegistry:
    registry = ToolRegistry(store)
    calls: list[tuple[str, dict[str, Any], str]] = []
    registry.calls = calls  # type: ignore[attr-defined]

    async def echo(args: dict[str, Any], ctx: ToolContext) -> Any:
        calls.append(("echo", args, ctx.session_id))
        return {"echo": args.get("text", ""), "session_id": args["session_id"]}

    async def fail(args: dict[str, Any], ctx: ToolContext) -> Any:
        calls.append(("fail", args, ctx.session_id))
        raise ToolError(f"nothing called {args.get('what')!r} exists")

    async def ask(args: dict[str, Any], ctx: ToolContext) -> Any:
        calls.append(("ask", args, ctx.session_id))
        ctx.record_change("chg_1")  # as the built-ins' write path does
        return {"change_id": "chg_1", "summary": "did the risky thing"}

    async def slow(args: dict[str, Any], ctx: ToolContext) -> Any:
        assert gate is not None
        calls.append(("slow", args, ctx.session_id))
        gate.started.set()
        try:
            await gate.release.wait()
        except asyncio.CancelledError:
            gate.cancelled = True
            raise
        return "slow done"

    async def noop(args: dict[str, Any], ctx: ToolContext) -> Any:
        calls.append(("noop", args, ctx.session_id))
        return "nothing to do"

    async def read(args: dict[str, Any], ctx: ToolContext) -> Any:
        calls.append(("mcp:files:read", args, ctx.session_id))
        return f"contents of {args['path']}"

    def spec(name: str, handler: Any, schema: dict[str, Any], policy: Policy = Policy.AUTO,
             exposed: bool = True, **kw: Any) -> ToolSpec:
        return ToolSpec(name=name, description=f"The {name} test tool.", input_schema=schema,
                        scopes=frozenset({Scope.GRAPH_READ}), default_policy=policy, llm_exposed=exposed,
                        handler=handler, **kw)

    registry.register(spec("echo", echo, _obj({"session_id": SESSION, "text": {"type": "string"}},
                                              ["session_id", "text"])))
    registry.register(spec("fail", fail, _obj({"session_id": SESSION, "what": {"type": "string"}},
                                              ["session_id"])))
    registry.register(spec("ask", ask, _obj({"session_id": SESSION, "what": {"type": "string"}}), Policy.ALWAYS,
                           title="Risky thing"))
    registry.register(spec("slow", slow, _obj({})))
    registry.register(spec("noop", noop, {"type": "object", "properties": {}}))
    registry.register(spec("hidden", echo, _obj({"session_id": SESSION}), exposed=False))
    registry.register(spec("mcp:files:read", read, _obj({"path": {"type": "string"}}, ["path"]),
                           pin_session=False, source="mcp:files", title="Read file"))
    return registry


class StubGraph:
    """Answers the few reads the loop's prompt needs (loop tests don't touch the graph)."""

    def __init__(self) -> None:
        self.session = Session("S1", "Test session", "2026-01-01T00:00:00Z", instructions="Be brief.")

    def get_session(self, session_id: str) -> Session:
        return self.session

    def counts(self, session_id: str) -> dict[str, int]:
        return {"objects": 3, "relations": 1}

    def type_stats(self, session_id: str) -> dict[str, Any]:
        return {"object_types": [{"name": "Person", "count": 2}, {"name": "City", "count": 1}],
                "relation_types": [{"name": "lives_in", "count": 1}]}
