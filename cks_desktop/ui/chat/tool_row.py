"""One tool call in the chat: a collapsed line that expands to the full story.

Collapsed: icon, display name (MCP: server · tool), a one-line summary of the
arguments, and the state (waiting for approval, running with elapsed time,
done with duration, error, denied, cancelled). Expanded: the full arguments and
the full result as selectable monospace text with copy buttons. The detail
widgets are built on first expand, so a long chat stays cheap to open.
"""

from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase, QGuiApplication, QMouseEvent, QPalette, QResizeEvent
from PySide6.QtWidgets import (QFrame, QHBoxLayout, QLabel, QPlainTextEdit, QPushButton, QSizePolicy, QStyle,
                               QToolButton, QVBoxLayout, QWidget)

from cks_desktop.ui.chat.model import STATE_WORDS, RowState, ToolItem
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import format_duration, plain_tooltip, pretty_json, summarize_arguments
from cks_desktop.untrusted_text import reveal

DETAIL_MAX_HEIGHT = 320

# Set once on the chat's container (a style sheet per row would cost a millisecond each).
ROW_STYLE = """
QFrame#toolCallRow { border: 1px solid palette(mid); border-radius: 4px; }
QFrame#toolCallRow[kind="error"] { border: 1px solid #d9534f; border-left: 4px solid #d9534f;
                                   background: rgba(217, 83, 79, 0.10); }
QFrame#toolCallRow[kind="error"] QLabel#toolCallState { color: #d9534f; font-weight: bold; }
QFrame#toolCallRow[kind="muted"] QLabel#toolCallState { font-style: italic; }
QFrame#toolCallRow[kind="attention"] { border: 1px solid palette(highlight); }
QFrame#toolCallRow[kind="attention"] QLabel#toolCallState { font-weight: bold; }
"""


def state_text(item: ToolItem) -> str:
    if item.reverted:
        return "reverted"
    words = STATE_WORDS[item.state]
    if item.state is RowState.RUNNING:
        elapsed = item.elapsed_ms()
        return f"running {format_duration(elapsed)}" if elapsed is not None and elapsed >= 1000 else "running…"
    if item.state in (RowState.DONE, RowState.ERROR) and item.duration_ms is not None:
        return f"{words} · {format_duration(item.duration_ms)}"
    return words


class _ElidedLabel(QLabel):
    """One line that ends in "…" when it does not fit (the full text is in the tooltip)."""

    def __init__(self) -> None:
        super().__init__()
        self._full = ""
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def set_full_text(self, text: str) -> None:
        self._full = text
        self.setToolTip(plain_tooltip(text))
        self._elide()

    def full_text(self) -> str:
        return self._full

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        self.setText(self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, max(self.width(), 10)))


# Qt lays out a line as a whole: one 200 kB line (a long document passed to construct_knowledge,
# a minified JSON result) took 2–5 s to show. Longer lines are shown broken every LINE_CHUNK
# characters; the Copy button still copies the text exactly.
LINE_CHUNK = 2000


def displayable(text: str) -> str:
    lines = text.split("\n")
    if all(len(line) <= LINE_CHUNK for line in lines):
        return text
    out: list[str] = []
    for line in lines:
        if len(line) <= LINE_CHUNK:
            out.append(line)
        else:
            out.extend(line[i:i + LINE_CHUNK] for i in range(0, len(line), LINE_CHUNK))
    return "\n".join(out)


class _TextBlock(QWidget):
    """A caption, a copy button and a read-only monospace text, sized to its content."""

    def __init__(self, caption: str, text: str, object_name: str) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        head = QHBoxLayout()
        label = plain_label(caption)
        font = label.font()
        font.setBold(True)
        label.setFont(font)
        head.addWidget(label)
        head.addStretch(1)
        self.copy_button = QPushButton("Copy")
        self.copy_button.setObjectName(f"{object_name}Copy")
        self.copy_button.setToolTip(plain_tooltip(f"Copy the {caption.lower()} to the clipboard"))
        self.copy_button.setAutoDefault(False)
        self.copy_button.clicked.connect(self._copy)
        head.addWidget(self.copy_button)
        layout.addLayout(head)
        self.view = QPlainTextEdit()
        self.view.setObjectName(object_name)
        self.view.setAccessibleName(caption)
        self.view.setReadOnly(True)
        self.view.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse
                                          | Qt.TextInteractionFlag.TextSelectableByKeyboard)
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.view.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.view.setTabChangesFocus(True)
        layout.addWidget(self.view)
        self.set_text(text)

    def set_text(self, text: str) -> None:
        if getattr(self, "_text", None) != text:
            self._text = text
            self.view.setPlainText(displayable(text))
        lines = max(1, min(text.count("\n") + 1, 18))
        height = self.view.fontMetrics().lineSpacing() * lines + 14
        self.view.setFixedHeight(min(DETAIL_MAX_HEIGHT, height))

    def _copy(self) -> None:
        QGuiApplication.clipboard().setText(self._text)  # the original, without display breaks


