"""one huge message or tool result cannot make every later request huge.

A fake provider server records each request's raw bytes. After a 5 MB answer
(through the real ``cks-desktop chat`` in a subprocess), a 5 MB tool-call
argument and a 5 MB tool result (in process, through the real adapters), the
next request stays bounded, says where it was shortened, and the transcript
still holds the full text.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.loop import ai_chat
from cks_desktop.agent.request import MESSAGE_LIMIT, PART_LIMIT, bounded_message, request_messages, shorten
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.llm.messages import Message, Text, ToolCallPart, ToolResultPart
from cks_desktop.tools.approval import Decision, StaticApprover

from tests.agent.helpers import build_test_registry, turn_options
from tests.agent.test_chat_cli import chat, home  # noqa: F401 - the fixture
from tests.fakes.providers import PROVIDER_NAMES, make_fake, provider_for
from tests.fakes.script import call_turn, text_turn

FIVE_MB = 5_000_000
BOUND = 3 * MESSAGE_LIMIT + 200_000  # the whole request, with tools and system prompt, well below 1 MB
NOTICE = "shortened for the model"


def test_after_a_5_mb_answer_the_next_request_is_bounded(home: tuple[Path, str]) -> None:  # noqa: F811
    root, sid = home
    big = ("0123456789abcdef" * (FIVE_MB // 16 + 1))[:FIVE_MB]
    with make_fake("ollama") as fake:
        fake.queue(text_turn(*[big[i:i + 500_000] for i in range(0, FIVE_MB, 500_000)]))
        first = chat(root, fake, sid, "Write a lot")
        assert first.returncode == 0, first.stderr
    with make_fake("ollama") as fake:
        # Ollama's window (num_ctx 16,384) is smaller than even the bounded answer, so context
        # management first asks for a summary of it, then sends the answer's request.
        fake.queue(text_turn("Summary: wrote a lot."), text_turn("Short now."))
        second = chat(root, fake, sid, "And now?")
        raw = fake.generation_requests[0].raw
        sizes = [len(r.raw) for r in fake.generation_requests]
    assert second.returncode == 0, second.stderr
    assert all(size < BOUND for size in sizes), f"the next requests sent {sizes} bytes"
    assert NOTICE in raw.decode() and "full text is kept in the chat transcript" in raw.decode()
    with GraphStore.open(root / "cks.sqlite3") as store:  # the transcript keeps every character
        answer = TranscriptStore.for_store(store).load(sid)[1]
    assert answer.role == "assistant" and answer.text == big


@pytest.mark.asyncio
@pytest.mark.parametrize("name", PROVIDER_NAMES)
async def test_a_5_mb_tool_call_and_result_are_bounded(name: str, graph: Any, asyncgen_hooks: None) -> None:
    huge = "y" * FIVE_MB
    registry = build_test_registry(graph)
    registry.result_cap = 10 * FIVE_MB  # the registry's own cap is another layer; test this one alone
    transcript = TranscriptStore.for_store(graph)
    with make_fake(name) as fake:
        fake.queue(call_turn("echo", {"text": huge}), text_turn("Echoed."), text_turn("Again."))
        # A window large enough that only this bound acts (tests/agent/test_context.py covers the window).
        provider = provider_for(fake, timeout=30, options={"context_window": 10_000_000})
        try:
            for prompt in ("Echo this", "Once more"):
                await ai_chat(graph.session.id, transcript.load(graph.session.id), prompt,
                              ChatDeps(provider, registry, graph, transcript), turn_options(system_prompt="test"),
                              approver=StaticApprover(Decision.ALLOW))
        finally:
            await provider.aclose()
        sizes = [len(r.raw) for r in fake.generation_requests]
        later = fake.generation_requests[1].raw.decode()
    assert len(sizes) == 3 and all(s < BOUND for s in sizes[1:]), sizes
    assert NOTICE in later
    saved = transcript.load(graph.session.id)
    assert saved[1].tool_calls[0].arguments["text"] == huge and huge in saved[2].tool_results[0].content


def test_shortening_keeps_start_and_end_and_small_messages_untouched() -> None:
    text = "START" + "m" * 300_000 + "END"
    cut = shorten(text, PART_LIMIT)
    assert cut.startswith("START") and cut.endswith("END") and len(cut) <= PART_LIMIT and NOTICE in cut
    small = Message("assistant", [Text("hi"), ToolCallPart("c1", "echo", {"text": "x"})])
    assert bounded_message(small) is small
    many = Message("tool", [ToolResultPart(f"c{i}", "echo", "z" * 50_000) for i in range(20)])
    assert sum(len(p.content) for p in bounded_message(many).tool_results) <= MESSAGE_LIMIT + 20 * 200
    nested = Message("assistant", [ToolCallPart("c1", "evolve", {"ops": [{"name": "n" * 90_000}] * 30})])
    assert len(json.dumps(bounded_message(nested).tool_calls[0].arguments)) <= PART_LIMIT + 1000
    assert request_messages([small]) == [small]
