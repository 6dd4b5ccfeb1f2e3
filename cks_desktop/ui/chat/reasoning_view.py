"""The model's thinking above its answer, collapsed: "Thought for 12 s".

Reasoning models think before they answer (Anthropic's extended thinking, Ollama's
``thinking``, OpenAI-compatible ``reasoning_content``, Gemini's thought summaries). It is
never part of the answer's text; the chat shows it as one line above the answer — "Thinking…"
while it streams, then "Thought for 12 s" — with a toggle that shows the thinking itself as
plain text (it is the model's words, never rendered as Markdown or HTML). Colours come from the
sheet's theme tokens (``ui/chat/sheet.py``: ``reasoningView``, ``reasoningToggle``,
``reasoningText``).

While the model thinks the line counts the seconds ("Thinking… 4 s"), from a ``QTimer`` that
ticks once a second on the event loop (nothing waits) and stops as soon as the state says the
thinking is over (the answer started, the turn ended or was stopped).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QFrame, QToolButton, QVBoxLayout, QWidget

from cks_desktop.agent.reasoning import headline
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import plain_tooltip


class ReasoningView(QFrame):
    """The toggle line and, when expanded, the thinking's text."""

    TICK_MS = 1000  # how often the "Thinking… N s" counter updates

    def __init__(self, parent: QWidget | None = None, *, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(parent)
        self._clock = clock
        self._since: float | None = None  # when the thinking began (the counter runs while set)
        self.ticker = QTimer(self)
        self.ticker.setInterval(self.TICK_MS)
        self.ticker.timeout.connect(self._tick)
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
        if thinking and self._since is None:
            self._since = self._clock()
            self.ticker.start()
        elif not thinking:
            self._since = None
            self.ticker.stop()
        self._show(headline(seconds, thinking) if not thinking else self._counting())
        self._thought = text
        self.toggle.setEnabled(bool(text))
        self._expand(self.expanded)

    def _expand(self, expanded: bool) -> None:
        self.toggle.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        if expanded and self.text.text() != self._thought:
            self.text.setText(self._thought)
        self.text.setVisible(expanded and bool(self._thought))

    def _counting(self) -> str:
        """"Thinking…", then "Thinking… 4 s" once a whole second has passed."""
        elapsed = int(self._clock() - self._since) if self._since is not None else 0
        return headline(None, True) + (f" {elapsed} s" if elapsed >= 1 else "")

    def _tick(self) -> None:
        if self._since is None:  # a tick queued before the stop
            self.ticker.stop()
            return
        self._show(self._counting())

    def _show(self, line: str) -> None:
        self._headline = line
        self.toggle.setText(line)
        self.toggle.setAccessibleName(line)
