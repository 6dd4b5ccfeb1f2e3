"""What a finished MCP tool row lets the person do: sign in, open or attach a resource link.

A call refused for want of a sign-in carries ``structured={"needs_sign_in": server}``
(mcp/connection.py); its row shows "Sign in to <server>", which runs ``McpManager.sign_in``
with the system browser, and a Cancel while the browser step runs (``cancel_sign_in``).

A ``resource_link`` in a result is a line the converter wrote (``convert.describe_block``:
``[resource link: name — uri, mime]``); its row offers Open (the resource read from the
same server and shown as plain text in a dialog: never a remote load, never rich text) and
Attach (read, then added to the next message's attachment bar). A link is only ever read
from the server whose tool returned it, through ``resources.read_resource`` and its bounds.

``ToolRowActions`` is the row's strip of buttons (it knows no connections); it emits
``requested(action, server, argument)`` and ``McpChatActions`` (installed by the main window
over the manager) does the work and reports back on the strip.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QHBoxLayout, QPlainTextEdit, QPushButton, QVBoxLayout, QWidget

from cks_desktop.ui.chat.model import ToolItem
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import no_mnemonic, plain_tooltip
from cks_desktop.untrusted_text import reveal

if TYPE_CHECKING:
    from cks_desktop.mcp.connection import McpConnection
    from cks_desktop.mcp.resources import ReadOutcome
    from cks_desktop.ui.chat.resource_picker import AttachmentBar

LINK_LINE = re.compile(r"^\[resource link: (?P<name>.*) — (?P<uri>\S+?)(?:, [^\s\]]+)?\]$", re.MULTILINE)
MAX_LINKS = 8  # buttons per row; a result listing hundreds of links offers the first few
SIGN_IN, CANCEL_SIGN_IN, OPEN, ATTACH = "sign_in", "cancel_sign_in", "open", "attach"


@dataclass(frozen=True)
class Link:
    name: str
    uri: str


def server_of(item: ToolItem) -> str | None:
    return item.source[4:] if item.source.startswith("mcp:") and len(item.source) > 4 else None


def resource_links(item: ToolItem) -> list[Link]:
    """The resource links in a finished MCP call's result (first ``MAX_LINKS``, no repeats)."""
    if server_of(item) is None or not item.result or not item.state.finished:
        return []
    links: list[Link] = []
    for match in LINK_LINE.finditer(item.result):
        link = Link(match["name"].strip(), match["uri"])
        if link not in links:
            links.append(link)
        if len(links) >= MAX_LINKS:
            break
    return links


def needs_actions(item: ToolItem) -> bool:
    return bool(getattr(item, "sign_in_server", None)) or bool(resource_links(item))


class ToolRowActions(QWidget):
    """The buttons under a tool row: Sign in (and Cancel while it runs), Open / Attach per link."""

    requested = Signal(object, str, str, str)  # this strip, action, server, argument (a URI)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("toolRowActions")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        self._layout = layout
        self._key: tuple[Any, ...] | None = None
        self.sign_in_button: QPushButton | None = None
        self.cancel_button: QPushButton | None = None
        self.link_buttons: dict[tuple[str, str], QPushButton] = {}  # (action, uri) → button
        self.note = plain_label(name="toolRowActionNote", wrap=True)
        self.note.hide()
        self._rows: list[QWidget] = []
        self.server = ""

    def show_for(self, item: ToolItem) -> None:
        """Rebuild the buttons when what the item offers changed (cheap otherwise)."""
        server = server_of(item) or ""
        sign_in = getattr(item, "sign_in_server", None) or ""
        links = resource_links(item)
        key = (server, sign_in, tuple(links))
        self.setVisible(bool(sign_in or links))
        if key == self._key:
            return
        self._key = key
        self.server = sign_in or server
        for old in self._rows:
            old.deleteLater()
        self._rows = []
        self.link_buttons = {}
        self.sign_in_button = self.cancel_button = None
        self._layout.removeWidget(self.note)
        if sign_in:
            row = self._row()
            self.sign_in_button = self._button(row, f"Sign in to {reveal(sign_in)}", "toolRowSignIn",
                                               self._emitter(SIGN_IN, sign_in, ""))
            self.cancel_button = self._button(row, "Cancel", "toolRowCancelSignIn",
                                              self._emitter(CANCEL_SIGN_IN, sign_in, ""))
            self.cancel_button.setToolTip("Stop waiting for the browser")
            self.cancel_button.hide()
            row.addStretch(1)
        for link in links:
            row = self._row()
            label = plain_label(reveal(link.name or link.uri), name="toolRowLinkName")
            label.setToolTip(plain_tooltip(link.uri))
            row.addWidget(label, 1)
            for action, words in ((OPEN, "Open"), (ATTACH, "Attach")):
                button = self._button(row, words, f"toolRowLink{words}", self._emitter(action, server, link.uri))
                button.setAccessibleName(f"{words} {reveal(link.uri)}")
                button.setToolTip(plain_tooltip(f"{words} {link.uri} (read from {server})"))
                self.link_buttons[(action, link.uri)] = button
        self._layout.addWidget(self.note)

    def _row(self) -> QHBoxLayout:
        row = QWidget()
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        self._layout.addWidget(row)
        row.show()  # a child added to a strip already on screen is hidden until shown
        self._rows.append(row)
        return line

    def _emitter(self, action: str, server: str, uri: str) -> Callable[[], None]:
        return lambda: self.requested.emit(self, action, server, uri)

    @staticmethod
    def _button(row: QHBoxLayout, text: str, name: str, slot: Callable[[], None]) -> QPushButton:
        button = QPushButton(no_mnemonic(text))
        button.setObjectName(name)
        button.setAutoDefault(False)
        button.clicked.connect(slot)
        row.addWidget(button)
        return button

    # -- reports from McpChatActions ------------------------------------------------------
    def set_note(self, text: str) -> None:
        self.note.setText(text)
        self.note.setVisible(bool(text))

    def set_signing_in(self, running: bool) -> None:
        if self.sign_in_button is not None:
            self.sign_in_button.setEnabled(not running)
        if self.cancel_button is not None:
            self.cancel_button.setVisible(running)


