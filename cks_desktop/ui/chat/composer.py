"""Where the person writes: the input, Send/Stop, and the provider/model picker.

Enter sends and Shift+Enter starts a new line, or the reverse (Settings →
Chat, ``ui.enter_sends``). Ctrl+Enter always sends. Esc asks to stop.

The model box (issue 13, section 3) is a picker: its list holds the provider's known model
(its profile's default and the one in the settings) and, after Fetch models (the provider's
``list_models``, offered when its profile says it can list), every model it named. What is
typed is checked (``model_problem``) and applied only on Enter or a choice from the list,
never on each keystroke or when the box loses focus. A well-formed name the fetched list
does not contain is applied on a second Enter, after a sentence saying so.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import (QComboBox, QHBoxLayout, QPlainTextEdit, QPushButton, QSizePolicy, QToolButton,
                               QVBoxLayout, QWidget)

from cks_desktop.agent.events import ContextUsage
from cks_desktop.ui.labels import plain_label

from cks_desktop.ui import theme
from cks_desktop.ui.chat.context_meter import ContextMeter
from cks_desktop.llm.profiles import PROFILES
from cks_desktop.plural import counted
from cks_desktop.ui.text import plain_tooltip


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
    fetchModelsRequested = Signal()

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
        model_edit = self.model_box.lineEdit()
        assert model_edit is not None  # an editable combo box always has one
        model_edit.setPlaceholderText("model")
        self.model_box.setMinimumContentsLength(14)
        self.model_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        # The chat dock is about 330 px wide at 1280×800: the provider keeps a readable name and
        # the model box takes the rest; Fetch models (and the MCP Attach) are icon buttons.
        self.provider_box.setMinimumContentsLength(9)
        self.provider_box.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        bottom.addWidget(self.provider_box)
        bottom.addWidget(self.model_box, 1)
        self.fetch_button = QToolButton()
        self.fetch_button.setObjectName("fetchModelsButton")
        self.fetch_button.setText("Fetch models")
        self.fetch_button.setAccessibleName("Fetch models")
        self.fetch_button.setToolTip("Fetch models: ask the provider which models it has, and list them here")
        self.fetch_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        theme.bind_icon(self.fetch_button, "arrows-clockwise")
        self.fetch_button.setAutoRaise(True)
        self.fetch_button.clicked.connect(self.fetchModelsRequested)
        bottom.addWidget(self.fetch_button)
        self.context_meter = ContextMeter()  # how full the context is (issue 16); hidden until known
        bottom.addWidget(self.context_meter)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("sendButton")
        self.send_button.setAutoDefault(False)
        self.send_button.setToolTip("Send (Enter or Ctrl+Enter)")
        theme.set_role(self.send_button, "primary")  # the accent button (ui/theme)
        bottom.addWidget(self.send_button)
        layout.addLayout(bottom)
        self.model_hint = plain_label("", name="modelHint", wrap=True)
        self.model_hint.hide()
        layout.addWidget(self.model_hint)

        self._running = False
        # MCP hooks (ui/chat/slash_commands.py): a submit hook that returns True takes the text
        # (a slash command opens its form); decorators add to the message (attached resources).
        self.submit_hooks: list[Callable[[str], bool]] = []
        self.message_decorators: list[Callable[[str], str]] = []
        self._fetched: list[str] = []  # what Fetch models returned for the shown provider
        self._confirm: str | None = None  # a typed name outside the fetched list, Enter once already
        self._syncing = False
        self._shown: tuple[str, str] = ("", "")
        self.send_button.clicked.connect(self._button_clicked)
        self.input.submitted.connect(self.submit)
        self.input.stopRequested.connect(self.stopClicked)
        self.provider_box.activated.connect(self._provider_activated)
        model_edit.installEventFilter(self)  # Enter applies (eventFilter); focus-out does not
        self.model_box.activated.connect(lambda _i: self._model_edited(chosen=True))
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
        if any(hook(text) for hook in self.submit_hooks):
            return
        for decorate in self.message_decorators:
            text = decorate(text)
        self.input.clear()
        self.sendClicked.emit(text)

    def set_running(self, running: bool) -> None:
        self._running = running
        self.send_button.setText("Stop" if running else "Send")
        self.send_button.setAccessibleName("Stop the answer" if running else "Send the message")
        self.send_button.setToolTip("Stop (Esc)" if running else "Send (Enter or Ctrl+Enter)")

    def show_context(self, usage: ContextUsage | None) -> None:
        """The shown session's last measured request (None: nothing known, the meter hides)."""
        self.context_meter.show_usage(usage)

    # -- provider / model --------------------------------------------------------
    def show_provider(self, name: str, model: str, models: list[str] | None = None) -> None:
        self._syncing = True
        try:
            index = self.provider_box.findData(name)
            if name != self._shown[0]:
                self._fetched = []  # another provider: its list is not this one's
            self.provider_box.setCurrentIndex(index)
            if models is not None:
                self._fetched = sorted(dict.fromkeys(m for m in models if m))
            profile = PROFILES.get(name)
            known = self._fetched or [m for m in dict.fromkeys([model, profile.default_model if profile else ""]) if m]
            self.model_box.clear()
            self.model_box.addItems(known)
            self.model_box.setEditText(model)
            edit = self.model_box.lineEdit()
            if edit is not None:
                edit.setCursorPosition(0)  # a narrow box shows the name's start ("claude-son…"), not its tail
            self._shown = (name, model)
            self._confirm = None
        finally:
            self._syncing = False
        self._hint("")
        self.fetch_button.setEnabled(self._can_list())

    def _provider_activated(self, _index: int) -> None:
        name = self.provider_box.currentData()
        if not self._syncing and name != self._shown[0]:
            self._shown = (name, "")
            self.providerChosen.emit(name, "")

    def eventFilter(self, obj: QObject, event: QEvent) -> bool:  # noqa: N802
        # Enter in the model box, taken here once: an editable QComboBox passes an Enter its line
        # edit did not take on to itself and back, so ``returnPressed`` would fire twice and a
        # "press Enter again" check would pass on one press.
        if obj is self.model_box.lineEdit() and isinstance(event, QKeyEvent) \
                and event.type() == QEvent.Type.KeyPress and event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter):
            self._model_edited(chosen=False)
            return True
        return super().eventFilter(obj, event)

    def _model_edited(self, *, chosen: bool = False) -> None:
        """Enter or a choice: check the name, then apply it (never on a keystroke or focus-out)."""
        if self._syncing:
            return
        name = self.provider_box.currentData()
        model = self.model_box.currentText().strip()
        problem = model_problem(model)
        if problem is None and not chosen and self._fetched and model not in self._fetched \
                and self._confirm != model:
            self._confirm = model
            problem = (f"{model} is not among the {counted(len(self._fetched), 'model')} the provider listed; "
                       "press Enter again to use it anyway.")
        if problem is not None:
            self._hint(problem)
            return
        self._confirm = None
        self._hint("")
        if name and (name, model) != self._shown:
            self._shown = (name, model)
            self.providerChosen.emit(name, model)

    def _hint(self, text: str) -> None:
        self.model_hint.setText(text)
        self.model_hint.setVisible(bool(text))
        self.model_box.setToolTip(plain_tooltip(text or "Model: type a name and press Enter, or pick one from the list"))

    def set_models(self, models: list[str]) -> None:
        """The provider's list (Fetch models): offered in the box, the typed text kept."""
        self._fetched = sorted(dict.fromkeys(m for m in models if m))
        self._fill(self._fetched)
        self._hint("" if self._fetched else "The provider listed no models.")

    def set_fetching(self, fetching: bool, problem: str = "") -> None:
        self.fetch_button.setEnabled(not fetching and self._can_list())
        self.fetch_button.setText("Fetching…" if fetching else "Fetch models")
        if problem:
            self._hint(problem)

    def _can_list(self) -> bool:
        profile = PROFILES.get(self.provider_box.currentData() or "")
        return profile is not None and profile.can_list_models

    def _fill(self, models: list[str]) -> None:
        text = self.model_box.currentText()
        self._syncing = True
        try:
            self.model_box.clear()
            self.model_box.addItems(models)
            self.model_box.setEditText(text)
        finally:
            self._syncing = False


def model_problem(model: str) -> str | None:
    """Why ``model`` cannot be a model name (one sentence), or None when it can."""
    if not model:
        return "Type a model name, or pick one from the list (Fetch models fills it)."
    if any(c.isspace() or not c.isprintable() for c in model):
        return f"A model name has no spaces or control characters: {model!r}."
    if len(model) > 200:
        return "That model name is longer than 200 characters."
    return None
