"""the person's image goes to a model that takes images and is
refused in one sentence for one that does not — for Ollama, as its server says (``/api/show``
capabilities), asked only when a request has an image. The real adapter and SDK, the fake
server, the real store."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.agent import events as ev
from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.images import ImageStore
from cks_desktop.agent.loop import ai_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.llm.messages import Message, Text
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.images import sniff
from cks_desktop.tools.registry import ToolRegistry

from tests.agent.helpers import Recorder, turn_options
from tests.fakes.providers import make_fake, provider_for
from tests.fakes.script import text_turn
from tests.png import make_png


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[Any]:
    store = GraphStore.open(tmp_path / "graph.sqlite3")
    store.session = store.create_session("Images")  # type: ignore[attr-defined]
    try:
        yield store
    finally:
        store.close()


async def _ask(graph: Any, model: str) -> tuple[Recorder, Any]:
    sid = graph.session.id
    part = ImageStore(graph).put(sid, sniff(make_png(3, 3)))
    prompt = Message("user", [Text("What is it?"), part])
    recorder = Recorder()
    with make_fake("ollama") as fake:
        fake.queue(text_turn("A dot."))
        provider = provider_for(fake, model=model)
        try:
            await ai_chat(sid, [], prompt, ChatDeps(provider, ToolRegistry(graph), graph, TranscriptStore.for_store(graph)),
                          turn_options(), approver=StaticApprover(Decision.ALLOW), on_event=recorder)
        finally:
            await provider.aclose()
        return recorder, fake


@pytest.mark.asyncio
async def test_ollama_refuses_an_image_for_a_model_without_vision(graph: Any) -> None:
    recorder, fake = await _ask(graph, "llama-test")
    [error] = recorder.of(ev.ErrorEvent)
    assert error.kind == "no_image_support"
    assert error.message.startswith("llama-test (Ollama) does not take images: remove the image or choose a model")
    assert [r.path for r in fake.requests] == ["/api/show"]  # asked, and nothing was sent
    assert TranscriptStore.for_store(graph).load(graph.session.id) == []  # the message was not saved


@pytest.mark.asyncio
async def test_ollama_sends_the_image_to_a_vision_model(graph: Any) -> None:
    recorder, fake = await _ask(graph, "llava-test")
    assert recorder.finished().reason == "stop"
    [request] = fake.generation_requests
    user = request.body["messages"][-1]
    assert user["content"] == "What is it?" and len(user["images"]) == 1
    saved = TranscriptStore.for_store(graph).load(graph.session.id)
    assert saved[0].images[0].width == 3
