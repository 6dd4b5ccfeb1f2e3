"""long chats stay inside the model's context window.

Real adapters and SDKs talk to the fake servers, which count each request's tokens and
answer a prompt larger than their window with the provider's real "prompt too long"
error. The transcript is the real SQLite store.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from cks_desktop.agent import events as ev
from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.context import SUMMARY_HEAD, SUMMARY_INSTRUCTION, Estimator, fit
from cks_desktop.agent.loop import ai_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.llm.errors import ErrorContext, from_status
from cks_desktop.llm.messages import Message, Text, ToolCallPart, ToolResultPart
from cks_desktop.llm.windows import known_window
from cks_desktop.llm.profiles import ANTHROPIC, GEMINI, OLLAMA, OPENAI
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Policy, Scope, ToolSpec

from tests.agent.helpers import Recorder, turn_options
from tests.fakes.providers import make_fake, provider_for
from tests.fakes.script import Turn, call_turn, text_turn

WINDOW = 6_000  # tokens: about five of the tool's results
PAGE = 3_000  # characters of one tool result
STUB = "was left out of this request to save room"


def page_registry(store: Any, size: int = PAGE) -> ToolRegistry:
    async def read_page(args: dict[str, Any], ctx: Any) -> Any:
        n = int(args["n"])
        return f"page {n}: " + ("lorem ipsum " * (size // 12 + 1))[:size]

    registry = ToolRegistry(store)
    registry.register(ToolSpec(name="read_page", description="Read one page.", input_schema={
        "type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]},
        scopes=frozenset({Scope.GRAPH_READ}), default_policy=Policy.AUTO, llm_exposed=True, handler=read_page))
    return registry


def summary_side(body: Any) -> Turn | None:
    """The fake model's answer to the app's summary requests (no tools, the instruction last)."""
    if body and not body.get("tools") and SUMMARY_INSTRUCTION in json.dumps(body):
        return text_turn("The person asked me to read pages one by one and to remember their numbers.")
    return None


@pytest.mark.asyncio
@pytest.mark.parametrize("turns", [40, pytest.param(200, marks=pytest.mark.slow)])
@pytest.mark.parametrize("name", ["anthropic", "openai"])
async def test_a_long_chat_never_exceeds_a_small_window(name: str, turns: int, graph: Any,
                                                        asyncgen_hooks: None) -> None:
    """Forty turns already summarise several times over (the window holds about five results);
    the 200-turn run, with the slow suite, shows the same at a length people reach."""
    transcript = TranscriptStore.for_store(graph)
    sid = graph.session.id
    registry = page_registry(graph)
    recorder = Recorder()
    with make_fake(name) as fake:
        fake.context_window = WINDOW
        fake.side_turn = summary_side
        # Anthropic: the window is a setting; OpenAI-compatible: the fake's model list says it.
        options = {"context_window": WINDOW} if name == "anthropic" else None
        provider = provider_for(fake, timeout=30, options=options)
        try:
            for i in range(turns):
                fake.queue(call_turn("read_page", {"n": i}), text_turn(f"Read page {i}."))
                await ai_chat(sid, transcript.load(sid), f"Read page {i}, and remember number {i}.",
                              ChatDeps(provider, registry, graph, transcript), turn_options(system_prompt="test"),
                              approver=StaticApprover(Decision.ALLOW), on_event=recorder)
        finally:
            await provider.aclose()
        bodies = [json.dumps(r.body) for r in fake.generation_requests]
        assert fake.problems == []
        assert max(fake.prompt_sizes) <= WINDOW, "a request exceeded the window"
    assert [e.reason for e in recorder.of(ev.Finished)] == ["stop"] * turns  # no dead chat, no error
    # The transcript keeps everything: every prompt, call and whole result, plus the summaries.
    saved = transcript.history(sid)
    plain = [s for s in saved if s.notice is None]
    assert len(plain) == 4 * turns
    results = [p for s in plain for p in s.message.tool_results]
    assert len(results) == turns and all(len(r.content) > PAGE for r in results)
    summaries = [s for s in saved if s.notice is ev.Notice.SUMMARY]
    assert summaries and all(s.message.text.startswith(SUMMARY_HEAD) for s in summaries)
    # The model was told what was shortened: stubs naming the tool, and the summary in place.
    assert any(STUB in b and "call read_page again" in b for b in bodies)
    assert any("[Summary of the earlier conversation" in b for b in bodies[-5:])
    # The newest prompt always went out in the person's own words.
    assert f"Read page {turns - 1}, and remember number {turns - 1}." in bodies[-1]
    usage = recorder.of(ev.ContextUsage)
    assert usage and usage[-1].window == WINDOW and all(u.tokens <= u.budget for u in usage)


@pytest.mark.asyncio
async def test_prompt_too_long_compacts_once_and_retries(graph: Any, asyncgen_hooks: None) -> None:
    transcript = TranscriptStore.for_store(graph)
    sid = graph.session.id
    history: list[Message] = []
    for i in range(10):  # ten earlier exchanges with 4,000-character results
        call = ToolCallPart(f"toolu_{i}", "read_page", {"n": i})
        history += [Message.user(f"Read page {i}"), Message("assistant", [call]),
                    Message("tool", [ToolResultPart(call.id, "read_page", "x" * 4_000)]),
                    Message("assistant", [Text(f"Read page {i}.")])]
    transcript.append(sid, history)
    recorder = Recorder()
    with make_fake("anthropic") as fake:
        fake.context_window = 9_000  # smaller than the app believes (the setting says 100k)
        fake.queue(text_turn("Done."))
        provider = provider_for(fake, options={"context_window": 100_000})
        try:
            await ai_chat(sid, transcript.load(sid), "And now?", ChatDeps(provider, page_registry(graph), graph, transcript),
                          turn_options(system_prompt="test"), approver=StaticApprover(Decision.ALLOW),
                          on_event=recorder)
        finally:
            await provider.aclose()
        sizes = list(fake.prompt_sizes)
        retried = json.dumps(fake.generation_requests[-1].body)
    assert len(sizes) == 2 and sizes[0] > 9_000 >= sizes[1], sizes
    assert STUB in retried and "And now?" in retried
    assert recorder.finished().reason == "stop" and not recorder.of(ev.ErrorEvent)


@pytest.mark.asyncio
async def test_a_second_prompt_too_long_is_one_clear_sentence(graph: Any, asyncgen_hooks: None) -> None:
    recorder = Recorder()
    with make_fake("anthropic") as fake:
        fake.context_window = 10  # nothing fits, not even the prompt
        provider = provider_for(fake)
        try:
            await ai_chat(graph.session.id, [], "Hello", ChatDeps(provider, page_registry(graph), graph),
                          turn_options(system_prompt="test"), approver=StaticApprover(Decision.ALLOW),
                          on_event=recorder)
        finally:
            await provider.aclose()
        assert len(fake.generation_requests) == 2  # one retry, no loop
    error = recorder.of(ev.ErrorEvent)[0]
    assert error.kind == "prompt_too_long" and "too long for claude-test's context window" in error.message
    assert recorder.finished().reason == "error"


@pytest.mark.asyncio
async def test_one_result_larger_than_the_room_is_cut_with_a_notice(graph: Any, asyncgen_hooks: None) -> None:
    transcript = TranscriptStore.for_store(graph)
    sid = graph.session.id
    with make_fake("openai") as fake:
        fake.context_window = WINDOW
        fake.queue(call_turn("read_page", {"n": 1}), text_turn("Long page."))
        provider = provider_for(fake, options={"context_window": WINDOW})
        try:
            await ai_chat(sid, [], "Read page 1", ChatDeps(provider, page_registry(graph, 60_000), graph, transcript),
                          turn_options(system_prompt="test"), approver=StaticApprover(Decision.ALLOW))
        finally:
            await provider.aclose()
        assert max(fake.prompt_sizes) <= WINDOW
        last = json.dumps(fake.generation_requests[-1].body)
    assert "shortened for the model" in last
    assert len(transcript.load(sid)[2].tool_results[0].content) > 60_000  # the transcript keeps it whole


def test_fit_costs_nothing_when_it_fits_and_keeps_the_same_objects() -> None:
    messages = [Message.user("hi"), Message("assistant", [Text("hello")])]
    fitted = fit(messages, system="s", tools=[], window=8_000, answer_tokens=1_000, estimator=Estimator())
    assert fitted.fits and fitted.messages[0] is messages[0] and fitted.stubbed == fitted.cut == 0


def test_known_windows() -> None:
    assert known_window(ANTHROPIC, "claude-sonnet-4-5") == 200_000
    assert known_window(OPENAI, "gpt-4o-mini") == 128_000 and known_window(OPENAI, "gpt-4.1-mini") == 1_047_576
    assert known_window(OPENAI, "my-local-model") == OPENAI.default_context_window
    assert known_window(GEMINI, "gemini-2.5-flash") == 1_048_576
    assert known_window(OLLAMA, "llama3.1", {"num_ctx": 8192}) == 8192
    assert known_window(ANTHROPIC, "claude-x", {"context_window": 5000}) == 5000


@pytest.mark.parametrize("status,message", [
    (400, "prompt is too long: 210000 tokens > 200000 maximum"),
    (400, "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens."),
    (400, "the request exceeds the available context size, try increasing it"),
    (400, "The input token count (1200000) exceeds the maximum number of tokens allowed (1048576)."),
    (413, "Request exceeds the maximum allowed number of bytes."),
])
def test_every_vendor_s_prompt_too_long_has_one_kind(status: int, message: str) -> None:
    ctx = ErrorContext("Anthropic", "m", "https://x", 10)
    assert from_status(ctx, status, message=message, hint="bad_request").kind == "prompt_too_long"
