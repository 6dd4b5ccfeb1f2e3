"""Settings → MCP servers: the list with live status, and what to do with each.

Changes here apply at once (a server is started, restarted or stopped to
match), unlike the other pages, which wait for Save: a server's state is
visible in the status bar and people expect the list to be the truth.
Cancel cannot honestly undo them (a removed server's keychain secrets are
deleted, a started server has already run), so the page and the dialog's
footer say that they are applied and Cancel keeps them; ``applied`` carries
a few words for each change made (the footer lists them).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import shiboken6
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (QFileDialog, QHBoxLayout, QHeaderView, QMessageBox, QPlainTextEdit,
                               QPushButton, QSplitter, QTreeWidget, QTreeWidgetItem, QVBoxLayout, QWidget)

from cks_desktop.mcp.config import ConfigError, Transport, parse_servers, remove_server, set_enabled
from cks_desktop.ui.dialogs import confirm, run_dialog
from cks_desktop.ui.labels import plain_message_box
from cks_desktop.ui.settings.mcp_editor import McpServerEditor
from cks_desktop.ui.settings.mcp_form import ServerForm
from cks_desktop.ui.settings.sign_in_address import SignInAddress
from cks_desktop.ui.settings.widgets import note_label
from cks_desktop.ui.status import COLOURS, WORDS, dot_icon
from cks_desktop.ui.tasks import TaskTracker
from cks_desktop.ui.text import plain_tooltip

if TYPE_CHECKING:
    from cks_desktop.runtime import AppServices

TAIL_LINES = 200


class McpPage(QWidget):
    changed = Signal()
    applied = Signal(str)  # a change saved at once, in a few words ("added “toy”")
    reportOpened = Signal(object)  # the message box with an import report (tests wait on it)

    def __init__(self, services: "AppServices", tasks: TaskTracker) -> None:
        super().__init__()
        self.services = services
        self.tasks = tasks
        self.setObjectName("mcpPage")
        layout = QVBoxLayout(self)
        self.note = note_label("Changes to servers apply right away, and Cancel does not undo them. Servers "
                               "use the same “mcpServers” entries as Claude Desktop.")
        self.note.setObjectName("mcpAppliesAtOnce")
        layout.addWidget(self.note)
        splitter = QSplitter(Qt.Orientation.Vertical)
        self.list = QTreeWidget()
        self.list.setObjectName("mcpServerList")
        self.list.setAccessibleName("MCP servers")
        self.list.setHeaderLabels(["Server", "Status", "Tools", "Runs"])
        self.list.setRootIsDecorated(False)
        self.list.header().setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        splitter.addWidget(self.list)

        details = QWidget()
        details_layout = QVBoxLayout(details)
        details_layout.setContentsMargins(0, 0, 0, 0)
        self.reason_label = note_label()
        self.reason_label.setObjectName("mcpReason")
        self.reason_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        details_layout.addWidget(self.reason_label)
        self.sign_in_address = SignInAddress()  # shown at once when a sign-in starts (no browser needed)
        details_layout.addWidget(self.sign_in_address)
        self.log_label = note_label()
        self.log_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        details_layout.addWidget(self.log_label)
        # The server's handshake instructions: what the model reads about it, quoted as data.
        # A server's instructions can run to pages (server-everything's are ~2,000 characters): a short
        # scrolling box, so they never squeeze the log view below them.
        self.instructions_label = note_label()
        self.instructions_label.setText("Instructions from the server (the model reads them as data):")
        details_layout.addWidget(self.instructions_label)
        self.instructions_view = QPlainTextEdit()
        self.instructions_view.setObjectName("mcpInstructions")
        self.instructions_view.setAccessibleName("The server's instructions")
        self.instructions_view.setReadOnly(True)
        self.instructions_view.setMaximumHeight(96)
        details_layout.addWidget(self.instructions_view)
        self._show_instructions("")
        self.stderr_view = QPlainTextEdit()
        self.stderr_view.setObjectName("mcpStderr")
        self.stderr_view.setAccessibleName("The server's recent error output")
        self.stderr_view.setReadOnly(True)
        self.stderr_view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.stderr_view.setPlaceholderText("The server's log (its error output and log messages, last 200 "
                                            "lines) shows here.")
        self.stderr_view.setMaximumBlockCount(TAIL_LINES)
        details_layout.addWidget(self.stderr_view)
        # The view follows the shown server's log while it is open (its stderr, its log messages
        # with their level): redrawn at most every 150 ms, however fast lines arrive.
        self._log_name = ""
        self._log_unsubscribe: Any = None
        self._tail_timer = QTimer(self)
        self._tail_timer.setSingleShot(True)
        self._tail_timer.setInterval(150)
        self._tail_timer.timeout.connect(self._show_tail)
        splitter.addWidget(details)
        splitter.setSizes([220, 200])
        layout.addWidget(splitter, 1)

        buttons = QHBoxLayout()
        self.add_button = self._button("Add…", "mcpAdd", buttons)
        self.edit_button = self._button("Edit…", "mcpEdit", buttons)
        self.toggle_button = self._button("Disable", "mcpToggle", buttons)
        self.restart_button = self._button("Restart", "mcpRestart", buttons)
        self.remove_button = self._button("Remove…", "mcpRemove", buttons)
        self.sign_in_button = self._button("Sign in", "mcpSignIn", buttons)  # OAuth (mcp/oauth.py)
        self.sign_out_button = self._button("Sign out", "mcpSignOut", buttons)
        buttons.addStretch(1)
        self.import_button = self._button("Import from Claude Desktop…", "mcpImport", buttons)
        layout.addLayout(buttons)

        self.add_button.clicked.connect(lambda: self.open_editor(None))
        self.edit_button.clicked.connect(lambda: self.open_editor(self.current()))
        self.toggle_button.clicked.connect(lambda: self.tasks.spawn(self.toggle(self.current()), name="mcp-toggle"))
        self.restart_button.clicked.connect(lambda: self.tasks.spawn(self.restart(self.current()), name="mcp-restart"))
        self.remove_button.clicked.connect(lambda: self.tasks.spawn(self.remove(self.current()), name="mcp-remove"))
        self.sign_in_button.clicked.connect(lambda: self.tasks.spawn(self.sign_in(self.current()), name="mcp-sign-in"))
        self.sign_out_button.clicked.connect(
            lambda: self.tasks.spawn(self.sign_out(self.current()), name="mcp-sign-out"))
        self.import_button.clicked.connect(lambda: self.tasks.spawn(self.import_claude(), name="mcp-import"))
        self.list.currentItemChanged.connect(lambda *_: self._show_details())
        self.list.itemDoubleClicked.connect(lambda item, _col: self.open_editor(item.text(0)))
        self.refresh()

    def _button(self, text: str, name: str, row: QHBoxLayout) -> QPushButton:
        button = QPushButton(text)
        button.setObjectName(name)
        button.setAutoDefault(False)
        row.addWidget(button)
        return button

    # -- the list ----------------------------------------------------------------------
    def _rows(self) -> list[Any]:
        manager = self.services.mcp
        if manager is not None:
            return manager.statuses()
        configs, problems = parse_servers(self.services.settings.mcp_servers)
        rows = []
        for name in self.services.settings.mcp_servers:
            config = configs.get(name)
            rows.append(_Row(name, config.enabled if config else False, "failed" if name in problems else "stopped",
                             problems.get(name, "MCP support is starting…"), 0,
                             config.transport if config else "", config.describe() if config else ""))
        return rows

    def refresh(self) -> None:
        current = self.current()
        self.list.clear()
        for state in self._rows():
            status = str(state.status)
            shown = WORDS.get(status, status) if state.enabled or status == "failed" else "disabled"
            item = QTreeWidgetItem([state.name, shown, str(state.tools) if state.tools else "",
                                    state.target])
            item.setIcon(1, dot_icon(COLOURS.get(status if state.enabled else "stopped", COLOURS["stopped"])))
            item.setToolTip(1, plain_tooltip(state.reason or shown))
            item.setData(0, Qt.ItemDataRole.UserRole, state)
            self.list.addTopLevelItem(item)
            if state.name == current:
                self.list.setCurrentItem(item)
        first = self.list.topLevelItem(0)
        if self.list.currentItem() is None and first is not None:
            self.list.setCurrentItem(first)
        self._show_details()

    def on_status_event(self, _event: object) -> None:
        self.refresh()

    def current(self) -> str:
        item = self.list.currentItem()
        return item.text(0) if item is not None else ""

    def select(self, name: str) -> None:
        for i in range(self.list.topLevelItemCount()):
            item = self.list.topLevelItem(i)
            if item is not None and item.text(0) == name:
                self.list.setCurrentItem(item)
                return

    def _show_details(self) -> None:
        item = self.list.currentItem()
        has = item is not None
        for button in (self.edit_button, self.toggle_button, self.restart_button, self.remove_button):
            button.setEnabled(has)
        remote = item is not None and getattr(item.data(0, Qt.ItemDataRole.UserRole), "transport", "") == Transport.HTTP
        for button in (self.sign_in_button, self.sign_out_button):
            button.setVisible(remote)
            button.setEnabled(remote and self.services.mcp is not None)
        if item is None:
            self.reason_label.setText("No MCP servers yet. Add one, or import the ones Claude Desktop uses."
                                      if not self.list.topLevelItemCount() else "")
            self.log_label.setText("")
            self._show_instructions("")
            self.stderr_view.setPlainText("")
            return
        state = item.data(0, Qt.ItemDataRole.UserRole)
        status = str(state.status)
        self.toggle_button.setText("Disable" if state.enabled else "Enable")
        self.restart_button.setEnabled(state.enabled and self.services.mcp is not None)
        self.reason_label.setText(f"{state.name}: {WORDS.get(status, status) if state.enabled else 'disabled'}"
                                  + (f" — {state.reason}" if state.reason else ""))
        manager = self.services.mcp
        if manager is not None:
            self.log_label.setText(f"Log file: {manager.log_path(state.name)}")
            conn = manager.connections.get(state.name)
            text = (conn.instructions or "") if conn is not None else ""
            from cks_desktop.untrusted_text import reveal

            self._show_instructions(reveal(text[:2000]))
            self._follow_log(state.name)
            self._show_tail()

    def _show_instructions(self, text: str) -> None:
        """The instructions box and its heading, hidden when the server sent none."""
        self.instructions_view.setPlainText(text)
        self.instructions_label.setVisible(bool(text))
        self.instructions_view.setVisible(bool(text))

    def _follow_log(self, name: str) -> None:
        """Listen to ``name``'s log (and stop listening to the one shown before)."""
        manager = self.services.mcp
        if name == self._log_name or manager is None:
            return
        if self._log_unsubscribe is not None:
            self._log_unsubscribe()
        timer = self._tail_timer
        self._log_name = name
        def changed() -> None:
            if shiboken6.isValid(timer) and not timer.isActive():
                timer.start()

        self._log_unsubscribe = unsubscribe = manager.server_log(name).subscribe(changed)
        self.destroyed.connect(lambda *_: unsubscribe())  # a closed dialog's page stops listening

    def _show_tail(self) -> None:
        manager = self.services.mcp
        if manager is None or not self._log_name or self.current() != self._log_name:
            return
        self.stderr_view.setPlainText("\n".join(manager.stderr_tail(self._log_name, TAIL_LINES)))
        bar = self.stderr_view.verticalScrollBar()
        bar.setValue(bar.maximum())

    # -- actions -----------------------------------------------------------------------------
    def open_editor(self, name: str | None) -> McpServerEditor | None:
        form = None
        if name:
            raw = self.services.settings.mcp_servers.get(name)
            try:
                form = ServerForm.from_entry(name, raw if isinstance(raw, dict) else {})
            except ConfigError as exc:
                self.reason_label.setText(f"This entry cannot be edited here: {exc} Fix it in "
                                          f"{self.services.settings.path}.")
                return None
        editor = McpServerEditor(self.services, self.tasks, form, self)
        editor.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        editor.saved.connect(lambda saved_name: self.tasks.spawn(self._after_edit(saved_name, name),
                                                                  name="mcp-apply"))
        editor.open()
        return editor

    async def _after_edit(self, name: str, old_name: str | None) -> None:
        manager = self.services.mcp
        if manager is not None:
            if old_name and old_name != name:
                await manager.remove(old_name, delete_config=False)
            self.refresh()
            await manager.reload()
        self.refresh()
        self.select(name)
        self.applied.emit(f"added “{name}”" if not old_name else
                          f"edited “{name}”" if old_name == name else f"renamed “{old_name}” to “{name}”")
        self.changed.emit()

    async def toggle(self, name: str) -> None:
        if not name:
            return
        raw = self.services.settings.mcp_servers.get(name)
        enabled = not (isinstance(raw, dict) and raw.get("enabled", not raw.get("disabled", False)))
        try:
            set_enabled(self.services.settings, name, enabled)
        except ConfigError as exc:
            self.reason_label.setText(str(exc))
            return
        if not self._save():
            return
        self.applied.emit(f"{'enabled' if enabled else 'disabled'} “{name}”")
        if self.services.mcp is not None:
            await self.services.mcp.reload()
        self.refresh()

    def _save(self) -> bool:
        """Save the settings; a failure (disk full, lock taken) is one sentence under the list."""
        try:
            self.services.settings.save()
        except OSError as exc:
            self.reason_label.setText(str(exc))
            return False
        return True

    async def sign_in(self, name: str) -> None:
        """Connect with the browser step allowed: the system browser shows the authorization page."""
        if name and self.services.mcp is not None:
            try:
                await self.services.mcp.sign_in(name, self.sign_in_address.opener(name))
            finally:
                self.sign_in_address.done()
            self.refresh()

    async def sign_out(self, name: str) -> None:
        if name and self.services.mcp is not None:
            had = await self.services.mcp.sign_out(name)
            self.refresh()
            if had:
                self.reason_label.setText(f"{name}: signed out; its tokens were removed from the keychain.")

    async def restart(self, name: str) -> None:
        if name and self.services.mcp is not None:
            await self.services.mcp.restart(name)
            self.refresh()

    async def remove(self, name: str) -> bool:
        if not name:
            return False
        ok = await confirm(self.window(), "Remove MCP server", f"Remove the MCP server “{name}”?",
                           informative="Its entry and the secrets saved for it are deleted; its tools disappear "
                                       "from the chat.", accept_text="Remove", destructive=True)
        if not ok:
            return False
        if self.services.mcp is not None:
            await self.services.mcp.remove(name)
        else:
            remove_server(self.services.settings, name, self.services.secrets)
            self._save()
        self.applied.emit(f"removed “{name}”")
        self.refresh()
        return True

    async def import_claude(self, path: Path | None = None) -> Any:
        from cks_desktop.mcp.claude_import import ClaudeImportError, find_config, import_claude

        if path is None and find_config() is None:
            picked = await self._pick_file()
            if not picked:
                return None
            path = Path(picked)
        try:
            report = import_claude(self.services.settings, self.services.secrets, path)
        except ClaudeImportError as exc:
            await self._tell("Import from Claude Desktop", str(exc))
            return None
        if report.imported and self._save():
            self.applied.emit(f"imported {', '.join(f'“{n}”' for n in report.imported)}")
            if self.services.mcp is not None:
                await self.services.mcp.reload()
        self.refresh()
        lines = [f"From {report.source}:"]
        lines.append(f"Imported: {', '.join(report.imported)}." if report.imported else "Nothing new was imported.")
        lines += [f"Skipped {name}: {why}." for name, why in report.skipped]
        if report.secrets_stored:
            where = "the keychain" if self.services.secrets.secure else "memory for this run only"
            lines.append(f"Secret values moved to {where}: {', '.join(report.secrets_stored)}.")
        await self._tell("Import from Claude Desktop", "\n".join(lines))
        return report

    async def _pick_file(self) -> str:
        dialog = QFileDialog(self, "Claude Desktop config", str(Path.home()), "JSON files (*.json)")
        dialog.setFileMode(QFileDialog.FileMode.ExistingFile)
        try:
            if await run_dialog(dialog) and dialog.selectedFiles():
                return dialog.selectedFiles()[0]
            return ""
        finally:
            dialog.deleteLater()

    async def _tell(self, title: str, text: str) -> None:
        box = plain_message_box(self, icon=QMessageBox.Icon.Information, title=title, text=text,
                                buttons=QMessageBox.StandardButton.Ok)
        box.setObjectName("mcpReport")
        box.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        try:
            shown = asyncio.ensure_future(run_dialog(box))
            await asyncio.sleep(0)  # let it open
            self.reportOpened.emit(box)
            await shown
        finally:
            box.deleteLater()


@dataclass(frozen=True)
class _Row:
    """A list row before the MCP manager exists (the fields of ``ServerState``)."""

    name: str
    enabled: bool
    status: str
    reason: str
    tools: int
    transport: str
    target: str

