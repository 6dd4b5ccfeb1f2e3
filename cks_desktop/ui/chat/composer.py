"""Where the person writes: the input, Send/Stop, and the provider/model picker.

Enter sends and Shift+Enter starts a new line, or the reverse (Settings →
Chat, ``ui.enter_sends``). Ctrl+Enter always sends. Esc asks to stop.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QPlainTextEdit, QPushButton, QSizePolicy,
                               QVBoxLayout, QWidget)

from cks_desktop.ui import theme
from cks_desktop.llm.profiles import PROFILES


MIN_LINES = 3
MAX_LINES = 10


class ChatInput(QPlainTextEdit):
    submitted = Signal()
    stopRequested = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatInput")
        self.setAccessibleName("Message to the assistant")
        self.setTabChangesFocus(True)
        self.enter_sends = True
        self._update_placeholder()
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.textChanged.connect(self._grow)
        self._grow()

    def _grow(self) -> None:
        """Three lines when empty, growing with the text up to ten, then it scrolls."""
        lines = max(MIN_LINES, min(MAX_LINES, self.document().lineCount()))
        margins = self.contentsMargins().top() + self.contentsMargins().bottom()
        height = self.fontMetrics().lineSpacing() * lines + int(2 * self.document().documentMargin()) + margins
        if height != self.height():
            self.setFixedHeight(height)

    def set_enter_sends(self, enter_sends: bool) -> None:
        self.enter_sends = enter_sends
        self._update_placeholder()

    def _update_placeholder(self) -> None:
        keys = "Enter to send, Shift+Enter for a new line" if self.enter_sends \
            else "Shift+Enter or Ctrl+Enter to send, Enter for a new line"
        self.setPlaceholderText(f"Ask about this session's graph… ({keys})")

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        key = event.key()
        if key == Qt.Key.Key_Escape:
            self.stopRequested.emit()
            event.accept()
            return
        if key in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            mods = event.modifiers()
            ctrl = bool(mods & Qt.KeyboardModifier.ControlModifier)
            shift = bool(mods & Qt.KeyboardModifier.ShiftModifier)
            if ctrl or (self.enter_sends and not shift) or (not self.enter_sends and shift):
                self.submitted.emit()
                event.accept()
                return
            if shift:  # Shift+Enter would insert a paragraph separator; make it a plain new line
                self.insertPlainText("\n")
                event.accept()
                return
        super().keyPressEvent(event)


class Composer(QWidget):
    sendClicked = Signal(str)
    stopClicked = Signal()
    providerChosen = Signal(str, str)  # provider, model

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 4, 6, 6)
        layout.setSpacing(4)
        self.input = ChatInput()
        layout.addWidget(self.input)

        bottom = QHBoxLayout()
        self.provider_box = QComboBox()
        self.provider_box.setObjectName("providerPicker")
        self.provider_box.setAccessibleName("Model provider")
        self.provider_box.setPlaceholderText("Provider…")
        for name, profile in PROFILES.items():
            self.provider_box.addItem(profile.display_name, name)
        self.model_box = QComboBox()
        self.model_box.setObjectName("modelPicker")
        self.model_box.setAccessibleName("Model")
        self.model_box.setEditable(True)
        self.model_box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model_box.lineEdit().setPlaceholderText("model")
        self.model_box.setMinimumContentsLength(14)
        self.model_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        bottom.addWidget(self.provider_box)
        bottom.addWidget(self.model_box, 1)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("sendButton")
        self.send_button.setAutoDefault(False)
        self.send_button.setToolTip("Send (Enter or Ctrl+Enter)")
        theme.set_role(self.send_button, "primary")  # the accent button (ui/theme)
        bottom.addWidget(self.send_button)
        layout.addLayout(bottom)

        self._running = False
        self._syncing = False
        self._shown: tuple[str, str] = ("", "")
        self.send_button.clicked.connect(self._button_clicked)
        self.input.submitted.connect(self.submit)
        self.input.stopRequested.connect(self.stopClicked)
        self.provider_box.activated.connect(self._provider_activated)
        self.model_box.lineEdit().editingFinished.connect(self._model_edited)
        self.model_box.activated.connect(lambda _i: self._model_edited())
        self.set_running(False)

    # -- send / stop -------------------------------------------------------------
    def _button_clicked(self) -> None:
        if self._running:
            self.stopClicked.emit()
        else:
            self.submit()

    def submit(self) -> None:
        if self._running:
            return
        text = self.input.toPlainText().strip()
        if not text:
            return
        self.input.clear()
        self.sendClicked.emit(text)

    def set_running(self, running: bool) -> None:
        self._running = running
        self.send_button.setText("Stop" if running else "Send")
        self.send_button.setAccessibleName("Stop the answer" if running else "Send the message")
        self.send_button.setToolTip("Stop (Esc)" if running else "Send (Enter or Ctrl+Enter)")

    # -- provider / model --------------------------------------------------------
    def show_provider(self, name: str, model: str, models: list[str] | None = None) -> None:
        self._syncing = True
        try:
            index = self.provider_box.findData(name)
            self.provider_box.setCurrentIndex(index)
            if models is not None:
                self.model_box.clear()
                self.model_box.addItems(models)
            self.model_box.setEditText(model)
            self._shown = (name, model)
        finally:
            self._syncing = False

    def _provider_activated(self, _index: int) -> None:
        name = self.provider_box.currentData()
        if not self._syncing and name != self._shown[0]:
            self._shown = (name, "")
            self.providerChosen.emit(name, "")

    def _model_edited(self) -> None:
        name = self.provider_box.currentData()
        model = self.model_box.currentText().strip()
        if not self._syncing and name and model and (name, model) != self._shown:
            self._shown = (name, model)
            self.providerChosen.emit(name, model)
