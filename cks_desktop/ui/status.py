"""The status bar: the team database when the window works on one, the active
provider/model, and one light per MCP server.

Each light has the server's colour (ready, starting, failed, stopped) and a
tooltip with the reason; clicking it opens that server in the settings.
The main window rebuilds the lights from ``McpManager.statuses()`` on each
status event; rows are duck-typed so this module never imports the MCP SDK.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QColor, QIcon, QPainter, QPixmap
from PySide6.QtWidgets import QHBoxLayout, QToolButton, QWidget

from cks_desktop.ui import theme
from cks_desktop.ui.text import no_mnemonic, plain_tooltip

# the theme token of each server state's light (ui/theme: the colours follow light/dark)
COLOURS = {"ready": "success", "starting": "warning", "restarting": "warning", "failed": "danger",
           "stopped": "faint", "needs_auth": "warning"}
WORDS = {"ready": "ready", "starting": "starting…", "restarting": "restarting…", "failed": "failed",
         "stopped": "stopped", "needs_auth": "sign in needed"}


def dot_icon(colour: QColor | str, size: int = 12) -> QIcon:
    """A round light; ``colour`` is a QColor or a theme token name ("success")."""
    if isinstance(colour, str):
        colour = theme.color(colour)
    pixmap = QPixmap(size, size)
    pixmap.fill(Qt.GlobalColor.transparent)
    painter = QPainter(pixmap)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setBrush(colour)
    painter.setPen(colour.darker(130))
    painter.drawEllipse(1, 1, size - 2, size - 2)
    painter.end()
    return QIcon(pixmap)


class ServerRow(Protocol):
    """What a light needs of one ``McpManager.statuses()`` row (``mcp.manager.ServerState``)."""

    @property
    def name(self) -> str: ...
    @property
    def status(self) -> str: ...  # a ``Status`` (a str enum)
    @property
    def reason(self) -> str: ...
    @property
    def enabled(self) -> bool: ...


class ServerLight(QToolButton):
    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.status = "stopped"
        self.reason = ""
        self.setObjectName("mcpStatusLight")
        self.setAutoRaise(True)
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.setIconSize(QSize(12, 12))
        self.setText(no_mnemonic(name))
        self.set_status("stopped", "")
        manager = theme.manager()
        if manager is not None:  # re-colour the light on a theme switch
            manager.themeChanged.connect(lambda _scheme: self.set_status(self.status, self.reason))

    def set_status(self, status: str, reason: str) -> None:
        self.status, self.reason = status, reason
        self.setIcon(dot_icon(COLOURS.get(status, COLOURS["stopped"])))
        tip = f"MCP server “{self.name}”: {WORDS.get(status, status)}"
        if reason:
            tip += f"\n{reason}"
        self.setToolTip(plain_tooltip(tip + "\nClick to open it in Settings."))
        self.setAccessibleName(f"MCP server {self.name}")
        self.setAccessibleDescription(f"{WORDS.get(status, status)}. {reason}".strip())


class StatusWidgets(QWidget):
    """Lives on the right of the status bar."""

    providerClicked = Signal()
    serverClicked = Signal(str)
    databaseClicked = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 4, 0)
        layout.setSpacing(2)
        # "Team database · host/db": shown only on a team's PostgreSQL, so a person always sees
        # that what they change is seen by every member (the embedded file shows nothing).
        self.database_button = QToolButton()
        self.database_button.setObjectName("databaseStatus")
        self.database_button.setAutoRaise(True)
        self.database_button.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.database_button.clicked.connect(self.databaseClicked)
        self.database_button.hide()
        theme.bind_icon(self.database_button, "users-three", "accent")
        layout.addWidget(self.database_button)
        self._servers_box = QHBoxLayout()
        self._servers_box.setSpacing(0)
        layout.addLayout(self._servers_box)
        self.provider_button = QToolButton()
        self.provider_button.setObjectName("providerStatus")
        self.provider_button.setAutoRaise(True)
        self.provider_button.setToolTip("The model the chat uses. Click to change it in Settings.")
        self.provider_button.clicked.connect(self.providerClicked)
        layout.addWidget(self.provider_button)
        self.lights: dict[str, ServerLight] = {}

    def set_database(self, backend: str, where: str) -> None:
        """The store the window works on: ``backend`` "postgresql" shows the team database's
        place (``where``: the address without a password); the embedded file hides it."""
        team = backend == "postgresql"
        self.database_button.setVisible(team)
        if not team:
            return
        place = where.split("@", 1)[-1].removeprefix("postgresql://")
        self.database_button.setText(no_mnemonic(f"Team database · {place}"))
        self.database_button.setAccessibleName(f"Team database {where}")
        self.database_button.setToolTip(plain_tooltip(
            f"Working on the team database {where} (PostgreSQL): every member sees what you change in "
            "shared sessions.\nClick to open Settings → Storage."))

    def set_provider(self, label: str) -> None:
        self.provider_button.setText(no_mnemonic(label))
        self.provider_button.setAccessibleName(f"Model provider: {label}")

    def set_servers(self, states: Sequence[ServerRow]) -> None:
        """Rebuild the lights from ``McpManager.statuses()`` rows (name, status, reason, enabled)."""
        wanted = [s for s in states if s.enabled or str(s.status) == "failed"]
        names = [s.name for s in wanted]
        for name in list(self.lights):
            if name not in names:
                self.lights.pop(name).deleteLater()
        for state in wanted:
            light = self.lights.get(state.name)
            if light is None:
                light = ServerLight(state.name)
                light.clicked.connect(lambda _checked=False, n=state.name: self.serverClicked.emit(n))
                self.lights[state.name] = light
                self._servers_box.addWidget(light)
            light.set_status(str(state.status), state.reason)
