"""a session's instructions and model parameters reach every provider's request.

Each provider is its real adapter and SDK talking to its protocol-faithful fake server; what
the SDK sent is read from the fake (``requests[-1].body``), so the names each API uses
(Anthropic ``max_tokens``, OpenAI-compatible ``max_tokens``, Ollama ``options.num_predict``,
Gemini ``generationConfig.maxOutputTokens``) are checked on the wire, not in our own objects.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.agent.session_settings import (SessionSettingsError, SessionSettingsStore, default_params,
                                                set_default_params)
from cks_desktop.paths import resolve
from cks_desktop.runtime import AppServices
from cks_desktop.secrets import SecretStore
from cks_desktop.tools.approval import Decision, StaticApprover

from tests.fakes.providers import PROVIDER_NAMES, make_fake, provider_for
from tests.fakes.script import text_turn

TIMEOUT = 60


def _sampling(name: str, body: dict[str, Any]) -> tuple[Any, Any]:
    """(temperature, max output tokens) as each wire protocol carries them."""
    if name == "anthropic":
        return body.get("temperature"), body.get("max_tokens")
    if name == "openai":
        return body.get("temperature"), body.get("max_tokens", body.get("max_completion_tokens"))
    if name == "ollama":
        options = body.get("options") or {}
        return options.get("temperature"), options.get("num_predict")
    config = body.get("generationConfig") or {}
    return config.get("temperature"), config.get("maxOutputTokens")


def _system_text(body: dict[str, Any]) -> str:
    return json.dumps({k: body.get(k) for k in ("system", "messages", "systemInstruction")}, ensure_ascii=False)


@pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
@pytest.mark.asyncio
async def test_session_settings_reach_the_request_body(provider_name: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with make_fake(provider_name) as fake:
        services = AppServices.open(resolve(home), secrets=SecretStore(secure=False),
                                    provider_factory=lambda *_a: provider_for(fake))
        services.settings.default_provider = provider_name
        try:
            sid = services.store.create_session("Tuned").id
            approver = StaticApprover(Decision.ALLOW)
            # Nothing set anywhere: nothing is sent, the provider's defaults apply.
            fake.queue(text_turn("Plain."))
            await asyncio.wait_for(services.assistant.run(sid, "hello", approver=approver), TIMEOUT)
            temperature, _tokens = _sampling(provider_name, fake.generation_requests[-1].body)
            assert temperature is None
            # The app's defaults (Settings → Chat & agent) apply to a session without its own.
            set_default_params(services.settings, 0.9, 777)
            fake.queue(text_turn("Defaults."))
            await asyncio.wait_for(services.assistant.run(sid, "again", approver=approver), TIMEOUT)
            assert _sampling(provider_name, fake.generation_requests[-1].body) == (0.9, 777)
            # The session's own values win, and its instructions are in the system prompt.
            SessionSettingsStore(services.store).set(sid, instructions="Answer like a ship's captain.",
                                                     temperature="0.25", max_output_tokens="321")
            fake.queue(text_turn("Aye."))
            await asyncio.wait_for(services.assistant.run(sid, "and now?", approver=approver), TIMEOUT)
            body = fake.generation_requests[-1].body
            assert _sampling(provider_name, body) == (0.25, 321)
            assert "Answer like a ship's captain." in _system_text(body)
        finally:
            await services.aclose()


def test_bad_values_get_one_sentence_and_nothing_is_written(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    services = AppServices.open(resolve(home), secrets=SecretStore(secure=False))
    try:
        sid = services.store.create_session("Checked").id
        store = SessionSettingsStore(services.store)
        store.set(sid, instructions="Be brief.", temperature=0.5, max_output_tokens=100)
        for temperature, tokens, needle in [("hot", None, "must be a number"), (3, None, "from 0 to 2"),
                                            (None, "lots", "whole number"), (None, 0, "from 1 to")]:
            with pytest.raises(SessionSettingsError, match=needle):
                store.set(sid, instructions="Changed.", temperature=temperature, max_output_tokens=tokens)
        kept = store.get(sid)
        assert (kept.instructions, kept.temperature, kept.max_output_tokens) == ("Be brief.", 0.5, 100)
        store.set(sid, instructions="", temperature="", max_output_tokens="")  # empty: back to the defaults
        assert store.get(sid).params.empty
        services.settings.data["agent"]["temperature"] = "warm"  # a hand-edited file: ignored, not fatal
        assert default_params(services.settings).temperature is None
    finally:
        asyncio.run(services.aclose())
