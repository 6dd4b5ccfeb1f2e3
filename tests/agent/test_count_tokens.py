"""the provider's token counting endpoint, asked only near the budget.

Real adapters and SDKs talk to the fake servers, whose counting endpoints
(Anthropic's ``POST /v1/messages/count_tokens``, Gemini's ``:countTokens``) answer with the
same deterministic tokenizer their window uses (the request's JSON at ``chars_per_token``).
The tests make that tokenizer denser than the app's estimate, so that only the exact count
keeps a request inside the window.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from cks_desktop.agent import context
from cks_desktop.agent import events as ev
from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.context import SUMMARY_INSTRUCTION, Estimator, fit, wants_count
from cks_desktop.agent.loop import ai_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.llm.messages import Message, Text, ToolCallPart, ToolDef, ToolResultPart
from cks_desktop.llm.providers.anthropic import to_anthropic_messages
from cks_desktop.llm.providers.base import TokenCounter
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Policy, Scope, ToolSpec

from tests.agent.helpers import Recorder, turn_options
from tests.fakes.providers import make_fake, provider_for
from tests.fakes.script import Turn, call_turn, text_turn

WINDOW = 8_000  # tokens
PAGE = 3_000  # characters of one tool result
STUB = "was left out of this request to save room"


def page_registry(store: Any) -> ToolRegistry:
    async def read_page(args: dict[str, Any], ctx: Any) -> Any:
        return f"page {args['n']}: " + ("lorem ipsum " * (PAGE // 12 + 1))[:PAGE]

    registry = ToolRegistry(store)
    registry.register(ToolSpec(name="read_page", description="Read one page.", input_schema={
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        scopes=frozenset({Scope.GRAPH_READ}), default_policy=Policy.AUTO, llm_exposed=True, handler=read_page))
    return registry


def summary_side(body: Any) -> Turn | None:
    if body and not body.get("tools") and SUMMARY_INSTRUCTION in json.dumps(body):
        return text_turn("The person asked me to read pages.")
    return None


def history(exchanges: int, size: int = PAGE) -> list[Message]:
    messages: list[Message] = []
    for i in range(exchanges):
        call = ToolCallPart(f"toolu_{i}", "read_page", {"n": i})
        messages += [Message.user(f"Read page {i}"), Message("assistant", [call]),
                     Message("tool", [ToolResultPart(call.id, "read_page", "lorem ipsum " * (size // 12))]),
                     Message("assistant", [Text(f"Read page {i}.")])]
    return messages


async def chat(graph: Any, fake: Any, prompt: str, messages: list[Message], *, window: int = WINDOW,
               recorder: Recorder | None = None) -> list[Message]:
    transcript = TranscriptStore.for_store(graph)
    sid = graph.session.id
    transcript.append(sid, messages)
    provider = provider_for(fake, timeout=10, options={"context_window": window})
    try:
        return await ai_chat(sid, transcript.load(sid), prompt, ChatDeps(provider, page_registry(graph), graph, transcript),
                             turn_options(system_prompt="test"), approver=StaticApprover(Decision.ALLOW),
                             on_event=recorder)
    finally:
        await provider.aclose()


@pytest.mark.asyncio
@pytest.mark.parametrize("name", ["anthropic", "gemini"])
async def test_a_short_chat_makes_no_count_request(name: str, graph: Any, asyncgen_hooks: None) -> None:
    recorder = Recorder()
    with make_fake(name) as fake:
        fake.queue(call_turn("read_page", {"n": 1}), text_turn("Hello."))
        await chat(graph, fake, "Hello", [], window=128_000, recorder=recorder)
        assert len(fake.generation_requests) == 2
        assert fake.count_requests == []  # type: ignore[attr-defined]
    assert recorder.finished().reason == "stop"


@pytest.mark.asyncio
async def test_near_the_window_the_exact_count_compacts_what_the_estimate_would_have_sent(
        graph: Any, asyncgen_hooks: None) -> None:
    messages = history(4)
    prompt = "Read page 9, please."
    # The estimate alone (3 characters a token) thinks this fits without any compaction...
    tools = [ToolDef("read_page", "Read one page.", {"type": "object", "properties": {"n": {"type": "integer"}},
                                                     "required": ["n"]})]
    alone = fit([*messages, Message.user(prompt)], system="test", tools=tools, window=WINDOW, answer_tokens=4096,
                estimator=Estimator())
    assert alone.fits and alone.stubbed == 0 and alone.tokens >= context.COUNT_NEAR * alone.budget
    recorder = Recorder()
    with make_fake("anthropic") as fake:
        fake.context_window = WINDOW
        fake.chars_per_token = 1.5  # ...but the model's tokenizer is much denser: it would be too long
        fake.side_turn = summary_side
        assert fake.prompt_tokens({"messages": to_anthropic_messages(alone.messages)}) > WINDOW
        fake.queue(call_turn("read_page", {"n": 9}), text_turn("Read page 9."))
        await chat(graph, fake, prompt, messages, recorder=recorder)
        counts = fake.count_requests  # type: ignore[attr-defined]
        generations = fake.generation_requests
        first = json.dumps(generations[0].body)
        assert fake.problems == []
        assert max(fake.prompt_sizes) <= WINDOW, "a request exceeded the window"
    assert 1 <= len(counts) <= len(generations) == 2  # at most one count a model turn
    assert counts[0].body["messages"] and counts[0].body["model"] == "claude-test"
    assert STUB in first and prompt in first  # compacted on the exact number, the prompt kept
    assert recorder.finished().reason == "stop" and not recorder.of(ev.ErrorEvent)
    usage = recorder.of(ev.ContextUsage)
    assert usage and all(u.tokens <= u.budget for u in usage)


@pytest.mark.asyncio
@pytest.mark.parametrize("failure", ["status", "stall"])
async def test_a_failed_count_falls_back_to_the_estimate(failure: str, graph: Any, asyncgen_hooks: None,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setattr(context, "COUNT_TIMEOUT_S", 0.3)  # the bound, short for the test (5 s in the app)
    caplog.set_level(logging.INFO, logger="cks_desktop.agent.context")
    recorder = Recorder()
    with make_fake("anthropic") as fake:
        fake.context_window = WINDOW  # the default tokenizer (4 a token): the estimate is on the safe side
        if failure == "status":
            fake.count_status = 500
        else:
            fake.count_stall = True
        fake.queue(text_turn("Done."))
        await chat(graph, fake, "And now?", history(4), recorder=recorder)
        assert len(fake.count_requests) == 1  # type: ignore[attr-defined]
        assert len(fake.generation_requests) == 1 and max(fake.prompt_sizes) <= WINDOW
    assert recorder.finished().reason == "stop" and not recorder.of(ev.ErrorEvent)
    assert any("using the estimate" in r.getMessage() for r in caplog.records)  # logged, not shown


@pytest.mark.asyncio
async def test_gemini_counts_contents_with_the_system_text_and_tools(graph: Any, asyncgen_hooks: None) -> None:
    with make_fake("gemini") as fake:
        fake.count_rule = lambda body: 1_000 + len(json.dumps(body))
        provider = provider_for(fake)
        try:
            assert isinstance(provider, TokenCounter)
            tools = [ToolDef("read_page", "Read one page.", {"type": "object"})]
            counted = await provider.count_tokens([Message.user("Hello there")], tools, system="Be brief.")
        finally:
            await provider.aclose()
        body = fake.count_requests[0].body  # type: ignore[attr-defined]
    assert counted == 1_000 + len(json.dumps(body))
    text = json.dumps(body)
    assert "Hello there" in text and "Be brief." in text and "read_page" in text


@pytest.mark.asyncio
async def test_gemini_near_the_window_asks_once_a_turn(graph: Any, asyncgen_hooks: None) -> None:
    recorder = Recorder()
    with make_fake("gemini") as fake:
        fake.queue(call_turn("read_page", {"n": 9}), text_turn("Read page 9."))
        await chat(graph, fake, "Read page 9", history(4), recorder=recorder)
        assert 1 <= len(fake.count_requests) <= 2  # type: ignore[attr-defined]
    assert recorder.finished().reason == "stop" and not recorder.of(ev.ErrorEvent)


@pytest.mark.asyncio
async def test_only_counting_providers_are_asked_and_usage_that_disagreed_widens_the_band() -> None:
    with make_fake("anthropic") as anthropic_fake, make_fake("openai") as openai_fake:
        counting, other = provider_for(anthropic_fake), provider_for(openai_fake)
        try:
            request = context.Fitted([], chars=0, tokens=400, budget=1_000, window=2_000)
            estimator = Estimator()
            assert not wants_count(counting, request, estimator)  # 40 % of the budget: far from it
            estimator.observe(3_000, 0, 2_000)  # the answer said 2,000 tokens where 1,000 were guessed
            assert estimator.disagreement == pytest.approx(2.0)
            assert wants_count(counting, request, estimator)  # the estimate is in doubt: near enough
            request.tokens = 900
            assert not wants_count(other, request, estimator)  # no counting endpoint: never
            estimator.calibrate(3_000, 0, 1_500)
            assert estimator.chars_per_token == pytest.approx(2.0) and estimator.disagreement == 1.0
        finally:
            await counting.aclose()
            await other.aclose()
