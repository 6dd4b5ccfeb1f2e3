"""the ``context_window`` setting in settings.json reaches the window lookup.

``docs/llm-providers.md`` tells people to set ``providers.<name>.context_window``; the factory
used to pass on only each profile's own options (Ollama's ``num_ctx``), so the setting was
read by nobody. A real settings file and the real factory.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cks_desktop.llm.factory import create_provider, provider_config
from cks_desktop.llm.windows import window_for
from cks_desktop.settings import Settings


@pytest.mark.asyncio
@pytest.mark.parametrize("name", ["anthropic", "openai", "gemini", "ollama"])
async def test_the_context_window_setting_is_the_window(name: str, tmp_path: Path) -> None:
    settings = Settings.load(tmp_path / "settings.json")
    settings.provider(name)["context_window"] = 12_345
    settings.save()
    settings = Settings.load(tmp_path / "settings.json")
    assert (provider_config(name, settings, None, api_key="k").options or {}).get("context_window") == 12_345
    provider = create_provider(name, settings, None, api_key="k")
    try:
        assert await window_for(provider) == 12_345  # first match: no server is asked
    finally:
        await provider.aclose()
