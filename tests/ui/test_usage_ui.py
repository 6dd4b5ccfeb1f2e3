"""tokens and cost on each answer and for the session, the prices
editor in Settings → Chat & agent, and a session's budget with its notice and Continue.

A real window on a real data folder, the real Anthropic adapter against the fake server (11 input
and 7 output tokens a model turn); reopening is a second window on the same folder."""

from __future__ import annotations

import pytest
from PySide6.QtCore import Qt

from cks_desktop.settings import Settings
from cks_desktop.ui.chat.message_widget import MessageWidget

from tests.fakes.script import call_turn, text_turn
from tests.ui.conftest import open_window
from tests.ui.helpers import wait
from tests.ui.test_chat_features import _item, _widget
from tests.ui.test_settings import make_dialog, services  # noqa: F401 - the fixture

PRICE = {"input": 1000.0, "output": 2000.0}  # 22 in + 14 out → $0.022 + $0.028


@pytest.mark.asyncio
async def test_an_answer_shows_its_tokens_and_cost_and_the_session_its_total(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(call_turn("graph_summary", {}), text_turn("Done."), text_turn("Again."))
    async with open_window(home, fake=anthropic_fake) as window:
        window.services.settings.data["agent"]["prices"] = {anthropic_fake.default_model: PRICE}
        window.sidebar.create_session()
        panel = window.chat_panel
        from tests.ui.test_window import _send

        await wait(_send(window, qtbot, "Summarize"))
        answer = _item(panel, "assistant")
        assert answer.text == "Done." and answer.usage_line == "22 in · 14 out · $0.0500"
        widget = _widget(panel, answer)
        assert isinstance(widget, MessageWidget)
        assert widget.usage_label.isVisibleTo(widget) and widget.usage_label.text() == answer.usage_line
        tip = widget.usage_label.toolTip()
        assert "Input: 22 tokens" in tip and "2 model turns" in tip and "Cost: $0.0500" in tip
        assert panel.usage_label.isVisibleTo(panel) and panel.usage_label.text().startswith("Session: 22 in")
        await wait(_send(window, qtbot, "Once more"))
        assert _item(panel, "assistant").usage_line == "11 in · 7 out · $0.0250"
        assert _item(panel, "assistant", 0).usage_line == "22 in · 14 out · $0.0500"  # each its own
        assert panel.usage_label.text() == "Session: 33 in · 21 out · $0.0750"
        sid = panel.controller.session_id
    async with open_window(home, fake=anthropic_fake) as window:
        window.services.settings.data["agent"].pop("prices", None)  # no price: tokens only, said on hover
        window.sidebar.select(sid)
        panel = window.chat_panel
        panel.controller.load()
        first = _item(panel, "assistant", 0)
        assert first.usage_line == "22 in · 14 out" and "no price for" in first.usage_tip
        assert panel.usage_label.text() == "Session: 33 in · 21 out"


def test_prices_editor_checks_and_saves(qtbot, services) -> None:  # noqa: F811 - the fixture
    dialog = make_dialog(qtbot, services)
    table = dialog.agent_page.prices
    table.add_row("my-local-model", {"input": "abc", "output": "1"})
    assert not dialog.save()
    assert any("input price of my-local-model" in p for p in dialog.errors())
    table.set_prices({"my-local-model": {"input": 0.5, "output": 1.5}, "openai/qwen": {"input": 0, "output": 0}})
    assert dialog.save()
    saved = Settings.load(services.settings.path)
    assert saved.data["agent"]["prices"] == {"my-local-model": {"input": 0.5, "output": 1.5},
                                             "openai/qwen": {"input": 0.0, "output": 0.0}}
    again = make_dialog(qtbot, services)
    assert [key for key, _ in again.agent_page.prices.rows()] == ["my-local-model", "openai/qwen"]
    again.agent_page.prices.set_prices({})
    assert again.save() and "prices" not in Settings.load(services.settings.path).data["agent"]


@pytest.mark.asyncio
async def test_a_session_budget_ends_the_answer_with_continue(qtbot, home, anthropic_fake) -> None:
    anthropic_fake.queue(*[call_turn("graph_summary", {}) for _ in range(3)], text_turn("Finished."))
    async with open_window(home, fake=anthropic_fake) as window:
        window.sidebar.create_session()
        panel = window.chat_panel
        window.session_settings_action.trigger()
        dialog = panel.session_dialog
        assert dialog is not None
        dialog.budget_tokens.setText("lots")
        assert not dialog.save() and "token budget" in dialog.error_label.text()
        dialog.budget_tokens.setText("30")
        qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
        assert not dialog.isVisible()
        from tests.ui.test_window import _send, _texts

        await wait(_send(window, qtbot, "Go"))
        assert len(anthropic_fake.generation_requests) == 2  # 18 + 18 tokens ≥ 30
        assert any("Reached this answer's budget" in t for t in _texts(window, "notice"))
        assert panel.limit_banner.isVisibleTo(panel) and "budget" in panel.limit_label.text()
        window.session_settings_action.trigger()
        panel.session_dialog.budget_tokens.setText("")
        assert panel.session_dialog.save()
        qtbot.mouseClick(panel.continue_button, Qt.MouseButton.LeftButton)
        await wait(panel.controller.task)
        assert _texts(window, "assistant")[-1] == "Finished."


@pytest.mark.asyncio
async def test_the_wait_notice_shows_while_rate_limited_and_goes(qtbot, home) -> None:
    """A 429 with retry-after: the chat shows "waiting N s (rate limited)" during the wait, then the
    answer; the notice is gone and never saved."""
    from tests.fakes.providers import make_fake, provider_for
    from tests.fakes.script import Turn
    from tests.ui.helpers import model_future

    with make_fake("openai") as fake:
        fake.queue(Turn(status=429, retry_after=0.3), text_turn("Here."))

        def factory(_name, _settings, _secrets):
            return provider_for(fake, max_retries=2)

        async with open_window(home, factory=factory, provider="openai") as window:
            window.sidebar.create_session()
            panel = window.chat_panel
            from tests.ui.test_window import _send, _texts

            seen = model_future(panel.model, lambda m: any("waiting" in t and "(rate limited)" in t
                                                           for t in _texts(window, "notice")))
            task = _send(window, qtbot, "Hi")
            await wait(seen)
            await wait(task)
            assert _texts(window, "assistant") == ["Here."]
            assert not any("waiting" in t for t in _texts(window, "notice"))
            panel.controller.load()
            assert not any("waiting" in t for t in _texts(window, "notice"))
