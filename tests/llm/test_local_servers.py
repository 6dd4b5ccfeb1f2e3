"""the OpenAI-compatible adapter against the servers people run themselves.

Each fake replays one server's real wire (tests/fakes/llamacpp_fake.py, lmstudio_fake.py,
vllm_fake.py, openrouter_fake.py, from their source and documentation); the real adapter and the
real ``openai`` SDK talk to it over a socket. The differences covered: how tool calls stream
(whole arguments in one delta, no ``arguments`` key, the last piece with the finish reason, an
empty name repeated, ``index`` missing, reused or shifted), where usage comes from (a
``choices: []`` chunk when asked, the finish chunk always, only llama.cpp's ``timings``, or not
at all), the reasoning field's name, SSE comments, errors and the context window each reports.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from cks_desktop.llm.events import ReasoningDelta
from cks_desktop.llm.windows import window_for
from tests.fakes.compat_server import CompatFake
from tests.fakes.llamacpp_fake import FakeLlamaCpp
from tests.fakes.lmstudio_fake import FakeLMStudio
from tests.fakes.openrouter_fake import FakeOpenRouter
from tests.fakes.script import ScriptedCall, Turn, text_turn
from tests.fakes.vllm_fake import FakeVLLM
from tests.llm.support import opened, run_turn, run_until_error

pytestmark = pytest.mark.asyncio

SERVERS: dict[str, Callable[[], CompatFake]] = {
    "llamacpp": FakeLlamaCpp,
    "llamacpp-split-arguments": lambda: FakeLlamaCpp(whole_arguments=False),
    "llamacpp-b6097": lambda: FakeLlamaCpp(usage_in_finish_chunk=True),
    "lmstudio": FakeLMStudio,
    "lmstudio-legacy": lambda: FakeLMStudio(legacy=True, reasoning_field="reasoning_content"),
    "vllm": FakeVLLM,
    "vllm-0.9": lambda: FakeVLLM(reasoning_field="reasoning_content", flat_errors=False),
    "openrouter": FakeOpenRouter,
    "gateway-index-omitted": lambda: FakeOpenRouter(tool_index="omit", upstream="Google"),
    "gateway-index-omitted-name-repeated": lambda: FakeOpenRouter(tool_index="omit-named", upstream="Google"),
    "gateway-index-reused": lambda: FakeOpenRouter(tool_index="reuse", upstream="Ollama"),
    "gateway-index-shifted": lambda: FakeOpenRouter(tool_index="shifted", upstream="Nebius"),
}
# What each reports as usage for a turn scripted with 11 input and 7 output tokens (None: nothing).
USAGE: dict[str, tuple[int, int] | None] = {name: (11, 7) for name in SERVERS}
USAGE["lmstudio-legacy"] = None  # no usage in a stream before 0.3.18, whatever the request asks


@pytest.fixture(params=list(SERVERS))
def server(request: pytest.FixtureRequest) -> Iterator[tuple[str, CompatFake]]:
    with SERVERS[request.param]() as fake:
        yield request.param, fake
    assert not fake.problems, fake.problems


TWO_CALLS = Turn(text=["Adding ", "both."], tool_calls=[
    ScriptedCall("add_object", {"type": "Person", "name": "Ada Lovelace", "properties": {"born": 1815}}),
    ScriptedCall("add_object", {"type": "Person", "name": "Bob"})], split_arguments=4)


async def test_text_and_two_tool_calls_arrive_whole(server: tuple[str, CompatFake]) -> None:
    name, fake = server
    fake.queue(TWO_CALLS)
    async with opened(fake) as provider:
        turn = await run_turn(provider)
    assert turn.text == "Adding both."
    assert [(c.name, c.arguments) for c in turn.calls] == [
        ("add_object", {"type": "Person", "name": "Ada Lovelace", "properties": {"born": 1815}}),
        ("add_object", {"type": "Person", "name": "Bob"})], name
    assert len({c.id for c in turn.calls}) == 2 and all(c.id for c in turn.calls)
    assert turn.finish_reason == "tool_calls"  # also where the server said "stop" (LM Studio before 0.3.15)


async def test_one_call_then_the_answer(server: tuple[str, CompatFake]) -> None:
    _, fake = server
    fake.queue(Turn(tool_calls=[ScriptedCall("list_objects", {})]), text_turn("None yet."))
    async with opened(fake) as provider:
        first = await run_turn(provider)
        second = await run_turn(provider)
    assert [(c.name, c.arguments) for c in first.calls] == [("list_objects", {})]
    assert second.text == "None yet." and not second.calls and second.finish_reason == "stop"


async def test_usage_is_read_where_each_server_puts_it(server: tuple[str, CompatFake]) -> None:
    name, fake = server
    fake.queue(text_turn("Hi."))
    async with opened(fake) as provider:
        turn = await run_turn(provider)
    expected = USAGE[name]
    got = turn.usage
    if expected is None:
        assert got is None or (got.input_tokens, got.output_tokens) == (0, 0)
    else:
        assert got is not None and (got.input_tokens, got.output_tokens) == expected, name


async def test_llama_cpp_timings_stand_in_when_usage_is_not_asked() -> None:
    """A server set up with ``stream_usage: false`` (some refuse ``stream_options``): llama.cpp still
    reports ``timings``: evaluated + cached prompt tokens, cached, predicted."""
    with FakeLlamaCpp(cached_tokens=4) as fake:
        fake.queue(Turn(text=["Hi."], input_tokens=30, output_tokens=5))
        async with opened(fake, options={"stream_usage": False}) as provider:
            turn = await run_turn(provider)
        assert "stream_options" not in fake.generation_requests[0].body
    assert turn.usage is not None
    assert (turn.usage.input_tokens, turn.usage.cached_tokens, turn.usage.output_tokens) == (30, 4, 5)


async def test_cached_and_cache_write_tokens() -> None:
    with FakeOpenRouter(cached_tokens=6, cache_write_tokens=3) as fake:
        fake.queue(text_turn("Hi."))
        async with opened(fake) as provider:
            turn = await run_turn(provider)
    assert turn.usage is not None
    assert (turn.usage.cached_tokens, turn.usage.cache_write_tokens) == (6, 3)
    assert turn.usage.cost_usd is not None and turn.usage.cost_usd > 0  # OpenRouter's own ``cost``
    with FakeLlamaCpp(cached_tokens=5) as fake:
        fake.queue(text_turn("Hi."))
        async with opened(fake) as provider:
            turn = await run_turn(provider)
    assert turn.usage is not None and turn.usage.cached_tokens == 5 and turn.usage.cost_usd is None


async def test_reasoning_fields_are_never_answer_text(server: tuple[str, CompatFake]) -> None:
    """Each server's reasoning field as it sends it (``reasoning_content`` or ``reasoning``); the
    reasoning itself is the reasoning tests' business: here only that it stays out of the answer."""
    name, fake = server
    fake.queue(Turn(thinking=["Let me ", "think."], text=["Done."]))
    async with opened(fake) as provider:
        stream = provider.stream([], [], system=None)
        events = [event async for event in stream]
    thought = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    assert thought == "Let me think.", name
    wire = [e for e in events if type(e).__name__ == "TextDelta"]
    assert "".join(e.text for e in wire) == "Done."  # type: ignore[attr-defined]


