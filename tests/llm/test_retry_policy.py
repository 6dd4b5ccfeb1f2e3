"""One retry policy, applied by one layer (the adapter's stream, ``llm/retry.py``).

Real adapters and SDKs against the fake servers, which count every request they receive and stamp
its arrival: a persistent 429 costs exactly ``1 + max_retries`` requests for one chat turn and for
one extraction part, on every provider; ``Retry-After`` (seconds or an HTTP date) is waited out,
measured between the fake's arrival stamps; a 400 is never retried; a connection dropped before
any output is retried, one dropped after output is not. Waits are kept short by a small
``Retry-After`` and the tests' millisecond backoff (``retry_first_s``).
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.agent import events as ev
from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.loop import ai_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.extraction.runner import Extraction, ExtractionStopped
from cks_desktop.graph.store import GraphStore
from cks_desktop.llm.provider import ProviderConfig, ProviderError
from cks_desktop.llm.retry import RetryPolicy
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.builtin import build_registry
from tests.agent.helpers import turn_options
from tests.fakes.anthropic_fake import FakeAnthropic
from tests.fakes.gemini_fake import FakeGemini
from tests.fakes.llamacpp_fake import FakeLlamaCpp
from tests.fakes.ollama_fake import FakeOllama
from tests.fakes.openai_fake import FakeOpenAI
from tests.fakes.openai_responses_fake import FakeOpenAIResponses
from tests.fakes.providers import provider_for
from tests.fakes.script import Turn
from tests.fakes.server import FakeServer
from tests.fakes.vllm_fake import FakeVLLM
from tests.llm.support import run_turn, run_until_error

# name -> (the fake, the adapter's options)
SERVERS: dict[str, tuple[Callable[[], FakeServer], dict[str, Any]]] = {
    "anthropic": (FakeAnthropic, {}),
    "openai-chat-completions": (FakeOpenAI, {}),
    "openai-responses": (FakeOpenAIResponses, {"api": "responses"}),
    "openai-compatible-vllm": (FakeVLLM, {}),
    "openai-compatible-llamacpp": (FakeLlamaCpp, {}),
    "ollama": (FakeOllama, {}),
    "gemini": (FakeGemini, {}),
}
NAMES = list(SERVERS)
MAX_RETRIES = 2


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[tuple[FakeServer, dict[str, Any]]]:
    make, options = SERVERS[request.param]
    with make() as fake:
        yield fake, options


def _provider(server: tuple[FakeServer, dict[str, Any]], max_retries: int = MAX_RETRIES) -> Any:
    fake, options = server
    return provider_for(fake, max_retries=max_retries, options=dict(options))


async def _chat(store: GraphStore, provider: Any) -> list[Any]:
    seen: list[Any] = []
    session_id = store.create_session("s").id
    transcript = TranscriptStore.for_store(store)
    await ai_chat(session_id, [], "Go.", ChatDeps(provider, build_registry(store), store, transcript),
                  turn_options(system_prompt="t"), approver=StaticApprover(Decision.ALLOW), on_event=seen.append)
    return seen


@pytest.fixture
def store(tmp_path: Path) -> Iterator[GraphStore]:
    s = GraphStore.open(tmp_path / "cks.sqlite3")
    try:
        yield s
    finally:
        s.close()


@pytest.mark.asyncio
@pytest.mark.parametrize("server", NAMES, indirect=True)
async def test_a_persistent_429_costs_one_plus_max_retries_requests_in_a_chat_turn(
        server: tuple[FakeServer, dict[str, Any]], store: GraphStore) -> None:
    fake = server[0]
    fake.always = Turn(status=429, retry_after=0)
    provider = await asyncio.to_thread(_provider, server)
    try:
        seen = await asyncio.wait_for(_chat(store, provider), 30)
    finally:
        await provider.aclose()
    assert len(fake.generation_requests) == 1 + MAX_RETRIES
    waits = [e for e in seen if isinstance(e, ev.Waiting) and not e.resumed]
    assert [w.attempt for w in waits] == [1, 2] and all(w.kind == "rate_limited" for w in waits)
    errors = [e for e in seen if isinstance(e, ev.ErrorEvent)]
    assert [e.kind for e in errors] == ["rate_limited"] and "rate limiting" in errors[0].message


@pytest.mark.asyncio
@pytest.mark.parametrize("server", NAMES, indirect=True)
async def test_a_persistent_429_costs_one_plus_max_retries_requests_for_an_extraction_part(
        server: tuple[FakeServer, dict[str, Any]], store: GraphStore, tmp_path: Path) -> None:
    fake = server[0]
    fake.always = Turn(status=429, retry_after=0)
    path = tmp_path / "note.md"
    path.write_text("# Founding\n\nMarguerite Okonkwo founded the Northern Rail Company in 1871.\n", encoding="utf-8")
    session_id = store.create_session("s").id
    DocumentStore(store).add(session_id, [read_path(path, 1024 * 1024)])
    doc = DocumentStore(store).get(session_id, "note.md")
    provider = await asyncio.to_thread(_provider, server)
    try:
        ex = Extraction(store, session_id, doc, provider)
        assert len(ex.chunks) == 1
        try:
            await asyncio.wait_for(ex.run(), 30)
        except ExtractionStopped:
            pass
    finally:
        await provider.aclose()
    assert len(fake.generation_requests) == 1 + MAX_RETRIES
    assert len(ex.progress.failed_chunks) == 1 and "rate limiting" in ex.progress.failed_chunks[0]
    assert ex.progress.calls == 0  # refused requests are neither calls nor billed


@pytest.mark.asyncio
@pytest.mark.parametrize("server", NAMES, indirect=True)
async def test_retry_after_in_seconds_is_waited_out(server: tuple[FakeServer, dict[str, Any]]) -> None:
    fake = server[0]
    fake.always = Turn(status=429, retry_after=1)
    provider = await asyncio.to_thread(_provider, server, 1)
    try:
        _, error = await run_until_error(provider, timeout=20)
    finally:
        await provider.aclose()
    first, second = fake.generation_requests
    assert error.kind == "rate_limited"
    # 1 s asked (less a little: the fake stamps a request once its handler thread has read it); the
    # backoff without a Retry-After would be milliseconds
    assert 0.9 <= second.at - first.at < 5.0


@pytest.mark.asyncio
@pytest.mark.parametrize("server", ["anthropic", "openai-chat-completions", "gemini", "ollama"], indirect=True)
async def test_retry_after_as_an_http_date_is_waited_out(server: tuple[FakeServer, dict[str, Any]]) -> None:
    fake = server[0]
    fake.always = Turn(status=429, retry_after_date=email.utils.formatdate(time.time() + 2, usegmt=True))
    provider = await asyncio.to_thread(_provider, server, 1)
    try:
        _, error = await run_until_error(provider, timeout=20)
    finally:
        await provider.aclose()
    first, second = fake.generation_requests
    assert error.kind == "rate_limited"
    assert 0.5 <= second.at - first.at < 5.0  # the date has whole seconds: between 1 and 2 s from the first


@pytest.mark.asyncio
@pytest.mark.parametrize("server", NAMES, indirect=True)
async def test_a_400_is_never_retried(server: tuple[FakeServer, dict[str, Any]]) -> None:
    fake = server[0]
    fake.always = Turn(status=400)
    provider = await asyncio.to_thread(_provider, server)
    try:
        _, error = await run_until_error(provider)
    finally:
        await provider.aclose()
    assert len(fake.generation_requests) == 1
    assert error.kind in ("bad_request", "no_tool_support")


@pytest.mark.asyncio
@pytest.mark.parametrize("server", NAMES, indirect=True)
async def test_a_connection_dropped_before_any_output_is_retried(server: tuple[FakeServer, dict[str, Any]]) -> None:
    fake = server[0]
    fake.queue(Turn(cut_after_text=True), Turn(text=["Back."]))
    provider = await asyncio.to_thread(_provider, server)
    try:
        turn = await run_turn(provider)
    finally:
        await provider.aclose()
    assert turn.text == "Back."
    assert len(fake.generation_requests) == 2


@pytest.mark.asyncio
@pytest.mark.parametrize("server", NAMES, indirect=True)
async def test_nothing_is_retried_once_output_was_streamed(server: tuple[FakeServer, dict[str, Any]]) -> None:
    fake = server[0]
    fake.always = Turn(text=["Hel", "lo"], cut_after_text=True)
    provider = await asyncio.to_thread(_provider, server)
    try:
        got, error = await run_until_error(provider)
    finally:
        await provider.aclose()
    assert got.text == "Hello"  # shown once, never twice
    assert error.kind in ("stream_cut", "connection")
    assert len(fake.generation_requests) == 1


@pytest.mark.asyncio
async def test_stop_ends_the_wait_at_once() -> None:
    with FakeAnthropic() as fake:
        fake.always = Turn(status=429, retry_after=50)
        provider = await asyncio.to_thread(provider_for, fake, max_retries=1)
        try:
            stream = provider.stream([], [])
            waiting = await asyncio.wait_for(stream.__anext__(), 10)  # the RetryWait before the wait
            assert waiting.type == "retry_wait" and waiting.seconds == 50
            task = asyncio.ensure_future(stream.__anext__())
            await asyncio.sleep(0)
            began = time.monotonic()
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            assert time.monotonic() - began < 1.0
            await stream.aclose()
        finally:
            await provider.aclose()
    assert len(fake.generation_requests) == 1


def _error(kind: str, **detail: Any) -> ProviderError:
    return ProviderError("x", kind, detail=detail)


def test_the_policy_waits_what_is_asked_backs_off_with_jitter_and_gives_up() -> None:
    policy = RetryPolicy.for_config(ProviderConfig("openai", "m", max_retries=3))
    assert policy.delay(_error("rate_limited", retry_after=7), 1) == 7
    assert policy.delay(_error("rate_limited", retry_after=3600), 1) is None  # longer than the cap: shown now
    assert policy.delay(_error("overloaded"), 1, jitter=lambda: 0.0) == 0.5
    assert policy.delay(_error("server_error"), 3, jitter=lambda: 1.0) == 4.0
    assert policy.delay(_error("server_error"), 4) is None  # past max_retries
    assert policy.delay(_error("bad_request", status=400), 1) is None
    assert policy.delay(_error("timeout"), 1) is None  # our own timeout: the person waited it already
    assert policy.delay(_error("timeout", status=504), 1, jitter=lambda: 1.0) == 1.0
    assert RetryPolicy(max_retries=30).delay(_error("connection"), 30, jitter=lambda: 1.0) == 20.0  # capped
