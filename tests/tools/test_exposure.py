"""Exposure: every built-in declares llm_exposed; the admin tools are never
offered to a model and are "unknown" to one under any spelling."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from cks_desktop.tools.builtin import ADMIN_TOOLS, build_registry
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import model_schema
from cks_desktop.tools.types import ALL_SCOPES, Caller, Policy, Scope
from cks_desktop.tools.wire_names import to_wire
from tests.tools.conftest import call

R, M, F = Scope.GRAPH_READ, Scope.GRAPH_MUTATE, Scope.FS_READ
# The built-in tools: name -> (scopes, default policy, exposed)
TABLE: dict[str, tuple[set[Scope], Policy, bool]] = {
    "graph_summary": ({R}, Policy.AUTO, True),
    "list_objects": ({R}, Policy.AUTO, True),
    "get_object": ({R}, Policy.AUTO, True),
    "search_objects": ({R}, Policy.AUTO, True),
    "retrieve_passages": ({R}, Policy.AUTO, True),
    "list_relations": ({R}, Policy.AUTO, True),
    "neighbors": ({R}, Policy.AUTO, True),
    "find_path": ({R}, Policy.AUTO, True),
    "list_types": ({R}, Policy.AUTO, True),
    "list_changes": ({R}, Policy.AUTO, True),
    "export_graph": ({R}, Policy.AUTO, True),
    "get_sources": ({R}, Policy.AUTO, True),  # provenance, so the assistant can cite
    "add_object": ({M}, Policy.AUTO, True),
    "update_object": ({M}, Policy.AUTO, True),
    "remove_object": ({M}, Policy.ONCE, True),
    "add_relation": ({M}, Policy.AUTO, True),
    "remove_relation": ({M}, Policy.ONCE, True),
    "merge_objects": ({M}, Policy.ONCE, True),
    "evolve_knowledge": ({M}, Policy.AUTO, True),
    "define_type": ({M}, Policy.AUTO, True),
    "revert_change": ({M}, Policy.ONCE, True),
    "read_text_file": ({F}, Policy.ALWAYS, True),
    **{name: (set(), Policy.AUTO, False) for name in ADMIN_TOOLS if name != "import_graph"},
    # import_graph writes the graph and merges into existing objects, so it needs
    # graph.mutate and asks like the tools that do the same.
    "import_graph": ({M}, Policy.ONCE, False),
}


def test_the_registry_matches_the_table_of_names_scopes_and_policies() -> None:
    specs = {s.name: s for s in build_registry(None).specs()}
    assert set(specs) == set(TABLE)
    for name, (scopes, policy, exposed) in TABLE.items():
        spec = specs[name]
        assert (set(spec.scopes), spec.default_policy, spec.llm_exposed) == (scopes, policy, exposed), name


def test_every_tool_declares_exposure_and_a_usable_schema() -> None:
    for spec in build_registry(None).specs():
        assert type(spec.llm_exposed) is bool, spec.name
        assert spec.description and len(spec.description) > 30, spec.name
        schema = dict(spec.input_schema)
        jsonschema.Draft202012Validator.check_schema(schema)
        assert schema["type"] == "object" and schema["additionalProperties"] is False, spec.name
        assert set(schema.get("required", [])) <= set(schema["properties"]), spec.name
        if spec.llm_exposed:
            assert "session_id" not in model_schema(spec)["properties"], spec.name
        if spec.mutating:
            assert spec.preview is not None, spec.name


@pytest.mark.parametrize("scopes", [ALL_SCOPES, frozenset({Scope.GRAPH_READ}), frozenset()])
def test_admin_tools_are_never_offered(scopes: frozenset[Scope]) -> None:
    reg = build_registry(None)
    for caller in Caller:
        offered = {s.name for s in reg.offered(Run("S", caller, granted_scopes=scopes))}
        assert not offered & set(ADMIN_TOOLS)
        assert all(reg.get(n).scopes <= scopes for n in offered)  # type: ignore[union-attr]
    assert len(reg.offered(Run("S", Caller.MODEL))) == 22  # get_sources, retrieve_passages


@pytest.mark.asyncio
async def test_a_model_cannot_call_admin_tools_by_any_spelling(store: Any, session_id: str) -> None:
    reg = build_registry(store)
    before = [s.id for s in store.list_sessions()]
    for caller in (Caller.MODEL, Caller.MCP_CLIENT):
        run = Run(session_id, caller)
        for name in ADMIN_TOOLS:
            for spelling in {name, to_wire(name), name.upper(), name.title(), name.replace("_", "-")}:
                res = await call(reg, run, spelling, session_id=session_id, title="x", format="json", data="{}")
                assert res.is_error and res.content.startswith("Unknown tool"), (caller, spelling)
    assert [s.id for s in store.list_sessions()] == before
    # The same tools work for a person or the CLI.
    res = await call(reg, Run(session_id, Caller.CLI), "list_sessions")
    assert not res.is_error and [s["id"] for s in res.structured["sessions"]] == before


def test_build_registry_applies_the_persons_policies(tmp_path: Any) -> None:
    from cks_desktop.settings import Settings

    settings = Settings.load(tmp_path / "settings.json")
    settings.set_tool_policy("remove_object", "auto")
    settings.set_tool_policy("add_object", "always")
    settings.set_tool_policy("mcp:srv:tool", "once")  # for tools that register later
    reg = build_registry(None, settings)
    assert reg.effective_policy(reg.get("remove_object")) is Policy.AUTO  # type: ignore[arg-type]
    assert reg.effective_policy(reg.get("add_object")) is Policy.ALWAYS  # type: ignore[arg-type]
    assert reg.effective_policy(reg.get("merge_objects")) is Policy.ONCE  # type: ignore[arg-type]
    assert reg.policy_overrides()["mcp:srv:tool"] is Policy.ONCE
