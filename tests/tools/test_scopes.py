"""Scopes restrict what a chat may use: the grant comes from the
person's settings (per session, per server, defaults), and the registry enforces it
with a sentence naming the setting to change."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cks_desktop.settings import Settings
from cks_desktop.tools.approval import Decision
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.scopes import chat_grant, server_identity
from cks_desktop.tools.types import Caller, Policy, Scope, ToolSpec
from tests.tools.conftest import ScriptedApprover, call

R, M, F, P, N, X = (Scope.GRAPH_READ, Scope.GRAPH_MUTATE, Scope.FS_READ, Scope.PROVIDER_CALL, Scope.NET_FETCH,
                    Scope.CODE_EXECUTE)


def settings_at(tmp_path: Path) -> Settings:
    return Settings.load(tmp_path / "settings.json")


def test_defaults_grant_the_graph_and_fs_read_only_with_allowed_folders(tmp_path: Path) -> None:
    settings = settings_at(tmp_path)
    assert chat_grant(settings, "S1").scopes == {R, M, P}
    settings.data["agent"]["allowed_folders"] = [str(tmp_path)]
    assert chat_grant(settings, "S1").scopes == {R, M, P, F}
    assert not chat_grant(settings, "S1").scopes & {N, X}  # only when the person turns them on
    assert chat_grant(settings, "S1", extra=[X]).scopes == {R, M, P, F, X}


def test_session_and_server_choices_survive_a_save_and_apply_to_their_own_session(tmp_path: Path) -> None:
    settings = settings_at(tmp_path)
    settings.mcp_servers["toy"] = {"command": "toy"}
    settings.set_session_scopes("S1", ["graph.read", "net.fetch", "nonsense"])
    settings.set_server_grant("toy", ["code.execute"], server_identity(settings.mcp_servers["toy"]))
    settings.save()
    again = settings_at(tmp_path)
    assert chat_grant(again, "S1").scopes == {R, N}  # unknown names are ignored
    assert chat_grant(again, "S2").scopes == {R, M, P}
    assert chat_grant(again, "S1").by_source == {"mcp:toy": {X}}
    again.set_default_scopes(["graph.read"])
    assert chat_grant(again, "S2").scopes == {R}
    again.set_session_scopes("S1", None)
    assert chat_grant(again, "S1").scopes == {R}


def mcp_tool(scopes: frozenset[Scope]) -> ToolSpec:
    async def handler(args: dict[str, Any], ctx: Any) -> str:
        return "ran"

    return ToolSpec(name="mcp:toy:echo", description="Echo.", input_schema={"type": "object"}, scopes=scopes,
                    default_policy=Policy.AUTO, llm_exposed=True, handler=handler, pin_session=False,
                    source="mcp:toy")


@pytest.mark.asyncio
async def test_the_registry_refuses_out_of_scope_calls_with_the_setting_to_change(
        store: Any, session_id: str, registry: ToolRegistry, tmp_path: Path) -> None:
    settings = settings_at(tmp_path)
    settings.mcp_servers["toy"] = {"command": "toy"}
    settings.set_session_scopes(session_id, ["graph.read"])
    registry.register(mcp_tool(frozenset({X})))
    grant = chat_grant(settings, session_id)
    run = Run(session_id, Caller.MODEL, approver=ScriptedApprover(default=Decision.ALLOW),
              granted_scopes=grant.scopes, source_grants=grant.by_source)
    offered = {s.name for s in registry.offered(run)}
    assert "graph_summary" in offered and not offered & {"evolve_knowledge", "add_object", "mcp:toy:echo"}
    res = await call(registry, run, "evolve_knowledge", operations=[{"op": "add_object", "type": "T", "name": "n"}])
    assert res.is_error and res.structured == {"missing_scopes": ["graph.mutate"]}
    assert "needs graph.mutate, which this chat does not grant" in res.content
    assert "right-click the session" in res.content
    assert store.counts(session_id).get("objects", 0) == 0
    echo = await call(registry, run, "mcp__toy__echo")
    assert echo.is_error and "code.execute" in echo.content and "Settings → MCP servers → toy" in echo.content
    # The person grants code.execute to that server: its tools run, others' rights are unchanged.
    settings.set_server_grant("toy", ["code.execute"], server_identity(settings.mcp_servers["toy"]))
    grant = chat_grant(settings, session_id)
    run = Run(session_id, Caller.MODEL, approver=ScriptedApprover(default=Decision.ALLOW),
              granted_scopes=grant.scopes, source_grants=grant.by_source)
    assert not (await call(registry, run, "mcp__toy__echo")).is_error
    assert (await call(registry, run, "add_object", type="T", name="n")).is_error


@pytest.mark.asyncio
async def test_fs_read_without_allowed_folders_says_where_to_add_one(
        store: Any, session_id: str, registry: ToolRegistry, tmp_path: Path) -> None:
    settings = settings_at(tmp_path)
    settings.set_session_scopes(session_id, ["graph.read", "fs.read"])  # chosen, but no folder is allowed
    grant = chat_grant(settings, session_id)
    assert F not in grant.scopes
    run = Run(session_id, Caller.MODEL, granted_scopes=grant.scopes)
    res = await call(registry, run, "read_text_file", path=str(tmp_path / "settings.json"))
    assert res.is_error and "Allowed folders" in res.content


def test_a_server_grant_lapses_when_another_server_takes_the_name(tmp_path: Path) -> None:
    settings = settings_at(tmp_path)
    settings.mcp_servers["toy"] = {"command": "toy", "args": ["--safe"]}
    settings.set_server_grant("toy", ["code.execute"], server_identity(settings.mcp_servers["toy"]))
    assert chat_grant(settings, "S1").by_source == {"mcp:toy": {X}}
    settings.mcp_servers["toy"] = {"command": "npx", "args": ["-y", "someone-else"]}  # removed, re-added
    assert chat_grant(settings, "S1").by_source == {}
