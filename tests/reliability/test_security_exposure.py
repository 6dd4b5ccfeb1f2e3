"""Exposure: a tool that is not offered to models (the app-management tools, and
any tool registered with ``llm_exposed=False``) is unreachable for a MODEL or
MCP_CLIENT caller under every spelling: internal and wire names, case variants,
surrounding or embedded whitespace and control characters, Unicode look-alikes
and zero-width characters, prefixes. The refusal is the same "Unknown tool"
sentence as for a tool that does not exist, and the handler never runs."""

from __future__ import annotations

import asyncio
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.agent.loop import tool_defs
from cks_desktop.graph.store import GraphStore
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.builtin import ADMIN_TOOLS, build_registry
from cks_desktop.tools.context import Run, ToolContext
from cks_desktop.tools.types import Caller, Policy, Scope, ToolCall, ToolSpec
from cks_desktop.tools.wire_names import to_wire

HIDDEN_MCP = "mcp:admin:wipe_everything"
CYRILLIC = str.maketrans({"a": "а", "e": "е", "o": "о", "c": "с", "p": "р", "s": "ѕ", "i": "і"})
FULLWIDTH = {chr(c): chr(c + 0xFEE0) for c in range(0x21, 0x7F)}


def spellings(name: str) -> set[str]:
    wire = to_wire(name)
    out = {name, wire, name.upper(), name.title(), name.swapcase(), name.capitalize(), wire.upper(),
           f" {name}", f"{name} ", f"\t{name}\n", f"{name}\x00", f"\u200b{name}", f"{name}\u200d",
           name.replace("_", "\u200b_"), name.translate(CYRILLIC), "".join(FULLWIDTH.get(c, c) for c in name),
           unicodedata.normalize("NFKD", name.translate(CYRILLIC)), name.replace("_", "-"),
           name.replace("_", ""), f"functions.{name}", f"builtin:{name}", f"mcp__builtin__{name}",
           f"{name}()", f'"{name}"', name.replace(":", "__"), name.replace(":", "_"), f"mcp:{name}"}
    return out - {""}


@pytest.mark.asyncio
@pytest.mark.parametrize("caller", [Caller.MODEL, Caller.MCP_CLIENT])
async def test_hidden_tools_are_unreachable_by_any_name(tmp_path: Path, caller: Caller) -> None:
    store = GraphStore.open(tmp_path / "cks.sqlite3")
    try:
        mine = store.create_session("mine").id
        theirs = store.create_session("theirs").id
        registry = build_registry(store)
        ran: list[str] = []

        async def wipe(args: dict[str, Any], ctx: ToolContext) -> str:
            ran.append("wipe")
            return "wiped"

        registry.register(ToolSpec(name=HIDDEN_MCP, description="hidden", input_schema={"type": "object"},
                                   scopes=frozenset({Scope.GRAPH_READ}), default_policy=Policy.AUTO,
                                   llm_exposed=False, handler=wipe, pin_session=False, source="mcp:admin"))
        run = Run(session_id=mine, caller=caller, approver=StaticApprover(Decision.ALLOW))
        hidden = [*ADMIN_TOOLS, HIDDEN_MCP]
        offered = {s.name for s in registry.offered(run)}
        assert not offered & set(hidden)
        defs, _ = tool_defs(registry, run)
        assert not {d.name for d in defs} & {to_wire(h) for h in hidden}
        unknown = (await registry.invoke(ToolCall("u", "no_such_tool", {}), run)).content
        tried = 0
        for name in hidden:
            for spelling in spellings(name):
                args = {"session_id": theirs, "title": "pwned", "format": "json", "data": "{}"}
                res = await asyncio.wait_for(registry.invoke(ToolCall("x", spelling, args), run), 5)
                tried += 1
                assert res.is_error, f"{spelling!r} reached a hidden tool: {res.content[:200]}"
                assert res.content == unknown.replace("'no_such_tool'", repr(spelling)), res.content
        assert tried > 50
        assert ran == []
        assert [s.id for s in store.list_sessions()] == [theirs, mine]
        # Control: the person (USER) does reach them, by their real name only.
        user = Run(session_id=mine, caller=Caller.USER, approver=StaticApprover(Decision.ALLOW))
        assert not (await registry.invoke(ToolCall("u", "list_sessions", {}), user)).is_error
        assert (await registry.invoke(ToolCall("u", "LIST_SESSIONS", {}), user)).is_error
    finally:
        store.close()
