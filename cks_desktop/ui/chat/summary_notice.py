"""The "Earlier messages were summarised" row, collapsed.

When a chat outgrows the model's window the loop has the model summarise the earlier
exchanges and saves that summary as a notice row (``Notice.SUMMARY``): a head line
"Earlier messages were summarised (N messages)." and, after a blank line, the summary. The
summary is the model's text, long, and only interesting on demand, so the row shows the head
("Earlier messages were summarised — N messages") and a Show summary toggle; the summary is
shown as plain text (it is the model's words about the chat, never rendered as Markdown or HTML).
"""

from __future__ import annotations

import re

from PySide6.QtWidgets import QHBoxLayout, QToolButton, QWidget

from cks_desktop.ui.labels import plain_label

HEAD = "Earlier messages were summarised"
_COUNT = re.compile(r"^\s*\(([\d,]+) messages?\)")


def split_summary(text: str) -> tuple[str, str]:
    """(the collapsed head line, the summary text) of a summary notice's saved text (Qt-free)."""
    first, _sep, body = text.partition("\n\n")
    count = None
    if first.startswith(HEAD):
        match = _COUNT.match(first[len(HEAD):])
        if match:
            count = int(match.group(1).replace(",", ""))
    if count is None:
        head = first.strip().rstrip(".") or HEAD
    else:
        head = f"{HEAD} — {count:,} message{'' if count == 1 else 's'}"
    return head, body.strip()


class SummaryFold(QWidget):
    """The head line and the Show/Hide summary toggle; the message's text view is the body."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("summaryFold")
        row = QHBoxLayout(self)
        row.setContentsMargins(0, 0, 0, 0)
        row.setSpacing(6)
        self.head_label = plain_label("", name="summaryHead", wrap=True)
        row.addWidget(self.head_label, 1)
        self.toggle = QToolButton()
        self.toggle.setObjectName("summaryToggle")
        self.toggle.setCheckable(True)
        self.toggle.setAutoRaise(True)
        self.toggle.setToolTip("Show or hide the summary the model wrote of the earlier messages")
        self.toggle.toggled.connect(self._label)
        row.addWidget(self.toggle)
        self._label(False)

    def _label(self, expanded: bool) -> None:
        self.toggle.setText("Hide summary" if expanded else "Show summary")
        self.toggle.setAccessibleName(self.toggle.text())

    @property
    def expanded(self) -> bool:
        return self.toggle.isChecked()

    def set_head(self, head: str, has_body: bool) -> None:
        self.head_label.setText(head)
        self.toggle.setVisible(has_body)
