"""What is drawn on top of the cached frame, fresh on every paint.

Selection, hover, search matches, the path, tool-call marks and the fading
glow of the latest change are small sets, so they are cheap to draw every
frame; keeping them out of the cached frame means clicking or hovering never
costs a full redraw of 20k nodes. Drawn in screen coordinates (crisp rings
whatever the zoom).
"""

from __future__ import annotations

import math
from collections.abc import Container, Iterable

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen

from cks_desktop.ui.graph.model import GraphModel
from cks_desktop.ui.graph.render import Occupancy, Style, mix, node_diameter
from cks_desktop.ui.graph.viewport import Viewport
from cks_desktop.ui.graph.viewstate import ViewState

MAX_OVERLAY_ITEMS = 3000
MAX_FLASHING = 500  # the glow redraws 25 times a second while it fades: keep it cheap


class OverlayPainter:
    def __init__(self, model: GraphModel, state: ViewState) -> None:
        self.model = model
        self.state = state
        self.font = QFont()
        self.bold = QFont(self.font)
        self.bold.setBold(True)
        # relations whose label the base frame drew (set by the canvas before each paint), and
        # those this overlay drew in its last paint: together, each edge's label is drawn once
        self.base_edge_labels: Container[int] = frozenset()
        self.placed_edge_labels: dict[int, QRectF] = {}

    def _ring(self, p: QPainter, vp: Viewport, i: int, colour: QColor, width: float, grow: float) -> None:
        sx, sy = vp.to_screen(self.model.xs[i], self.model.ys[i])
        r = node_diameter(vp.scale) / 2 + grow
        pen = QPen(colour)
        pen.setWidthF(width)
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawEllipse(QPointF(sx, sy), r, r)

    def _disc(self, p: QPainter, vp: Viewport, i: int, colour: QColor, square: bool = False) -> None:
        sx, sy = vp.to_screen(self.model.xs[i], self.model.ys[i])
        r = node_diameter(vp.scale) / 2
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(colour)
        if square:  # the type's mark past the palette's twelve colours (``palette.assign_marks``)
            p.drawRect(QRectF(sx - r, sy - r, 2 * r, 2 * r))
        else:
            p.drawEllipse(QPointF(sx, sy), r, r)

    def _label(self, p: QPainter, vp: Viewport, style: Style, i: int, *, bold: bool = False,
               with_type: bool = False) -> None:
        model = self.model
        sx, sy = vp.to_screen(model.xs[i], model.ys[i])
        text = model.names[i] or "(unnamed)"
        if len(text) > 48:
            text = text[:47] + "…"
        if with_type:
            text = f"{text}  ·  {model.type_of(i)}"
        font = self.bold if bold else self.font
        fm = QFontMetricsF(font)
        off = node_diameter(vp.scale) / 2 + 5
        rect = QRectF(sx + off - 4, sy - fm.height() / 2 - 2, fm.horizontalAdvance(text) + 8, fm.height() + 4)
        bg = QColor(style.background)
        bg.setAlpha(235)
        p.setPen(QPen(mix(style.text, style.background, 0.7), 1))
        p.setBrush(bg)
        p.drawRoundedRect(rect, 4, 4)
        p.setFont(font)
        p.setPen(style.text)
        p.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)

    def _edges(self, p: QPainter, vp: Viewport, edges: Iterable[int], colour: QColor, width: float) -> None:
        model = self.model
        path = QPainterPath()
        for j in edges:
            if not model.ealive[j]:
                continue
            a, b = model.src[j], model.dst[j]
            path.moveTo(*vp.to_screen(model.xs[a], model.ys[a]))
            path.lineTo(*vp.to_screen(model.xs[b], model.ys[b]))
        pen = QPen(colour)
        pen.setWidthF(width)
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        p.setPen(pen)
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawPath(path)

    def _edge_types(self, p: QPainter, vp: Viewport, style: Style, edges: Iterable[int]) -> None:
        """The hovered node's relation types, each edge once: an edge whose label the base frame
        already shows (``base_edge_labels``) is not labelled again, and two labels here never
        overlap (the second is left out: the lines are highlighted anyway)."""
        model = self.model
        p.setFont(self.font)
        fm = QFontMetricsF(self.font)
        taken = Occupancy()
        for j in edges:
            if j in self.base_edge_labels or j in self.placed_edge_labels:
                continue
            a, b = model.src[j], model.dst[j]
            ax, ay = vp.to_screen(model.xs[a], model.ys[a])
            bx, by = vp.to_screen(model.xs[b], model.ys[b])
            if math.hypot(bx - ax, by - ay) < 40:
                continue
            text = model.rel_type_of(j)
            w = fm.horizontalAdvance(text)
            rect = QRectF((ax + bx) / 2 - w / 2 - 3, (ay + by) / 2 - fm.height() / 2, w + 6, fm.height())
            if not taken.free(rect):
                continue
            taken.take(rect)
            self.placed_edge_labels[j] = rect
            bg = QColor(style.background)
            bg.setAlpha(220)
            p.fillRect(rect, bg)
            p.setPen(mix(style.text, style.background, 0.25))
            p.drawText(rect, Qt.AlignmentFlag.AlignCenter, text)

    def paint(self, p: QPainter, vp: Viewport, style: Style, now: float, *, hover: int | None = None,
              mask: bytearray | None = None, live: list[int] | None = None) -> None:
        """``live``: nodes being dragged, drawn here where they are now (a big base frame
        catches up with them a moment later)."""
        model, state = self.model, self.state
        index = model.index
        self.placed_edge_labels = {}
        p.save()
        p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)

        def shown(oid: str) -> int | None:
            i = index.get(oid)
            if i is None or not model.placed[i] or (mask is not None and not mask[i]):
                return None
            return i

        if state.path_edges:
            edges = [model.rel_index[r] for r in state.path_edges if r in model.rel_index]
            self._edges(p, vp, edges, style.path, 4.0)
        # the latest change, fading out; the changed nodes and their relations are drawn here too,
        # so they are on screen in the very next frame even while a big base frame is being redrawn
        flashing = [(i, state.flash_strength(oid, now)) for i, oid in
                    ((shown(oid), oid) for oid in list(state.flashes)[:MAX_FLASHING]) if i is not None]
        flashing = [(i, k) for i, k in flashing if k > 0]
        changed = [i for i, _ in flashing] + (live or [])[:MAX_FLASHING]
        if changed:
            edges = [j for i in changed[:200] for j in model.incident_edges(i)[:30]]
            self._edges(p, vp, edges, style.edge_near, 1.2)
            for i in changed:
                t = model.type_of(i)
                self._disc(p, vp, i, style.colour_of(t), square=t in style.square_types)
        glow = QColor(style.flash)
        for i, strength in flashing:
            glow.setAlphaF(0.25 + 0.75 * strength)
            self._ring(p, vp, i, glow, 3.0 + 3.0 * strength, 3.0 + 4.0 * strength)
        for oid in list(state.marked)[:MAX_OVERLAY_ITEMS]:
            k = shown(oid)
            if k is not None:
                self._ring(p, vp, k, style.mark, 3.0, 4.0)
        current = state.current_match
        for oid in state.search_matches[:MAX_OVERLAY_ITEMS]:
            k = shown(oid)
            if k is not None and oid != current:
                self._ring(p, vp, k, style.match, 2.5, 3.5)
        for oid in state.path_nodes:
            k = shown(oid)
            if k is not None:
                self._ring(p, vp, k, style.path, 3.0, 3.0)
        if hover is not None and model.alive[hover]:
            edges = model.incident_edges(hover)[:60]
            self._edges(p, vp, edges, mix(style.selection, style.background, 0.35), 2.0)
            self._edge_types(p, vp, style, edges)
            self._ring(p, vp, hover, style.selection, 2.0, 3.0)
        selected = [i for i in (shown(o) for o in state.selection[:MAX_OVERLAY_ITEMS]) if i is not None]
        if 0 < len(selected) <= 20:  # what the selection is connected to
            edges = [j for i in selected for j in model.incident_edges(i)[:200]]
            self._edges(p, vp, edges, mix(style.selection, style.background, 0.2), 2.0)
        for i in selected:
            self._ring(p, vp, i, style.selection, 3.5, 3.5)
        if current is not None:
            k = shown(current)
            if k is not None:
                self._ring(p, vp, k, style.match, 4.0, 6.0)
                self._label(p, vp, style, k, bold=True)
        for i in selected[:50]:
            self._label(p, vp, style, i, bold=True)
        for oid in state.path_nodes[:100]:
            k = shown(oid)
            if k is not None and oid not in state.selection:
                self._label(p, vp, style, k)
        if hover is not None and model.alive[hover]:
            self._label(p, vp, style, hover, with_type=True)
        p.restore()
