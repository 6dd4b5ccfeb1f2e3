"""the per-session thinking switch and budget, default off, with the app's
default from Settings → Chat & agent, reaching the real request of every provider.

The app's own services (``AppServices``: store, settings file, assistant) run a turn against
each provider's fake; what the SDK sent is read from the fake, so each API's own names are
checked on the wire (Anthropic ``thinking.budget_tokens``, Ollama ``think``, OpenAI-compatible
``reasoning_effort``, Gemini ``generationConfig.thinkingConfig``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.agent.session_settings import (SessionSettingsError, SessionSettingsStore, default_params,
                                                set_default_reasoning)
from cks_desktop.paths import resolve
from cks_desktop.runtime import AppServices
from cks_desktop.secrets import SecretStore
from cks_desktop.settings import Settings
from cks_desktop.tools.approval import Decision, StaticApprover

from tests.fakes.providers import PROVIDER_NAMES, make_fake, provider_for
from tests.fakes.script import Turn

TIMEOUT = 60


def _thinking(name: str, body: dict[str, Any]) -> Any:
    """What each wire protocol carries for "think" (None: nothing asked)."""
    if name == "anthropic":
        return body.get("thinking")
    if name == "ollama":
        return body.get("think")
    if name == "openai":
        return body.get("reasoning_effort")
    config = (body.get("generationConfig") or {}).get("thinkingConfig")
    return None if config is None else {k.replace("_", "").lower(): v for k, v in config.items()}


ON = {"anthropic": {"type": "enabled", "budget_tokens": 8192}, "ollama": True, "openai": "medium",
      "gemini": {"includethoughts": True}}
BUDGET = {"anthropic": {"type": "enabled", "budget_tokens": 20_000}, "ollama": True, "openai": "high",
          "gemini": {"includethoughts": True, "thinkingbudget": 20_000}}


@pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
@pytest.mark.asyncio
async def test_the_switch_and_budget_reach_the_request(provider_name: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with make_fake(provider_name) as fake:
        services = AppServices.open(resolve(home), secrets=SecretStore(secure=False),
                                    provider_factory=lambda *_a: provider_for(fake))
        services.settings.default_provider = provider_name
        approver = StaticApprover(Decision.ALLOW)
        try:
            sid = services.store.create_session("Thinks").id

            async def turn() -> Any:
                fake.queue(Turn(thinking=["hm"], text=["ok"]))
                await asyncio.wait_for(services.assistant.run(sid, "hello", approver=approver), TIMEOUT)
                return _thinking(provider_name, fake.generation_requests[-1].body)

            assert await turn() is None  # default off: nothing asked
            set_default_reasoning(services.settings, True)  # Settings → Chat & agent: on
            assert await turn() == ON[provider_name]
            store = SessionSettingsStore(services.store, services.settings)
            store.set(sid, instructions="", reasoning=False)  # the session's own choice wins
            assert await turn() is None
            store.set(sid, instructions="", reasoning=True, reasoning_budget="20,000")
            assert await turn() == BUDGET[provider_name]
            # the choice is kept in the settings file, so it survives a restart
            services.settings.save()
            reread = Settings.load(services.settings.path)
            kept = SessionSettingsStore(services.store, reread).get(sid)
            assert (kept.reasoning, kept.reasoning_budget) == (True, 20_000)
        finally:
            await services.aclose()


def test_bad_budgets_get_one_sentence_and_nothing_is_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    services = AppServices.open(resolve(home), secrets=SecretStore(secure=False))
    try:
        sid = services.store.create_session("Checked").id
        store = SessionSettingsStore(services.store, services.settings)
        store.set(sid, instructions="Be brief.", reasoning=True, reasoning_budget=4000)
        for budget, needle in [("lots", "whole number"), (0, "from 1 to"), (10**7, "is outside"), (True, "from 1")]:
            with pytest.raises(SessionSettingsError, match=needle):
                store.set(sid, instructions="Changed.", reasoning=False, reasoning_budget=budget)
        kept = store.get(sid)
        assert (kept.instructions, kept.reasoning, kept.reasoning_budget) == ("Be brief.", True, 4000)
        store.set(sid, instructions="", reasoning=None, reasoning_budget="")  # back to the default
        assert store.get(sid).reasoning is None and sid not in services.settings.data.get("agent", {}).get("session_reasoning", {})
        services.settings.data["agent"]["reasoning"] = {"enabled": "yes", "budget": "big"}  # hand-edited: ignored
        params = default_params(services.settings)
        assert params.reasoning is False and params.reasoning_budget is None
    finally:
        asyncio.run(services.aclose())


def test_the_servers_reasoning_options_come_from_the_provider_settings(tmp_path: Path) -> None:
    """``reasoning_request`` / ``reasoning_echo`` (OpenAI-compatible) and ``think_level`` (Ollama)
    are keys of the provider's section in the settings file, passed to the adapter."""
    from cks_desktop.llm.factory import provider_config
    from cks_desktop.llm.providers.ollama import OllamaProvider
    from cks_desktop.llm.providers.openai_compat import OpenAICompatProvider
    from cks_desktop.llm.provider import GenerationParams

    settings = Settings.load(tmp_path / "settings.json")
    settings.provider("openai").update({"base_url": "http://127.0.0.1:9/v1", "reasoning_echo": "never",
                                        "reasoning_request": {"chat_template_kwargs": {"enable_thinking": True}}})
    settings.provider("ollama").update({"think_level": "low"})
    config = provider_config("openai", settings, None)
    assert config.options is not None and config.options["reasoning_echo"] == "never"
    request = OpenAICompatProvider(config).request([], [], None, None, GenerationParams(reasoning=True))
    assert request["extra_body"] == {"chat_template_kwargs": {"enable_thinking": True}}
    ollama = OllamaProvider(provider_config("ollama", settings, None))
    assert ollama.request([], [], None, None, GenerationParams(reasoning=True))["think"] == "low"