class ResourceTextDialog(QDialog):
    """A resource read from a server, shown as plain text (binary parts by their size only)."""

    def __init__(self, outcome: "ReadOutcome", parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("resourceTextDialog")
        self.setWindowTitle(reveal(f"{outcome.server}: {outcome.uri}")[:200])
        self.resize(640, 480)
        layout = QVBoxLayout(self)
        head = plain_label(reveal(f"{outcome.uri} — from {outcome.server}"), wrap=True, selectable=True)
        layout.addWidget(head)
        parts: list[str] = []
        for content in outcome.contents:
            mime = f" ({content.mime_type})" if content.mime_type else ""
            if content.binary:
                parts.append(f"[binary content{mime}: {content.size:,} bytes, not shown]")
            else:
                cut = f"\n[cut: the resource has {content.size:,} characters]" if content.truncated else ""
                parts.append(f"{reveal(content.text or '')}{cut}")  # bidi / invisible characters show
        self.text = QPlainTextEdit()  # plain text: nothing in it is rendered or loaded
        self.text.setObjectName("resourceText")
        self.text.setReadOnly(True)
        self.text.setPlainText("\n\n".join(parts) if parts else "(the server sent no content)")
        layout.addWidget(self.text, 1)
        if outcome.notice:
            layout.addWidget(plain_label(outcome.notice, wrap=True))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout.addWidget(buttons)


class McpChatActions:
    """Does what a tool row's strip asks, over the manager's live connections."""

    def __init__(self, manager: Any, bar: "AttachmentBar", parent: QWidget,
                 open_url: Callable[[str], None] | None = None) -> None:
        self.manager = manager
        self.bar = bar
        self.parent = parent
        self.open_url = open_url or _system_browser
        self.dialog: ResourceTextDialog | None = None  # the last one opened (tests)
        self.tasks: set[asyncio.Task[Any]] = set()

    def connections(self) -> Mapping[str, "McpConnection"]:
        return self.manager.connections

    def handle(self, strip: ToolRowActions, action: str, server: str, argument: str) -> None:
        if action == CANCEL_SIGN_IN:
            self.manager.cancel_sign_in(server)
            return
        work = self.sign_in(strip, server) if action == SIGN_IN else self.use_link(strip, action, server, argument)
        task = asyncio.ensure_future(work)
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def sign_in(self, strip: ToolRowActions, server: str) -> bool:
        def waiting(s: ToolRowActions) -> None:
            s.set_signing_in(True)
            s.set_note("Waiting for the sign-in in your browser…")

        _report(strip, waiting)
        try:
            ok = await self.manager.sign_in(server, self.open_url)
        finally:
            _report(strip, lambda s: s.set_signing_in(False))
        conn = self.connections().get(server)
        reason = conn.reason if conn is not None else ""
        note = (f"Signed in to {server}. Ask again to use its tools." if ok
                else reason or f"The sign-in to {server} did not complete.")
        _report(strip, lambda s: s.set_note(note))
        return ok

    async def use_link(self, strip: ToolRowActions, action: str, server: str, uri: str) -> "ReadOutcome | None":
        from cks_desktop.mcp.connection import Status
        from cks_desktop.mcp.requests import RequestFailed
        from cks_desktop.mcp.resources import read_resource

        conn = self.connections().get(server)
        if conn is None or conn.status is not Status.READY:
            _report(strip, lambda s: s.set_note(f"The MCP server '{server}' is not running; start it to read "
                                                "this resource."))
            return None
        _report(strip, lambda s: s.set_note(f"Reading {uri}…"))
        try:
            outcome = await read_resource(conn, uri)
        except RequestFailed as exc:
            _report(strip, lambda s: s.set_note(str(exc)))
            return None
        if action == ATTACH:
            self.bar.add(outcome)
            _report(strip, lambda s: s.set_note(f"Attached to your next message. {outcome.notice}".strip()))
        else:
            _report(strip, lambda s: s.set_note(outcome.notice))
            self.dialog = ResourceTextDialog(outcome, self.parent)
            self.dialog.open()  # never exec(): the chat keeps running
        return outcome


def _report(strip: ToolRowActions, change: Callable[[ToolRowActions], Any]) -> None:
    """Tell the strip, unless its row was rebuilt or deleted meanwhile."""
    try:
        change(strip)
    except RuntimeError:  # the C++ widget is gone (the chat was switched or cleared)
        pass


def _system_browser(url: str) -> None:
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices

    QDesktopServices.openUrl(QUrl(url))


def install_chat_actions(view: Any, manager: Any, bar: "AttachmentBar", parent: QWidget) -> McpChatActions:
    """Connect a chat view's tool-row strips to the manager (main_window)."""
    actions = McpChatActions(manager, bar, parent)
    view.toolActionRequested.connect(actions.handle)
    return actions
