"""One tool call in the chat: a compact card that expands to the full story.

Collapsed (one line): a disclosure caret, an icon for the source (the app's graph tools, a
file tool, an MCP server's tool; the state's icon when it says more: failed, denied, waiting
for the person), the display name (MCP: server · tool), the call's most telling argument
(``summary.tool_summary``: ``ref="Irène Joliot-Curie"``, not the first characters of the
JSON), the state as a chip (waiting for your approval, running with elapsed time, done ·
728 ms, error · 1 ms, denied, cancelled) and Revert. The duration is the call's own time: the
loop leaves out the time the call waited for the person's approval.

Expanded: the arguments and the result as pretty, highlighted JSON (plain text when the
result is not JSON) in ``CodeBlock`` cards sized to their content up to ``DETAIL_MAX_HEIGHT``,
each with Copy. Copy copies the original: the arguments as the model's JSON value, the result
exactly as the tool returned it (not its pretty form). The detail widgets are built on first
expand, so a long chat stays cheap to open; long lines are broken for display only.

Images the tool returned show as thumbnails under the header, collapsed
or not; a click enlarges one, with Save… (``image_view.py``). Only bytes the call returned are
shown: a URL in a result (a resource link, a Markdown image) stays text and is never fetched.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QMouseEvent, QResizeEvent
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QProgressBar,
    QPushButton,
    QSizePolicy,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from cks_desktop.ui import theme
from cks_desktop.ui.chat import style
from cks_desktop.ui.chat.code_block import LINE_CHUNK, CodeBlock, displayable  # noqa: F401 (re-exported)
from cks_desktop.ui.chat.image_view import ImageStrip
from cks_desktop.ui.chat.model import STATE_WORDS, RowState, ToolItem
from cks_desktop.ui.chat.summary import full_summary, tool_summary
from cks_desktop.ui.chat.tool_actions import ToolRowActions, needs_actions
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import format_duration, plain_tooltip, pretty_json
from cks_desktop.untrusted_text import reveal

try:  # the "× 8" and "preparing… 3.1 k characters" additions of the chat-features work
    from cks_desktop.ui.chat.model import status_extra
except ImportError:  # pragma: no cover - older model
    def status_extra(item: ToolItem) -> str:
        return ""

DETAIL_MAX_HEIGHT = 320
ICON_PX = 16
NARROW_PX = 440  # below this width the summary takes a line of its own


def state_text(item: ToolItem) -> str:
    if item.reverted:
        return "reverted"
    words = STATE_WORDS[item.state]
    if item.state is RowState.RUNNING:
        elapsed = item.elapsed_ms()
        return f"running {format_duration(elapsed)}" if elapsed is not None and elapsed >= 1000 else "running…"
    if item.state in (RowState.DONE, RowState.ERROR) and item.duration_ms is not None:
        return f"{words} · {format_duration(item.duration_ms)}{status_extra(item)}"
    return f"{words}{status_extra(item)}"


def _looks_like_json(text: str) -> bool:
    return text.lstrip()[:1] in ("{", "[")


class _ElidedLabel(QLabel):
    """One line that ends in "…" when it does not fit (the full text is in the tooltip)."""

    def __init__(self, *, natural: bool = False) -> None:
        super().__init__()
        self._full = ""
        self._natural = natural  # asks for its text's width (the name), else takes what is left
        self.setTextFormat(Qt.TextFormat.PlainText)
        self.setSizePolicy(QSizePolicy.Policy.Preferred if natural else QSizePolicy.Policy.Ignored,
                           QSizePolicy.Policy.Preferred)
        self.setMinimumWidth(24)

    def sizeHint(self) -> QSize:  # noqa: N802
        hint = super().sizeHint()
        if self._natural:
            hint.setWidth(self.fontMetrics().horizontalAdvance(self._full) + 4)
        return hint

    def minimumSizeHint(self) -> QSize:  # noqa: N802
        return QSize(24, super().minimumSizeHint().height())

    def set_full_text(self, text: str, tooltip: str | None = None) -> None:
        if text != self._full:
            self._full = text
            self.updateGeometry()
        self.setToolTip(plain_tooltip(tooltip if tooltip is not None else text))
        self._elide()

    def full_text(self) -> str:
        return self._full

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        self.setText(self.fontMetrics().elidedText(self._full, Qt.TextElideMode.ElideRight, max(self.width(), 10)))


class ToolCallRow(QFrame):
    revertRequested = Signal(object)  # the ToolItem
    toggled = Signal(bool)
    activated = Signal(object)  # the ToolItem: the header was clicked (show its objects in the graph)
    actionRequested = Signal(object, str, str, str)  # tool_actions: Sign in / Open / Attach of a finished call

    def __init__(self, item: ToolItem, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.item = item
        self._expanded = False
        self._icon_key: tuple[str, str] | None = None
        self.setObjectName("toolCallRow")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        self.setCursor(Qt.CursorShape.PointingHandCursor)
        outer = QVBoxLayout(self)
        outer.setContentsMargins(8, 4, 8, 4)
        outer.setSpacing(6)
        self._build_header(outer)
        self.details: QWidget | None = None
        self.arguments_block: CodeBlock | None = None
        self.result_block: CodeBlock | None = None
        self._outer = outer
        self.action_strip: ToolRowActions | None = None  # built only for a row that offers something
        self.image_strip: ImageStrip | None = None  # built only for a row with images
        self.refresh()

    # -- layout ------------------------------------------------------------------
    def _build_header(self, outer: QVBoxLayout) -> None:
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, 0, 0)
        header.setSpacing(8)
        self.toggle_button = QToolButton()
        self.toggle_button.setObjectName("toolCallToggle")
        self.toggle_button.setAutoRaise(True)
        self.toggle_button.setCheckable(True)
        self.toggle_button.setAccessibleName("Show details")
        theme.bind_icon(self.toggle_button, "caret-right", "faint")
        self.toggle_button.toggled.connect(self.set_expanded)
        self.toggle_button.clicked.connect(lambda: self.activated.emit(self.item))
        header.addWidget(self.toggle_button)
        self.icon_label = plain_label(name="toolCallIcon")
        header.addWidget(self.icon_label)
        self.name_label = _ElidedLabel(natural=True)  # shrinks before the row gets wider than the chat
        self.name_label.setObjectName("toolCallName")
        header.addWidget(self.name_label)
        self.summary_label = _ElidedLabel()
        self.summary_label.setObjectName("toolCallSummary")
        self.summary_label.setFont(theme.code_font())
        header.addWidget(self.summary_label, 1)
        self.state_label = plain_label(name="toolCallState")
        self.state_label.setProperty("cksRole", "chip")
        header.addWidget(self.state_label)
        self.revert_button = QPushButton("Revert")
        self.revert_button.setObjectName("revertButton")
        self.revert_button.setToolTip("Undo the change this call made to the graph")
        self.revert_button.setAutoDefault(False)
        theme.bind_icon(self.revert_button, "arrow-counter-clockwise", "normal")
        self.revert_button.clicked.connect(lambda: self.revertRequested.emit(self.item))
        header.addWidget(self.revert_button)
        outer.addLayout(header)
        self._header = header
        # In a narrow chat the summary goes under the name instead of beside it (``_arrange``).
        self._second = QHBoxLayout()
        self._second.setContentsMargins(self.toggle_button.sizeHint().width() + 8, 0, 0, 0)
        outer.addLayout(self._second)
        self._narrow = False
        self._build_progress(outer)

    def _build_progress(self, outer: QVBoxLayout) -> None:
        """The progress hook (mcp-client-callbacks): a running MCP call's message and bar, shown
        only while the server reports progress; a bar without a known total is a busy bar."""
        line = QHBoxLayout()
        line.setContentsMargins(self.toggle_button.sizeHint().width() + 8, 0, 0, 0)
        self.progress_label = _ElidedLabel()
        self.progress_label.setObjectName("toolCallProgressText")
        self.progress_bar = QProgressBar()
        self.progress_bar.setObjectName("toolCallProgress")
        self.progress_bar.setTextVisible(False)
        self.progress_bar.setMaximumHeight(6)
        self.progress_bar.setMaximumWidth(160)
        line.addWidget(self.progress_label, 1)
        line.addWidget(self.progress_bar)
        self.progress_label.hide()
        self.progress_bar.hide()
        outer.addLayout(line)

    def _show_progress(self) -> None:
        report = self.item.progress if self.item.state is RowState.RUNNING else None
        if report is None:
            self.progress_label.hide()
            self.progress_bar.hide()
            return
        done, total, message = report
        if total is not None and total > 0:
            self.progress_bar.setRange(0, 1000)
            self.progress_bar.setValue(int(max(0.0, min(1.0, done / total)) * 1000))
            share = f"{max(0.0, min(1.0, done / total)):.0%}"
        else:
            self.progress_bar.setRange(0, 0)  # busy: the amount of work is unknown
            share = f"{done:g}"
        text = reveal(message) if message else ""
        self.progress_label.set_full_text(f"{text} · {share}" if text else share)
        self.progress_label.show()
        self.progress_bar.show()
        self.progress_bar.setAccessibleName(f"Progress {share}")

    def _build_details(self) -> None:
        self.details = QWidget()
        self.details.setCursor(Qt.CursorShape.ArrowCursor)
        layout = QVBoxLayout(self.details)
        layout.setContentsMargins(4, 0, 0, 4)
        layout.setSpacing(8)
        self.arguments_block = CodeBlock(caption="Arguments", max_height=DETAIL_MAX_HEIGHT,
                                         object_name="toolCallArguments", copy_what="arguments")
        layout.addWidget(self.arguments_block)
        self.result_block = CodeBlock(caption="Result", max_height=DETAIL_MAX_HEIGHT,
                                      object_name="toolCallResult", copy_what="result")
        layout.addWidget(self.result_block)
        self._fill_details()
        self._outer.addWidget(self.details)

    def _fill_details(self) -> None:
        if self.arguments_block is None or self.result_block is None:
            return
        args = self.item.arguments
        if args is None:
            self.arguments_block.set_code("(the arguments were not valid JSON)")
        else:
            pretty = pretty_json(args)
            self.arguments_block.set_code(pretty, "json")
        result = self.item.result
        if result is None:
            self.result_block.set_code("(no result yet)", copy_text="")
        elif _looks_like_json(result):
            self.result_block.set_code(pretty_json(result), "json", copy_text=result)
        else:
            self.result_block.set_code(result, copy_text=result)

    def restyle(self) -> None:
        """After a theme switch: the icon pixmap and the highlighted text are made again."""
        self._icon_key = None
        self._paint_icon()
        self.summary_label.setFont(theme.code_font())
        for block in (self.arguments_block, self.result_block):
            if block is not None:
                block.restyle()

    # -- state -----------------------------------------------------------------
    def is_expanded(self) -> bool:
        return self._expanded

    def set_expanded(self, expanded: bool) -> None:
        if expanded == self._expanded:
            return
        self._expanded = expanded
        self.toggle_button.setChecked(expanded)
        theme.bind_icon(self.toggle_button, "caret-down" if expanded else "caret-right", "faint")
        self.toggle_button.setAccessibleName("Hide details" if expanded else "Show details")
        if expanded and self.details is None:
            self._build_details()
        if self.details is not None:
            self.details.setVisible(expanded)
        self.setProperty("expanded", expanded)
        self._update_accessibility()
        self.toggled.emit(expanded)

    def _paint_icon(self) -> None:
        item = self.item
        key = style.tool_icon(item.source, item.name, item.state.failed, item.state.value)
        if key != self._icon_key:
            self._icon_key = key
            self.icon_label.setPixmap(theme.icon(*key).pixmap(ICON_PX, ICON_PX))

    def refresh(self) -> None:
        """Re-read the item (state changed, result arrived, reverted)."""
        item = self.item
        # a tool's name and arguments come from a model or a server: bidi and invisible characters show
        self.name_label.set_full_text(reveal(item.display_name))
        if item.arguments is None:
            self.summary_label.set_full_text("")
        else:
            self.summary_label.set_full_text(reveal(tool_summary(item.name, item.arguments)),
                                             reveal(full_summary(item.arguments)))
        self._show_summary()
        self.state_label.setText(state_text(item))
        if item.revert_error:
            self.state_label.setToolTip(plain_tooltip(f"Revert failed: {item.revert_error}"))
        self.revert_button.setVisible(item.can_revert)
        self._paint_icon()
        tone = "" if item.reverted else style.CHIP_TONES.get(item.state.value, "")
        if self.state_label.property("cksTone") != tone:
            self.state_label.setProperty("cksTone", tone)
            self._repolish(self.state_label)
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
            self._repolish(self)
        self._fill_details()
        self._show_progress()
        self._show_actions()
        self._show_images()
        self._update_accessibility()

    def _show_images(self) -> None:
        """The tool's images as thumbnails under the header (click: enlarge, save)."""
        if self.image_strip is None:
            if not self.item.images:
                return
            self.image_strip = ImageStrip()
            self.image_strip.setCursor(Qt.CursorShape.ArrowCursor)
            self.image_strip.setContentsMargins(self.toggle_button.sizeHint().width() + 8, 0, 0, 0)
            self._outer.insertWidget(self._outer.count() if self.details is None else
                                     self._outer.indexOf(self.details), self.image_strip)
        self.image_strip.set_images(self.item.images)

    def _show_actions(self) -> None:
        """Sign in / Open / Attach (tool_actions.py) under the header, when the call offers them."""
        if self.action_strip is None:
            if not needs_actions(self.item):
                return
            self.action_strip = ToolRowActions()
            self.action_strip.setCursor(Qt.CursorShape.ArrowCursor)
            self.action_strip.setContentsMargins(self.toggle_button.sizeHint().width() + 8, 0, 0, 0)
            self.action_strip.requested.connect(self.actionRequested)
            self._outer.insertWidget(self._outer.count() if self.details is None else
                                     self._outer.indexOf(self.details), self.action_strip)
        self.action_strip.show_for(self.item)

    def _arrange(self) -> None:
        """One line when the row is wide enough, else the summary on a second line and Revert
        as an icon, so the name, the state and the summary all stay readable."""
        narrow = 0 < self.width() < NARROW_PX
        if narrow == self._narrow:
            return
        self._narrow = narrow
        if narrow:
            self._header.removeWidget(self.summary_label)
            self._header.insertStretch(3, 1)
            self._second.addWidget(self.summary_label, 1)
        else:
            self._second.removeWidget(self.summary_label)
            stretch = self._header.itemAt(3)
            if stretch is not None:
                self._header.removeItem(stretch)
            self._header.insertWidget(3, self.summary_label, 1)
        self.revert_button.setText("" if narrow else "Revert")
        self.revert_button.setAccessibleName("Revert")
        self._show_summary()

    def _show_summary(self) -> None:
        """An empty summary on its own line (a narrow row, a call without arguments) would leave
        a blank line in the card: it hides there; in the one-line header it keeps the state chip right."""
        self.summary_label.setVisible(not (getattr(self, "_narrow", False) and not self.summary_label._full))

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._arrange()

    def _repolish(self, widget: QWidget) -> None:
        style_ = widget.style()
        style_.unpolish(widget)
        style_.polish(widget)
        for child in widget.findChildren(QWidget):  # descendant rules ([kind="error"] QLabel…)
            if child.parent() is widget:
                style_.unpolish(child)
                style_.polish(child)

    def tick(self) -> None:
        """Called every second while running: update the elapsed time."""
        if self.item.state is RowState.RUNNING:
            self.state_label.setText(state_text(self.item))

    def _update_accessibility(self) -> None:
        self.setAccessibleName(f"Tool call {self.item.display_name}")
        self.setAccessibleDescription(f"{state_text(self.item)}; {'expanded' if self._expanded else 'collapsed'}")

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:  # noqa: N802
        # A click anywhere on the header line toggles, like a disclosure triangle.
        if event.button() == Qt.MouseButton.LeftButton and event.position().y() < self.toggle_button.height() + 8:
            self.set_expanded(not self._expanded)
            self.activated.emit(self.item)
            event.accept()
            return
        super().mouseReleaseEvent(event)
