"""Every failure becomes one ProviderError with a kind and one clear sentence, on every adapter."""

from __future__ import annotations

import asyncio
import socket

import pytest

from cks_desktop.llm.factory import adapter_for
from cks_desktop.llm.messages import Message
from cks_desktop.llm.provider import ProviderConfig, ProviderError

from tests.fakes.gemini_fake import BAD_KEY_BODY
from tests.fakes.server import FakeServer
from tests.fakes.ollama_fake import FakeOllama
from tests.fakes.providers import PROVIDER_NAMES
from tests.fakes.script import Turn, text_turn
from tests.llm.support import TOOLS, opened, run_turn, run_until_error

pytestmark = pytest.mark.asyncio
providers = pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
DISPLAY = {"anthropic": "Anthropic", "ollama": "Ollama", "openai": "the OpenAI-compatible server",
           "gemini": "Gemini"}


def _one_sentence(error: ProviderError) -> None:
    assert error.message == str(error)
    assert error.message.endswith((".", "?")) and "\n" not in error.message
    assert "Traceback" not in error.message and "{" not in error.message


@providers
async def test_mid_stream_error_keeps_the_text_already_sent(fake: FakeServer, provider_name: str) -> None:
    fake.queue(Turn(text=["Partial ", "answer"], error_mid_stream="overloaded_error"))
    async with opened(fake) as provider:
        received, error = await run_until_error(provider)
    assert received.text == "Partial answer"
    expected = "server_error" if provider_name == "ollama" else "overloaded"
    assert error.kind == expected and error.retryable
    _one_sentence(error)


async def test_anthropic_mid_stream_error_arrives_with_status_200() -> None:
    from tests.fakes.anthropic_fake import FakeAnthropic

    with FakeAnthropic() as fake:
        fake.queue(Turn(text=["x"], error_mid_stream="rate_limit_error"))
        async with opened(fake) as provider:
            _, error = await run_until_error(provider)
    assert error.kind == "rate_limited"
    assert error.detail["status"] == 200
    assert "(200)" not in error.message


@providers
async def test_rate_limited_then_success_with_sdk_retries(fake: FakeServer) -> None:
    fake.queue(Turn(status=429, retry_after=0.01), text_turn("Finally."))
    async with opened(fake, max_retries=2) as provider:
        turn = await run_turn(provider)
    assert turn.text == "Finally."
    assert len(fake.generation_requests) == 2


@providers
async def test_rate_limited_without_retries_says_when(fake: FakeServer, provider_name: str) -> None:
    fake.queue(Turn(status=429, retry_after=30))
    async with opened(fake) as provider:
        _, error = await run_until_error(provider)
    assert error.kind == "rate_limited" and error.retryable
    # Ollama's SDK drops the headers: its adapter reads them off the HTTP answer itself
    assert error.message == f"{DISPLAY[provider_name][0].upper()}{DISPLAY[provider_name][1:]} is rate limiting " \
                            "requests (429); try again in 30 seconds."
    assert len(fake.generation_requests) == 1


@providers
async def test_server_error_before_streaming(fake: FakeServer) -> None:
    fake.queue(Turn(status=500))
    async with opened(fake) as provider:
        _, error = await run_until_error(provider)
    assert error.kind == "server_error" and "(500)" in error.message
    _one_sentence(error)


async def test_anthropic_overloaded_529() -> None:
    from tests.fakes.anthropic_fake import FakeAnthropic

    with FakeAnthropic() as fake:
        fake.queue(Turn(status=529))
        async with opened(fake) as provider:
            _, error = await run_until_error(provider)
    assert error.kind == "overloaded"
    assert error.message == "Anthropic is overloaded right now (529); try again in a moment."


@providers
async def test_rejected_key(fake: FakeServer, provider_name: str) -> None:
    fake.queue(Turn(status=401))
    async with opened(fake) as provider:
        _, error = await run_until_error(provider)
    assert error.kind == "auth" and not error.retryable
    display = DISPLAY[provider_name]
    who = f"The API key for {display}" if display.startswith("the ") else f"The {display} API key"
    assert error.message == f"{who} was rejected (401). Check it in Settings → Providers."


async def test_gemini_reports_a_bad_key_as_400_api_key_invalid() -> None:
    from tests.fakes.gemini_fake import FakeGemini

    with FakeGemini() as fake:
        fake.queue(Turn(status=400, error_body=BAD_KEY_BODY))
        async with opened(fake) as provider:
            _, error = await run_until_error(provider)
    assert error.kind == "auth"
    assert error.message == "The Gemini API key was rejected (400). Check it in Settings → Providers."


@providers
async def test_unknown_model_is_named(fake: FakeServer) -> None:
    fake.queue(Turn(status=404))
    async with opened(fake, model="no-such-model") as provider:
        _, error = await run_until_error(provider)
    assert error.kind == "model_not_found"
    assert "“no-such-model”" in error.message and "(404)" in error.message
    _one_sentence(error)


@providers
async def test_connection_refused(provider_name: str) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}" + ("/v1" if provider_name == "openai" else "")
    provider = adapter_for(ProviderConfig(provider_name, "m", url, "test", timeout=5, max_retries=0))
    try:
        _, error = await run_until_error(provider)
    finally:
        await provider.aclose()
    assert error.kind == "connection" and error.retryable
    assert error.message == f"Could not reach {DISPLAY[provider_name]} at {url} — is it running?"


@providers
async def test_stream_cut_midway(fake: FakeServer) -> None:
    fake.queue(Turn(text=["Half an ", "answer"], cut_after_text=True))
    async with opened(fake) as provider:
        received, error = await run_until_error(provider)
    assert received.text == "Half an answer"
    assert error.kind == "stream_cut"
    assert "broke off in the middle of the answer" in error.message


@providers
async def test_stalled_stream_times_out(fake: FakeServer) -> None:
    fake.queue(Turn(text=["Thinking"], stall_after_text=True))
    async with opened(fake, timeout=0.3) as provider:
        received, error = await run_until_error(provider)
    assert fake.stalled.is_set()
    assert received.text == "Thinking"
    assert error.kind == "timeout"
    assert "did not answer within 0.3 seconds" in error.message


@providers
async def test_stop_while_streaming_cancels_cleanly(fake: FakeServer) -> None:
    fake.queue(Turn(text=["Still going"], stall_after_text=True), text_turn("next"))
    async with opened(fake, timeout=30) as provider:
        task = asyncio.ensure_future(run_turn(provider))
        loop = asyncio.get_running_loop()
        assert await asyncio.wait_for(loop.run_in_executor(None, fake.stalled.wait, 10), 15)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # the provider is still usable after a Stop
        assert (await run_turn(provider)).text == "next"


async def test_ollama_model_without_tool_support() -> None:
    with FakeOllama(models_without_tools={"llama2"}) as fake:
        fake.queue(text_turn("Plain answer."))
        async with opened(fake, model="llama2") as provider:
            _, error = await run_until_error(provider, tools=TOOLS)
            assert error.kind == "no_tool_support" and not error.retryable
            assert error.message == "llama2 does not support tools; pick a model that does."
            turn = await run_turn(provider, [Message.user("hi")], tools=[])  # without tools it answers
    assert turn.text == "Plain answer."


async def test_ollama_busy_503_is_retried_before_the_first_chunk() -> None:
    with FakeOllama() as fake:
        fake.queue(Turn(status=503), Turn(status=503), text_turn("ok"))
        async with opened(fake, max_retries=2) as provider:
            turn = await run_turn(provider)
    assert turn.text == "ok" and len(fake.generation_requests) == 3