class ToolCallRow(QFrame):
    revertRequested = Signal(object)  # the ToolItem
    toggled = Signal(bool)
    activated = Signal(object)  # the ToolItem: the header was clicked (show its objects in the graph)

    def __init__(self, item: ToolItem, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.item = item
        self._expanded = False
        self.setObjectName("toolCallRow")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Maximum)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(6, 3, 6, 3)
        outer.setSpacing(4)

        header = QHBoxLayout()
        header.setSpacing(6)
        self.toggle_button = QToolButton()
        self.toggle_button.setObjectName("toolCallToggle")
        self.toggle_button.setArrowType(Qt.ArrowType.RightArrow)
        self.toggle_button.setAutoRaise(True)
        self.toggle_button.setCheckable(True)
        self.toggle_button.setAccessibleName("Show details")
        self.toggle_button.toggled.connect(self.set_expanded)
        self.toggle_button.clicked.connect(lambda: self.activated.emit(self.item))
        header.addWidget(self.toggle_button)
        self.icon_label = plain_label()
        header.addWidget(self.icon_label)
        self.name_label = plain_label()
        font = self.name_label.font()
        font.setBold(True)
        self.name_label.setFont(font)
        header.addWidget(self.name_label)
        self.summary_label = _ElidedLabel()
        muted = self.summary_label.palette()  # the palette's muted colour, in light and dark themes
        muted.setColor(QPalette.ColorRole.WindowText, muted.color(QPalette.ColorRole.PlaceholderText))
        self.summary_label.setPalette(muted)
        header.addWidget(self.summary_label, 1)
        self.state_label = plain_label()
        self.state_label.setObjectName("toolCallState")
        header.addWidget(self.state_label)
        self.revert_button = QPushButton("Revert")
        self.revert_button.setObjectName("revertButton")
        self.revert_button.setToolTip("Undo the change this call made to the graph")
        self.revert_button.setAutoDefault(False)
        self.revert_button.clicked.connect(lambda: self.revertRequested.emit(self.item))
        header.addWidget(self.revert_button)
        outer.addLayout(header)

        self.details: QWidget | None = None
        self.arguments_block: _TextBlock | None = None
        self.result_block: _TextBlock | None = None
        self._outer = outer
        self.refresh()

    # -- state -----------------------------------------------------------------
    def is_expanded(self) -> bool:
        return self._expanded

    def set_expanded(self, expanded: bool) -> None:
        if expanded == self._expanded:
            return
        self._expanded = expanded
        self.toggle_button.setChecked(expanded)
        self.toggle_button.setArrowType(Qt.ArrowType.DownArrow if expanded else Qt.ArrowType.RightArrow)
        self.toggle_button.setAccessibleName("Hide details" if expanded else "Show details")
        if expanded and self.details is None:
            self._build_details()
        if self.details is not None:
            self.details.setVisible(expanded)
        self.setProperty("expanded", expanded)
        self._update_accessibility()
        self.toggled.emit(expanded)

    def _build_details(self) -> None:
        self.details = QWidget()
        layout = QVBoxLayout(self.details)
        layout.setContentsMargins(22, 0, 0, 2)
        self.arguments_block = _TextBlock("Arguments", self._arguments_text(), "toolCallArguments")
        layout.addWidget(self.arguments_block)
        self.result_block = _TextBlock("Result", self._result_text(), "toolCallResult")
        layout.addWidget(self.result_block)
        self._outer.addWidget(self.details)

    def _arguments_text(self) -> str:
        args = self.item.arguments
        return "(the arguments were not valid JSON)" if args is None else pretty_json(args)

    def _result_text(self) -> str:
        if self.item.result is None:
            return "(no result yet)"
        return pretty_json(self.item.result) if self.item.result.lstrip()[:1] in "{[" else self.item.result

    def refresh(self) -> None:
        """Re-read the item (state changed, result arrived, reverted)."""
        item = self.item
        # a tool's name and arguments come from a model or a server: bidi and invisible characters show
        self.name_label.setText(reveal(item.display_name))
        self.summary_label.set_full_text("" if item.arguments is None else reveal(summarize_arguments(item.arguments)))
        self.state_label.setText(state_text(item))
        if item.revert_error:
            self.state_label.setToolTip(plain_tooltip(f"Revert failed: {item.revert_error}"))
        self.revert_button.setVisible(item.can_revert)
        style = self.style()
        if item.state.failed:
            icon = QStyle.StandardPixmap.SP_MessageBoxWarning
        elif item.state in (RowState.DENIED, RowState.CANCELLED):
            icon = QStyle.StandardPixmap.SP_DialogCancelButton
        elif item.source.startswith("mcp:"):
            icon = QStyle.StandardPixmap.SP_DriveNetIcon
        else:
            icon = QStyle.StandardPixmap.SP_FileDialogDetailedView
        size = self.fontMetrics().height()
        self.icon_label.setPixmap(style.standardIcon(icon).pixmap(size, size))
        if item.state.failed:
            kind = "error"
        elif item.state is RowState.PENDING_APPROVAL:
            kind = "attention"
        elif item.state in (RowState.DENIED, RowState.CANCELLED) or item.reverted:
            kind = "muted"
        else:
            kind = "normal"
        if self.property("kind") != kind:
            self.setProperty("kind", kind)
            style.unpolish(self)
            style.polish(self)
        if self.arguments_block is not None and self.result_block is not None:
            self.arguments_block.set_text(self._arguments_text())
            self.result_block.set_text(self._result_text())
        self._update_accessibility()

    def tick(self) -> None:
        """Called every second while running: update the elapsed time."""
        if self.item.state is RowState.RUNNING:
            self.state_label.setText(state_text(self.item))

    def _update_accessibility(self) -> None:
        self.setAccessibleName(f"Tool call {self.item.display_name}")
        self.setAccessibleDescription(f"{state_text(self.item)}; {'expanded' if self._expanded else 'collapsed'}")

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        # A click anywhere on the header line toggles, like a disclosure triangle.
        if event.button() == Qt.MouseButton.LeftButton and event.position().y() < self.toggle_button.height() + 6:
            self.set_expanded(not self._expanded)
            self.activated.emit(self.item)
            event.accept()
            return
        super().mouseReleaseEvent(event)
