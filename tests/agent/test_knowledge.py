"""construct_knowledge: the model names things, this tool turns them into one safe batch."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cks_desktop.agent.knowledge import CONSTRUCT_KNOWLEDGE, register_agent_tools, split_text
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller, Policy, Scope, ToolCall

from tests.fakes.script import text_turn
from tests.fakes.scripted import ScriptedProvider


def obj(label: str, type_: str, name: str, **props: str) -> dict[str, Any]:
    return {"label": label, "type": type_, "name": name,
            "properties": [{"key": k, "value": v} for k, v in props.items()]}


def rel(source: str, target: str, type_: str) -> dict[str, Any]:
    return {"source": source, "target": target, "type": type_, "properties": []}


def answer(objects: list[dict[str, Any]], relations: list[dict[str, Any]] | None = None) -> Any:
    return text_turn(json.dumps({"objects": objects, "relations": relations or []}))


async def invoke(graph: Any, provider: Any, text: str, **extra: Any) -> Any:
    registry = ToolRegistry(graph)
    register_agent_tools(registry)
    run = Run(graph.session.id, Caller.MODEL, StaticApprover(Decision.DENY), llm=provider)
    return await registry.invoke(ToolCall("k1", "construct_knowledge", {"text": text, **extra}), run)


def test_spec() -> None:
    assert CONSTRUCT_KNOWLEDGE.llm_exposed and CONSTRUCT_KNOWLEDGE.default_policy is Policy.AUTO
    assert CONSTRUCT_KNOWLEDGE.scopes == {Scope.PROVIDER_CALL, Scope.GRAPH_MUTATE}


def test_split_text_on_paragraphs_without_losing_text() -> None:
    paras = [("Paragraph %d. " % i) * 40 for i in range(12)]  # ~560 chars each
    text = "\n\n".join(paras)
    chunks = split_text(text, 2000)
    assert len(chunks) > 1 and all(len(c) <= 2000 for c in chunks)
    assert "".join("".join(chunks).split()) == "".join(text.split())  # nothing dropped
    assert all(c.startswith("Paragraph") for c in chunks)  # cut between paragraphs
    long = "word " * 3000  # one paragraph of 15,000 characters, no sentence ends
    pieces = split_text(long, 6000)
    assert len(pieces) == 3 and all(len(p) <= 6000 for p in pieces)
    assert split_text("  short  ") == ["short"] and split_text("   ") == []


@pytest.mark.asyncio
async def test_no_provider_is_a_clear_error(graph) -> None:
    result = await invoke(graph, None, "Ada met Charles.")
    assert result.is_error and "No AI provider is set up" in result.content


@pytest.mark.asyncio
async def test_text_becomes_one_change(graph) -> None:
    provider = ScriptedProvider([answer(
        [obj("a", "Person", "Ada Lovelace", born="1815"), obj("c", "Person", "Charles Babbage"),
         obj("e", "Machine", "Analytical Engine")],
        [rel("a", "c", "worked_with"), rel("Charles Babbage", "e", "designed"), rel("a", "Nobody", "knows")])])
    result = await invoke(graph, provider, "Ada Lovelace (born 1815) worked with Charles Babbage, "
                                           "who designed the Analytical Engine.")
    assert not result.is_error, result.content
    data = result.structured
    assert data["change_id"] and data["summary"].startswith("adds 3 objects, 2 relations")
    assert data["skipped"] == ["a —knows→ Nobody ('Nobody' is not a known object)"]
    assert len(graph.list_changes(graph.session.id)) == 1
    ada = graph.resolve(graph.session.id, "ada lovelace")
    assert ada.properties == {"born": "1815"}
    request = provider.requests[0]
    assert request.response_schema is not None and "Ada Lovelace (born 1815)" in request.messages[0].text


@pytest.mark.asyncio
async def test_existing_objects_are_reused_by_name(graph) -> None:
    sid = graph.session.id
    graph.apply(sid, [{"op": "add_object", "type": "Person", "name": "Ada Lovelace"},
                      {"op": "add_object", "type": "City", "name": "London"},
                      {"op": "add_object", "type": "City", "name": "Paris"}], "user")
    provider = ScriptedProvider([answer([obj("a", "Person", "Ada Lovelace", title="Countess"),
                                         obj("l", "Place", "london")],  # a guessed type: still London
                                        [rel("a", "l", "lived_in")])])
    result = await invoke(graph, provider, "Ada Lovelace, Countess of Lovelace, lived in London.",
                          instructions="Only people and places.")
    assert not result.is_error, result.content
    assert graph.counts(sid) == {"objects": 3, "relations": 1}
    assert graph.resolve(sid, "Ada Lovelace").properties == {"title": "Countess"}
    prompt = provider.requests[0].messages[0].text
    assert "- Ada Lovelace (Person)" in prompt and "- London (City)" in prompt
    assert "Paris" not in prompt  # only existing objects the text mentions are listed
    assert "Only people and places." in prompt


@pytest.mark.asyncio
async def test_long_text_chunks_share_one_change(graph) -> None:
    part1 = "Ada Lovelace wrote notes. " * 200  # ~5,200 characters
    part2 = "Charles Babbage designed engines. " * 150
    text = f"{part1.strip()}\n\n{part2.strip()}"
    provider = ScriptedProvider([
        answer([obj("x", "Person", "Ada Lovelace")]),
        answer([obj("y", "Person", "Charles Babbage"), obj("z", "Person", "ada lovelace", field="maths")],
               [rel("Ada Lovelace", "y", "knew")]),
    ])
    result = await invoke(graph, provider, text)
    assert not result.is_error, result.content
    assert result.structured["chunks"] == 2 and len(provider.requests) == 2
    sid = graph.session.id
    assert graph.counts(sid) == {"objects": 2, "relations": 1}
    assert len(graph.list_changes(sid)) == 1
    assert graph.resolve(sid, "Ada Lovelace").properties == {"field": "maths"}
    assert "- Ada Lovelace (Person)" in provider.requests[1].messages[0].text  # told about chunk 1's finds
    assert "(part 2 of 2)" in provider.requests[1].messages[0].text


@pytest.mark.asyncio
async def test_nothing_found_records_no_change(graph) -> None:
    provider = ScriptedProvider([answer([])])
    result = await invoke(graph, provider, "Hmm.")
    assert not result.is_error and result.structured["change_id"] is None
    assert graph.list_changes(graph.session.id) == []


@pytest.mark.asyncio
async def test_an_answer_that_stays_invalid_is_an_error(graph) -> None:
    provider = ScriptedProvider([text_turn('{"objects": 5}'), text_turn("not json at all")])
    result = await invoke(graph, provider, "Ada met Charles.")
    assert result.is_error and "expected shape" in result.content
    assert len(provider.requests) == 2  # exactly one repair turn
    assert graph.list_changes(graph.session.id) == []


@pytest.mark.asyncio
async def test_reading_the_same_text_twice_adds_nothing(graph) -> None:
    def turn() -> Any:
        return answer([obj("a", "Person", "Ada"), obj("b", "Person", "Charles")], [rel("a", "b", "knew")])

    provider = ScriptedProvider([turn(), turn()])
    first = await invoke(graph, provider, "Ada knew Charles.")
    assert first.structured["change_id"] and first.structured["already_known"] == 0
    second = await invoke(graph, provider, "Ada knew Charles.")
    assert not second.is_error, second.content
    assert second.structured["already_known"] == 1 and second.structured["change_id"] is None
    assert graph.counts(graph.session.id) == {"objects": 2, "relations": 1}
