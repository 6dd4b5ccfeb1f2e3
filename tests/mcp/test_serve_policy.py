"""What a host is told and allowed: annotations and output schemas on every tool, approvals by
setting ("the host asks" / "this app asks too", headless refusal unless --yes), logging in both
eras, and the bearer token kept in the keychain."""

from __future__ import annotations

import warnings

import jsonschema
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning

from cks_desktop.graph.store import GraphStore
from cks_desktop.serve.server import build_server, serving_run
from cks_desktop.serve import prefs
from cks_desktop.serve.approver import HEADLESS_HINT, ServeApprover
from cks_desktop.serve.hints import output_schema, tool_hints
from cks_desktop.serve.token import TOKEN_REF, StaticTokenVerifier, ensure_token
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.builtin import build_registry
from tests.mcp.serve_helpers import graph_of, make_home, stdio


@pytest.fixture
def store(tmp_path):
    s = GraphStore.open(tmp_path / "cks.sqlite3")
    yield s
    s.close()


@pytest.mark.asyncio
async def test_every_tool_has_hints_and_structured_results_match_their_schema(store):
    session = store.create_session("s")
    registry = build_registry(store)
    async with Client(build_server(registry, serving_run(session.id)), mode="auto") as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        for name, tool in tools.items():
            a = tool.annotations
            assert a is not None and None not in (a.read_only_hint, a.idempotent_hint, a.open_world_hint), name
            assert a.read_only_hint or a.destructive_hint is not None, name
            if tool.output_schema is not None:
                jsonschema.Draft202012Validator.check_schema(tool.output_schema)
        assert tools["search_objects"].annotations.read_only_hint is True
        assert tools["remove_object"].annotations.destructive_hint is True
        assert tools["evolve_knowledge"].annotations.destructive_hint is True  # a batch can remove
        assert tools["add_object"].annotations.destructive_hint is False
        assert tools["read_text_file"].output_schema is None
        # the client validates structuredContent against outputSchema on every success
        for name, args in [("add_object", {"type": "Person", "name": "Ada"}), ("graph_summary", {}),
                           ("get_object", {"ref": "Ada"}), ("neighbors", {"ref": "Ada"}), ("list_types", {})]:
            r = await c.call_tool(name, args)
            keys = build_registry(None).get(name).result_keys or ()
            assert not r.is_error and set(r.structured_content) <= set(keys), (name, r.structured_content)


def test_hints_follow_the_spec_not_a_list(store):
    registry = build_registry(store)
    for spec in registry.specs():
        hints = tool_hints(spec, registry)
        if hints["readOnlyHint"]:
            assert not spec.mutating
        if spec.result_keys is not None:
            assert output_schema(spec) == {"type": "object", "properties": {k: {} for k in spec.result_keys}}
    registry.set_policy_overrides({"add_object": "always"})  # the person made it ask: now destructive
    assert tool_hints(registry.get("add_object"), registry)["destructiveHint"] is True


@pytest.mark.asyncio
async def test_approval_setting_host_app_and_yes(store):
    session = store.create_session("s")
    store.apply(session.id, [{"op": "add_object", "type": "Person", "name": f"P{i}"} for i in range(3)], "test")
    registry = build_registry(store)
    mode = {"value": "app"}
    headless = ServeApprover(lambda: mode["value"])
    async with Client(build_server(registry, serving_run(session.id, approver=headless))) as c:
        r = await c.call_tool("remove_object", {"ref": "P0"})
        assert r.is_error and HEADLESS_HINT in r.content[0].text
        assert not (await c.call_tool("add_object", {"type": "Person", "name": "Q"})).is_error  # auto: runs
    mode["value"] = "host"  # a refusal holds for its run like a person's "no" (`once`); a new run asks anew
    async with Client(build_server(registry, serving_run(session.id, approver=headless))) as c:
        assert not (await c.call_tool("remove_object", {"ref": "P1"})).is_error
    window = StaticApprover(Decision.DENY, denial_hint="The person said no in the window.")
    asking = ServeApprover(lambda: "app", app_approver=window)
    async with Client(build_server(registry, serving_run(session.id, approver=asking))) as c:
        r = await c.call_tool("remove_object", {"ref": "P2"})
        assert r.is_error and "said no in the window" in r.content[0].text and len(window.requests) == 1
    yes = ServeApprover(lambda: "app", yes=True)
    async with Client(build_server(registry, serving_run(session.id, approver=yes))) as c:
        assert not (await c.call_tool("remove_object", {"ref": "P2"})).is_error
    assert sorted(o.name for o in store.all_objects(session.id)) == ["P0", "Q"]


@pytest.mark.asyncio
async def test_headless_serve_set_to_ask_refuses_unless_yes(tmp_path):
    home, (sid,) = make_home(tmp_path, "S", shared=(0,), approval="app")
    async with stdio(home, tmp_path / "a.err") as c:
        r = await c.call_tool("remove_object", {"ref": "Seed 0"})
        assert r.is_error and "mcp serve --yes" in r.content[0].text
    assert graph_of(home, sid) == ([("Person", "Seed 0")], 0)
    async with stdio(home, tmp_path / "b.err", "--yes") as c:
        assert not (await c.call_tool("remove_object", {"ref": "Seed 0"})).is_error
    assert graph_of(home, sid) == ([], 0)


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_log_messages_in_both_eras(store, mode):
    session = store.create_session("s")
    got = []

    async def on_log(params):
        got.append(params)

    server = build_server(build_registry(store), serving_run(session.id))
    async with Client(server, mode=mode, logging_callback=on_log, log_level="info") as c:
        if mode == "legacy":
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                await c.set_logging_level("info")
        await c.call_tool("add_object", {"type": "Person", "name": "Ada"})
        await c.call_tool("add_object", {"type": 5})
    levels = [p.level for p in got]
    assert "info" in levels and "warning" in levels, got
    assert got[0].data["tool"] == "add_object" and got[0].logger == "cks-desktop"


@pytest.mark.asyncio
async def test_token_is_made_once_and_kept(secret_store):
    first = ensure_token(secret_store)
    assert first.new and first.kept and secret_store.get(TOKEN_REF) == first.value
    again = ensure_token(secret_store)
    assert not again.new and again.value == first.value
    assert (await StaticTokenVerifier(first.value).verify_token(first.value)) is not None
    assert (await StaticTokenVerifier(first.value).verify_token(first.value + "x")) is None
    rotated = ensure_token(secret_store, rotate=True)
    assert rotated.new and rotated.value != first.value


def test_sharing_prefs_round_trip(tmp_path):
    from cks_desktop.settings import Settings

    s = Settings.load(tmp_path / "settings.json")
    assert prefs.shared_sessions(s) == [] and prefs.approval_mode(s) == "host"
    assert prefs.share(s, "a") and not prefs.share(s, "a") and prefs.share(s, "b")
    prefs.set_approval_mode(s, "app")
    s.save()
    again = Settings.load(tmp_path / "settings.json")
    assert prefs.shared_sessions(again) == ["a", "b"] and prefs.approval_mode(again) == "app"
    assert prefs.unshare(again, "a") and prefs.shared_sessions(again) == ["b"]
