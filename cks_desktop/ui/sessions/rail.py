"""The sessions list folded to a narrow rail, and the activity marks on its rows.

Why a rail: beside the chat dock, a full sessions list costs the graph a fifth of a 1280 px window
while a person works in one session. Folded, the sidebar keeps three things: a button that
unfolds it, New session, and one mark that tells whether another session is answering in the
background (a spinner) or finished while the person was away (a dot); its tooltip names them.

Marks on the rows of the unfolded list (``apply_mark``): a spinner icon while that session's chat
answers in the background, an accent dot and a bold title when it finished unseen; the row's
tooltip and accessible text say the same in words, and ``ACTIVITY_ROLE`` holds the state.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QAction, QFont
from PySide6.QtWidgets import QListWidgetItem, QToolButton, QVBoxLayout, QWidget

from cks_desktop.ui import theme
from cks_desktop.ui.sessions.activity import Activity
from cks_desktop.ui.text import plain_tooltip

ACTIVITY_ROLE = Qt.ItemDataRole.UserRole + 7
RAIL_WIDTH = 48  # px: one icon button and its margins
MARK_WORDS = {Activity.RUNNING: "answering in the background", Activity.UNREAD: "new answer, not read yet"}
MARK_ICONS = {Activity.IDLE: ("chats-circle", "normal"), Activity.RUNNING: ("spinner-gap", "accent"),
              Activity.UNREAD: ("circle-fill", "accent")}


def apply_mark(item: QListWidgetItem, state: Activity, base_tooltip: str) -> None:
    """Show ``state`` on a session row (icon, bold title, tooltip, accessible text)."""
    name, role = MARK_ICONS[state]
    item.setIcon(theme.icon(name, role))
    item.setData(ACTIVITY_ROLE, state.value)
    font = QFont(item.font())
    font.setBold(state is Activity.UNREAD)
    item.setFont(font)
    words = MARK_WORDS.get(state)
    item.setToolTip(plain_tooltip(f"{base_tooltip}\n{words[0].upper()}{words[1:]}" if words else base_tooltip))
    item.setData(Qt.ItemDataRole.AccessibleTextRole, f"{item.text()}, {words}" if words else item.text())


class SidebarRail(QWidget):
    """The folded sidebar: unfold, New session, and the background-activity mark."""

    def __init__(self, unfold: QAction, new_session: QAction, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("sessionsRail")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(4, 4, 4, 4)
        layout.setSpacing(6)
        self.unfold_button = self._button(unfold, "sessionsRailUnfold")
        self.new_button = self._button(new_session, "sessionsRailNew")
        self.mark = QToolButton()
        self.mark.setObjectName("sessionsRailMark")
        self.mark.setAutoRaise(True)
        self.mark.setIconSize(QSize(18, 18))
        self.mark.clicked.connect(unfold.trigger)
        self.mark.hide()
        for w in (self.unfold_button, self.new_button, self.mark):
            layout.addWidget(w, 0, Qt.AlignmentFlag.AlignHCenter)
        layout.addStretch(1)
        self.setFixedWidth(RAIL_WIDTH)

    def _button(self, action: QAction, name: str) -> QToolButton:
        button = QToolButton()
        button.setObjectName(name)
        button.setDefaultAction(action)
        button.setAutoRaise(True)
        button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonIconOnly)
        button.setIconSize(QSize(18, 18))
        return button

    def show_marks(self, marks: dict[str, Activity], title_of: Callable[[str], str]) -> None:
        """One mark for all other sessions: a spinner if any answers, else a dot if any finished unseen."""
        running = [title_of(sid) for sid, state in marks.items() if state is Activity.RUNNING]
        unread = [title_of(sid) for sid, state in marks.items() if state is Activity.UNREAD]
        if not running and not unread:
            self.mark.hide()
            return
        name, role = MARK_ICONS[Activity.RUNNING if running else Activity.UNREAD]
        self.mark.setIcon(theme.icon(name, role))
        lines = [f"Answering: {', '.join(running)}"] if running else []
        lines += [f"New answer in: {', '.join(unread)}"] if unread else []
        self.mark.setToolTip(plain_tooltip("\n".join(lines)))
        self.mark.setAccessibleName("; ".join(lines))
        self.mark.show()
