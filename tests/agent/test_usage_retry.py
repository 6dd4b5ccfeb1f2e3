"""token usage stored per model turn and summed; 429/529 waited out and retried.

Real adapters and SDKs against the fake servers; waits are kept tiny by a small ``retry-after``."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.agent import events as ev
from cks_desktop.agent import usage
from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.loop import ai_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.llm.prices import cost_usd, price_for
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.builtin import build_registry
from tests.agent.helpers import turn_options
from tests.fakes.providers import PROVIDER_NAMES, make_fake, provider_for
from tests.fakes.script import Turn, call_turn, text_turn


@pytest.fixture
def store(tmp_path: Path) -> Iterator[GraphStore]:
    s = GraphStore.open(tmp_path / "cks.sqlite3")
    try:
        yield s
    finally:
        s.close()


async def chat(store: GraphStore, fake: Any, session_id: str, max_retries: int = 0, **options: Any) -> list[Any]:
    seen: list[Any] = []
    provider = await asyncio.to_thread(provider_for, fake, max_retries=max_retries, options=options)
    try:
        transcript = TranscriptStore.for_store(store)
        await ai_chat(session_id, transcript.load(session_id), "Go.",
                      ChatDeps(provider, build_registry(store), store, transcript), turn_options(system_prompt="t"),
                      approver=StaticApprover(Decision.ALLOW), on_event=seen.append)
    finally:
        await provider.aclose()
    return seen


@pytest.mark.asyncio
@pytest.mark.parametrize("status", [429, 529])
@pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
async def test_rate_limit_is_waited_out(store: GraphStore, provider_name: str, status: int) -> None:
    if provider_name == "gemini" and status == 529:
        pytest.skip("Gemini never answers 529 (its overload is 503 UNAVAILABLE, a server_error)")
    with make_fake(provider_name) as fake:
        fake.queue(Turn(status=status, retry_after=0.01), text_turn("Hello."))
        session_id = store.create_session("s").id
        seen = await chat(store, fake, session_id, max_retries=2)
    waits = [e for e in seen if isinstance(e, ev.Waiting)]
    assert isinstance(seen[-1], ev.Finished) and seen[-1].reason == "stop", seen[-3:]
    assert [w.resumed for w in waits] == [False, True]
    assert waits[0].kind in ("rate_limited", "overloaded") and "waiting" in waits[0].text
    assert not [e for e in seen if isinstance(e, ev.ErrorEvent)]
    assert "".join(e.text for e in seen if isinstance(e, ev.TextDelta)) == "Hello."


GEMINI_UNAVAILABLE = {"error": {"code": 503, "message": "The service is currently unavailable.",
                                  "status": "UNAVAILABLE"}}


@pytest.mark.asyncio
@pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
async def test_503_unavailable_is_waited_out_like_429(store: GraphStore, provider_name: str) -> None:
    """Gemini's overload is 503 UNAVAILABLE (with or without "overloaded" in the text); llama.cpp
    answers 503 while it loads a model, Ollama when its queue is full: all of them wait and retry."""
    with make_fake(provider_name) as fake:
        body = GEMINI_UNAVAILABLE if provider_name == "gemini" else None
        fake.queue(Turn(status=503, retry_after=0.01, error_body=body), Turn(status=503, retry_after=0.01),
                   text_turn("Back."))
        session_id = store.create_session("s").id
        seen = await chat(store, fake, session_id, max_retries=2)
    waits = [e for e in seen if isinstance(e, ev.Waiting) and not e.resumed]
    assert [w.kind for w in waits] == ["overloaded", "overloaded"], seen
    assert "(overloaded)" in waits[0].text
    assert isinstance(seen[-1], ev.Finished) and seen[-1].reason == "stop"
    assert "".join(e.text for e in seen if isinstance(e, ev.TextDelta)) == "Back."


@pytest.mark.asyncio
async def test_retries_are_bounded(store: GraphStore) -> None:
    with make_fake("anthropic") as fake:
        fake.queue(*[Turn(status=429, retry_after=0.01)] * 3)
        session_id = store.create_session("s").id
        seen = await chat(store, fake, session_id, max_retries=2)
    assert len([e for e in seen if isinstance(e, ev.Waiting) and not e.resumed]) == 2
    errors = [e for e in seen if isinstance(e, ev.ErrorEvent)]
    assert len(errors) == 1 and errors[0].kind == "rate_limited"


@pytest.mark.asyncio
async def test_a_wait_longer_than_the_cap_fails_at_once(store: GraphStore) -> None:
    with make_fake("openai") as fake:
        fake.queue(Turn(status=429, retry_after=30))
        session_id = store.create_session("s").id
        seen = await chat(store, fake, session_id, max_retries=3, retry_max_wait_s=5)
    assert not [e for e in seen if isinstance(e, ev.Waiting)]
    assert [e.kind for e in seen if isinstance(e, ev.ErrorEvent)] == ["rate_limited"]


@pytest.mark.asyncio
async def test_stop_cancels_the_wait(store: GraphStore) -> None:
    with make_fake("anthropic") as fake:
        fake.queue(Turn(status=429, retry_after=50), text_turn("never"))
        session_id = store.create_session("s").id
        waiting = asyncio.Event()
        provider = await asyncio.to_thread(provider_for, fake, max_retries=1)

        def on_event(event: Any) -> None:
            if isinstance(event, ev.Waiting) and not event.resumed:
                waiting.set()

        deps = ChatDeps(provider, build_registry(store), store, TranscriptStore.for_store(store))
        task = asyncio.create_task(ai_chat(session_id, [], "Go.", deps, turn_options(system_prompt="t"),
                                           approver=StaticApprover(Decision.ALLOW), on_event=on_event))
        try:
            await asyncio.wait_for(waiting.wait(), 10)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await asyncio.wait_for(task, 5)
        finally:
            await provider.aclose()
        assert len(fake.requests) == 1


@pytest.mark.asyncio
@pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
async def test_usage_is_stored_per_turn_and_summed(store: GraphStore, provider_name: str) -> None:
    with make_fake(provider_name) as fake:
        session_id = store.create_session("s").id
        fake.queue(call_turn("list_types", {}), text_turn("One."))
        await chat(store, fake, session_id)
        fake.queue(text_turn("Two."))
        await chat(store, fake, session_id)
    answers = usage.answers(TranscriptStore.for_store(store), session_id)
    assert [a.tokens.turns for a in answers] == [2, 1]
    assert all(a.tokens.input_tokens > 0 and a.tokens.output_tokens > 0 for a in answers)
    total = usage.session_total(answers)
    assert total.input_tokens == sum(a.tokens.input_tokens for a in answers)
    assert total.turns == 3


def test_prices() -> None:
    assert price_for("no-such-model") is None
    assert cost_usd(price_for("no-such-model"), 10, 10) is None
    assert price_for("claude-haiku-4-5-20251001") == price_for("claude-haiku-4-5")
    assert price_for("anthropic/claude-sonnet-4.5") == price_for("claude-sonnet-4-5")  # OpenRouter's names
    assert price_for("openai/gpt-4o-mini") == price_for("gpt-4o-mini")
    assert price_for("meta-llama/llama-3.3-70b-instruct:free") is None
    writes = price_for("claude-sonnet-4-5")
    assert cost_usd(writes, 1_000_000, 0, 0, 1_000_000) == pytest.approx(3.75)  # cache writes at 1.25×
    override = {"m": {"input": 1, "output": 2, "cached": 0.5}}
    assert cost_usd(price_for("m", override), 1_000_000, 1_000_000, 500_000) == pytest.approx(0.5 + 0.25 + 2)
