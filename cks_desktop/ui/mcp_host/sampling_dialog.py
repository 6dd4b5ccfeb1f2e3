"""The dialogs for an MCP server's ``sampling/createMessage``: the request first, the answer after.

``SamplingRequestDialog`` shows what the server wants the person's model to read: the server,
its model preferences, the tools it offers the model, the system prompt, every message and the
maximum length of the answer. The system prompt, the text-only messages and the maximum are
editable (what the model then reads is the edited request). Deny has the focus; Esc and closing
the window are Deny. ``SamplingReplyDialog`` shows the model's answer (and any tool calls it
made) before it goes back: Send, or Don't send. Everything from the server or the model is
plain text with hidden characters revealed.
"""

from __future__ import annotations

import json

from PySide6.QtCore import Qt
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QFormLayout,
    QHBoxLayout,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from cks_desktop.mcp.host import MAX_SAMPLING_TOKENS, SamplingReply, SamplingRequest
from cks_desktop.ui.labels import plain_label
from cks_desktop.untrusted_text import reveal


def _text_box(text: str, *, editable: bool, name: str) -> QPlainTextEdit:
    box = QPlainTextEdit()
    box.setObjectName(name)
    box.setPlainText(text if editable else reveal(text))
    box.setReadOnly(not editable)
    lines = max(2, min(8, text.count("\n") + 2))
    box.setFixedHeight(box.fontMetrics().lineSpacing() * lines + 16)
    return box


class SamplingRequestDialog(QDialog):
    def __init__(self, request: SamplingRequest, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.request = request
        self.allowed = False
        self.setObjectName("samplingRequestDialog")
        self.setWindowTitle(f"{reveal(request.server)} asks for a completion")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.setMinimumWidth(520)
        layout = QVBoxLayout(self)
        heading = plain_label(f"The MCP server '{reveal(request.server)}' asks your model for a completion.",
                              name="samplingServer", wrap=True)
        heading.setProperty("cksRole", "heading")
        layout.addWidget(heading)
        layout.addWidget(plain_label("The model reads what is below, with your provider and account. Edit it if "
                                     "you like; you see the answer before it is sent back.", wrap=True))
        facts = QFormLayout()
        if request.model_preferences:
            facts.addRow("Model preferences", plain_label(reveal(request.model_preferences), wrap=True))
        if request.tools:
            facts.addRow("Tools offered", plain_label(reveal(", ".join(request.tools)), wrap=True))
        self.max_tokens = QSpinBox()
        self.max_tokens.setObjectName("samplingMaxTokens")
        self.max_tokens.setRange(1, MAX_SAMPLING_TOKENS)
        self.max_tokens.setValue(request.max_tokens)
        facts.addRow("Max tokens", self.max_tokens)
        layout.addLayout(facts)

        body = QWidget()
        inner = QVBoxLayout(body)
        inner.addWidget(plain_label("System prompt"))
        self.system_box = _text_box(request.system_prompt, editable=True, name="samplingSystem")
        inner.addWidget(self.system_box)
        self.turn_boxes: list[QPlainTextEdit] = []
        for i, turn in enumerate(request.turns):
            inner.addWidget(plain_label(f"{'Assistant' if turn.role == 'assistant' else 'User'} message {i + 1}"
                                        + ("" if turn.editable else " (tool use or media: not editable)")))
            box = _text_box(turn.text, editable=turn.editable, name=f"samplingTurn{i}")
            self.turn_boxes.append(box)
            inner.addWidget(box)
        scroll = QScrollArea()
        scroll.setWidgetResizable(True)
        scroll.setWidget(body)
        layout.addWidget(scroll, 1)

        row = QHBoxLayout()
        row.addStretch(1)
        self.deny_button = QPushButton("Deny")
        self.deny_button.setObjectName("samplingDeny")
        self.deny_button.clicked.connect(self.reject)
        self.run_button = QPushButton("Run")
        self.run_button.setObjectName("samplingRun")
        self.run_button.setAutoDefault(False)
        self.run_button.clicked.connect(self._run)
        row.addWidget(self.deny_button)
        row.addWidget(self.run_button)
        layout.addLayout(row)

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        super().showEvent(event)
        self.deny_button.setFocus(Qt.FocusReason.OtherFocusReason)

    def _run(self) -> None:
        self.allowed = True
        self.accept()

    def edited_request(self) -> SamplingRequest:
        texts = {i: box.toPlainText() for i, box in enumerate(self.turn_boxes) if self.request.turns[i].editable}
        return self.request.edited(system_prompt=self.system_box.toPlainText(), texts=texts,
                                   max_tokens=self.max_tokens.value())


class SamplingReplyDialog(QDialog):
    def __init__(self, server: str, reply: SamplingReply, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.send = False
        self.setObjectName("samplingReplyDialog")
        self.setWindowTitle(f"Answer for {reveal(server)}")
        self.setWindowModality(Qt.WindowModality.WindowModal)
        self.setMinimumWidth(480)
        layout = QVBoxLayout(self)
        layout.addWidget(plain_label(f"{reveal(reply.model)} answered. Send this to the MCP server "
                                     f"'{reveal(server)}'?", name="samplingReplyHeading", wrap=True))
        shown = reply.text
        if reply.tool_uses:
            calls = "\n".join(f"{u.name} {json.dumps(u.input, ensure_ascii=False)}" for u in reply.tool_uses)
            shown = (shown + "\n\n" if shown else "") + "Tool calls:\n" + calls
        self.answer_box = _text_box(shown or "(no text)", editable=False, name="samplingAnswer")
        self.answer_box.setFixedHeight(self.answer_box.fontMetrics().lineSpacing() * 12 + 16)
        layout.addWidget(self.answer_box)
        row = QHBoxLayout()
        row.addStretch(1)
        self.discard_button = QPushButton("Don't send")
        self.discard_button.setObjectName("samplingDiscard")
        self.discard_button.clicked.connect(self.reject)
        self.send_button = QPushButton("Send")
        self.send_button.setObjectName("samplingSend")
        self.send_button.setAutoDefault(False)
        self.send_button.clicked.connect(self._send)
        row.addWidget(self.discard_button)
        row.addWidget(self.send_button)
        layout.addLayout(row)

    def _send(self) -> None:
        self.send = True
        self.accept()
