from __future__ import annotations

from typing import Any

from cks_desktop.agent.prompt import MAX_TYPES_LISTED, build_system_prompt, graph_summary

from tests.agent.helpers import StubGraph


def test_prompt_names_counts_types_tools_and_instructions(stub_store: StubGraph) -> None:
    text = build_system_prompt(stub_store, "S1", title="Physics", instructions="Use British spelling.",
                               tool_names=["search_objects", "construct_knowledge"])
    assert '"session_title": "Physics"' in text
    assert "3 objects and 1 relation, with 2 object types and 1 relation type" in text
    assert '"object_types": [["Person", 2], ["City", 1]]' in text and '"relation_types": [["lives_in", 1]]' in text
    assert "construct_knowledge" in text
    assert text.rstrip().endswith("Use British spelling.")  # the person's instructions come last
    assert len(text) < 2500  # short on purpose


def test_empty_graph_and_no_tools() -> None:
    class Empty(StubGraph):
        def counts(self, session_id: str) -> dict[str, int]:
            return {"objects": 0, "relations": 0}

    text = build_system_prompt(Empty(), "S1")
    assert "empty so far" in text and "No tools are available" in text and "the person's instructions" not in text.lower()


def test_many_types_are_capped_and_a_broken_store_degrades() -> None:
    class Many(StubGraph):
        def type_stats(self, session_id: str) -> dict[str, Any]:
            return {"object_types": [{"name": f"T{i}", "count": i} for i in range(40)], "relation_types": []}

    text = graph_summary(Many(), "S1")
    assert '["T39", 39]' in text and f'"object_types_not_shown": {40 - MAX_TYPES_LISTED}' in text
    assert '["T0", 0]' not in text

    class Broken(StubGraph):
        def counts(self, session_id: str) -> dict[str, int]:
            raise RuntimeError("disk gone")

    assert "could not be read" in graph_summary(Broken(), "S1")
