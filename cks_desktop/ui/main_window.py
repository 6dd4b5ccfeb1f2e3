"""The main window: composition only.

Sessions on the left, the graph in the centre, the chat dock on the right,
the status bar at the bottom; menus and shortcuts; the quit question. Each
feature's logic lives in its own folder; this file builds them and connects a
few app-level signals.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from dataclasses import replace
from typing import Any

from PySide6.QtCore import QByteArray, QTimer, QUrl, Qt, Signal
from PySide6.QtGui import QAction, QCloseEvent, QDesktopServices, QKeySequence, QShortcut
from PySide6.QtWidgets import QApplication, QDockWidget, QMainWindow, QMessageBox, QWidget

from cks_desktop import APP_NAME
from cks_desktop.runtime import AppServices
from cks_desktop.settings import Ui
from cks_desktop.ui import theme
from cks_desktop.ui.approval.approver import GuiApprover
from cks_desktop.ui.approval.dialog import dialog_presenter
from cks_desktop.ui.bridge import EventBridge
from cks_desktop.ui.chat.controller import ChatController
from cks_desktop.ui.chat.panel import ChatPanel
from cks_desktop.ui.chat.setup import setup_notice_html
from cks_desktop.ui.dialogs import confirm
from cks_desktop.ui.graph.view import GraphView
from cks_desktop.ui.labels import plain_message_box
from cks_desktop.ui.sessions.activity import Activity, SessionActivity
from cks_desktop.ui.sessions.presenter import SessionsPresenter
from cks_desktop.ui.sessions.rail import RAIL_WIDTH
from cks_desktop.ui.sessions.sidebar import SessionsSidebar
from cks_desktop.ui import window_layout
from cks_desktop.ui import accessible_names, dialog_fit, graph_io, wheel_guard, window_fit
from cks_desktop.ui.settings.watcher import SettingsWatcher
from cks_desktop.ui.status import StatusWidgets
from cks_desktop.ui.tasks import TaskTracker
from cks_desktop.ui.text import open_in_browser
from cks_desktop.ui.theme.menu import ThemeMenu
from cks_desktop.ui.theme.window import decorate as decorate_menus
from cks_desktop.ui.theme.credits import credits_text
from cks_desktop.ui.tab_regions import next_stop

log = logging.getLogger(__name__)
FIRST_SESSION = "My first session"


class MainWindow(QMainWindow):
    quitRequested = Signal()
    approvalDialogOpened = Signal(object)  # the ApprovalDialog, once it is on screen
    settingsDialogOpened = Signal(object)
    sessionScopesOpened = Signal(object)
    settingsReloaded = Signal(object)  # the top-level keys another process changed in settings.json
    askKept = Signal(str)  # the session whose chat now holds an answer of the Ask window

    def __init__(self, services: AppServices) -> None:
        super().__init__()
        app = QApplication.instance()
        if app is not None:
            wheel_guard.install(app)  # the wheel never changes a value the person did not pick
            dialog_fit.install(app)  # dialogs open whole on the screen, centred on their window
            accessible_names.install(app)  # a control nobody named is read by its placeholder or tooltip
        self.services = services
        self.tasks = TaskTracker()
        self._quitting = False
        self._ollama_running: bool | None = None  # None: not probed yet
        self.setObjectName("mainWindow")
        self.setWindowTitle(APP_NAME)
        self.setDockOptions(QMainWindow.DockOption.AnimatedDocks | QMainWindow.DockOption.AllowTabbedDocks)

        # one queue for every modal host dialog: approvals, and MCP servers' elicitation / sampling
        self.modal_turn = asyncio.Lock()
        self.approver = GuiApprover(dialog_presenter(lambda: self, self._session_title,
                                                     on_open=self.approvalDialogOpened.emit), self.modal_turn)
        self.controllers: dict[str, ChatController] = {}
        # Settings → Share with other apps: served in this window's background; "this app asks too" asks here
        self.share_service = services.share_service(app_approver=self.approver)

        # core events → GUI thread
        self.store_bridge = EventBridge(self)
        self.store_bridge.attach(services.store.subscribe)
        self.mcp_bridge = EventBridge(self)
        # settings.json saved by another process (a terminal's `mcp add`, an editor)
        self.settings_watcher = SettingsWatcher(services.settings, self)

        # centre: the graph (store events arrive through store_bridge, connected in _connect)
        self.graph_view = GraphView(services.store, services.registry, attach_store=False)
        self.graph_view.communities.providers = services.providers  # Summarise asks the chosen model
        self.setCentralWidget(self.graph_view)

        # left: sessions
        self.sessions = SessionsPresenter(services.store)
        self.sidebar = SessionsSidebar(self.sessions, self.tasks)
        self.sessions_dock = self._dock("Sessions", "sessionsDock", self.sidebar,
                                        Qt.DockWidgetArea.LeftDockWidgetArea)
        self.sidebar.setMinimumWidth(window_layout.SESSIONS_MIN)
        self.activity = SessionActivity()  # which other sessions answer, or have an unread answer
        self._unfolded_width = 0

        # right: chat
        self.chat_panel = ChatPanel()
        self.chat_panel.tasks = self.tasks
        self.chat_dock = self._dock("Chat", "chatDock", self.chat_panel, Qt.DockWidgetArea.RightDockWidgetArea)
        self.chat_panel.setMinimumWidth(window_layout.CHAT_MIN)
        self._layout_checked = False

        # right, a tab beside the chat (hidden until View → Documents): the session's documents
        from cks_desktop.ui.documents_panel import DocumentsPanel

        self.documents_panel = DocumentsPanel(services.documents, self.tasks.spawn)
        self.documents_dock = self._dock("Documents", "documentsDock", self.documents_panel,
                                         Qt.DockWidgetArea.RightDockWidgetArea)
        self.tabifyDockWidget(self.chat_dock, self.documents_dock)
        self.documents_dock.hide()

        # bottom: status
        self.status = StatusWidgets()
        self.statusBar().addPermanentWidget(self.status)
        self.statusBar().setObjectName("statusBar")
        store = services.store
        self.status.set_database(getattr(store, "backend", "sqlite"), str(getattr(store, "where", "")))

        self._build_menus()
        self._connect()
        self._start_change_feed()
        self._apply_ui_settings()
        self.sessions.refresh()
        self._restore_layout()
        self._refresh_provider()
        self._open_initial_session()

    # -- building ----------------------------------------------------------------
    def _dock(self, title: str, name: str, widget: QWidget, area: Qt.DockWidgetArea) -> QDockWidget:
        dock = QDockWidget(title, self)
        dock.setObjectName(name)
        dock.setWidget(widget)
        dock.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                         | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                         | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        from cks_desktop.ui import dock_title

        dock_title.install(dock)  # the app's title bar: named, themed Float and Close (no stock chrome)
        self.addDockWidget(area, dock)
        return dock

    def _action(self, menu: Any, text: str, slot: Any,
                shortcut: QKeySequence | QKeySequence.StandardKey | str | None = None,
                name: str = "") -> QAction:
        action = QAction(text, self)
        if shortcut is not None:
            action.setShortcut(QKeySequence(shortcut))
        if name:
            action.setObjectName(name)
        action.triggered.connect(slot)
        menu.addAction(action)
        return action

    def _open_chat_settings(self, session_id: str) -> None:
        """The sidebar's Chat settings…: that session's chat, then its settings panel."""
        if self.sidebar.current_id != session_id:
            self.sidebar.select(session_id)
        self.chat_panel.open_session_settings()

    def _build_menus(self) -> None:
        bar = self.menuBar()
        file_menu = bar.addMenu("&File")
        self.new_session_action = self._action(file_menu, "&New session", self.sidebar.create_session,
                                               "Ctrl+N", "newSessionAction")
        file_menu.addSeparator()
        from cks_desktop.ui import documents as documents_ui

        self.documents = documents_ui.install(self, file_menu)  # Add documents… (and drops on the window)
        self.documents_panel.set_add_action(self.documents.action)
        from cks_desktop.ui import extraction as extraction_ui

        self.extraction = extraction_ui.install(self, file_menu)  # Extract knowledge… (menu, panel), progress bar
        self.graph_io = graph_io.install(self, file_menu)  # Import graph… / Export graph…
        self.export_chat_action = self._action(file_menu, "Export &chat…", self.chat_panel.export_chat, None,
                                               "exportChatAction")  # Markdown or JSON, tool calls included
        self.export_chat_action.setToolTip("Save this session's chat as Markdown or JSON, tool calls included")
        file_menu.addSeparator()
        self.settings_action = self._action(file_menu, "&Settings…", lambda: self.open_settings(),
                                            "Ctrl+,", "settingsAction")
        self.settings_action.setMenuRole(QAction.MenuRole.PreferencesRole)
        # Settings → Share with other apps, one step closer: the MCP server for Claude Desktop, VS Code…
        self.share_action = self._action(file_menu, "S&hare with other apps…", lambda: self.open_settings("share"),
                                         None, "shareAction")
        self.share_action.setToolTip("Let Claude Desktop, VS Code, Cursor or another MCP host read and grow "
                                     "the sessions you share")
        theme.bind_icon(self.share_action, "share-network")
        file_menu.addSeparator()
        quit_action = self._action(file_menu, "&Quit", self.close, QKeySequence.StandardKey.Quit, "quitAction")
        quit_action.setMenuRole(QAction.MenuRole.QuitRole)

        edit_menu = bar.addMenu("&Edit")
        # the graph view's own Undo/Redo actions: one shortcut each, enabled state follows its stack
        edit_menu.addAction(self.graph_view.undo_action)
        edit_menu.addAction(self.graph_view.redo_action)
        edit_menu.addSeparator()
        self.find_action = self._action(edit_menu, "&Find…", self._find, "Ctrl+F", "findAction")
        self.find_action.setToolTip("Find in the graph when it has the focus, otherwise in the chat")

        view_menu = bar.addMenu("&View")
        view_menu.addAction(self.sessions_dock.toggleViewAction())
        self.fold_sessions_action = self.sidebar.fold_action  # also the sidebar's own button
        self.fold_sessions_action.setShortcut(QKeySequence("Ctrl+B"))
        self.fold_sessions_action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
        view_menu.addAction(self.fold_sessions_action)
        chat_toggle = self.chat_dock.toggleViewAction()
        chat_toggle.setObjectName("toggleChatAction")
        view_menu.addAction(chat_toggle)
        documents_toggle = self.documents_dock.toggleViewAction()
        documents_toggle.setObjectName("toggleDocumentsAction")
        documents_toggle.setToolTip("Show the session's documents: open, remove, extract knowledge")
        theme.bind_icon(documents_toggle, "files")
        documents_toggle.triggered.connect(self._documents_toggled)
        view_menu.addAction(documents_toggle)
        view_menu.addSeparator()
        self.theme_menu = ThemeMenu(self.services.settings, self)  # System / Light / Dark, live
        view_menu.addMenu(self.theme_menu)

        # every graph tool-bar action, reachable from the menu bar whatever the window's width
        self.graph_menu = bar.addMenu("&Graph")
        self.graph_menu.setObjectName("graphMenu")
        self.graph_menu.setToolTipsVisible(True)
        self.graph_view.fill_menu(self.graph_menu)

        chat_menu = bar.addMenu("&Chat")
        self.send_action = self._action(chat_menu, "&Send", self._send_shortcut, "Ctrl+Return", "sendAction")
        self.stop_action = self._action(chat_menu, "S&top", self._stop_shortcut, None, "stopAction")
        self.stop_action.setToolTip("Stop the running answer (Esc)")
        self.stop_action.setEnabled(False)
        self.ask_action = self._action(chat_menu, "&Ask the documents…", lambda: self.ask_documents(), None,
                                       "askDocumentsAction")
        self.ask_action.setToolTip("Answer a question from this session's documents, every citation checked "
                                   "(or type /ask QUESTION in the chat)")
        self.themes_action = self._action(chat_menu, "&Main themes of the graph…", lambda: self.main_themes(), None,
                                          "mainThemesAction")
        self.themes_action.setToolTip("The main themes of this session's graph, each citing its passages; says "
                                      "first how many model calls it takes (or type /themes in the chat)")
        chat_menu.addSeparator()
        self.clear_chat_action = self._action(chat_menu, "&Clear chat…", self.chat_panel.request_clear, None,
                                              "clearChatAction")
        self.clear_chat_action.setToolTip("Delete every message of this chat (the graph stays); asks first")
        self.session_settings_action = self._action(chat_menu, "Session &settings…",
                                                    self.chat_panel.open_session_settings, None,
                                                    "sessionSettingsAction")
        self.session_settings_action.setToolTip("This session's instructions, temperature, max output tokens, "
                                                "thinking and budget per answer")
        # Esc stops from anywhere in the window, but only while the chat answers: otherwise
        # it stays with the widgets (closing a search, leaving an editor). Dialogs keep their own.
        self._esc = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        self._esc.setContext(Qt.ShortcutContext.WindowShortcut)
        self._esc.setEnabled(False)
        self._esc.activated.connect(self._stop_shortcut)

        help_menu = bar.addMenu("&Help")
        self._action(help_menu, "Open the &log folder", self._open_logs)
        self._action(help_menu, f"&About {APP_NAME}", self._about)
        decorate_menus(self)  # a Phosphor icon on every action, tooltips naming the shortcut

    def _chats_follow_store(self, event: object) -> None:
        for controller in list(self.controllers.values()):
            controller.on_store_event(event)

    def _start_change_feed(self) -> None:
        """Writes of other processes on this data folder (a terminal's ``tools call``,
        ``mcp serve`` answering an MCP host) arrive as store events too, from the feed's
        worker thread, through ``store_bridge`` like any worker-thread write: the graph,
        the sidebar, the inspector and the chat follow them. Started after ``_connect``
        so no event finds the listeners missing; the store stops it on close."""
        from cks_desktop.graph.errors import StoreError

        try:
            self.services.store.start_feed()
        except StoreError as exc:
            log.warning("changes made by other processes will show after reopening: %s", exc)

    def _import_graph(self) -> None:
        """The empty graph's "Import a graph…": the same as File → Import graph…."""
        action = self.graph_io.import_action if self.graph_io is not None else None
        if action is not None:
            action.trigger()

    def _connect(self) -> None:
        self.store_bridge.arrived.connect(self.sessions.on_store_event)
        self.store_bridge.arrived.connect(self.graph_view.on_store_event)
        self.store_bridge.arrived.connect(self._chats_follow_store)
        self.graph_view.askAbout.connect(self.chat_panel.insert_reference)
        self.graph_view.documentRequested.connect(self.open_document)
        self.graph_view.messageRequested.connect(self.chat_panel.reveal_text)
        self.graph_view.assistantRequested.connect(self.chat_panel.focus_input)  # the empty graph's actions
        self.graph_view.importRequested.connect(self._import_graph)
        self.chat_panel.composer.attachDocumentsRequested.connect(self.documents.action.trigger)  # the paperclip
        self.documents_panel.openRequested.connect(self.open_document)
        self.chat_panel.composer.submit_hooks.append(self._ask_hook)
        self.chat_panel.objectsMentioned.connect(self._show_objects)
        self.chat_panel.citationOpened.connect(
            lambda session, c: self.open_document(session, c.document_id, c.start, c.end))
        self.chat_panel.runningChanged.connect(self._esc.setEnabled)
        self.chat_panel.runningChanged.connect(self.stop_action.setEnabled)
        self.chat_panel.runningChanged.connect(lambda running: self.clear_chat_action.setEnabled(not running))
        self.sidebar.sessionActivated.connect(self.open_session)
        self.sidebar.foldedChanged.connect(self._sessions_folded)
        self.sidebar.list.itemDelegate().closeEditor.connect(lambda *_: self.chat_panel.focus_input())
        self.activity.subscribe(self._activity_changed)
        self.sessions.subscribe(self._update_title)
        self.sidebar.sessionDeleted.connect(self._forget_session)
        self.sidebar.scopesRequested.connect(self.open_session_scopes)
        self.sidebar.chatSettingsRequested.connect(self._open_chat_settings)
        self.chat_panel.settingsRequested.connect(lambda page: self.open_settings(page))
        self.chat_panel.providerChosen.connect(self._provider_chosen)
        self.chat_panel.useOllamaRequested.connect(lambda: self._provider_chosen("ollama", ""))
        self.status.providerClicked.connect(lambda: self.open_settings("providers"))
        self.status.databaseClicked.connect(lambda: self.open_settings("storage"))
        self.status.serverClicked.connect(lambda name: self.open_settings("mcp", name))
        self.services.providers.subscribe(self._refresh_provider)
        self.settings_watcher.changed.connect(self._settings_changed_on_disk)

    # -- sessions ----------------------------------------------------------------
    def _session_title(self, session_id: str) -> str:
        return self.sessions.title_of(session_id)

    def _open_initial_session(self) -> None:
        if not self.sessions.sessions:  # a first start: a session to work in right away
            self.sessions.create(FIRST_SESSION)
        last = self._ui().last_session
        self.sidebar.select(last if self.sessions.get(last) else self.sessions.sessions[0].id)

    def controller_for(self, session_id: str) -> ChatController:
        controller = self.controllers.get(session_id)
        if controller is None:
            controller = ChatController(session_id, self.services.assistant, self.approver)
            self.controllers[session_id] = controller
            self.activity.watch(controller)
        return controller

    def open_session(self, session_id: str) -> None:
        self.activity.opened(session_id)
        self.graph_view.set_session(session_id)
        self.documents_panel.set_session(session_id)
        self.chat_panel.set_controller(self.controller_for(session_id) if session_id else None)
        ask = self._ask_window_if_made()
        if ask is not None:
            ask.clear()  # its answer or themes were the last session's
        if session_id:
            self._set_ui(last_session=session_id)
        if self.sidebar.current_id != session_id and session_id:
            self.sidebar.select(session_id)
        self._update_title()
        self._focus_chat_after_switch()

    def _documents_toggled(self, shown: bool) -> None:
        if shown:  # a tab beside the chat: bring it to the front
            self.documents_dock.raise_()

    def open_document(self, session_id: str, document_id: str, start: int | None = None,
                      end: int | None = None) -> None:
        """Show a document (at a passage) in the window's document viewer (ui/provenance/viewer.py)."""
        from cks_desktop.ui.provenance.viewer import viewer_for

        viewer = viewer_for(self, self.services.store, self.tasks.spawn, self.graph_view.inspector.navigate.emit)
        self.tasks.spawn(viewer.open_document(session_id, document_id, start, end), name="open-document")

    def _ask_hook(self, text: str) -> bool:
        """``/ask QUESTION`` in the chat input: the question goes to the Ask window, not to the chat;
        ``/themes``: the Ask window finds the graph's main themes."""
        from cks_desktop.ui.ask_view import ask_question
        from cks_desktop.ui.themes_view import is_themes_command

        question = ask_question(text)
        themes = is_themes_command(text)
        if (question is None and not themes) or not self.current_session:
            return False
        self.chat_panel.composer.input.clear()
        if themes:
            self.main_themes()
        else:
            self.ask_documents(question or "")
        return True

    def _ask_window_if_made(self) -> Any:
        from cks_desktop.ui.ask_view import AskWindow

        found = self.findChild(AskWindow, "askWindow")
        return found if isinstance(found, AskWindow) else None

    def ask_window(self) -> Any:
        """The Ask window (ui/ask_view.py) of this main window, made on first use."""
        from cks_desktop.ui.ask_view import AskWindow
        from cks_desktop.ui.themes_view import ThemesDoor

        found = self._ask_window_if_made()
        if found is not None:
            return found
        services = self.services

        async def ask(q: str) -> Any:
            session = self.current_session
            async with services.providers.use() as provider:
                answer = await services.cases.ask.answer(provider, session, q)
            self.tasks.spawn(self._keep_ask(session, q, answer), name="keep-ask")
            return answer

        async def run_themes(session: str, estimate: Any, progress: Any) -> Any:
            async with services.providers.use() as provider:
                return await services.cases.themes.run(session, provider, estimate=estimate, progress=progress)

        door = ThemesDoor(session=lambda: self.current_session, estimate=services.cases.themes.estimate,
                          run=run_themes, configured=lambda: services.providers.configured)
        return AskWindow(ask, lambda c: self.open_document(self.current_session, c.document_id, c.start, c.end),
                         self.tasks.spawn, self, themes=door)

    async def _keep_ask(self, session_id: str, question: str, answer: Any) -> None:
        """Save an Ask answer into the session's chat (``ChatUseCase.keep_ask``), after the turn the
        chat may be running, so the exchange never lands inside another; the chat shows it at once."""
        from cks_desktop.runtime.chat import ChatEditRefused

        controller = self.controllers.get(session_id)
        while controller is not None and controller.task is not None and not controller.task.done():
            await asyncio.wait([controller.task])
        try:  # on the loop, as the chat's own edits: no turn can start between the check and the write
            self.services.cases.chat.keep_ask(session_id, question, answer)
        except ChatEditRefused as exc:
            self.statusBar().showMessage(str(exc), 10000)
            return
        if controller is not None and controller.loaded:
            controller.load()
        self.askKept.emit(session_id)

    def main_themes(self) -> Any:
        """Show the Ask window and find the current session's main themes (asks first); the task."""
        if not self.current_session:
            return None
        found = self.ask_window()
        found.show()
        found.raise_()
        return found.find_themes()

    def ask_documents(self, question: str = "") -> None:
        """Show the Ask window (ui/ask_view.py) for the current session, answering ``question`` if given."""
        if not self.current_session:
            return
        found = self.ask_window()
        if question:
            found.ask(question)
        else:
            found.show()
            found.raise_()
            found.question.setFocus()

    def _focus_chat_after_switch(self) -> None:
        """The chat input takes the focus on every switch, so the person can type at once —
        except while a title is typed in place (a new session) or while arrow keys walk the
        list (the next key must reach the list; Enter or Tab then leaves it)."""
        if self.sidebar.editing or (self.sidebar.keyboard_switch and self.sidebar.list.hasFocus()):
            return
        self.chat_panel.focus_input()

    def _activity_changed(self, session_id: str, state: Activity) -> None:
        self.sidebar.set_mark(session_id, state)

    def _update_title(self) -> None:
        title = self._session_title(self.sidebar.current_id)
        self.setWindowTitle(f"{title} — {APP_NAME}" if title else APP_NAME)

    @property
    def current_session(self) -> str:
        return self.sidebar.current_id

    def _forget_session(self, session_id: str) -> None:
        self.activity.forget(session_id)
        self.sidebar.set_mark(session_id, Activity.IDLE)
        controller = self.controllers.pop(session_id, None)
        if controller is not None:
            controller.stop()

    # -- chat ----------------------------------------------------------------------
    def _show_objects(self, ids: list[str]) -> None:
        """A tool-call row was clicked: show the objects it read or wrote in the graph."""
        self.graph_view.highlight_objects(ids)
        self.graph_view.center_on(ids)

    def _send_shortcut(self) -> None:
        self.chat_panel.composer.submit()

    def _stop_shortcut(self) -> None:
        self.chat_panel.stop()

    def _find(self) -> None:
        focus = QApplication.focusWidget()
        if focus is not None and self.graph_view.isAncestorOf(focus):
            self.graph_view.search.focus()
            return
        if not self.chat_dock.isVisible():
            self.chat_dock.show()
        self.chat_panel.show_find()

    def _provider_chosen(self, name: str, model: str) -> None:
        try:
            self.services.providers.choose(name, model or None)
        except (ValueError, OSError) as exc:
            self.statusBar().showMessage(f"Could not switch the provider: {exc}", 8000)

    def _refresh_provider(self) -> None:
        holder = self.services.providers
        self.status.set_provider(holder.label())
        if holder.configured:
            self.chat_panel.composer.show_provider(holder.name, holder.model)
            self.chat_panel.view.set_model_name(holder.model)  # beside "Assistant" on each answer
            self.chat_panel.set_setup_notice(None)
        else:
            self.chat_panel.composer.show_provider("", "")
            self.chat_panel.set_setup_notice(setup_notice_html(self._ollama_url(), self._ollama_running))

    def _ollama_url(self) -> str:
        from cks_desktop.llm.profiles import OLLAMA

        return self.services.settings.provider_entry(OLLAMA.name).base_url or OLLAMA.default_base_url

    # -- background start (after the window is painted) ---------------------------
    async def start_background(self) -> None:
        """Import and start what is slow: MCP servers, the Ollama probe."""
        await asyncio.sleep(0)
        jobs = [self._start_mcp()]
        if not self.services.providers.configured:
            jobs.append(self._probe_ollama())
        await asyncio.gather(*jobs)

    async def _start_mcp(self) -> None:
        from cks_desktop.sdk_import import import_sdk_in_thread

        try:
            # Imported in a worker thread (the MCP SDK takes ~0.7 s), under the one SDK import lock:
            # a provider SDK imported on another thread at the same time broke pydantic's imports.
            await import_sdk_in_thread("cks_desktop.mcp.manager")
            manager = self.services.start_mcp(host=self._mcp_host())
        except Exception as exc:
            log.exception("MCP could not start")
            self.statusBar().showMessage(f"MCP servers could not start: {exc}", 10000)
            return
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QDesktopServices

        # A server asking for more permissions during a call (OAuth step-up) opens the browser at once.
        manager.step_up_opener = open_in_browser
        self.mcp_bridge.attach(manager.subscribe)
        self.mcp_bridge.arrived.connect(self._mcp_changed)
        self.status.set_servers(manager.statuses())
        from cks_desktop.ui.chat.slash_commands import install_mcp_features

        # Prompts as slash commands, resources to attach: over the manager's live connections.
        self.mcp_composer = install_mcp_features(self.chat_panel.composer, lambda: manager.connections)
        from cks_desktop.ui.chat.tool_actions import install_chat_actions

        # A tool row's "Sign in to <server>" and its resource links' Open / Attach.
        self.mcp_row_actions = install_chat_actions(self.chat_panel.view, manager, self.mcp_composer.bar, self)

    def _mcp_host(self) -> object:
        """What MCP servers ask of the person (elicitation, sampling): dialogs over this window,
        sampling run with the chat's provider."""
        from cks_desktop.agent.mcp_sampling import ProviderSampler
        from cks_desktop.ui.mcp_host.host import GuiMcpHost

        return GuiMcpHost(lambda: self, ProviderSampler(self.services.providers), turn=self.modal_turn)

    def _mcp_changed(self, _event: object) -> None:
        if self.services.mcp is not None:
            self.status.set_servers(self.services.mcp.statuses())

    async def _probe_ollama(self) -> None:
        from cks_desktop.llm.factory import detect_ollama

        self._ollama_running = await detect_ollama(self._ollama_url())
        self._refresh_provider()

    # -- settings ------------------------------------------------------------------
    def open_session_scopes(self, session_id: str) -> None:
        """The session's Scopes dialog (what its chats grant), opened without a nested loop."""
        from cks_desktop.ui.sessions.scopes_dialog import SessionScopesDialog

        if not session_id:
            return
        dialog = SessionScopesDialog(self.services.settings, session_id, self._session_title(session_id), self)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        self.sessionScopesOpened.emit(dialog)

    def open_settings(self, page: str = "", server: str = "") -> None:
        from cks_desktop.ui.settings.dialog import SettingsDialog

        existing = self.findChild(SettingsDialog)
        if existing is not None and existing.isVisible():
            existing.show_page(page, server)
            existing.raise_()
            return
        dialog = SettingsDialog(self.services, self.tasks, self, share=self.share_service)
        dialog.saved.connect(self._settings_saved)
        self.mcp_bridge.arrived.connect(dialog.mcp_page.on_status_event)
        dialog.show_page(page, server)
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        dialog.open()
        self.settingsDialogOpened.emit(dialog)

    def _settings_saved(self) -> None:
        self.services.apply_tool_policies()
        self.services.providers.invalidate()
        self._apply_ui_settings()

    def _settings_changed_on_disk(self, keys: set[str]) -> None:
        """Another process saved settings.json: show what it changed (unsaved edits here are kept)."""
        if "agent" in keys:
            self.services.apply_tool_policies()
        if "providers" in keys:
            self.services.providers.invalidate()
        if "ui" in keys:
            self._apply_ui_settings()
        if "mcpServers" in keys:
            self._refresh_mcp_lists()
            if self.services.mcp is not None:  # start, stop or restart servers to match the file
                self.tasks.spawn(self._reload_mcp(), name="mcp-reload")
        self.settingsReloaded.emit(keys)

    async def _reload_mcp(self) -> None:
        if self.services.mcp is not None:
            await self.services.mcp.reload()
        self._refresh_mcp_lists()

    def _refresh_mcp_lists(self) -> None:
        from cks_desktop.ui.settings.dialog import SettingsDialog

        if self.services.mcp is not None:
            self.status.set_servers(self.services.mcp.statuses())
        dialog = self.findChild(SettingsDialog)
        if dialog is not None:
            dialog.mcp_page.refresh()

    def _ui(self) -> Ui:
        return self.services.settings.section(Ui)

    def _set_ui(self, **choices: Any) -> None:
        """Keep the window's choices in the settings (saved with the layout, or by the caller)."""
        self.services.settings.set_section(replace(self._ui(), **choices))

    def _apply_ui_settings(self) -> None:
        self.chat_panel.composer.input.set_enter_sends(self._ui().enter_sends)
        self.theme_menu.sync_from_settings()

    # -- layout memory ------------------------------------------------------------
    def _restore_layout(self) -> None:
        ui = self._ui()
        restored = False
        for key, value, restore in (("geometry", ui.geometry, self.restoreGeometry),
                                    ("window_state", ui.window_state, self.restoreState)):
            if value:
                try:
                    restored = bool(restore(QByteArray(base64.b64decode(value)))) or restored
                except (ValueError, TypeError):
                    log.warning("ignoring a saved %s that could not be read", key)
        if not restored:
            self.resize(*window_fit.WANTED)
        self.fit_to_screen(window_fit.FRAME_GUESS)
        self.apply_dock_split(force=not restored)
        if ui.sessions_folded:
            self.sidebar.set_folded(True)

    def apply_dock_split(self, *, force: bool = False) -> bool:
        """Give the graph its share of the width (``window_layout``): always with ``force``, else
        only when the current split (a restored one) would squeeze it. True when it resized."""
        width = self.width()
        folded = RAIL_WIDTH if self.sidebar.folded else None
        docks = [d for d in (self.sessions_dock, self.chat_dock)
                 if d.isVisibleTo(self) and not d.isFloating()]
        sessions = self.sessions_dock.width() if self.sessions_dock in docks else 0
        chat = self.chat_dock.width() if self.chat_dock in docks else 0
        split = window_layout.dock_widths(width, sessions_folded_width=folded) if force else \
            window_layout.sanitised(width, sessions, chat, sessions_folded_width=folded)
        if split is None or not docks:
            return False
        sizes = {self.sessions_dock: split.sessions, self.chat_dock: split.chat}
        self.resizeDocks(docks, [sizes[d] for d in docks], Qt.Orientation.Horizontal)
        return True

    def fit_to_screen(self, frame: tuple[int, int] | None = None) -> None:
        """Keep the whole window, frame included, on its screen's available area (``window_fit``);
        ``frame``: the frame's extra width and height when it cannot be measured yet (None: only
        when it can, after the window manager framed the shown window)."""
        if self.isMaximized() or self.isFullScreen():
            return
        screen = self.screen() or QApplication.primaryScreen()
        if screen is None:
            return
        area, inner, outer = screen.availableGeometry(), self.geometry(), self.frameGeometry()
        measured = (outer.width() - inner.width(), outer.height() - inner.height())
        if frame is None and measured == (0, 0):
            return  # no window manager framed it (offscreen): the size it got before showing stands
        extra = frame if frame is not None and measured == (0, 0) else measured
        # geometry() is the inside; frameGeometry() starts at the frame's corner
        where = window_fit.Rect(outer.x(), outer.y(), inner.width(), inner.height())
        best = window_fit.fitted(window_fit.Rect(area.x(), area.y(), area.width(), area.height()), where, extra)
        if best != where:
            self.resize(best.width, best.height)
            self.move(best.x, best.y)

    def tab_regions(self) -> list[QWidget]:
        """The regions Tab walks, in reading order (ui/tab_regions.py)."""
        graph = self.graph_view
        return [self.sidebar, graph.toolbar, graph.search, graph.canvas, graph, graph.inspector, self.chat_panel]

    def focusNextPrevChild(self, next: bool) -> bool:  # noqa: N802,A002 (Qt's names)
        target = next_stop(self, self.tab_regions(), QApplication.focusWidget(), next)
        if target is None:
            return super().focusNextPrevChild(next)
        target.setFocus(Qt.FocusReason.TabFocusReason if next else Qt.FocusReason.BacktabFocusReason)
        return True

    def showEvent(self, event: Any) -> None:  # noqa: N802
        super().showEvent(event)
        if not self._layout_checked:  # the restored split is known only once the window is laid out
            self._layout_checked = True
            QTimer.singleShot(0, self.fit_to_screen)  # the real frame is known once the window manager framed it
            layout = self.layout()
            if layout is not None:
                layout.activate()
            self.apply_dock_split()
            self._focus_chat_after_switch()

    def resizeEvent(self, event: Any) -> None:  # noqa: N802
        super().resizeEvent(event)
        if self._layout_checked:  # a narrower window: the docks give way before the graph does
            self.apply_dock_split()

    def _sessions_folded(self, folded: bool) -> None:
        """Fold the sessions dock to the rail (no title bar: it would not fit) or give it its width back."""
        self._set_ui(sessions_folded=folded)
        if folded:
            self._unfolded_width = self.sessions_dock.width()
            self.sessions_dock.setTitleBarWidget(QWidget())
            self.sidebar.setMinimumWidth(RAIL_WIDTH)
            self.sidebar.setMaximumWidth(RAIL_WIDTH)
            self.resizeDocks([self.sessions_dock], [RAIL_WIDTH], Qt.Orientation.Horizontal)
        else:
            self.sessions_dock.setTitleBarWidget(None)  # type: ignore[arg-type]  # None: Qt's own title bar again
            self.sidebar.setMaximumWidth(16777215)
            self.sidebar.setMinimumWidth(window_layout.SESSIONS_MIN)
            wanted = self._unfolded_width or window_layout.dock_widths(self.width()).sessions
            self.resizeDocks([self.sessions_dock], [max(wanted, window_layout.SESSIONS_MIN)],
                             Qt.Orientation.Horizontal)

    def save_layout(self) -> None:
        self._set_ui(geometry=base64.b64encode(bytes(self.saveGeometry().data())).decode("ascii"),
                     window_state=base64.b64encode(bytes(self.saveState().data())).decode("ascii"))
        try:
            self.services.settings.save()
        except OSError as exc:
            log.warning("could not save the window layout: %s", exc)

    # -- quitting ------------------------------------------------------------------
    def running_chats(self) -> list[ChatController]:
        return [c for c in self.controllers.values() if c.running]

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        if self._quitting:
            event.accept()
            return
        event.ignore()  # decided asynchronously; the app quits through quitRequested
        self.tasks.spawn(self.request_quit(), name="quit")

    async def request_quit(self) -> bool:
        if self.running_chats():
            ok = await confirm(self, "Quit", "A chat is still answering. Quit anyway?",
                               informative="The running answer is stopped; what it wrote so far is kept.",
                               accept_text="Quit")
            if not ok:
                return False
        self._quitting = True
        self.quitRequested.emit()
        return True

    async def shutdown(self) -> None:
        """Stop chats and dialogs, remember the layout, close servers and clients."""
        self._quitting = True
        self.settings_watcher.close()
        self.save_layout()
        self.approver.deny_all()
        await self.share_service.stop()  # hosts' connections close before the store does
        running = [c.task for c in self.controllers.values() if c.task is not None and not c.task.done()]
        for controller in self.controllers.values():
            controller.stop()
        if running:
            await asyncio.wait(running, timeout=5)
        await self.tasks.cancel_all()
        await self.graph_view.aclose()
        self.store_bridge.detach()
        self.mcp_bridge.detach()
        await self.services.aclose()
        self.hide()

    # -- help ------------------------------------------------------------------------
    def _open_logs(self) -> None:
        QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.services.paths.log_dir)))

    def _about(self) -> QMessageBox:
        """The About box, with the app's own icon (not the style's information sign)."""
        from pathlib import Path

        import cks_desktop
        from cks_desktop import __version__  # read from the package metadata when first shown
        from PySide6.QtGui import QIcon

        box = plain_message_box(self, title=f"About {APP_NAME}", text=f"{APP_NAME} {__version__}")
        icon = QApplication.windowIcon()
        if icon.isNull():
            icon = QIcon(str(Path(cks_desktop.__file__).resolve().parent / "resources" / "cks-desktop.svg"))
        if not icon.isNull():
            box.setIconPixmap(icon.pixmap(64, 64))
        box.setInformativeText("Build knowledge graphs together with an AI assistant.\n"
                               f"Settings file: {self.services.settings.path}\n"
                               f"Data: {self.services.paths.database}\nLogs: {self.services.paths.log_dir}\n\n"
                               "Licensed under the GPL-3.0-or-later.\n\n" + credits_text())
        box.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        box.open()
        return box

