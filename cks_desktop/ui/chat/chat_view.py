"""The scrolling column of messages and tool rows, built lazily.

Only the newest items get widgets when a chat opens (``INITIAL``); older ones
are built in batches as the person scrolls up, with the view kept still while
they are inserted. A 1,000-message chat therefore opens in the time it takes
to build a few dozen widgets. Streaming updates are coalesced (one repaint per
``REFRESH_MS``), and the view sticks to the bottom while the person is there.

Each message's "⋯" button and the context menu of a message or tool row offer
"Delete this exchange…" and "Clear chat…" (disabled while the chat answers);
the view only reports the choice, the panel asks for confirmation.

The look: one reading column, centred and capped at ``style.COLUMN_MAX_CHARS`` characters
(margins grow on a wide window), items ``SPACING`` apart; the colours come from the app-wide
sheet (``ui/chat/sheet.py``). After a theme switch the built items re-make what has colours
baked in (highlighting, table and code formats, the avatar) — ``restyle``.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QBoxLayout, QFrame, QMenu, QScrollArea, QVBoxLayout, QWidget

from cks_desktop.ui import theme
from cks_desktop.ui.chat import highlight, style
from cks_desktop.ui.chat.message_widget import MessageWidget
from cks_desktop.ui.chat.model import ChatItem, ChatModel, RowState, ToolItem
from cks_desktop.ui.chat.tool_row import ToolCallRow

INITIAL = 40
BATCH = 30
REFRESH_MS = 40
NEAR_TOP_PX = 120
SPACING = 12  # the token scale's "md" between items
SIDE_MARGIN = 12


class ChatView(QScrollArea):
    revertRequested = Signal(object)  # ToolItem
    toolActionRequested = Signal(object, str, str, str)  # tool_actions.ToolRowActions, action, server, argument
    rowActivated = Signal(object)  # ToolItem
    retryRequested = Signal(object)  # MessageItem (unanswered)
    editRequested = Signal(object)  # MessageItem (the person's last message): Edit and resend
    regenerateRequested = Signal(object)  # MessageItem (the last answer): Regenerate
    deleteRequested = Signal(object)  # any item: delete its whole exchange
    clearRequested = Signal()
    citationActivated = Signal(object)  # a checked citation's source (an answer's [n] was clicked)

    def __init__(self, model: ChatModel, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("chatView")
        self.setAccessibleName("Chat messages")
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        container = QWidget()
        container.setObjectName("chatContainer")
        self._layout = QVBoxLayout(container)
        self._layout.setContentsMargins(SIDE_MARGIN, SIDE_MARGIN, SIDE_MARGIN, SIDE_MARGIN)
        self._layout.setSpacing(SPACING)
        self._layout.addStretch(1)  # keeps a short chat at the top
        self.setWidget(container)

        self.model = model
        self.editable = True  # False while the chat answers: Delete/Clear are disabled
        self.menu: QMenu | None = None  # the last menu shown (tests pick actions from it)
        self._widgets: dict[int, QWidget] = {}  # model index → widget
        self._first_built = 0
        self._dirty: set[int] = set()
        self._stick = True
        self._keep_from_bottom: int | None = None
        self.model_name = ""  # shown beside "Assistant" (the chat's current model)

        self._refresh_timer = QTimer(self)
        self._refresh_timer.setSingleShot(True)
        self._refresh_timer.setInterval(REFRESH_MS)
        self._refresh_timer.timeout.connect(self._flush)
        self._tick_timer = QTimer(self)
        self._tick_timer.setInterval(1000)
        self._tick_timer.timeout.connect(self._tick)

        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._scrolled)
        bar.rangeChanged.connect(self._range_changed)
        model.subscribe(self)
        manager = theme.manager()
        if manager is not None:
            manager.themeChanged.connect(self.restyle)

    def set_model(self, model: ChatModel) -> None:
        """Show another chat (switching sessions)."""
        self.model.unsubscribe(self)
        self.model = model
        model.subscribe(self)
        self.items_reset()

    # -- ChatModelListener -------------------------------------------------------
    def items_reset(self) -> None:
        for widget in self._widgets.values():
            widget.deleteLater()
        self._widgets.clear()
        self._dirty.clear()
        count = len(self.model.items)
        self._first_built = max(0, count - INITIAL)
        for index in range(self._first_built, count):
            self._insert(index, self._layout.count())
        self._stick = True
        self._update_ticker()
        self.scroll_to_bottom()

    def item_inserted(self, index: int) -> None:
        self._insert(index, self._layout.count())
        self._update_ticker()

    def item_changed(self, index: int) -> None:
        if index in self._widgets:
            self._dirty.add(index)
            if not self._refresh_timer.isActive():
                self._refresh_timer.start()

    # -- building ---------------------------------------------------------------
    def _make(self, index: int) -> QWidget:
        item = self.model.items[index]
        if isinstance(item, ToolItem):
            row = ToolCallRow(item)
            row.revertRequested.connect(self.revertRequested)
            row.actionRequested.connect(self.toolActionRequested)
            row.activated.connect(self.rowActivated)
            row.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
            row.customContextMenuRequested.connect(lambda pos, r=row: self.show_menu(r.item, r.mapToGlobal(pos)))
            return row
        widget = MessageWidget(item, model_name=self.model_name)
        if item.images:  # the person's pasted or dropped images: thumbnails under the text
            from cks_desktop.ui.chat.image_view import ImageStrip

            # right-aligned under the person's bubble, above its Copy/Edit row (not after it, on the left)
            user = getattr(item, "role", "") == "user"
            strip = ImageStrip(widget, right=user)
            strip.set_images(item.images)
            layout = widget.layout()
            if isinstance(layout, QBoxLayout):
                at = layout.indexOf(widget.actions_bar)
                layout.insertWidget(at if at >= 0 else layout.count(), strip)
        widget.retryRequested.connect(self.retryRequested)
        widget.editRequested.connect(self.editRequested)
        widget.regenerateRequested.connect(self.regenerateRequested)
        widget.citationActivated.connect(self.citationActivated)
        widget.menuRequested.connect(self.show_menu)
        return widget

    # -- the message menu ---------------------------------------------------------
    def menu_for(self, item: ChatItem) -> QMenu:
        menu = QMenu(self)
        menu.setObjectName("chatMessageMenu")
        delete = menu.addAction("Delete this exchange…")
        delete.setObjectName("deleteExchangeAction")
        delete.setToolTip("Delete this message with the message of yours it belongs to and its whole answer")
        delete.setEnabled(self.editable)
        delete.triggered.connect(lambda: self.deleteRequested.emit(item))
        clear = menu.addAction("Clear chat…")
        clear.setObjectName("clearChatAction")
        clear.setEnabled(self.editable)
        clear.triggered.connect(self.clearRequested)
        return menu

    def show_menu(self, item: ChatItem, where: QPoint) -> QMenu:
        if self.menu is not None:
            self.menu.deleteLater()
        self.menu = self.menu_for(item)
        self.menu.popup(where)
        return self.menu

    def _insert(self, index: int, position: int) -> None:
        widget = self._make(index)
        self._widgets[index] = widget
        self._layout.insertWidget(position, widget)

    def build_older(self, count: int = BATCH) -> int:
        """Build up to ``count`` older items above the current ones; return how many."""
        start = max(0, self._first_built - count)
        built = self._first_built - start
        if built <= 0:
            return 0
        bar = self.verticalScrollBar()
        self._keep_from_bottom = bar.maximum() - bar.value()
        for offset, index in enumerate(range(start, self._first_built)):
            self._insert(index, 1 + offset)  # position 0 is the stretch
        self._first_built = start
        # The range change that restores the position normally comes first; this is the backstop.
        QTimer.singleShot(250, self._release_anchor)
        return built

    def _release_anchor(self) -> None:
        self._keep_from_bottom = None

    def ensure_built(self, index: int) -> None:
        if index < self._first_built:
            self.build_older(self._first_built - index)

    def widget_for(self, index: int) -> QWidget | None:
        return self._widgets.get(index)

    def built_count(self) -> int:
        return len(self._widgets)

    def rows(self) -> list[ToolCallRow]:
        return [w for _, w in sorted(self._widgets.items()) if isinstance(w, ToolCallRow)]

    # -- updates ----------------------------------------------------------------
    def _flush(self) -> None:
        dirty, self._dirty = self._dirty, set()
        for index in sorted(dirty):
            widget = self._widgets.get(index)
            if isinstance(widget, (MessageWidget, ToolCallRow)):
                widget.refresh()
        self._update_ticker()

    def flush(self) -> None:
        """Apply pending updates now (tests, and before taking a screenshot)."""
        self._refresh_timer.stop()
        self._flush()

    def _update_ticker(self) -> None:
        running = any(isinstance(it, ToolItem) and it.state is RowState.RUNNING for it in self.model.items[-50:])
        if running and not self._tick_timer.isActive():
            self._tick_timer.start()
        elif not running:
            self._tick_timer.stop()

    def _tick(self) -> None:
        for index, widget in self._widgets.items():
            if isinstance(widget, ToolCallRow) and index >= len(self.model.items) - 50:
                widget.tick()
        self._update_ticker()

    # -- look --------------------------------------------------------------------
    def set_model_name(self, name: str) -> None:
        """The model answering in this chat, shown on every answer's role mark."""
        if name == self.model_name:
            return
        self.model_name = name
        for widget in self._widgets.values():
            if isinstance(widget, MessageWidget):
                widget.set_model_name(name)

    def restyle(self, _scheme: str = "") -> None:
        """Re-make the colours baked into the built items (after ``themeChanged``)."""
        highlight.reset_formats()
        for widget in self._widgets.values():
            if isinstance(widget, (MessageWidget, ToolCallRow)):
                widget.restyle()

    def _fit_column(self) -> None:
        width = self.viewport().width()
        cap = style.column_width(self)
        side = max(SIDE_MARGIN, (width - cap) // 2)
        margins = self._layout.contentsMargins()
        if margins.left() != side:
            self._layout.setContentsMargins(side, SIDE_MARGIN, side, SIDE_MARGIN)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self._fit_column()

    # -- scrolling ---------------------------------------------------------------
    def _scrolled(self, value: int) -> None:
        bar = self.verticalScrollBar()
        self._stick = value >= bar.maximum() - 4
        if value <= NEAR_TOP_PX and self._first_built > 0 and self._keep_from_bottom is None:
            self.build_older()

    def _range_changed(self, _minimum: int, maximum: int) -> None:
        bar = self.verticalScrollBar()
        if self._keep_from_bottom is not None:
            bar.setValue(maximum - self._keep_from_bottom)
            self._keep_from_bottom = None
        elif self._stick:
            bar.setValue(maximum)

    def scroll_to_bottom(self) -> None:
        self._stick = True
        bar = self.verticalScrollBar()
        bar.setValue(bar.maximum())

    def scroll_to_index(self, index: int) -> None:
        self.ensure_built(index)
        widget = self._widgets.get(index)
        if widget is not None:
            self._stick = False
            self.ensureWidgetVisible(widget, 0, 40)

