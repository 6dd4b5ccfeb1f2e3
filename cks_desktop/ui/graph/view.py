"""The graph view: canvas, legend, inspector, search and tools, composed.

``GraphView(store, registry, session_id)`` is what the main window puts in its
centre (objectName ``graphView``). Its public surface for the rest of the app:

- ``set_session(id)`` (alias ``show_session``) opens a session's graph;
- ``on_store_event(event)`` takes the store's events (the view subscribes
  itself unless ``attach_store=False``, for a window that forwards them);
- ``highlight_objects(ids)`` / ``center_on(ids)`` for a clicked tool-call row
  (object ids; relation ids highlight both ends);
- ``askAbout(str)`` carries a reference text for the chat input;
- ``aclose()`` saves positions and stops the layout worker.

Hand edits run through ``GraphEditor`` (the tool registry, origin "user");
what they change comes back as store events like any tool's writes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable
from contextvars import ContextVar
from typing import Any

from PySide6.QtCore import QEvent, QObject, QPoint, QTimer, Qt, Signal
from PySide6.QtGui import QAction, QColor, QKeySequence, QResizeEvent, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QMenu, QToolBar, QToolButton, QVBoxLayout, QWidget

from cks_desktop.ui.bridge import EventBridge
from cks_desktop.ui.graph.actions import ViewActions, reference_text
from cks_desktop.ui.graph.canvas import GraphCanvas
from cks_desktop.ui.graph.community_mode import CommunityColouring
from cks_desktop.ui.graph.editor import GraphEditor
from cks_desktop.ui.graph.hops import HOP_ICONS, HopChoice
from cks_desktop.ui.graph.empty import EmptyState
from cks_desktop.ui.graph.inspector import Inspector
from cks_desktop.ui.graph.layout import LayoutRunner
from cks_desktop.ui.graph.legend import Legend
from cks_desktop.ui.graph.minimap import Minimap
from cks_desktop.ui.graph.model import Delta, GraphModel
from cks_desktop.graph.positions import PositionStore
from cks_desktop.ui.graph.search_results import Result, SearchResults
from cks_desktop.ui.graph.searchbar import SearchBar
from cks_desktop.ui.graph.stage import GraphStage
from cks_desktop.ui.graph.sync import GraphSync
from cks_desktop.ui.graph.viewstate import ViewState
from cks_desktop.ui.tasks import TaskTracker
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import plain_tooltip
from cks_desktop.ui.theme import bind_icon, set_role
from cks_desktop.ui.theme.window import decorate_toolbar
from cks_desktop.plural import counted

# Phosphor icon of each tool-bar action and "More" menu item (by object name)
TOOLBAR_ICONS = {
    "graphFit": "corners-out", "graphZoomIn": "magnifying-glass-plus", "graphZoomOut": "magnifying-glass-minus",
    "graphAddObject": "plus-circle", "graphConnectMode": "flow-arrow", "graphDelete": "trash",
    "graphUndo": "arrow-counter-clockwise", "graphFocus": "crosshair", "graphPath": "path",
    "graphMore": "dots-three", "graphRelayout": "shuffle", "graphExportPng": "image",
    "graphExportSvg": "file-arrow-down", "graphMinimapToggle": "map-trifold", "graphFocusHops": HOP_ICONS[1],
    "graphCommunities": "circles-three",
    **{f"graphFocusHops{k}": name for k, name in HOP_ICONS.items()},
}
_ACTING_FOR: ContextVar[str | None] = ContextVar("graph_view_acting_for", default=None)
MINIMAP_FROM = 150  # nodes: below this the whole graph fits on screen anyway
WARM_LAYOUT_AFTER_MS = 500  # after the first paint; see GraphView.__init__


class GraphView(ViewActions, QWidget):
    askAbout = Signal(str)
    importRequested = Signal()  # the empty state's "Import a graph…" (the window owns File → Import)
    assistantRequested = Signal()  # the empty state's "Ask the assistant" (the window focuses the chat)
    changed = Signal(object)  # the picture changed: a Delta for a store change, None for anything else
    documentRequested = Signal(str, str, int, int)  # session, document, start, end: a passage the search found
    messageRequested = Signal(str)  # the text of a chat message the search found (the window scrolls to it)
    _indexing = Signal(str)  # indexing progress, emitted on the search's worker thread, shown on the GUI thread

    def __init__(self, store: Any, registry: Any, session_id: str | None = None, parent: QWidget | None = None,
                 *, positions: PositionStore | None = None, runner: LayoutRunner | None = None,
                 attach_store: bool = True) -> None:
        super().__init__(parent)
        self.setObjectName("graphView")
        self.setAccessibleName("Knowledge graph")
        self.store = store
        self.tasks = TaskTracker()
        self.model = GraphModel()
        self.state = ViewState()
        self.editor = GraphEditor(registry)
        self.editor.on_stack_changed = lambda: self._update_actions() if hasattr(self, "redo_action") else None
        self.runner = runner or LayoutRunner()
        # The layout worker (a process importing igraph) starts once the window is up: started
        # here it cost the first start about 0.1 s of spawning, and its imports then competed
        # with the window's for the CPU. A layout asked for before then starts it itself.
        self._warm_timer = QTimer(self)
        self._warm_timer.setSingleShot(True)
        self._warm_timer.setInterval(WARM_LAYOUT_AFTER_MS)
        self._warm_timer.timeout.connect(self.runner.warm)
        self._warm_timer.start()
        if positions is None and hasattr(store, "transaction"):
            positions = PositionStore.for_store(store)
        self.canvas = GraphCanvas(self.model, self.state)
        self.canvas.setAccessibleName("Graph canvas: nothing selected")
        self.canvas.empty_text = ""  # the empty state is a card of actions (``empty.py``), not a line of text
        self.empty_state = EmptyState(self.canvas)
        self.empty_state.hide()
        self.empty_state.importRequested.connect(self.importRequested.emit)
        self.empty_state.assistantRequested.connect(self.assistantRequested.emit)
        self.canvas.installEventFilter(self)
        self.sync = GraphSync(store, self.canvas, positions, self.runner, self.spawn, self._changed)
        self.minimap = Minimap(self.canvas)
        self.legend = Legend()
        self.inspector = Inspector(store, self.editor, self.spawn, self._name_of,
                                   lambda t: self.canvas.style_.colour_of(t))
        self.inspector.hide()
        self.search = SearchBar()
        self.results = SearchResults(self)
        self.search.field.results = self.results
        self.communities = CommunityColouring(store, self.canvas, self.legend, self.spawn, lambda t: self._say(t))
        self.status = plain_label()
        self.status.setObjectName("graphStatus")
        self._messages: dict[str, str] = {}  # session id → its last status message ("" for no session)
        self._build()
        self._connect()
        self._bridge: EventBridge | None = None
        if attach_store:
            self._bridge = EventBridge(self)
            self._bridge.attach(store.subscribe)
            self._bridge.arrived.connect(self.on_store_event)
        if session_id:
            self.set_session(session_id)
        else:
            self._changed(None)

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """Run ``coro`` on behalf of the session on screen now: what it says when it finishes
        (``_say``) belongs to that session even if the person switched meanwhile."""
        token = _ACTING_FOR.set(self.session_id or "")
        try:
            return self.tasks.spawn(coro)  # the task copies the context, and with it the session
        finally:
            _ACTING_FOR.reset(token)

    # -- building -------------------------------------------------------------------------
    def _build(self) -> None:
        self.toolbar = QToolBar("Graph")
        self.toolbar.setObjectName("graphToolbar")
        self.toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextOnly)
        a = self._act
        self.fit_action = a("Fit", "graphFit", self.canvas.fit, "Show the whole graph (F)")
        self.zoom_in_action = a("Zoom in", "graphZoomIn", lambda: self.canvas.zoom_by(1.25),
                                "Zoom in (+, wheel, pinch)")
        self.zoom_out_action = a("Zoom out", "graphZoomOut", lambda: self.canvas.zoom_by(0.8), "Zoom out (−)")
        self.toolbar.addSeparator()
        self.add_action = a("Add", "graphAddObject", lambda: self.spawn(self.add_object_at(None)),
                            "Add an object (or double-click empty space)")
        self.empty_state.addRequested.connect(self.add_action.trigger)
        self.connect_action = a("Connect", "graphConnectMode", self._toggle_connect,
                                "Drag from one object to another to relate them (also: right-drag or Alt+drag)")
        self.connect_action.setCheckable(True)
        self.delete_action = a("Delete", "graphDelete", lambda: self.spawn(self.delete_selected()),
                               "Delete the selected objects (Del); Ctrl+Z brings them back")
        self.undo_action = a("Undo", "graphUndo", lambda: self.spawn(self.undo()), "Undo your last edit (Ctrl+Z)")
        # Redo lives in the Edit menu (with Undo); not on the bar, which must fit beside the chat.
        self.redo_action = QAction("Redo", self)
        self.redo_action.setObjectName("graphRedo")
        self.redo_action.setToolTip(plain_tooltip("Redo the edit you undid (Ctrl+Shift+Z)"))
        self.redo_action.triggered.connect(lambda *_: self.spawn(self.redo()))
        bind_icon(self.redo_action, "arrow-clockwise")
        self.toolbar.addSeparator()
        self.focus_action = a("Focus", "graphFocus", self._toggle_focus,
                              "Show only the neighbourhood of the selection")
        self.focus_action.setCheckable(True)
        # Only actions on this bar, never widgets: QToolBar leaves widgets (a spin box, a menu
        # button) out of its » overflow menu, so they vanished when the bar was too narrow.
        self.hops = HopChoice(self)
        self.hops.valueChanged.connect(self._hops_changed)
        self.toolbar.addAction(self.hops.action)
        self.path_action = a("Path", "graphPath", self.show_path, "Shortest path between the two selected objects")
        # less frequent things in one menu, so the bar fits beside the chat dock
        menu = QMenu("More", self)
        menu.setObjectName("graphMoreMenu")
        menu.setToolTipsVisible(True)
        self.relayout_action = self._menu_act(menu, "Re-layout", "graphRelayout", lambda: self.spawn(self.relayout()),
                                              "Lay the whole graph out again (pinned objects stay)")
        menu.addSeparator()
        self.export_png_action = self._menu_act(
            menu, "Export as PNG image…", "graphExportPng", lambda: self.spawn(self.export_dialog("png")),
            "Save the view as a PNG image (twice the resolution on screen)")
        self.export_svg_action = self._menu_act(
            menu, "Export as SVG drawing…", "graphExportSvg", lambda: self.spawn(self.export_dialog("svg")),
            "Save the view as an SVG drawing")
        menu.addSeparator()
        self.minimap_action = self._menu_act(menu, "Show the overview map", "graphMinimapToggle",
                                             self._update_minimap, "A small map of the whole graph when zoomed in")
        self.minimap_action.setCheckable(True)
        self.minimap_action.setChecked(True)
        self.communities_action = self._menu_act(
            menu, "Colour by community", "graphCommunities",
            self._toggle_communities,
            "Colour the objects by the community they belong to; the legend lists the communities and their summaries")
        self.communities_action.setCheckable(True)
        self.more_menu = menu
        self.more_action = QAction("More", self)
        self.more_action.setObjectName("graphMore")
        self.more_action.setToolTip(plain_tooltip("Re-layout, export, overview"))
        self.more_action.setMenu(menu)
        self.toolbar.addAction(self.more_action)
        for button_of in (self.hops.action, self.more_action):  # a click opens the menu, not nothing
            button = self.toolbar.widgetForAction(button_of)
            if isinstance(button, QToolButton):
                button.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
                button.setObjectName(button_of.objectName())
        decorate_toolbar(self.toolbar, TOOLBAR_ICONS)  # Phosphor icons, icon-only, shortcut tooltips
        self._tab_reachable()
        for action in (*menu.actions(), *self.hops.menu.actions()):
            if action.objectName() in TOOLBAR_ICONS:
                bind_icon(action, TOOLBAR_ICONS[action.objectName()])
        self._keys()

        set_role(self.inspector, "card")
        set_role(self.results, "card")
        set_role(self.legend, "card")
        self.stage = GraphStage(self.canvas, self.legend, self.inspector, self.minimap)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        top = QHBoxLayout()
        top.setContentsMargins(0, 0, 6, 0)
        top.setSpacing(4)
        top.addWidget(self.toolbar, 1)  # it folds what does not fit into its » menu; the search always shows
        top.addWidget(self.search, 0)
        layout.addLayout(top)
        layout.addWidget(self.stage, 1)
        foot = QHBoxLayout()
        foot.setContentsMargins(8, 2, 8, 2)
        foot.addWidget(self.status, 1)
        layout.addLayout(foot)
        find = QShortcut(QKeySequence("/"), self.canvas)
        find.setContext(Qt.ShortcutContext.WidgetShortcut)
        find.activated.connect(self.search.focus)

    def _keys(self) -> None:
        """Shortcuts on the actions themselves, so the Graph menu and the tooltips name them.
        Single keys act only while the canvas has the focus (typing elsewhere stays typing);
        Undo acts anywhere in the graph view (the inspector's fields keep their own Ctrl+Z)."""
        canvas_keys = ((self.fit_action, "F"), (self.zoom_in_action, "+"), (self.zoom_out_action, "-"),
                       (self.add_action, "A"), (self.connect_action, "C"), (self.delete_action, "Del"))
        for action, keys in canvas_keys:
            action.setShortcut(QKeySequence(keys))
            action.setShortcutContext(Qt.ShortcutContext.WidgetShortcut)
            self.canvas.addAction(action)
        # Undo/Redo are also the window's Edit menu items (the same actions), so they act
        # anywhere in the window; text fields keep their own Ctrl+Z (they claim the key first).
        self.undo_action.setShortcut(QKeySequence(QKeySequence.StandardKey.Undo))
        redo_keys = [QKeySequence("Ctrl+Shift+Z")]  # and the platform's own Redo (Ctrl+Y on Windows), once
        redo_keys += [k for k in QKeySequence.keyBindings(QKeySequence.StandardKey.Redo) if k not in redo_keys]
        self.redo_action.setShortcuts(redo_keys)
        for action in (self.undo_action, self.redo_action):
            action.setShortcutContext(Qt.ShortcutContext.WindowShortcut)
            self.addAction(action)

    def graph_actions(self) -> list[QAction | None]:
        """Every action of the tool bar (the More menu's flattened), None for a separator: what
        the window's Graph menu lists, so each is reachable from the menu bar at any width."""
        return [self.fit_action, self.zoom_in_action, self.zoom_out_action, None,
                self.add_action, self.connect_action, self.delete_action, self.undo_action, None,
                self.focus_action, self.hops.action, self.path_action, None,
                self.relayout_action, self.export_png_action, self.export_svg_action, None, self.minimap_action,
                self.communities_action]

    def fill_menu(self, menu: QMenu) -> None:
        for action in self.graph_actions():
            if action is None:
                menu.addSeparator()
            else:
                menu.addAction(action)

    def _toggle_communities(self) -> None:
        self.communities.set_on(self.communities_action.isChecked(), self.session_id)

    def _menu_act(self, menu: QMenu, text: str, name: str, slot: Any, tip: str) -> QAction:
        action = QAction(text, self)
        action.setObjectName(name)
        action.setToolTip(plain_tooltip(tip))
        action.triggered.connect(lambda *_: slot())
        menu.addAction(action)
        return action

    def _act(self, text: str, name: str, slot: Any, tip: str) -> QAction:
        action = QAction(text, self)
        action.setObjectName(name)
        action.setToolTip(plain_tooltip(tip))
        action.triggered.connect(lambda *_: slot())
        self.toolbar.addAction(action)
        self._tab_reachable()
        return action

    def _tab_reachable(self) -> None:
        """The toolbar's buttons (QToolBar makes them click-only) and its » button take Tab's focus."""
        for button in self.toolbar.findChildren(QToolButton):
            button.setFocusPolicy(Qt.FocusPolicy.TabFocus)

    def _connect(self) -> None:
        c = self.canvas
        c.selectionChanged.connect(self._selection_changed)
        c.activated.connect(self._activated)
        c.contextMenuRequested.connect(self._context_menu)
        c.nodesDragged.connect(self._dragged)
        c.connectRequested.connect(lambda a, b: self.spawn(self.connect_nodes(a, b)))
        c.deleteRequested.connect(lambda: self.spawn(self.delete_selected()))
        c.addRequested.connect(lambda x, y: self.spawn(self.add_object_at((x, y))))
        c.viewportChanged.connect(self._update_minimap)
        self.legend.typeToggled.connect(self._type_toggled)
        self.legend.showAllRequested.connect(self._show_all_types)
        self.legend.typeActivated.connect(self._select_type)
        self.search.queryChanged.connect(lambda q: self.spawn(self.run_search(q)))
        self.search.queryChanged.connect(lambda q: self.spawn(self.run_wide_search(q)))
        self.results.opened.connect(self._open_result)
        self._indexing.connect(self._say)
        self.search.stepRequested.connect(self.step_search)
        i = self.inspector
        i.askAbout.connect(lambda oid: self.askAbout.emit(reference_text(self.model, [oid])))
        i.navigate.connect(self._navigate)
        i.focusRequested.connect(lambda oid: self.focus_on([oid]))
        i.deleteRequested.connect(lambda oid: self.spawn(self.delete_objects([oid])))
        i.pinToggled.connect(self._toggle_pin)
        i.message.connect(self._say)
        i.closed.connect(self._close_inspector)

    # -- public API ----------------------------------------------------------------------
    @property
    def session_id(self) -> str | None:
        return self.model.session_id

    def set_session(self, session_id: str | None) -> asyncio.Future[Any]:
        """Show a session's graph (None: nothing). Small sessions are on screen when this returns;
        the result can be awaited until the first picture of any session is there."""
        self.editor.set_session(session_id or None)
        self.inspector.hide()
        self.results.hide()
        self.search.field.clear()
        self.focus_action.setChecked(False)
        opened = self.sync.open_session(session_id or None)
        self.communities.session_changed(session_id or None)
        self._update_actions()  # the status line: this session's counts and its own last message
        return opened

    show_session = set_session

    def on_store_event(self, event: object) -> None:
        self.sync.on_event(event)
        if getattr(event, "evidence_changed", False):  # sources only: no node changed, the inspector may show them
            self.inspector.sources_changed(event)

    def highlight_objects(self, ids: Iterable[str]) -> None:
        """Mark what a tool call read or wrote (relation ids mark both ends)."""
        self.state.mark(self._object_ids(ids))
        self.canvas.update()

    def center_on(self, ids: Iterable[str]) -> None:
        self.canvas.center_on_indices(self.model.indices_of(self._object_ids(ids)))

    def object_names(self) -> list[str]:
        return [self.model.names[i] for i in self.model.nodes()]

    async def aclose(self) -> None:
        if self._bridge is not None:
            self._bridge.detach()
        await self.sync.flush()
        await self.tasks.cancel_all()
        self._warm_timer.stop()
        self.runner.close()

    def _object_ids(self, ids: Iterable[str]) -> list[str]:
        model, out = self.model, []
        for x in ids:
            if x in model.index:
                out.append(x)
            elif x in model.rel_index:
                j = model.rel_index[x]
                out += [model.node_id(model.src[j]), model.node_id(model.dst[j])]
        return list(dict.fromkeys(out))

    # -- reacting ----------------------------------------------------------------------------
    def _changed(self, delta: Delta | None) -> None:
        self.canvas.ensure_style()
        self.legend.set_types(self.model.live_types(), self.state.hidden_types, self.canvas.style_)
        self.inspector.set_types([t for t, _ in self.model.live_types()])
        obj = self.inspector.object
        if obj is not None and self.inspector.isVisible():
            if obj.id not in self.model.index:
                self._close_inspector()
            elif delta is None or obj.id in delta.touched_ids or delta.removed_edges:
                self.inspector.refresh()
        self._update_minimap()
        self._update_actions()
        self.communities.graph_changed()
        self.changed.emit(delta)

    def _update_empty_state(self) -> None:
        """Show the call to action exactly when an open session has no objects."""
        empty = self.session_id is not None and self.model.node_count == 0
        if empty:
            self.empty_state.place(self.canvas.width(), self.canvas.height(), self.canvas.covered_right)
            self.empty_state.raise_()
        self.empty_state.setVisible(empty)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        # isHidden, not isVisible: the first resize arrives while the window is being shown, before it is visible
        if watched is self.canvas and event.type() == QEvent.Type.Resize and not self.empty_state.isHidden():
            self.empty_state.place(self.canvas.width(), self.canvas.height(), self.canvas.covered_right)
        return super().eventFilter(watched, event)

    def _update_actions(self) -> None:
        n = len(self.state.selection)
        self.delete_action.setEnabled(n > 0)
        self.path_action.setEnabled(n == 2)
        self.undo_action.setEnabled(self.editor.can_undo)
        self.redo_action.setEnabled(self.editor.can_redo)
        has = self.session_id is not None
        self._update_empty_state()
        for act in (self.add_action, self.connect_action, self.relayout_action, self.fit_action):
            act.setEnabled(has)
        counts = (f"{counted(self.model.node_count, 'object', grouped=True)} · "
                  f"{counted(self.model.edge_count, 'relation', grouped=True)}")
        if n:
            counts += f" · {n} selected"
        if self.state.focused:
            counts += f" · focus: {counted(self.state.focus_k, 'hop')}"
        message = self.message
        self.status.setText(f"{counts}    {message}" if message else counts)

    @property
    def message(self) -> str:
        """The status message of the session on screen (each session keeps its own)."""
        return self._messages.get(self.session_id or "", "")

    def _say(self, text: str) -> None:
        """A status message for the session this work is for: the one on screen, or, inside a
        task started by ``spawn``, the one that was on screen when it started."""
        acting = _ACTING_FOR.get()
        session = (self.session_id or "") if acting is None else acting
        self._messages[session] = text
        if session == (self.session_id or ""):
            self._update_actions()

    def _update_minimap(self) -> None:
        show = (self.minimap_action.isChecked() and self.model.node_count >= MINIMAP_FROM
                and not self.canvas.shows_everything())
        self.minimap.setVisible(show)
        if show:
            self.minimap.place()
            self.minimap.update()

    def _selection_changed(self) -> None:
        primary = self.state.primary
        if primary is not None and self.inspector.isVisible():
            self.spawn(self.inspect(primary))
        self._update_actions()
        self._tell_assistive_technology()

    def _activated(self, oid: str) -> None:
        self.state.select(oid)
        self.spawn(self.inspect(oid))
        self._update_actions()
        self._tell_assistive_technology()

    def _tell_assistive_technology(self) -> None:
        """The canvas is painted, not made of widgets: its accessible name says what is selected
        ("Graph canvas: Marie Curie (Person) selected"), so a screen reader reads it on focus and
        on every change (``setAccessibleName`` sends the name-changed event)."""
        selected = [oid for oid in self.state.selection if oid in self.model.index]
        if not selected:
            name = "Graph canvas: nothing selected"
        else:
            i = self.model.index[selected[-1]]
            kind = self.model.type_names[self.model.ntype[i]] if i < len(self.model.ntype) else ""
            name = f"Graph canvas: {self.model.names[i]}" + (f" ({kind})" if kind else "") + " selected"
            if len(selected) > 1:
                name += f", {counted(len(selected), 'object')} in all"
        if self.canvas.accessibleName() != name:
            self.canvas.setAccessibleName(name)

    async def inspect(self, oid: str) -> None:
        i = self.model.index.get(oid)
        self.inspector.set_pinned(i is not None and i in self.model.pinned)
        # a fitted picture (Fit fills the canvas) stays fitted when the sheet opens over its right part
        refit = not self.inspector.isVisible() and self.canvas.shows_everything()
        self.inspector.show()
        if refit and self.stage.covered_right():
            self.canvas.covered_right = self.stage.covered_right()
            self.canvas.fit()
        else:
            self._keep_clear_of_sheet(i)
        await self.inspector.load(oid)

    def _keep_clear_of_sheet(self, i: int | None) -> None:
        """The sheet floats over the canvas's right edge: an inspected object under it moves into
        the middle of the part still visible (nothing moves when it is visible already)."""
        covered = self.stage.covered_right()
        if i is None or not covered:
            return
        vp = self.canvas.viewport
        sx, _sy = vp.to_screen(self.model.xs[i], self.model.ys[i])
        clear = vp.width - covered
        if 24 <= sx <= clear - 24:
            return
        vp.cx += (sx - clear / 2) / vp.scale
        self.canvas.view_moved()

    def _close_inspector(self) -> None:
        self.inspector.object = None
        self.inspector.hide()

    def _navigate(self, oid: str) -> None:
        self.state.select(oid)
        self.center_on([oid])
        self.spawn(self.inspect(oid))
        self._update_actions()

    def _dragged(self, ids: list[str]) -> None:
        self.sync.mark_moved(self.model.indices_of(ids))
        if self.inspector.object is not None and self.inspector.object.id in ids:
            self.inspector.set_pinned(True)
        self.minimap.update()

    def _toggle_pin(self, oid: str) -> None:
        i = self.model.index.get(oid)
        if i is None:
            return
        if i in self.model.pinned:
            self.model.pinned.discard(i)
        else:
            self.model.pinned.add(i)
        self.inspector.set_pinned(i in self.model.pinned)
        self.sync.mark_moved([i])

    def _type_toggled(self, type_name: str, visible: bool) -> None:
        self.state.set_type_visible(type_name, visible)
        self.sync.rebuild()
        self._changed(None)

    def _show_all_types(self) -> None:
        self.state.show_all_types()
        self.sync.rebuild()
        self._changed(None)

    def _select_type(self, type_name: str) -> None:
        mask = self.state.visible_mask(self.model)
        self.state.select_many(self.model.node_id(i) for i in self.model.nodes()
                               if self.model.type_of(i) == type_name and (mask is None or mask[i]))
        self.canvas.update()
        self._update_actions()

    def _toggle_connect(self) -> None:
        self.canvas.connect_mode = self.connect_action.isChecked()
        if self.canvas.connect_mode:
            self._say("Connect: drag from one object to another.")

    # -- focus and path ------------------------------------------------------------------------
    def focus_on(self, ids: list[str]) -> None:
        if not ids:
            self._say("Select an object to focus on.")
            self.focus_action.setChecked(False)
            return
        self.state.set_focus(ids, self.hops.value())
        self.focus_action.setChecked(True)
        self.sync.rebuild()
        mask = self.state.visible_mask(self.model)
        self.canvas.fit([i for i in self.model.nodes() if mask is None or mask[i]], max_scale=1.2)
        self._changed(None)

    def _toggle_focus(self) -> None:
        if self.focus_action.isChecked():
            self.focus_on(list(self.state.selection))
        else:
            self.state.clear_focus()
            self.sync.rebuild()
            self._changed(None)

    def _hops_changed(self, k: int) -> None:
        bind_icon(self.hops.action, HOP_ICONS[k])  # the bar shows the reach as a number
        if self.state.focus_ids is not None:
            self.state.set_focus(self.state.focus_ids, k)
            self.sync.rebuild()
            self._changed(None)

    def show_path(self) -> None:
        sel = self.model.indices_of(self.state.selection)
        if len(sel) != 2:
            self._say("Select exactly two objects (Ctrl+click) to find the path between them.")
            return
        found = self.model.shortest_path(sel[0], sel[1])
        if found is None:
            self.state.clear_path()
            a, b = (self.model.names[i] for i in sel)
            self._say(f"No path between {a} and {b}.")
        else:
            nodes, edges = found
            self.state.set_path(self.model, nodes, edges)
            self.canvas.center_on_indices(nodes)
            self._say(f"Path of {counted(len(edges), 'relation')}.")
        self.canvas.update()

    # -- search ----------------------------------------------------------------------------------
    async def run_search(self, query: str) -> list[str]:
        session = self.session_id
        if not query or session is None:
            self.state.clear_search()
            self.search.set_result("", 0, -1)
            self.canvas.update()
            return []
        try:
            hits = await asyncio.to_thread(self.store.search_objects, session, query, None, 200)
        except Exception as exc:  # a query the index cannot parse: say so, keep going
            self._say(str(exc))
            hits = []
        if session != self.session_id or query != self.search.field.text().strip():
            return []
        ids = [obj.id for obj, _ in hits if obj.id in self.model.index]
        self.state.set_search(query, ids)
        self.search.set_result(query, len(ids), self.state.search_pos)
        if ids:
            self.center_on([ids[0]])
        self.canvas.update()
        return ids

    async def run_wide_search(self, query: str) -> list[Result]:
        """Objects, passages and chat messages for the results list (ask use case, worker thread)."""
        from cks_desktop.runtime.ask import AskUseCase, search

        session = self.session_id
        if not query or session is None:
            self.results.hide()
            return []
        self._say("Searching the documents and the chat…")
        try:
            found = await search(self.store, session, query, k=5, progress=self._index_progress)
        except AskUseCase.Error as exc:  # a search it cannot run: one sentence, the graph search stands
            self._say(str(exc))
            self.results.hide()
            return []
        if session != self.session_id or query != self.search.field.text().strip():
            return []
        results = [Result("object", f"{o.name} ({o.type})", object_id=o.id) for o in found.objects]
        results += [Result("passage", f"{h.document}: {h.text}", document_id=h.document_id, start=h.start,
                           end=h.end) for h in found.passages]
        results += [Result("message", f"{m.role} #{m.seq}: {m.text}", message_text=m.text) for m in found.messages]
        self.results.show_results(results, " ".join(found.notes))
        self._place_results()
        self._say("" if results else "Nothing in the documents or the chat matches.")
        return results

    def _index_progress(self, done: int, total: int, name: str) -> None:
        """On the worker thread: only a queued signal crosses to the window."""
        if name:
            self._indexing.emit(f"Indexing {name} for search: document {done + 1} of {total}…")

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802 (Qt naming)
        super().resizeEvent(event)
        if self.results.isVisible():
            self._place_results()  # the list's room changed: its width and its rows' wrapping follow

    def _place_results(self) -> None:
        field = self.search.field
        corner = field.mapTo(self, field.rect().bottomLeft())
        # as wide as the longest entry, within the view; what is still longer wraps (search_results.py)
        width = max(1, min(max(420, field.width(), self.results.widest()), self.width() - 16))
        x = max(8, min(corner.x(), self.width() - width - 8))
        most = max(120, self.height() // 2)
        self.results.setGeometry(x, corner.y() + 2, width, most)  # rows wrap to this width (no scroll bar)
        height = min(self.results.content_height(), most)
        self.results.setGeometry(x, corner.y() + 2, width, height)
        self.results.raise_()
        self._keep_match_clear_of_results()

    def _keep_match_clear_of_results(self) -> None:
        """The graph's current match, centred when the search ran, moves below the results list
        when the list covers it (nothing moves when it is visible already)."""
        pos = self.state.search_pos
        matches = self.state.search_matches
        i = self.model.index.get(matches[pos]) if 0 <= pos < len(matches) else None
        if i is None or not self.results.isVisible():
            return
        vp = self.canvas.viewport
        sx, sy = vp.to_screen(self.model.xs[i], self.model.ys[i])
        under = self.results.geometry().translated(-self.canvas.mapTo(self, QPoint(0, 0)))  # canvas coordinates
        if not under.adjusted(-24, -24, 24, 24).contains(QPoint(int(sx), int(sy))):
            return
        below = (under.bottom() + vp.height) / 2  # the middle of the canvas under the list
        if below >= vp.height - 24:
            return  # no room below it either: leave the view alone
        vp.cy += (sy - below) / vp.scale
        self.canvas.view_moved()

    def _open_result(self, result: Result) -> None:
        session = self.session_id
        if session is None:
            return
        match result.kind:
            case "object":
                if result.object_id in self.model.index:
                    self._navigate(result.object_id)
            case "passage":
                self.documentRequested.emit(session, result.document_id, result.start, result.end)
            case "message":
                self.messageRequested.emit(result.message_text)

    def step_search(self, step: int) -> str | None:
        current = self.state.step_search(step)
        self.search.set_result(self.state.search_query, len(self.state.search_matches), self.state.search_pos)
        if current is not None:
            self.center_on([current])
            self._keep_match_clear_of_results()
        self.canvas.update()
        return current

    def _name_of(self, oid: str) -> tuple[str, str]:
        i = self.model.index.get(oid)
        if i is None:
            return oid, "?"
        return self.model.names[i], self.model.type_of(i)
