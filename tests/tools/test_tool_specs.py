"""A tool's facts are declared on its spec: what its results hold (the MCP output schema), which
arguments summarise a call in a chat row, its default policy (the policy of its effects). The tables
that used to repeat them are read from the specs, so a new read tool is one module in the built-in
tools package."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cks_desktop.serve.hints import output_schema
from cks_desktop.tools.builtin import builtin_specs
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.ui.chat.summary import tool_summary

NEW_TOOL = '''
from typing import Any

from cks_desktop.tools.builtin import schemas as S
from cks_desktop.tools.context import ToolContext
from cks_desktop.tools.types import Policy, ToolSpec


async def count_names(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    word = args["word"].lower()
    return {"word": args["word"], "count": sum(word in o.name.lower() for o in ctx.store.all_objects(ctx.session_id))}


def tools() -> list[ToolSpec]:
    return [S.make_tool(
        "count_names", title="Count names", handler=count_names, required=("session_id", "word"),
        result_keys=("word", "count"), summary_args=("word",),
        properties={"session_id": S.SESSION_ID, "word": {"type": "string", "minLength": 1, "maxLength": 100}},
        description="Counts the objects whose name contains a word.",
        scopes=S.READ, policy=Policy.AUTO, annotations=S.READ_ONLY)]


TOOLS = tools
PLACE = 15
'''

CHECK = '''
import asyncio, json, sys
import cks_desktop.tools.builtin as builtin
builtin.__path__.append({extra!r})
from cks_desktop.graph.store import GraphStore
from cks_desktop.serve.hints import output_schema, tool_hints
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.builtin import build_registry
from cks_desktop.tools.context import Run
from cks_desktop.tools.types import Caller, ToolCall
from cks_desktop.ui.chat.summary import tool_summary

store = GraphStore.open({db!r})
sid = store.create_session("s").id
store.apply(sid, [{{"op": "add_object", "type": "Person", "name": "Ada Lovelace"}},
                  {{"op": "add_object", "type": "Person", "name": "Ada Byron"}}], "test")
registry = build_registry(store)
spec = registry.get("count_names")
names = [s.name for s in registry.specs()]
run = Run(sid, Caller.MODEL, approver=StaticApprover(Decision.ALLOW))
result = asyncio.run(registry.invoke(ToolCall("c1", "count_names", {{"word": "ada"}}), run))
print(json.dumps({{
    "offered": spec.llm_exposed and "count_names" in names,
    "result": result.structured,
    "output_schema": output_schema(spec),
    "read_only": tool_hints(spec, registry)["readOnlyHint"],
    "summary": tool_summary("count_names", {{"session_id": sid, "word": "ada"}}),
    "policy": registry.policy_of("count_names")[0].value,
}}))
store.close()
'''


def test_a_new_read_tool_is_one_module_in_the_builtin_package(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    (extra / "count_names.py").write_text(NEW_TOOL, encoding="utf-8")
    code = CHECK.format(extra=str(extra), db=str(tmp_path / "cks.sqlite3"))
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "offered": True,
        "result": {"word": "ada", "count": 2},
        "output_schema": {"type": "object", "properties": {"word": {}, "count": {}}},
        "read_only": True,
        "summary": 'word="ada"',
        "policy": "auto",
    }


def test_the_derived_tables_read_the_specs() -> None:
    bare = ToolRegistry(None)  # type: ignore[arg-type]  # holds none of the built-ins
    for spec in builtin_specs():
        assert bare.policy_of(spec.name)[0] is spec.default_policy, spec.name
        schema = output_schema(spec)
        if spec.result_keys is None:
            assert schema is None, spec.name
        else:
            assert schema == {"type": "object", "properties": {k: {} for k in spec.result_keys}}, spec.name
        assert set(spec.summary_args) <= set(spec.input_schema["properties"]), spec.name
    assert output_schema(next(s for s in builtin_specs() if s.name == "read_text_file")) is None
    assert tool_summary("search_objects", {"session_id": "s", "type": "Person", "query": "Ada"}) \
        == 'query="Ada", type="Person"'
