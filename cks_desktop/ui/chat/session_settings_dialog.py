"""The session settings panel: this session's instructions (system prompt) and model parameters.

Reached from the session's context menu (Chat settings…) and Chat → Session settings…. Empty
fields mean "the default": Settings → Chat & agent's temperature and max output tokens,
shown as the fields' placeholders, else the provider's own. Save checks every value through
the core (``agent.session_settings``) and shows its one sentence under the fields; nothing is
written until all are valid. Opened with ``open()``, never ``exec()``: the loop keeps running.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QFormLayout, QLineEdit, QPlainTextEdit, QVBoxLayout,
                               QWidget)

from cks_desktop.agent.session_settings import (MAX_TOKENS_RANGE, TEMPERATURE_RANGE, SessionSettingsError,
                                                SessionSettingsStore, default_params)
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
        self._store = SessionSettingsStore(store)
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

    def save(self) -> bool:
        try:
            self._store.set(self.session_id, instructions=self.instructions.toPlainText(),
                            temperature=self.temperature.text(), max_output_tokens=self.max_tokens.text())
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
