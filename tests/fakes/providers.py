"""One door to the four fake servers, for tests that run a scenario on every provider.

    from tests.fakes.providers import PROVIDER_NAMES, make_fake, provider_for
    from tests.fakes.script import Turn, call_turn, text_turn

    @pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
    @pytest.mark.asyncio
    async def test_something(provider_name):
        with make_fake(provider_name) as fake:          # a started server on 127.0.0.1:<free port>
            fake.queue(call_turn("add_object", {"name": "Alice"}), text_turn("Done."))
            provider = provider_for(fake)               # the real adapter + SDK, pointed at the fake
            try:
                ...                                     # stream / ai_chat / respond_json
            finally:
                await provider.aclose()
            fake.requests[-1].body                      # what the SDK sent (parsed JSON)

Or in one line: ``async with fake_provider("gemini", text_turn("hi")) as (fake, provider): ...``

``provider_for`` builds the adapter with api_key "test", ``max_retries=0`` and a
short timeout unless told otherwise; pass ``max_retries=2`` to let the adapter's stream
retry (``llm/retry.py``; its backoff without a Retry-After is set to a few milliseconds). Wire names in
``Turn``s are what the model sends; the fakes never check the key.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from cks_desktop.llm.factory import adapter_for
from cks_desktop.llm.provider import Provider, ProviderConfig

from tests.fakes.anthropic_fake import FakeAnthropic
from tests.fakes.gemini_fake import FakeGemini
from tests.fakes.server import FakeServer
from tests.fakes.ollama_fake import FakeOllama
from tests.fakes.openai_fake import FakeOpenAI

PROVIDER_NAMES = ["anthropic", "ollama", "openai", "gemini"]
FAKES: dict[str, type[FakeServer]] = {
    "anthropic": FakeAnthropic,
    "ollama": FakeOllama,
    "openai": FakeOpenAI,
    "gemini": FakeGemini,
}


def make_fake(name: str, **kwargs: Any) -> FakeServer:
    """A started fake for provider ``name`` (use it in a ``with`` block to stop it)."""
    return FAKES[name](**kwargs).start()


def provider_config_for(fake: FakeServer, *, model: str | None = None, max_retries: int = 0,
                        timeout: float = 5.0, api_key: str | None = "test",
                        options: dict[str, Any] | None = None) -> ProviderConfig:
    merged: dict[str, Any] = {"retry_first_s": 0.005}
    merged.update(options or {})
    return ProviderConfig(name=fake.name, model=model or fake.default_model, base_url=fake.base_url,
                          api_key=api_key, timeout=timeout, max_retries=max_retries, options=merged)


def provider_for(fake: FakeServer, **kwargs: Any) -> Provider:
    """The real adapter for ``fake.name``, talking to ``fake`` (see ``provider_config_for``)."""
    return adapter_for(provider_config_for(fake, **kwargs))


@asynccontextmanager
async def fake_provider(name: str, *turns: Any, fake_kwargs: dict[str, Any] | None = None,
                        **kwargs: Any) -> AsyncIterator[tuple[FakeServer, Provider]]:
    """A started fake with ``turns`` queued and the real adapter pointed at it; both closed after."""
    with make_fake(name, **(fake_kwargs or {})) as fake:
        fake.queue(*turns)
        provider = provider_for(fake, **kwargs)
        try:
            yield fake, provider
        finally:
            await provider.aclose()
