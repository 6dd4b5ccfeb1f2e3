"""construct_knowledge: a chat's text read by the extraction stages, written as one change with sources.

The model is the real OpenAI adapter over a socket to the fake server, answered by the reading fake
(``tests/fakes/extraction_reader.py``): it knows only the passage it is sent."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from cks_desktop.agent.knowledge import CONSTRUCT_KNOWLEDGE, NOTE_PREFIX, note_name, register_agent_tools
from cks_desktop.documents.store import DocumentStore
from cks_desktop.provenance.queries import evidence_of
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller, Policy, Scope, ToolCall

from tests.fakes.extraction_reader import ReaderModel
from tests.fakes.providers import make_fake, provider_for
from tests.fakes.script import Turn

TEXT = ("Ada Lovelace was a member of the Royal Society. Charles Babbage was a member of the Royal Society. "
        "Ada Lovelace wrote to Charles Babbage about the Analytical Engine.")


@pytest_asyncio.fixture
async def reader() -> AsyncIterator[tuple[Any, Any, ReaderModel]]:
    """The fake server answered by the reading model, and the real adapter pointed at it."""
    model = ReaderModel()
    with make_fake("openai") as fake:
        fake.side_turn = model
        provider = provider_for(fake, model="extraction-test-model")
        try:
            yield fake, provider, model
        finally:
            await provider.aclose()


async def invoke(graph: Any, provider: Any, text: str, **extra: Any) -> Any:
    registry = ToolRegistry(graph)
    register_agent_tools(registry)
    run = Run(graph.session.id, Caller.MODEL, StaticApprover(Decision.DENY), llm=provider)
    return await registry.invoke(ToolCall("k1", "construct_knowledge", {"text": text, **extra}), run)


def names(graph: Any) -> list[str]:
    return sorted(o.name for o in graph.all_objects(graph.session.id))


def test_spec() -> None:
    assert CONSTRUCT_KNOWLEDGE.llm_exposed and CONSTRUCT_KNOWLEDGE.default_policy is Policy.AUTO
    assert CONSTRUCT_KNOWLEDGE.scopes == {Scope.PROVIDER_CALL, Scope.GRAPH_MUTATE}
    assert CONSTRUCT_KNOWLEDGE.result_keys and "change_id" in CONSTRUCT_KNOWLEDGE.result_keys


def test_a_note_is_named_by_its_first_words() -> None:
    assert note_name("  Ada met\nCharles.  ") == f"{NOTE_PREFIX}Ada met Charles."
    long = note_name("word " * 40)
    assert long.startswith(NOTE_PREFIX) and long.endswith("…") and len(long) <= len(NOTE_PREFIX) + 49


@pytest.mark.asyncio
async def test_no_provider_is_a_clear_error(graph) -> None:
    result = await invoke(graph, None, "Ada met Charles.")
    assert result.is_error and "No AI provider is set up" in result.content
    assert DocumentStore(graph).list_documents(graph.session.id) == []  # nothing kept, nothing asked


@pytest.mark.asyncio
async def test_text_becomes_one_change_with_a_source_for_every_fact(graph, reader) -> None:
    fake, provider, _ = reader
    result = await invoke(graph, provider, TEXT)
    assert not result.is_error, result.content
    data = result.structured
    sid = graph.session.id
    assert data["change_id"] and data["summary"].startswith("adds 4 objects"), data
    assert names(graph) == ["Ada Lovelace", "Analytical Engine", "Charles Babbage", "Royal Society"]
    assert len(graph.list_changes(sid)) == 1
    (note,) = DocumentStore(graph).list_documents(sid)
    assert note.id == data["document"]["id"] and note.name.startswith(NOTE_PREFIX + "Ada Lovelace was")
    text = DocumentStore(graph).get(sid, note.id).text
    for obj in graph.all_objects(sid):
        (source,) = [e for e in evidence_of(graph, sid, "object", obj.id) if e.document_id == note.id]
        assert source.start is not None and source.end is not None
        assert obj.name in text[source.start:source.end] or source.quote in text
    _, out = graph.relations_of(sid, graph.resolve(sid, "Ada Lovelace").id)
    assert {r.type for r in out} >= {"member_of", "wrote_to"}
    assert all(evidence_of(graph, sid, "relation", r.id) for r in out)
    sent = str(fake.requests[0].body)
    assert "Ada Lovelace wrote to Charles Babbage" in sent and "DOCUMENT DATA" in sent  # quoted as data


@pytest.mark.asyncio
async def test_existing_objects_are_merged_not_duplicated(graph, reader) -> None:
    _, provider, _ = reader
    sid = graph.session.id
    graph.apply(sid, [{"op": "add_object", "type": "Person", "name": "Ada Lovelace"},
                      {"op": "add_object", "type": "Organization", "name": "Royal Society"}], "user")
    result = await invoke(graph, provider, TEXT)
    assert not result.is_error, result.content
    assert names(graph) == ["Ada Lovelace", "Analytical Engine", "Charles Babbage", "Royal Society"]
    ada = graph.resolve(sid, "Ada Lovelace")
    assert evidence_of(graph, sid, "object", ada.id)  # the existing object gained its source


@pytest.mark.asyncio
async def test_guidance_reaches_the_model(graph, reader) -> None:
    fake, provider, _ = reader
    result = await invoke(graph, provider, TEXT, instructions="Only people and organisations.")
    assert not result.is_error, result.content
    assert "Only people and organisations." in str(fake.requests[0].body)


@pytest.mark.asyncio
async def test_a_long_text_is_read_in_parts_and_written_as_one_change(graph, reader) -> None:
    fake, provider, model = reader
    sentences = [f"Person Number{i} was a member of the Society Number{i % 7}." for i in range(400)]
    result = await invoke(graph, provider, "\n\n".join(" ".join(sentences[i:i + 20]) for i in range(0, 400, 20)))
    assert not result.is_error, result.content
    data = result.structured
    assert data["parts"] > 1 and model.chunk_calls >= data["parts"], (data, model.chunk_calls)
    assert len(graph.list_changes(graph.session.id)) == 1
    assert len(names(graph)) == 407


@pytest.mark.asyncio
async def test_reading_the_same_text_twice_adds_nothing_and_asks_nothing(graph, reader) -> None:
    fake, provider, _ = reader
    first = await invoke(graph, provider, TEXT)
    assert first.structured["change_id"]
    asked = len(fake.requests)
    second = await invoke(graph, provider, TEXT)
    assert not second.is_error, second.content
    assert second.structured["change_id"] is None and second.structured["model_calls"] == 0
    assert len(fake.requests) == asked
    assert len(names(graph)) == 4 and len(graph.list_changes(graph.session.id)) == 1
    assert len(DocumentStore(graph).list_documents(graph.session.id)) == 1


@pytest.mark.asyncio
async def test_the_change_reverts_in_one_step(graph, reader) -> None:
    _, provider, _ = reader
    result = await invoke(graph, provider, TEXT)
    graph.revert(graph.session.id, result.structured["change_id"], "user")
    assert names(graph) == []


@pytest.mark.asyncio
async def test_a_model_that_never_answers_json_is_one_sentence_and_writes_nothing(graph) -> None:
    with make_fake("openai") as fake:
        fake.side_turn = lambda body: Turn(text=["I think Ada knew Charles."])
        provider = provider_for(fake, model="extraction-test-model")
        try:
            result = await invoke(graph, provider, "Ada Lovelace met Charles Babbage.")
        finally:
            await provider.aclose()
    assert result.is_error and result.content.startswith("The text could not be read: part 1:"), result.content
    assert graph.list_changes(graph.session.id) == [] and names(graph) == []
