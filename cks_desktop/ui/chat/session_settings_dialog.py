"""The session settings panel: this session's instructions (system prompt) and model parameters.

Thinking: "Think before answering" — as in Settings, on or off — and a
thinking budget in tokens where the provider takes one (Anthropic's ``budget_tokens``,
Gemini's ``thinking_budget``; OpenAI's and Ollama's levels are derived from it).

Reached from the session's context menu (Chat settings…) and Chat → Session settings…. Empty
fields mean "the default": Settings → Chat & agent's temperature and max output tokens,
shown as the fields' placeholders, else the provider's own. Save checks every value through
the core (``agent.session_settings``) and shows its one sentence under the fields; nothing is
written until all are valid. Opened with ``open()``, never ``exec()``: the loop keeps running.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QComboBox, QDialog, QDialogButtonBox, QFormLayout, QLineEdit, QPlainTextEdit,
                               QVBoxLayout, QWidget)

from cks_desktop.agent.session_settings import SessionSettingsError, SessionSettingsStore, default_params
from cks_desktop.settings.sections import MAX_TOKENS_RANGE, REASONING_BUDGET_RANGE, TEMPERATURE_RANGE
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import plain_tooltip

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.settings import Settings


def _number(value: float | int | None) -> str:
    return "" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


class SessionSettingsDialog(QDialog):
    saved = Signal(str)  # the session id

    def __init__(self, store: "GraphStore", settings: "Settings", session_id: str,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sessionSettingsDialog")
        self.session_id = session_id
        self._settings = settings
        self._store = SessionSettingsStore(store, settings)
        title = store.get_session(session_id).title
        self.setWindowTitle(f"Chat settings — {title}")
        self.resize(560, 420)
        current = self._store.get(session_id)
        defaults = default_params(settings)
        layout = QVBoxLayout(self)
        layout.addWidget(plain_label("Instructions for the assistant in this session (they come last in its "
                                     "system prompt, so they win where they disagree):", wrap=True))
        self.instructions = QPlainTextEdit(current.instructions)
        self.instructions.setObjectName("sessionInstructions")
        self.instructions.setPlaceholderText("e.g. Answer in French. Use the type Person for people.")
        layout.addWidget(self.instructions, 1)
        form = QFormLayout()
        self.temperature = QLineEdit(_number(current.temperature))
        self.temperature.setObjectName("sessionTemperature")
        self.temperature.setPlaceholderText(f"default: {_number(defaults.temperature) or 'the provider’s'}")
        self.temperature.setToolTip(plain_tooltip(f"From {TEMPERATURE_RANGE[0]:g} to {TEMPERATURE_RANGE[1]:g}; empty: the default"))
        form.addRow("Temperature:", self.temperature)
        self.max_tokens = QLineEdit(_number(current.max_output_tokens))
        self.max_tokens.setObjectName("sessionMaxTokens")
        self.max_tokens.setPlaceholderText(f"default: {_number(defaults.max_output_tokens) or 'the provider’s'}")
        self.max_tokens.setToolTip(plain_tooltip(f"From {MAX_TOKENS_RANGE[0]} to {MAX_TOKENS_RANGE[1]:,}; empty: the default"))
        form.addRow("Max output tokens:", self.max_tokens)
        self.reasoning = QComboBox()
        self.reasoning.setObjectName("sessionReasoning")
        default_word = "on" if defaults.reasoning else "off"
        for text, value in ((f"As in Settings ({default_word})", None), ("On", True), ("Off", False)):
            self.reasoning.addItem(text, value)
        self.reasoning.setCurrentIndex({None: 0, True: 1, False: 2}[current.reasoning])
        self.reasoning.setToolTip(plain_tooltip(
            "Ask the model to think before it answers (models that can). Its thinking is shown "
            "collapsed above the answer, never in it."))
        form.addRow("Think before answering:", self.reasoning)
        self.reasoning_budget = QLineEdit(_number(current.reasoning_budget))
        self.reasoning_budget.setObjectName("sessionReasoningBudget")
        self.reasoning_budget.setPlaceholderText(
            f"default: {_number(defaults.reasoning_budget) or 'the provider’s'}")
        self.reasoning_budget.setToolTip(plain_tooltip(
            f"Tokens the model may think for, from {REASONING_BUDGET_RANGE[0]} to {REASONING_BUDGET_RANGE[1]:,}; "
            "empty: the default. Anthropic needs at least 1,024; OpenAI and Ollama take it as low, "
            "medium or high."))
        form.addRow("Thinking budget (tokens):", self.reasoning_budget)
        self._add_budget_rows(form, session_id)
        layout.addLayout(form)
        layout.addWidget(plain_label("Defaults: Settings → Chat & agent. Changes apply from the next message.",
                                     wrap=True))
        self.error_label = plain_label("", name="sessionSettingsError", wrap=True)
        self.error_label.hide()
        layout.addWidget(self.error_label)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        buttons.accepted.connect(self.save)
        buttons.rejected.connect(self.reject)
        self.save_button = buttons.button(QDialogButtonBox.StandardButton.Save)
        self.save_button.setObjectName("sessionSettingsSave")
        layout.addWidget(buttons)

    def _add_budget_rows(self, form: QFormLayout, session_id: str) -> None:
        """The answer's budget (``agent/budget.py``): tokens and/or US dollars per answer."""
        from cks_desktop.agent.budget import session_budget

        budget = session_budget(self._settings, session_id)
        self.budget_tokens = QLineEdit("" if budget.tokens is None else str(budget.tokens))
        self.budget_tokens.setObjectName("sessionBudgetTokens")
        self.budget_tokens.setPlaceholderText("no limit")
        self.budget_tokens.setToolTip(plain_tooltip(
            "Input and output tokens one answer may use over all its model turns; when it is reached the "
            "answer ends with a notice and Continue. Empty: no limit."))
        form.addRow("Budget per answer (tokens):", self.budget_tokens)
        self.budget_cost = QLineEdit("" if budget.cost_usd is None else f"{budget.cost_usd:g}")
        self.budget_cost.setObjectName("sessionBudgetCost")
        self.budget_cost.setPlaceholderText("no limit")
        self.budget_cost.setToolTip(plain_tooltip(
            "US dollars one answer may cost; needs the model's price (Settings → Chat & agent → Prices). "
            "Empty: no limit."))
        form.addRow("Budget per answer (US$):", self.budget_cost)

    def save(self) -> bool:
        from cks_desktop.agent.budget import BudgetError, check_cost, check_tokens, set_session_budget

        try:
            check_tokens(self.budget_tokens.text())
            check_cost(self.budget_cost.text())
        except BudgetError as exc:  # checked before anything is written
            self.error_label.setText(str(exc))
            self.error_label.show()
            return False
        try:
            self._store.set(self.session_id, instructions=self.instructions.toPlainText(),
                            temperature=self.temperature.text(), max_output_tokens=self.max_tokens.text(),
                            reasoning=self.reasoning.currentData(), reasoning_budget=self.reasoning_budget.text())
            set_session_budget(self._settings, self.session_id, self.budget_tokens.text(), self.budget_cost.text())
            self._settings.save()  # the thinking choice and the budget live in the settings file
        except SessionSettingsError as exc:
            self.error_label.setText(str(exc))
            self.error_label.show()
            return False
        except Exception as exc:  # a locked or damaged file: one sentence, the dialog stays open
            self.error_label.setText(f"The settings could not be saved: {exc}")
            self.error_label.show()
            return False
        self.saved.emit(self.session_id)
        self.accept()
        return True
