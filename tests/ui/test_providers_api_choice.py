"""Settings → Providers → OpenAI-compatible → API: Chat Completions or the Responses API
(OpenAI's reasoning summaries exist only in the Responses API). The choice is saved as the
provider's ``api`` setting, and the factory then builds the Responses adapter from it."""

from __future__ import annotations

from pathlib import Path

from cks_desktop.llm.factory import create_provider
from cks_desktop.llm.providers.openai_responses import OpenAIResponsesProvider
from cks_desktop.secrets import SecretStore
from cks_desktop.settings import Settings
from cks_desktop.ui.settings.providers_page import ProviderForm
from cks_desktop.ui.tasks import TaskTracker


def test_the_api_choice_is_saved_and_builds_the_responses_adapter(qtbot, tmp_path: Path) -> None:
    settings = Settings.load(tmp_path / "settings.json")
    form = ProviderForm("openai", settings, SecretStore(secure=False), TaskTracker())
    qtbot.addWidget(form)
    assert form.api_box is not None and form.api_box.currentData() == ""
    ollama = ProviderForm("ollama", settings, SecretStore(secure=False), TaskTracker())
    qtbot.addWidget(ollama)
    assert form.api_box.toolTip() and ollama.api_box is None
    form.api_box.setCurrentIndex(form.api_box.findData("responses"))
    form.save(settings)
    settings.save()
    reloaded = Settings.load(tmp_path / "settings.json")
    assert reloaded.provider("openai")["api"] == "responses"
    provider = create_provider("openai", reloaded, None, api_key="k")
    assert isinstance(provider, OpenAIResponsesProvider)
    form.api_box.setCurrentIndex(0)
    form.save(settings)
    assert "api" not in settings.provider("openai")
