"""One message in the chat, as a card: who said it, the text, and its actions.

The look: the person's message is a bubble on the right, as wide as its text
up to ``style.BUBBLE_SHARE`` of the column; the assistant's answer has a small avatar, the
name and the model's name above it, and its fenced code blocks are cut out of the Markdown
(``segments.split_markdown``) and shown as ``CodeBlock`` cards with a language label,
highlighting and Copy; notices and problems are tinted cards with an icon.

Under the text is the actions bar (``self.actions_row``, not ``actions``: that is QWidget's): a "no answer" mark and Retry on a message
of the person's that got no answer, and the "⋯" menu (Delete this exchange…, Clear chat…; the
chat view fills it). Layout/styling live in ``_build_*`` and ``restyle``; what is shown in
``refresh``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QGuiApplication, QResizeEvent
from PySide6.QtWidgets import (QFrame, QHBoxLayout, QLabel, QPushButton, QSizePolicy, QToolButton, QVBoxLayout,
                               QWidget)

from cks_desktop.ui import theme
from cks_desktop.ui.chat import style
from cks_desktop.ui.chat.code_block import CodeBlock
from cks_desktop.ui.chat.markdown_view import MarkdownView, is_huge
from cks_desktop.ui.chat.model import MessageItem
from cks_desktop.ui.chat.reasoning_view import ReasoningView
from cks_desktop.ui.chat.segments import Segment, split_markdown
from cks_desktop.ui.chat.summary_notice import SummaryFold, split_summary
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import plain_tooltip

if TYPE_CHECKING:
    from cks_desktop.agent.citations import AnswerCitations

ROLE_TITLES = {"user": "You", "assistant": "Assistant", "notice": "Note", "error": "Problem"}
ROLE_ICONS = {"notice": ("info", "warning"), "error": ("warning-circle", "danger")}
AVATAR_PX = 20
BUBBLE_PADDING = (12, 8)  # horizontal, vertical


ASK_MARK = "from Ask the documents"
ASK_TIP = "Answered in the Ask window from this session's documents, every citation checked"
UNANSWERED_TEXT = "No answer: the app stopped or the request failed before the assistant replied."


class MessageWidget(QFrame):
    retryRequested = Signal(object)  # the MessageItem
    menuRequested = Signal(object, object)  # the MessageItem, the global position for the menu
    editRequested = Signal(object)  # the MessageItem (the person's last message)
    regenerateRequested = Signal(object)  # the MessageItem (the last answer)
    citationActivated = Signal(object)  # a checked citation's source: open the document at it

    def __init__(self, item: MessageItem, parent: QWidget | None = None, *, model_name: str = "") -> None:
        super().__init__(parent)
        self.item = item
        self.setObjectName(f"chatMessage_{item.role}")
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)  # as tall as its content: a chat never squeezes a message
        self._layout = QVBoxLayout(self)
        card = item.role in ("notice", "error")
        self._layout.setContentsMargins(*((12, 8, 12, 6) if card else (0, 0, 0, 0)))
        self._layout.setSpacing(4)
        self.model_label: QLabel | None = None
        self.header: QWidget | None = None  # the avatar, "Assistant" and the model (None: continues an answer)
        self._build_header(model_name)
        self._build_body()
        self._build_actions()
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
        self.customContextMenuRequested.connect(lambda pos: self.menuRequested.emit(self.item, self.mapToGlobal(pos)))
        self.refresh()

    # -- layout ------------------------------------------------------------------
    def _build_header(self, model_name: str) -> None:
        """The role mark: the assistant's avatar, name and model; a notice's or problem's icon."""
        role = self.item.role
        if role == "user":
            return  # the bubble on the right is the mark
        if role == "assistant" and self.item.continues:
            return  # the same answer after a tool-call round: its header is already above
        self.header = QWidget()
        self.header.setObjectName("chatMessageHeader")
        head = QHBoxLayout(self.header)
        head.setContentsMargins(0, 0, 0, 0)
        head.setSpacing(8)
        self.badge = plain_label(name="chatAvatar")
        head.addWidget(self.badge)
        title = plain_label(ROLE_TITLES.get(role, role), name="chatRoleName")
        head.addWidget(title)
        if role == "assistant" and self.item.from_ask:  # not the chat's turn: the Ask window's answer
            ask_mark = plain_label(ASK_MARK, name="chatAskMark")
            ask_mark.setToolTip(ASK_TIP)
            theme.set_role(ask_mark, "chip", "accent")
            head.addWidget(ask_mark)
        elif role == "assistant":
            self.model_label = plain_label(model_name, name="chatModelName")
            self.model_label.setVisible(bool(model_name))
            head.addWidget(self.model_label)
        head.addStretch(1)
        self._layout.addWidget(self.header)
        self._paint_badge()

    def _paint_badge(self) -> None:
        if not hasattr(self, "badge"):
            return  # no header (a continuing answer)
        role = self.item.role
        if role == "assistant":
            self.badge.setPixmap(style.avatar(AVATAR_PX))
        elif role in ROLE_ICONS:
            name, tone = ROLE_ICONS[role]
            size = self.fontMetrics().height()
            self.badge.setPixmap(theme.icon(name, tone).pixmap(size, size))

    def _build_body(self) -> None:
        self.view = MarkdownView()
        self.view.citationActivated.connect(self.citationActivated)
        self.view.setAccessibleName(f"{ROLE_TITLES.get(self.item.role, self.item.role)} message")
        self._parts: list[tuple[Segment, QWidget]] = []  # the code blocks and prose after the first part
        self._body = QVBoxLayout()
        self._body.setContentsMargins(0, 0, 0, 0)
        self._body.setSpacing(8)
        self.bubble: QFrame | None = None
        self.summary_fold: SummaryFold | None = None
        self.reasoning_view: ReasoningView | None = None
        if self.item.role == "user":
            self.bubble = QFrame()
            self.bubble.setObjectName("chatBubble")
            inner = QVBoxLayout(self.bubble)
            inner.setContentsMargins(BUBBLE_PADDING[0], BUBBLE_PADDING[1], BUBBLE_PADDING[0], BUBBLE_PADDING[1])
            inner.addWidget(self.view)
            self.bubble.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
            row = QHBoxLayout()
            row.setContentsMargins(0, 0, 0, 0)
            row.addStretch(1)
            row.addWidget(self.bubble, 100)  # as wide as its maximum (the text's width), the rest is space
            self._layout.addLayout(row)
        else:
            if self.item.role == "assistant":  # the model's thinking, collapsed above the answer
                self.reasoning_view = ReasoningView()
                self._body.addWidget(self.reasoning_view)
            if self.item.summary:  # "Earlier messages were summarised": collapsed, the summary on demand
                self.summary_fold = SummaryFold()
                self.summary_fold.toggle.toggled.connect(lambda _on: self.refresh())
                self._body.addWidget(self.summary_fold)
            self._body.addWidget(self.view)
            self._layout.addLayout(self._body)

    def _build_actions(self) -> None:
        """The bar under the text; Retry and the menu here, more actions may join them."""
        self.actions_bar = QWidget()
        self.actions_bar.setObjectName("chatActions")
        self.actions_row = QHBoxLayout(self.actions_bar)
        self.actions_row.setContentsMargins(0, 0, 0, 0)
        self.actions_row.setSpacing(2)
        if self.item.role == "user":
            self.actions_row.addStretch(1)
        self.unanswered_label = plain_label("no answer", name="unansweredLabel")
        self.unanswered_label.setToolTip(UNANSWERED_TEXT)
        self.actions_row.addWidget(self.unanswered_label)
        self.retry_button = QPushButton("Retry")
        self.retry_button.setObjectName("retryButton")
        self.retry_button.setAutoDefault(False)
        self.retry_button.setToolTip("Send this message again and wait for the answer")
        theme.bind_icon(self.retry_button, "arrow-clockwise", "normal")
        self.retry_button.clicked.connect(lambda: self.retryRequested.emit(self.item))
        self.actions_row.addWidget(self.retry_button)
        self._add_message_actions()
        self.menu_button = QToolButton()
        self.menu_button.setObjectName("messageMenuButton")
        self.menu_button.setText("⋯")
        self.menu_button.setAutoRaise(True)
        self.menu_button.setToolTip("Delete this exchange or clear the chat")
        self.menu_button.setAccessibleName("Message actions")
        self.menu_button.clicked.connect(
            lambda: self.menuRequested.emit(self.item, self.menu_button.mapToGlobal(self.menu_button.rect().bottomLeft())))
        self.actions_row.addWidget(self.menu_button)
        if self.item.role != "user":
            self.actions_row.addStretch(1)
        self._layout.addWidget(self.actions_bar)

    def _add_message_actions(self) -> None:
        """Copy, Edit and resend (the person's last message), Regenerate (the last answer), and
        the "stopped" mark of an answer Stop cut short."""
        self.stopped_label = plain_label("stopped", name="stoppedLabel")
        self.stopped_label.setToolTip("Stopped: the answer was cut short; what had arrived is kept.")
        self.actions_row.addWidget(self.stopped_label)
        self.copy_button = self._action_button("copyMessageButton", "Copy", "copy",
                                               "Copy this message's text", self.copy_text)
        self.edit_button = self._action_button("editMessageButton", "Edit", "pencil-simple",
                                               "Edit this message and send it again (replaces its answer)",
                                               lambda: self.editRequested.emit(self.item))
        self.regenerate_button = self._action_button("regenerateButton", "Regenerate", "arrows-clockwise",
                                                     "Drop this answer and let the assistant answer again",
                                                     lambda: self.regenerateRequested.emit(self.item))
        # What the answer used: a small line; hover for tokens by kind, model turns, cost.
        self.usage_label = plain_label("", name="chatUsage")
        self.actions_row.addWidget(self.usage_label)

    def _action_button(self, name: str, text: str, icon: str, tip: str, slot: Callable[[], None]) -> QToolButton:
        button = QToolButton()
        button.setObjectName(name)
        button.setText(text)
        button.setAutoRaise(True)
        button.setToolTip(plain_tooltip(tip))
        button.setAccessibleName(tip)
        try:
            theme.bind_icon(button, icon, "normal")
        except Exception:  # an icon the set lacks must not cost the action
            pass
        button.clicked.connect(slot)
        self.actions_row.addWidget(button)
        return button

    def copy_text(self) -> None:
        """The message's text as written (Markdown source for an answer) to the clipboard."""
        QGuiApplication.clipboard().setText(self.item.text)

    def _refresh_message_actions(self) -> None:
        item = self.item
        self.stopped_label.setVisible(item.stopped)
        self.copy_button.setVisible(bool(item.text) and not item.streaming)
        self.edit_button.setVisible(item.role == "user" and item.last_prompt)
        self.regenerate_button.setVisible(item.last_answer and not item.streaming)
        self.usage_label.setText(item.usage_line)
        self.usage_label.setToolTip(plain_tooltip(item.usage_tip))
        self.usage_label.setVisible(bool(item.usage_line) and not item.streaming)

    def set_model_name(self, name: str) -> None:
        """The model that answers in this chat, shown beside "Assistant"."""
        if self.model_label is not None:
            self.model_label.setText(name)
            self.model_label.setToolTip(plain_tooltip(name))
            self.model_label.setVisible(bool(name))

    def restyle(self) -> None:
        """After a theme switch: colours baked into pixmaps and text formats are made again."""
        if self.item.role != "user":
            self._paint_badge()
        self.view.restyle()
        for _segment, widget in self._parts:
            widget.restyle()  # type: ignore[attr-defined]

    # -- content -------------------------------------------------------------------
    def refresh(self) -> None:
        self.unanswered_label.setVisible(self.item.unanswered)
        self.retry_button.setVisible(self.item.retryable)
        self.menu_button.setVisible(not self.item.streaming)
        self._refresh_message_actions()
        if self.item.role == "assistant":
            if self.reasoning_view is not None:
                item = self.item
                self.reasoning_view.setVisible(bool(item.reasoning) or item.thinking)
                self.reasoning_view.set_state(item.reasoning, item.reasoning_seconds, item.thinking)
            self._show_markdown(self.item.text)
        elif self.item.summary and self.summary_fold is not None:
            head, body = split_summary(self.item.text)
            self.summary_fold.set_head(head, bool(body))
            self.view.set_plain(body)  # the model's words, shown literally
            self.view.setVisible(self.summary_fold.expanded and bool(body))
        else:
            self.view.set_plain(self.item.text)  # what the person typed, and our own notices, verbatim
            if self.bubble is not None:
                self._fit_bubble()

    def _show_markdown(self, text: str) -> None:
        """The answer's prose in ``view`` and in MarkdownViews after it, its fenced code in CodeBlocks."""
        segments = [Segment("markdown", text)] if is_huge(text) else split_markdown(text)
        first = segments[0]
        if first.kind == "markdown":
            self.view.set_markdown(first.text, self._citations())
            # An answer without words (only thinking, cut off before it answered) shows no empty
            # text box: it would leave a blank gap between the thinking line and the row under it.
            self.view.setVisible(bool(first.text.strip()))
            rest = segments[1:]
        else:
            self.view.set_markdown("")
            self.view.hide()
            rest = segments
        keep = 0
        for (old, widget), new in zip(self._parts, rest):
            if old.kind != new.kind or (old.kind == "code" and old.language != new.language):
                break
            self._update_part(widget, new)
            self._parts[keep] = (new, widget)
            keep += 1
        for _segment, widget in self._parts[keep:]:
            self._body.removeWidget(widget)
            widget.deleteLater()
        del self._parts[keep:]
        for segment in rest[keep:]:
            widget = self._make_part(segment)
            self._body.addWidget(widget)
            self._parts.append((segment, widget))

    def _make_part(self, segment: Segment) -> QWidget:
        if segment.kind == "code":
            return CodeBlock(segment.text, segment.language)
        view = MarkdownView()
        view.setAccessibleName("Assistant message")
        view.citationActivated.connect(self.citationActivated)
        view.set_markdown(segment.text, self._citations())
        return view

    def _update_part(self, widget: QWidget, segment: Segment) -> None:
        if isinstance(widget, CodeBlock):
            widget.set_code(segment.text, segment.language)
        elif isinstance(widget, MarkdownView):
            widget.set_markdown(segment.text, self._citations())

    def _citations(self) -> "AnswerCitations | None":
        """The verdict on the answer's citations, once it has arrived (never while it streams)."""
        return None if self.item.streaming else self.item.citations

    def code_blocks(self) -> list[CodeBlock]:
        return [w for _s, w in self._parts if isinstance(w, CodeBlock)]

    def text_views(self) -> list[MarkdownView]:
        """Every prose view of the message, in order (the find bar searches them)."""
        return [self.view, *(w for _s, w in self._parts if isinstance(w, MarkdownView))]

    # -- the bubble's width ----------------------------------------------------------
    def _fit_bubble(self) -> None:
        bubble = self.bubble
        if bubble is None or self.width() <= 0:
            return
        metrics = self.view.fontMetrics()
        lines = self.item.text.split("\n", 60)[:60]
        natural = max((metrics.horizontalAdvance(line[:400]) for line in lines), default=0)
        chrome = 2 * BUBBLE_PADDING[0] + 2 * int(self.view.document().documentMargin()) + 6
        width = max(40, min(int(self.width() * style.BUBBLE_SHARE), natural + chrome))
        if bubble.maximumWidth() != width:
            bubble.setMaximumWidth(width)  # a maximum, never a fixed width: the chat may get narrower

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        if self.bubble is not None and event.size().width() != event.oldSize().width():
            self._fit_bubble()
