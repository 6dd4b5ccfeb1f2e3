"""The one widget that draws the whole graph, and turns gestures into intents.

Painting: the base picture (edges, nodes, labels) lives in a cached frame
(``frames.py``): panning moves it, a big redraw happens in pieces while the
old frame is shown, and while a zoom gesture is in flight the old frame is
scaled as a preview and the real frame is drawn once the wheel rests.
Selection, hover and highlights are painted on top each frame
(``overlay.py``), so clicking never costs a full redraw.

Gestures: the canvas changes only what is purely visual (viewport, hover,
selection, dragged positions) and emits signals for everything that edits
the graph (connect, delete, add); the ``GraphView`` owns those through the
tool registry.
"""

from __future__ import annotations

import time
from dataclasses import replace

from PySide6.QtCore import QEvent, QPoint, QPointF, QRectF, Qt, QTimer, Signal
from PySide6.QtGui import (
    QColor, QFocusEvent, QKeyEvent, QMouseEvent, QNativeGestureEvent, QPainter, QPaintEvent, QPen, QResizeEvent,
    QWheelEvent,
)
from PySide6.QtWidgets import QSizePolicy, QWidget

from cks_desktop.ui.graph.model import GraphModel
from cks_desktop.ui.graph.overlay import OverlayPainter
from cks_desktop.ui.graph.placement import GRID_CELL
from cks_desktop.ui.graph.buffers import SceneBuffers
from cks_desktop.ui.graph.frames import SYNC_EDGES, FrameCache
from cks_desktop.ui.graph.render import FrameRenderer, Style, node_diameter
from cks_desktop.ui.graph.spatial import SpatialGrid
from cks_desktop.ui.graph.viewport import FIT_MAX_SCALE, Viewport, clear_width
from cks_desktop.ui.graph.viewstate import ViewState

DRAG_THRESHOLD = 4
SETTLE_MS = 90  # the frame is redrawn this long after the last wheel step


