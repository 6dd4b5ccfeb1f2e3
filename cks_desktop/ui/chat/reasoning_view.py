"""The model's thinking above its answer, collapsed: "Thought for 12 s" (issue 16, section 2).

Reasoning models think before they answer (Anthropic's extended thinking, Ollama's
``thinking``, OpenAI-compatible ``reasoning_content``, Gemini's thought summaries). It is
never part of the answer's text; the chat shows it as one line above the answer — "Thinking…"
while it streams, then "Thought for 12 s" — with a toggle that shows the thinking itself as
plain text (it is the model's words, never rendered as Markdown or HTML). Colours come from the
sheet's theme tokens (``ui/chat/sheet.py``: ``reasoningView``, ``reasoningToggle``,
``reasoningText``).
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QFrame, QToolButton, QVBoxLayout, QWidget

from cks_desktop.agent.reasoning import headline
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import plain_tooltip


class ReasoningView(QFrame):
    """The toggle line and, when expanded, the thinking's text."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("reasoningView")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(8, 0, 0, 0)
        layout.setSpacing(2)
        self.toggle = QToolButton()
        self.toggle.setObjectName("reasoningToggle")
        self.toggle.setCheckable(True)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle.setToolTip(plain_tooltip("Show or hide what the model thought before it answered"))
        self.toggle.toggled.connect(self._expand)
        layout.addWidget(self.toggle, 0, Qt.AlignmentFlag.AlignLeft)
        self.text = plain_label("", name="reasoningText", wrap=True, selectable=True)
        self.text.setAccessibleName("The model's thinking")
        self.text.hide()
        layout.addWidget(self.text)
        self._headline = ""
        self._thought = ""  # set on the label only while expanded: a long thinking streams in many pieces
        self.set_state("", None, False)

    @property
    def expanded(self) -> bool:
        return self.toggle.isChecked()

    @property
    def headline(self) -> str:
        return self._headline

    @property
    def thought(self) -> str:
        """The thinking's words (shown in ``text`` when expanded)."""
        return self._thought

    def set_state(self, text: str, seconds: float | None, thinking: bool) -> None:
        """What the model thought so far, how long, and whether it still is thinking."""
        self._headline = headline(seconds, thinking)
        self.toggle.setText(self._headline)
        self.toggle.setAccessibleName(self._headline)
        self._thought = text
        self.toggle.setEnabled(bool(text))
        self._expand(self.expanded)

    def _expand(self, expanded: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        if expanded and self.text.text() != self._thought:
            self.text.setText(self._thought)
        self.text.setVisible(expanded and bool(self._thought))
