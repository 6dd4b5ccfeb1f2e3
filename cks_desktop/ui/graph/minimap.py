"""The overview in the canvas corner: the whole graph small, and where you are in it.

Drawn from the same point buffers as the main view (nodes only: at this size
edges are noise and cost most of a frame), cached, and redrawn at most a few
times a second while the graph changes. Clicking or dragging in it moves the
main view there.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QPointF, QRectF, Qt, QTimer
from PySide6.QtGui import QColor, QMouseEvent, QPainter, QPaintEvent, QPen, QPixmap
from PySide6.QtWidgets import QWidget

from typing import TYPE_CHECKING

from cks_desktop.ui.graph.render import colour_groups, mix
from cks_desktop.ui.graph.viewport import Viewport

if TYPE_CHECKING:
    from cks_desktop.ui.graph.canvas import GraphCanvas

REDRAW_EVERY_S = 0.3
SIZE = (190, 130)  # px, at most
MAX_SHARE = 0.25  # of the canvas's width and height, at most


class Minimap(QWidget):
    def __init__(self, canvas: "GraphCanvas") -> None:
        super().__init__(canvas)
        self.setObjectName("graphMinimap")
        self.canvas = canvas
        self.resize(*SIZE)
        self.setCursor(Qt.CursorShape.CrossCursor)
        self.setToolTip("Overview: click or drag to move the view")
        self._pixmap: QPixmap | None = None
        self._key: tuple | None = None
        self._view = Viewport()
        self._drawn_at = 0.0
        self._later = QTimer(self)
        self._later.setSingleShot(True)
        self._later.timeout.connect(self.update)
        self.right_inset = 0  # px of the canvas's right edge covered by the inspector sheet
        canvas.viewportChanged.connect(self._place_and_update)

    def place(self) -> None:
        """Bottom right of the canvas, clear of the inspector sheet, and never more than a quarter
        of the canvas's width or height: on a small canvas the overview must not become the view."""
        parent = self.canvas
        w = max(60, min(SIZE[0], int(parent.width() * MAX_SHARE)))
        h = max(40, min(SIZE[1], int(parent.height() * MAX_SHARE)))
        if (w, h) != (self.width(), self.height()):
            self.resize(w, h)
        self.move(max(0, parent.width() - self.right_inset - w - 12), max(0, parent.height() - h - 12))

    def _place_and_update(self) -> None:
        self.place()
        self.update()

    def _render(self) -> None:
        canvas = self.canvas
        model = canvas.model
        self._view = Viewport(self.width(), self.height())
        self._view.fit(model.bounds(), margin_px=8, max_scale=0.6)
        dpr = self.devicePixelRatioF()
        pm = QPixmap(int(self.width() * dpr), int(self.height() * dpr))
        pm.setDevicePixelRatio(dpr)
        style = canvas.style_
        pm.fill(mix(style.background, style.text, 0.04))
        p = QPainter(pm)
        vp = self._view
        s = vp.scale
        p.translate(vp.width / 2 - vp.cx * s, vp.height / 2 - vp.cy * s)
        p.scale(s, s)
        groups = (colour_groups(model, canvas.buffers, style) if style.communities is not None else
                  [(style.colour_of(model.type_names[t]), poly) for t, poly in canvas.buffers.polys.items()])
        for colour, poly in groups:
            pen = QPen(colour)
            pen.setCosmetic(True)
            pen.setWidthF(2)
            pen.setCapStyle(Qt.PenCapStyle.SquareCap)
            p.setPen(pen)
            p.drawPoints(poly)
        p.end()
        self._pixmap = pm
        self._key = (canvas.buffers.version, self.width(), self.height(), id(style))
        self._drawn_at = time.monotonic()

    def paintEvent(self, event: QPaintEvent) -> None:
        canvas = self.canvas
        key = (canvas.buffers.version, self.width(), self.height(), id(canvas.style_))
        if self._pixmap is None or (key != self._key and time.monotonic() - self._drawn_at >= REDRAW_EVERY_S):
            self._render()
        elif key != self._key:
            self._later.start(int(REDRAW_EVERY_S * 1000))
        p = QPainter(self)
        assert self._pixmap is not None
        p.drawPixmap(0, 0, self._pixmap)
        style = canvas.style_
        x0, y0, x1, y1 = canvas.viewport.world_rect()
        a = QPointF(*self._view.to_screen(x0, y0))
        b = QPointF(*self._view.to_screen(x1, y1))
        rect = QRectF(a, b).intersected(QRectF(0, 0, self.width(), self.height()).adjusted(1, 1, -1, -1))
        fill = QColor(style.selection)
        fill.setAlpha(40)
        p.setPen(QPen(style.selection, 1.5))
        p.setBrush(fill)
        p.drawRect(rect)
        p.setPen(QPen(mix(style.text, style.background, 0.6), 1))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawRect(QRectF(0.5, 0.5, self.width() - 1, self.height() - 1))
        p.end()

    def _go(self, pos: QPointF) -> None:
        wx, wy = self._view.to_world(pos.x(), pos.y())
        self.canvas.viewport.center_on(wx, wy)
        self.canvas.view_moved()

    def mousePressEvent(self, event: QMouseEvent) -> None:
        self._go(event.position())
        event.accept()

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        if event.buttons() & Qt.MouseButton.LeftButton:
            self._go(event.position())
        event.accept()
