"""The provider holder: made on first use, reused, closed when the settings change (Qt-free)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cks_desktop.llm.provider import ProviderError
from cks_desktop.settings import Settings
from cks_desktop.agent.providers import ProviderHolder

from tests.fakes.scripted import ScriptedProvider


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.load(tmp_path / "settings.json")


@pytest.mark.asyncio
async def test_no_provider_is_one_clear_sentence(settings: Settings) -> None:
    holder = ProviderHolder(settings, None, lambda *_a: ScriptedProvider())
    assert not holder.configured and holder.label() == "No provider"
    with pytest.raises(ProviderError, match="Settings → Providers"):
        async with holder.use():
            pass


@pytest.mark.asyncio
async def test_reused_until_the_settings_change_then_closed_after_use(settings: Settings) -> None:
    made: list[ScriptedProvider] = []

    def factory(name: str, _settings: Settings, _secrets: object) -> ScriptedProvider:
        made.append(ScriptedProvider(name=name))
        return made[-1]

    holder = ProviderHolder(settings, None, factory)
    changes: list[bool] = []
    holder.subscribe(lambda: changes.append(True))
    holder.choose("ollama", "qwen3")
    assert holder.label() == "Ollama · qwen3" and changes == [True]
    assert Settings.load(settings.path).provider("ollama")["model"] == "qwen3"  # saved
    async with holder.use() as first:
        async with holder.use() as again:
            assert again is first  # one client for every chat
        holder.choose("anthropic")  # changed while a chat still streams
        assert not first.closed  # …so it is closed only when that chat lets go
    async with holder.use() as second:
        assert second is not first and second.profile.name == "anthropic"
    await holder.aclose()
    assert first.closed and second.closed and len(made) == 2
