"""Settings → Providers reads the provider profiles: names, key variables, URLs, capabilities."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from cks_desktop.llm import profiles
from cks_desktop.secrets import SecretStore
from cks_desktop.settings import Settings
from cks_desktop.ui.settings.providers_page import ProviderForm, ProvidersPage
from cks_desktop.ui.tasks import TaskTracker


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.load(tmp_path / "settings.json")


def test_tabs_keys_and_hints_come_from_the_profiles(qtbot, settings: Settings,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    for env in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "set")  # the second of Gemini's variables: the factory uses it
    page = ProvidersPage(settings, SecretStore(secure=False), TaskTracker())
    qtbot.addWidget(page)
    assert [page.tabs.tabText(i) for i in range(page.tabs.count())] == \
        [p.display_name for p in profiles.PROFILES.values()]
    assert page.forms["ollama"].key_edit is None and page.forms["ollama"].num_ctx is not None
    assert page.forms["anthropic"].num_ctx is None
    assert "GOOGLE_API_KEY is set in the environment" in page.forms["gemini"].key_status.text()
    assert page.forms["openai"].url_edit.placeholderText().startswith("empty: https://api.openai.com/v1 — or your")
    assert not page.forms["openai"].fetch_button.isHidden()


def test_a_provider_that_cannot_list_models_offers_no_fetch(qtbot, settings: Settings,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(profiles.PROFILES, "ollama",
                        dataclasses.replace(profiles.OLLAMA, can_list_models=False))
    form = ProviderForm("ollama", settings, SecretStore(secure=False), TaskTracker())
    qtbot.addWidget(form)
    assert form.fetch_button.isHidden()