class GraphCanvas(QWidget):
    selectionChanged = Signal()
    activated = Signal(str)  # double click on a node
    contextMenuRequested = Signal(QPoint, object, float, float)  # global pos, object id or None, world x, y
    nodesDragged = Signal(list)  # object ids moved (and pinned) by hand
    connectRequested = Signal(str, str)  # source id, target id
    deleteRequested = Signal()
    addRequested = Signal(float, float)  # world point of a double click on empty space
    viewportChanged = Signal()
    frameReady = Signal()  # a frame drawn in pieces is complete (and shown on the next paint)

    def __init__(self, model: GraphModel, state: ViewState, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graphCanvas")
        self.model = model
        self.state = state
        self.viewport = Viewport()
        self.covered_right = 0  # px of the right edge under the inspector sheet (set by ``stage.py``)
        self.covered_top_left: tuple[int, int, int, int] | None = None  # the legend card's x, y, w, h (stage.py)
        self.fitted = False  # the view is what Fit made it (no pan or zoom since): kept fitted on a resize
        self.buffers = SceneBuffers()
        self.grid = SpatialGrid(GRID_CELL)
        self.renderer = FrameRenderer(model, self.buffers, self.grid)
        self.overlay = OverlayPainter(model, state)
        self._communities: dict[str, QColor] | None = None
        self.style_ = Style.from_palette(self.palette(), [])
        self._style_types: tuple[str, ...] = ()
        self.connect_mode = False
        self.status_text = ""
        self.empty_text = ""
        self.frames = FrameCache(self.renderer, self._frame_done)
        self._interacting_until = 0.0
        self._hover: int | None = None
        self._press: QPointF | None = None
        self._press_node: int | None = None
        self._press_mods = Qt.KeyboardModifier.NoModifier
        self._press_button = Qt.MouseButton.NoButton
        self._mode = ""  # "", "pan", "drag", "connect", "band"
        self._drag_nodes: list[int] = []
        self._last: QPointF = QPointF()
        self._cursor: QPointF = QPointF()
        self._band_end: QPointF | None = None
        self._settle = QTimer(self)
        self._settle.setSingleShot(True)
        self._settle.timeout.connect(self.update)
        self._anim = QTimer(self)
        self._anim.setInterval(40)
        self._anim.timeout.connect(self._animate)
        self.setMouseTracking(True)
        self.setFocusPolicy(Qt.FocusPolicy.StrongFocus)
        self.setAttribute(Qt.WidgetAttribute.WA_OpaquePaintEvent, True)
        self.setAttribute(Qt.WidgetAttribute.WA_AcceptTouchEvents, True)
        self.grabGesture(Qt.GestureType.PinchGesture)
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Expanding)
        self.setMinimumSize(200, 150)

    # -- state from the outside ---------------------------------------------
    def refresh_style(self) -> None:
        types = tuple(self.model.type_names)
        self.style_ = replace(Style.from_palette(self.palette(), types), communities=self._communities)
        self._style_types = types
        self.invalidate()

    def set_communities(self, colours: dict[str, QColor] | None) -> None:
        """Colour each object by its community (object id → colour), or by type again (None)."""
        self._communities = colours
        self.refresh_style()

    def changeEvent(self, event: QEvent) -> None:  # noqa: N802
        """A theme switch changes the palette: background, labels and edges follow at once."""
        if event.type() == QEvent.Type.PaletteChange:
            self.refresh_style()
        super().changeEvent(event)

    def ensure_style(self) -> None:
        if tuple(self.model.type_names) != self._style_types:
            self.refresh_style()

    def invalidate(self) -> None:
        """The base frame must be redrawn (geometry, filter or style changed)."""
        self.buffers.version += 1
        self.update()

    def rebuild(self) -> None:
        """Rebuild buffers and grid from the model (a new session, a filter, a layout)."""
        mask = self.state.visible_mask(self.model)
        self.buffers.rebuild(self.model, mask)
        self.grid.rebuild(self.model.xs, self.model.ys, self.placed_nodes())
        self.ensure_style()
        self.invalidate()

    def sight(self, margin_px: float = 12.0) -> tuple[tuple[float, float, float, float], list[tuple[float, float, float, float]]]:
        """The world rectangle a person sees of the canvas (clear of the inspector sheet, ``margin_px``
        inside each edge) and the world rectangles the legend card covers: where a new object may go."""
        vp = self.viewport
        x0, y0 = vp.to_world(margin_px, margin_px)
        x1, y1 = vp.to_world(clear_width(vp.width, self.covered_right) - margin_px, vp.height - margin_px)
        blocked = []
        if self.covered_top_left is not None:
            lx, ly, lw, lh = self.covered_top_left
            bx0, by0 = vp.to_world(lx - margin_px, ly - margin_px)
            bx1, by1 = vp.to_world(lx + lw + margin_px, ly + lh + margin_px)
            blocked.append((bx0, by0, bx1, by1))
        return (x0, y0, x1, y1), blocked

    def placed_nodes(self) -> list[int]:
        """The grid holds every placed node, hidden ones too (placement must avoid them);
        hit tests filter with the visibility mask."""
        model = self.model
        return [i for i in model.nodes() if model.placed[i]]

    def adopt(self, buffers: SceneBuffers, grid: SpatialGrid) -> None:
        """Take geometry built in a worker thread (same objects stay referenced elsewhere)."""
        version = self.buffers.version
        self.buffers.__dict__.update(buffers.__dict__)
        self.buffers.version = max(version, buffers.version) + 1
        self.grid.__dict__.update(grid.__dict__)
        self.ensure_style()
        self.invalidate()

    def flash_running(self) -> None:
        if not self._anim.isActive():
            self._anim.start()

    def _animate(self) -> None:
        if not self.state.expire_flashes(time.monotonic()):
            self._anim.stop()
        self.update()

    def graph_bounds(self) -> tuple[float, float, float, float] | None:
        """Bounds of every placed node, cached until something moves."""
        key = (self.model.position_version, self.model.structure_version)
        if getattr(self, "_bounds_key", None) != key:
            self._bounds_key = key
            self._bounds = self.model.bounds()
        return self._bounds

    def shows_everything(self) -> bool:
        bounds = self.graph_bounds()
        if bounds is None:
            return True
        x0, y0, x1, y1 = self.viewport.world_rect()
        return x0 <= bounds[0] and y0 <= bounds[1] and x1 >= bounds[2] and y1 >= bounds[3]

    def fit(self, indices: list[int] | None = None, *, max_scale: float = FIT_MAX_SCALE) -> None:
        """Fit into the part of the canvas not covered by the inspector sheet (``covered_right``)."""
        bounds = self.model.bounds(indices) if indices is not None else self.graph_bounds()
        vp = self.viewport
        full = vp.width
        covered = full - clear_width(full, self.covered_right)
        vp.width = full - covered
        try:
            vp.fit(bounds, max_scale=max_scale)
        finally:
            vp.width = full
        vp.cx += covered / 2 / vp.scale  # the fitted picture's centre: the middle of the clear part
        self.view_moved()
        self.fitted = True  # until the person moves the view: a resize or the sheet fits it again

    def center_on_indices(self, indices: list[int]) -> None:
        """Bring these nodes into view: centre them; zoom out only if they do not fit."""
        bounds = self.model.bounds(indices)
        if bounds is None:
            return
        x0, y0, x1, y1 = bounds
        vp = self.viewport
        if (x1 - x0) * vp.scale > vp.width * 0.8 or (y1 - y0) * vp.scale > vp.height * 0.8:
            vp.fit(bounds, max_scale=vp.scale)
        elif len(indices) == 1 and vp.scale < 0.6:
            vp.scale = 0.9  # one object: close enough to read its neighbourhood
        vp.center_on((x0 + x1) / 2, (y0 + y1) / 2)
        vp.cx += (vp.width - clear_width(vp.width, self.covered_right)) / 2 / vp.scale  # clear of the sheet
        self.view_moved()

    def view_moved(self) -> None:
        self.fitted = False
        self.update()
        self.viewportChanged.emit()

    def node_at(self, pos: QPointF) -> int | None:
        vp = self.viewport
        wx, wy = vp.to_world(pos.x(), pos.y())
        radius = max(node_diameter(vp.scale) / 2 + 3, 6) / vp.scale
        mask = self.state.visible_mask(self.model)
        return self.grid.nearest(wx, wy, radius, self.model.xs, self.model.ys, mask)

    # -- painting -------------------------------------------------------------
    def resizeEvent(self, event: QResizeEvent) -> None:
        self.viewport.resize(self.width(), self.height())
        super().resizeEvent(event)
        self.viewportChanged.emit()

    @property
    def last_render_ms(self) -> float:
        return self.frames.last_render_ms

    def _frame_done(self) -> None:
        self.update()
        self.frameReady.emit()

    def frame_is_current(self) -> bool:
        front = self.frames.front
        return front is not None and front.key == self._key() and not self.frames.rendering

    def _key(self) -> tuple:
        vp = self.viewport
        return (self.buffers.version, id(self.style_), vp.scale, vp.width, vp.height, self.devicePixelRatioF(),
                self.covered_right)  # labels keep clear of the sheet: it moving redraws them

    def _render_frame(self) -> None:
        """Draw the base frame for the current view completely, now (benchmarks, grabs, exports)."""
        self.ensure_style()
        self.frames.render_now(self.viewport, self.devicePixelRatioF(), self._key(), self.style_,
                               self.graph_bounds(), self._clear())

    def _clear(self) -> float:
        """The width of the canvas a label may be drawn in whole: not under the inspector sheet."""
        return clear_width(self.viewport.width, self.covered_right)

    def paintEvent(self, event: QPaintEvent) -> None:
        self.ensure_style()
        p = QPainter(self)
        vp, key = self.viewport, self._key()
        if not self.frames.blit(p, vp, key):
            zooming = time.monotonic() < self._interacting_until
            if self.buffers.drawn_edges < SYNC_EDGES:
                self._render_frame()  # small: cheaper to draw than to schedule
                self.frames.blit(p, vp, key)
            else:
                self.frames.preview(p, vp, self.style_.background)
                if zooming:
                    self._settle.start(SETTLE_MS)  # the real frame once the wheel rests
                else:
                    self.frames.start(vp, self.devicePixelRatioF(), key, self.style_, self.graph_bounds(),
                                      self._clear())
        mask = self.state.visible_mask(self.model)
        self.overlay.base_edge_labels = self.renderer.placed_edge_labels  # each edge label drawn once
        self.overlay.paint(p, self.viewport, self.style_, time.monotonic(), hover=self._hover, mask=mask,
                           live=self._drag_nodes if self._mode == "drag" else None)
        self._paint_gesture(p)
        self._paint_texts(p)
        if self.hasFocus():  # the keyboard's place is visible here too, like every other control's ring
            ring = QPen(self.style_.selection)
            ring.setWidthF(2.0)
            p.setPen(ring)
            p.setBrush(Qt.BrushStyle.NoBrush)
            p.drawRect(QRectF(self.rect()).adjusted(1, 1, -1, -1))
        p.end()

    def focusInEvent(self, event: QFocusEvent) -> None:  # noqa: N802
        super().focusInEvent(event)
        self.update()

    def focusOutEvent(self, event: QFocusEvent) -> None:  # noqa: N802
        super().focusOutEvent(event)
        self.update()

    def _paint_gesture(self, p: QPainter) -> None:
        if self._mode == "connect" and self._press_node is not None:
            vp = self.viewport
            a = QPointF(*vp.to_screen(self.model.xs[self._press_node], self.model.ys[self._press_node]))
            pen = QPen(self.style_.selection, 2, Qt.PenStyle.DashLine)
            p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            p.setPen(pen)
            p.drawLine(a, self._cursor)
        elif self._mode == "band" and self._press is not None and self._band_end is not None:
            fill = QColor(self.style_.selection)
            fill.setAlpha(40)
            p.setPen(QPen(self.style_.selection, 1))
            p.setBrush(fill)
            p.drawRect(QRectF(self._press, self._band_end).normalized())

    def _paint_texts(self, p: QPainter) -> None:
        text = self.status_text or (self.empty_text if self.model.node_count == 0 else "")
        if not text:
            return
        fm = p.fontMetrics()
        width = min(self.width() - 40, fm.horizontalAdvance(text) + 28)
        if self.model.node_count == 0 and not self.status_text:
            rect = QRectF(20, 0, self.width() - 40, self.height())
            p.setPen(self.style_.edge_near)
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter | Qt.TextFlag.TextWordWrap, text)
            return
        rect = QRectF((self.width() - width) / 2, 12, width, fm.height() + 12)
        bg = QColor(self.style_.text)
        bg.setAlpha(200)
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(bg)
        p.drawRoundedRect(rect, rect.height() / 2, rect.height() / 2)
        p.setPen(self.style_.background)
        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, fm.elidedText(text, Qt.TextElideMode.ElideRight, int(width - 20)))

    # -- gestures ---------------------------------------------------------------
    def _zoom(self, factor: float, at: QPointF) -> None:
        if self.viewport.zoom_at(factor, at.x(), at.y()):
            self._interacting_until = time.monotonic() + SETTLE_MS / 1000
            self.view_moved()

    def zoom_by(self, factor: float) -> None:
        self._zoom(factor, QPointF(self.width() / 2, self.height() / 2))

    def wheelEvent(self, event: QWheelEvent) -> None:
        pixel = event.pixelDelta()
        if not pixel.isNull() and not (event.modifiers() & Qt.KeyboardModifier.ControlModifier):
            self.viewport.pan_pixels(pixel.x(), pixel.y())  # a touchpad scrolls the picture
            self.view_moved()
        else:
            steps = event.angleDelta().y() or event.angleDelta().x()
            self._zoom(1.0015 ** steps, event.position())
        event.accept()

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.NativeGesture:
            gesture = event  # QNativeGestureEvent: touchpad pinch on macOS / Wayland
            assert isinstance(gesture, QNativeGestureEvent)
            if gesture.gestureType() == Qt.NativeGestureType.ZoomNativeGesture:
                self._zoom(1.0 + gesture.value(), gesture.position())
                return True
        if event.type() == QEvent.Type.Gesture:
            pinch = event.gesture(Qt.GestureType.PinchGesture)  # type: ignore[attr-defined]
            if pinch is not None:
                self._zoom(pinch.scaleFactor(), pinch.centerPoint() - QPointF(self.mapToGlobal(QPoint(0, 0))))
                return True
        return super().event(event)

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self.setFocus(Qt.FocusReason.MouseFocusReason)
        pos = event.position()
        self._press, self._last, self._cursor = pos, pos, pos
        self._press_node = self.node_at(pos)
        self._press_mods = event.modifiers()
        self._press_button = event.button()
        self._mode = ""
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        pos = event.position()
        self._cursor = pos
        if self._press is None:
            hover = self.node_at(pos)
            if hover != self._hover:
                self._hover = hover
                self.setCursor(Qt.CursorShape.PointingHandCursor if hover is not None else Qt.CursorShape.ArrowCursor)
                self.update()
            return
        if not self._mode:
            if (pos - self._press).manhattanLength() < DRAG_THRESHOLD:
                return
            self._mode = self._start_mode()
        delta = pos - self._last
        self._last = pos
        if self._mode == "pan":
            self.viewport.pan_pixels(delta.x(), delta.y())
            self.view_moved()
        elif self._mode == "drag":
            self._drag_by(delta.x() / self.viewport.scale, delta.y() / self.viewport.scale)
        elif self._mode == "band":
            self._band_end = pos
            self.update()
        elif self._mode == "connect":
            self._hover = self.node_at(pos)
            self.update()

    def _start_mode(self) -> str:
        mods = self._press_mods
        if self._press_node is not None:
            if (self._press_button == Qt.MouseButton.RightButton or self.connect_mode
                    or mods & Qt.KeyboardModifier.AltModifier):
                return "connect"
            if self._press_button == Qt.MouseButton.LeftButton:
                oid = self.model.node_id(self._press_node)
                if oid not in self.state.selection:
                    self.state.select(oid, additive=bool(mods & (Qt.KeyboardModifier.ControlModifier
                                                                 | Qt.KeyboardModifier.ShiftModifier)))
                    self.selectionChanged.emit()
                self._drag_nodes = self.model.indices_of(self.state.selection)
                return "drag"
        if self._press_button == Qt.MouseButton.LeftButton and mods & Qt.KeyboardModifier.ShiftModifier:
            return "band"
        return "pan"

    def _drag_by(self, dx: float, dy: float) -> None:
        model = self.model
        for i in self._drag_nodes:
            model.xs[i] += dx
            model.ys[i] += dy
            self.grid.move(i, model.xs[i], model.ys[i])
        model.position_version += 1
        self.buffers.move(model, self._drag_nodes)
        self.update()
        self.viewportChanged.emit()

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        mode, node, mods, start = self._mode, self._press_node, self._press_mods, self._press
        pos = event.position()
        self._press, self._mode = None, ""
        if mode == "drag" and self._drag_nodes:
            for i in self._drag_nodes:
                self.model.pinned.add(i)
            self.nodesDragged.emit([self.model.node_id(i) for i in self._drag_nodes])
            self._drag_nodes = []
        elif mode == "connect":
            target = self.node_at(pos)
            if node is not None and target is not None and target != node:
                self.connectRequested.emit(self.model.node_id(node), self.model.node_id(target))
            self.update()
        elif mode == "band" and start is not None:
            self._select_band(start, pos, additive=bool(mods & Qt.KeyboardModifier.ControlModifier))
        elif not mode and event.button() == Qt.MouseButton.LeftButton:
            additive = bool(mods & (Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier))
            if node is None and additive:
                return
            self.state.select(self.model.node_id(node) if node is not None else None, additive=additive)
            self.selectionChanged.emit()
            self.update()
        elif not mode and event.button() == Qt.MouseButton.RightButton:
            if node is not None and self.model.node_id(node) not in self.state.selection:
                self.state.select(self.model.node_id(node))
                self.selectionChanged.emit()
                self.update()
            wx, wy = self.viewport.to_world(pos.x(), pos.y())
            oid = self.model.node_id(node) if node is not None else None
            self.contextMenuRequested.emit(event.globalPosition().toPoint(), oid, wx, wy)

    def _select_band(self, start: QPointF, end: QPointF, *, additive: bool) -> None:
        self._band_end = None
        vp = self.viewport
        x0, y0 = vp.to_world(min(start.x(), end.x()), min(start.y(), end.y()))
        x1, y1 = vp.to_world(max(start.x(), end.x()), max(start.y(), end.y()))
        mask = self.state.visible_mask(self.model)
        xs, ys = self.model.xs, self.model.ys
        hits = [self.model.node_id(i) for i in self.grid.in_rect(x0, y0, x1, y1)
                if x0 <= xs[i] <= x1 and y0 <= ys[i] <= y1 and (mask is None or mask[i])]
        self.state.select_many((self.state.selection + hits) if additive else hits)
        self.selectionChanged.emit()
        self.update()

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        node = self.node_at(event.position())
        if node is not None:
            self.activated.emit(self.model.node_id(node))
        elif event.button() == Qt.MouseButton.LeftButton:
            wx, wy = self.viewport.to_world(event.position().x(), event.position().y())
            self.addRequested.emit(wx, wy)

    def leaveEvent(self, event: QEvent) -> None:
        if self._hover is not None and self._press is None:
            self._hover = None
            self.update()
        super().leaveEvent(event)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        step = 60.0
        if key in (Qt.Key.Key_Plus, Qt.Key.Key_Equal):
            self.zoom_by(1.25)
        elif key in (Qt.Key.Key_Minus, Qt.Key.Key_Underscore):
            self.zoom_by(0.8)
        elif key in (Qt.Key.Key_0, Qt.Key.Key_Home, Qt.Key.Key_F):
            self.fit()
        elif key == Qt.Key.Key_Left:
            self.viewport.pan_pixels(step, 0)
            self.view_moved()
        elif key == Qt.Key.Key_Right:
            self.viewport.pan_pixels(-step, 0)
            self.view_moved()
        elif key == Qt.Key.Key_Up:
            self.viewport.pan_pixels(0, step)
            self.view_moved()
        elif key == Qt.Key.Key_Down:
            self.viewport.pan_pixels(0, -step)
            self.view_moved()
        elif key in (Qt.Key.Key_Delete, Qt.Key.Key_Backspace):
            self.deleteRequested.emit()
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and self.state.primary:
            self.activated.emit(self.state.primary)
        elif key == Qt.Key.Key_Escape:
            self.state.select(None)
            self.state.clear_marks()
            self.selectionChanged.emit()
            self.update()
        else:
            super().keyPressEvent(event)