async def test_an_error_after_the_text_keeps_the_text(server: tuple[str, CompatFake]) -> None:
    _, fake = server
    fake.queue(Turn(text=["Partial"], error_mid_stream="overloaded_error"))
    async with opened(fake) as provider:
        received, error = await run_until_error(provider)
    assert received.text == "Partial"
    assert error.message.endswith(".") and "\n" not in error.message and "{" not in error.message


async def test_http_errors_are_one_clear_sentence(server: tuple[str, CompatFake]) -> None:
    name, fake = server
    fake.queue(Turn(status=503, retry_after=0.01), Turn(status=404))
    async with opened(fake) as provider:
        _, busy = await run_until_error(provider)
        _, missing = await run_until_error(provider)
    assert busy.kind == "overloaded", (name, busy.kind, busy.message)  # llama.cpp "Loading model" included
    assert missing.kind in ("not_found", "model_not_found"), (name, missing.kind)
    for error in (busy, missing):
        assert error.message.endswith(".") and "{" not in error.message


async def test_a_prompt_over_the_window_is_prompt_too_long(server: tuple[str, CompatFake]) -> None:
    name, fake = server
    fake.context_window = 50
    async with opened(fake) as provider:
        _, error = await run_until_error(provider)
    assert error.kind == "prompt_too_long", (name, error.kind, error.message)


WINDOWS: dict[type[CompatFake], int | None] = {FakeLlamaCpp: 32768, FakeVLLM: 32768, FakeOpenRouter: 1_000_000,
                                               FakeLMStudio: None}


async def test_the_window_each_server_reports(server: tuple[str, CompatFake]) -> None:
    name, fake = server
    async with opened(fake) as provider:
        reported = await provider.reported_context_window()  # type: ignore[attr-defined]
        assert reported == WINDOWS[type(fake)], name
        assert await window_for(provider) == (reported or provider.profile.default_context_window)


async def test_openrouter_keeps_the_connection_with_comments_and_sends_usage_unasked() -> None:
    with FakeOpenRouter() as fake:
        fake.queue(text_turn("Hi."))
        async with opened(fake, options={"stream_usage": False}) as provider:
            turn = await run_turn(provider)
    assert turn.text == "Hi." and turn.usage is not None and turn.usage.output_tokens == 7


async def test_a_server_that_refuses_stream_options_is_asked_again_without() -> None:
    """vLLM before 0.5 answers 400 "extra_forbidden" for ``stream_options``: the adapter asks again
    without it (once; later requests leave it out) and the answer arrives."""
    with FakeVLLM(refuses_stream_options=True) as fake:
        fake.queue(text_turn("First."), text_turn("Second."))
        async with opened(fake) as provider:
            first = await run_turn(provider)
            second = await run_turn(provider)
        bodies = [r.body for r in fake.generation_requests]
    assert (first.text, second.text) == ("First.", "Second.")
    assert ["stream_options" in b for b in bodies] == [True, False, False]
    assert not fake.problems
