"""Drawing the graph with a handful of batched QPainter calls.

The measured floors decide the shape of this module: one Qt item
per node is far too slow past a few thousand nodes, while a few batched calls
draw 20k nodes and 40k edges in tens of milliseconds. So:

- every edge is one sub-path of ONE ``QPainterPath`` in world coordinates,
  stroked with a cosmetic pen in one ``drawPath`` call (measured faster than
  ``drawLines`` with a Python list, whose conversion alone costs ~7 ms, and it
  culls cheaply when zoomed in); moving a node rewrites only its edges'
  elements (``setElementPositionAt``), never the whole path;
- the nodes of each type are one ``QPolygonF`` drawn by one ``drawPoints``
  call with a wide pen (round caps = discs; square caps when zoomed out,
  which are several times cheaper and look the same at 3 px);
- the painter's transform maps world to screen, so panning and zooming never
  rebuild geometry;
- removed nodes and edges are parked far outside the world (``PARKED``) and
  the buffers are rebuilt only when such holes pile up.

Level of detail: antialiasing, labels, arrowheads and relation labels are
drawn only when few enough nodes are on screen for them to be readable;
zoomed out the frame is plain squares and hairlines.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QColor, QFont, QPainter, QPainterPath, QPalette, QPen, QPolygonF, QStaticText, QTransform,
)

from cks_desktop.ui.graph.buffers import SceneBuffers
from cks_desktop.ui.graph.model import GraphModel
from cks_desktop.ui.graph.palette import assign_marks
from cks_desktop.ui.graph.placement import EDGE_LENGTH, NODE_RADIUS
from cks_desktop.ui.graph.spatial import SpatialGrid
from cks_desktop.ui.graph.viewport import Viewport
from cks_desktop.ui.theme.tokens import load as theme_tokens

LABEL_MAX_CHARS = 28
MAX_LABELS = 600
MAX_ARROWS = 1200
MAX_EDGE_LABELS = 250


def mix(a: QColor, b: QColor, t: float) -> QColor:
    """``a`` blended toward ``b`` by ``t`` (0 = a, 1 = b), opaque: cheaper to draw than alpha."""
    return QColor(round(a.red() + (b.red() - a.red()) * t), round(a.green() + (b.green() - a.green()) * t),
                  round(a.blue() + (b.blue() - a.blue()) * t))


@dataclass
class Style:
    background: QColor
    text: QColor
    edge: QColor
    edge_near: QColor
    selection: QColor
    flash: QColor
    mark: QColor
    match: QColor
    path: QColor
    type_colours: dict[str, QColor]
    dark: bool
    untyped: QColor = field(default_factory=lambda: QColor(theme_tokens().palette("light")["graph_untyped"]))
    # types past the palette's twelve colours: drawn as squares, so colour + shape stays unique
    square_types: set[str] = field(default_factory=set)
    # colour by community: object id → colour (None: by type); objects in none are drawn untyped
    communities: dict[str, QColor] | None = None

    @classmethod
    def from_palette(cls, palette: QPalette, type_names: Iterable[str]) -> "Style":
        bg = palette.color(QPalette.ColorRole.Base)
        text = palette.color(QPalette.ColorRole.Text)
        dark = bg.lightnessF() < 0.5
        signal = theme_tokens().palette("dark" if dark else "light")  # highlight colours, by scheme
        marks = assign_marks(type_names)
        return cls(
            background=bg,
            text=text,
            edge=mix(text, bg, 0.78),
            edge_near=mix(text, bg, 0.55),
            selection=palette.color(QPalette.ColorRole.Highlight),
            flash=QColor(signal["graph_flash"]),
            mark=QColor(signal["graph_mark"]),
            match=QColor(signal["graph_match"]),
            path=QColor(signal["graph_path"]),
            type_colours={k: QColor(c) for k, (c, _) in marks.items()},
            dark=dark,
            untyped=QColor(signal["graph_untyped"]),
            square_types={k for k, (_, shape) in marks.items() if shape == "square"},
        )

    def colour_of(self, type_name: str) -> QColor:
        return self.type_colours.get(type_name) or self.untyped

    def node_colour(self, model: GraphModel, i: int) -> QColor:
        """Node ``i``'s colour: its community's when colouring by community, else its type's."""
        if self.communities is None:
            return self.colour_of(model.type_of(i))
        oid = model.ids[i]
        return (self.communities.get(oid) if oid is not None else None) or self.untyped


@dataclass(frozen=True)
class Detail:
    """What to draw at this zoom: the level of detail."""

    node_px: float  # node diameter on screen
    antialias: bool
    labels: bool
    arrows: bool
    edge_labels: bool
    round_nodes: bool
    heavy_edges: bool = False  # the edges on screen drawn again, a little wider
    rings: bool = False  # a background-coloured ring around each disc


def node_diameter(scale: float) -> float:
    return max(3.0, min(44.0, 2 * NODE_RADIUS * scale))


def choose_detail(scale: float, visible_nodes: int, visible_edges: int) -> Detail:
    """Detail costs per visible node, so it is granted by how many are on screen, not by zoom alone.

    Thousands of nodes on screen are drawn as small square dots: big discs would
    only cover each other (and the edges), and squares cost a third of discs.
    """
    px = node_diameter(scale)
    if visible_nodes > 3000:
        px = min(px, 5.0)
    return Detail(
        node_px=px,
        antialias=visible_nodes <= 1500,
        labels=px >= 4.5 and visible_nodes <= MAX_LABELS,
        arrows=px >= 8 and visible_edges <= MAX_ARROWS,
        edge_labels=scale * EDGE_LENGTH >= 90 and visible_edges <= MAX_EDGE_LABELS,
        round_nodes=visible_nodes <= 3000 or px >= 9,  # squares are ~3x cheaper and read the same small
        heavy_edges=px >= 8 and visible_nodes <= 800,
        rings=px >= 6 and visible_nodes <= 1500,
    )


def world_transform(vp: Viewport) -> QTransform:
    s = vp.scale
    return QTransform(s, 0, 0, s, vp.width / 2 - vp.cx * s, vp.height / 2 - vp.cy * s)


def colour_groups(model: GraphModel, buffers: SceneBuffers, style: Style,
                  indices: list[int] | None = None) -> list[tuple[QColor, QPolygonF]]:
    """The drawn nodes (or ``indices``) grouped by their colour under ``style`` (by community)."""
    slot = buffers.node_slot
    shown = indices if indices is not None else [i for i in range(len(slot)) if slot[i] >= 0]
    groups: dict[int, tuple[QColor, list[QPointF]]] = {}
    for i in shown:
        colour = style.node_colour(model, i)
        groups.setdefault(colour.rgba(), (colour, []))[1].append(QPointF(model.xs[i], model.ys[i]))
    return [(colour, QPolygonF(points)) for colour, points in groups.values()]


def visible_nodes(model: GraphModel, grid: SpatialGrid, buffers: SceneBuffers, vp: Viewport,
                  margin_px: float, limit: int,
                  bounds: tuple[float, float, float, float] | None = None) -> list[int] | None:
    """Drawn nodes inside the view (plus a margin), or None if there are more than ``limit``.

    ``bounds`` (of the whole graph) lets a zoomed-out view answer "too many"
    from the overlap of areas, without walking thousands of nodes first.
    """
    x0, y0, x1, y1 = vp.world_rect(margin_px)
    if bounds is not None and buffers.drawn_nodes > limit:
        bx0, by0, bx1, by1 = bounds
        area = max((bx1 - bx0) * (by1 - by0), 1.0)
        overlap = max(0.0, min(x1, bx1) - max(x0, bx0)) * max(0.0, min(y1, by1) - max(y0, by0))
        if overlap / area * buffers.drawn_nodes > 2 * limit:
            return None
    out: list[int] = []
    xs, ys, slot = model.xs, model.ys, buffers.node_slot
    for i in grid.in_rect(x0, y0, x1, y1):
        if i < len(slot) and slot[i] >= 0 and x0 <= xs[i] <= x1 and y0 <= ys[i] <= y1:
            out.append(i)
            if len(out) > limit:
                return None
    return out


class FrameRenderer:
    """Paints the base frame (everything but the per-interaction overlays)."""

    def __init__(self, model: GraphModel, buffers: SceneBuffers, grid: SpatialGrid) -> None:
        self.model = model
        self.buffers = buffers
        self.grid = grid
        self.font = QFont()
        self.font.setPointSizeF(max(7.5, self.font.pointSizeF() * 0.9))
        self.edge_font = QFont(self.font)
        self.edge_font.setPointSizeF(self.font.pointSizeF() * 0.9)
        self.edge_font.setItalic(True)
        # Text layout is the slow part of a label (3-4x drawing it): keep it laid out.
        self._texts: dict[tuple[str, bool], QStaticText] = {}
        self.last_detail = choose_detail(1.0, 0, 0)
        # what the last frame placed, in frame coordinates: the node labels' rectangles and the
        # relations whose label it drew (the overlay does not draw those again)
        self.placed_labels: list[QRectF] = []
        self.placed_edge_labels: dict[int, QRectF] = {}

    def static_text(self, text: str, *, edge: bool = False) -> QStaticText:
        key = (text, edge)
        st = self._texts.get(key)
        if st is None:
            if len(self._texts) > 6000:
                self._texts.clear()
            st = QStaticText(text)
            st.setTextFormat(Qt.TextFormat.PlainText)
            st.prepare(font=self.edge_font if edge else self.font)
            self._texts[key] = st
        return st

    def detail(self, vp: Viewport, on_screen: list[int] | None) -> Detail:
        if on_screen is None:
            n, e = self.buffers.drawn_nodes, self.buffers.drawn_edges
        else:
            n = len(on_screen)
            e = min(self.buffers.drawn_edges, 3 * n)
        return choose_detail(vp.scale, n, e)

    def paint(self, p: QPainter, vp: Viewport, style: Style, *, background: bool = True,
              force_detail: Detail | None = None, vector: bool = False,
              bounds: tuple[float, float, float, float] | None = None, inside: QRectF | None = None) -> Detail:
        """Draw edges, nodes and (zoomed in) labels for viewport ``vp``, all at once.

        ``vector`` (SVG export): nodes as real circles and labels as text, not
        wide points and cached glyph runs, so the file is faithful in any viewer.
        """
        steps = self.steps(p, vp, style, background=background, force_detail=force_detail, vector=vector,
                           bounds=bounds, inside=inside)
        for _ in steps:
            pass
        return self.last_detail

    def steps(self, p: QPainter, vp: Viewport, style: Style, *, background: bool = True,
              force_detail: Detail | None = None, vector: bool = False,
              bounds: tuple[float, float, float, float] | None = None,
              inside: QRectF | None = None) -> Iterator[None]:
        """The same drawing in pieces of a few ms each (a generator): the canvas draws a big
        frame across several event-loop turns, so the window never waits for a whole frame.
        The painter's state is restored between pieces, the geometry is read as it is then."""
        if background:
            p.fillRect(QRectF(0, 0, vp.width, vp.height), style.background)
        on_screen = visible_nodes(self.model, self.grid, self.buffers, vp, 60, MAX_LABELS * 4, bounds)
        detail = self.last_detail = force_detail or self.detail(vp, on_screen)
        transform = world_transform(vp)
        pen = QPen(style.edge_near if detail.node_px >= 8 else style.edge)
        pen.setCosmetic(True)
        pen.setWidthF(0)  # a hairline: the stroker culls it cheaply; wider pens stroke all 40k segments

        def world() -> None:
            p.save()
            p.setTransform(transform, True)
            p.setRenderHint(QPainter.RenderHint.Antialiasing, detail.antialias)
            p.setBrush(Qt.BrushStyle.NoBrush)

        for path in list(self.buffers.edge_paths):
            world()
            p.setPen(pen)
            p.drawPath(path)
            p.restore()
            yield
        world()
        if on_screen is not None and detail.heavy_edges:
            self._near_edges(p, style, on_screen)
        if detail.arrows and on_screen is not None:
            self._arrows(p, vp, style, detail, on_screen)
        if vector:
            self._vector_nodes(p, vp, style, detail)
        else:
            yield from self._nodes(p, style, detail, on_screen)
        p.restore()
        # replaced only now: while a frame is drawn in pieces, the one on screen is the old one
        self.placed_labels, self.placed_edge_labels = [], {}
        if on_screen is not None and (detail.labels or detail.edge_labels):
            yield
            p.save()
            p.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
            p.setRenderHint(QPainter.RenderHint.Antialiasing, True)
            # node labels first (they matter more), then relation labels in what is still free:
            # one occupancy grid for both, so no two labels overlap
            taken = self.occupancy(vp, detail, on_screen)
            if detail.labels:
                self.placed_labels = self._labels(p, vp, style, detail, on_screen, vector=vector,
                                                  inside=inside, occupied=taken)
            if detail.edge_labels:
                self.placed_edge_labels = self._edge_labels(p, vp, style, on_screen, occupied=taken)
            p.restore()

    def _near_edges(self, p: QPainter, style: Style, on_screen: list[int]) -> None:
        """Zoomed in: the edges of the nodes on screen again, a little heavier."""
        model = self.model
        xs, ys = model.xs, model.ys
        path = QPainterPath()
        for j in self._visible_edges(on_screen):
            a, b = model.src[j], model.dst[j]
            path.moveTo(xs[a], ys[a])
            path.lineTo(xs[b], ys[b])
        pen = QPen(style.edge_near)
        pen.setCosmetic(True)
        pen.setWidthF(1.3)
        p.setPen(pen)
        p.drawPath(path)

    def _nodes(self, p: QPainter, style: Style, detail: Detail, on_screen: list[int] | None) -> Iterator[None]:
        """One ``drawPoints`` per type; yields between types (the painter keeps its state)."""
        model = self.model
        polys: Iterable[tuple[int, QPolygonF]]
        if on_screen is not None:
            # Zoomed in: wide points are stroked before they are clipped, so hand Qt only those on screen.
            pts: dict[int, list[QPointF]] = {}
            xs, ys, ntype = model.xs, model.ys, model.ntype
            for i in on_screen:
                pts.setdefault(ntype[i], []).append(QPointF(xs[i], ys[i]))
            polys = [(t, QPolygonF(v)) for t, v in pts.items()]
        else:
            polys = list(self.buffers.polys.items())
        cap = Qt.PenCapStyle.RoundCap if detail.round_nodes else Qt.PenCapStyle.SquareCap
        if style.communities is not None:
            yield from self._community_nodes(p, style, detail, on_screen, cap)
            return
        if detail.rings and on_screen is not None:
            # a ring in the background colour separates neighbours (few nodes only: it doubles the cost)
            ring = QPen(style.background)
            ring.setCosmetic(True)
            ring.setCapStyle(cap)
            ring.setWidthF(detail.node_px + 3)
            p.setPen(ring)
            for _, poly in polys:
                p.drawPoints(poly)
        for t, poly in polys:
            name = model.type_names[t]
            pen = QPen(style.colour_of(name))
            pen.setCosmetic(True)
            pen.setCapStyle(Qt.PenCapStyle.SquareCap if name in style.square_types else cap)
            pen.setWidthF(detail.node_px)
            p.setPen(pen)
            p.drawPoints(poly)
            yield

    def _community_nodes(self, p: QPainter, style: Style, detail: Detail, on_screen: list[int] | None,
                         cap: Qt.PenCapStyle) -> Iterator[None]:
        """One ``drawPoints`` per community colour (discs: the shape says nothing here)."""
        for colour, points in colour_groups(self.model, self.buffers, style, on_screen):
            pen = QPen(colour)
            pen.setCosmetic(True)
            pen.setCapStyle(cap)
            pen.setWidthF(detail.node_px)
            p.setPen(pen)
            p.drawPoints(points)
            yield

    def _visible_edges(self, on_screen: list[int]) -> list[int]:
        seen: dict[int, None] = {}
        slot = self.buffers.edge_slot
        for i in on_screen:
            for j in self.model.incident_edges(i):
                if j < len(slot) and slot[j] >= 0:
                    seen[j] = None
        return list(seen)

    def _arrows(self, p: QPainter, vp: Viewport, style: Style, detail: Detail, on_screen: list[int]) -> None:
        """Small arrowheads at the target end, just outside the target's disc."""
        model = self.model
        xs, ys = model.xs, model.ys
        radius = detail.node_px / 2 / vp.scale + 1.5 / vp.scale
        size = max(3.5, min(9.0, detail.node_px * 0.45)) / vp.scale
        heads = QPainterPath()
        for j in self._visible_edges(on_screen)[:MAX_ARROWS]:
            a, b = model.src[j], model.dst[j]
            if a == b:
                continue
            dx, dy = xs[b] - xs[a], ys[b] - ys[a]
            d = math.hypot(dx, dy)
            if d <= radius * 2.5:
                continue
            ux, uy = dx / d, dy / d
            tx, ty = xs[b] - ux * radius, ys[b] - uy * radius
            bx, by = tx - ux * size, ty - uy * size
            heads.moveTo(tx, ty)
            heads.lineTo(bx - uy * size * 0.5, by + ux * size * 0.5)
            heads.lineTo(bx + uy * size * 0.5, by - ux * size * 0.5)
            heads.closeSubpath()
        p.save()
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(style.edge_near)
        p.drawPath(heads)
        p.restore()

    def _vector_nodes(self, p: QPainter, vp: Viewport, style: Style, detail: Detail) -> None:
        model = self.model
        x0, y0, x1, y1 = vp.world_rect(detail.node_px)
        r = detail.node_px / 2 / vp.scale
        ring = QPen(style.background)
        ring.setCosmetic(True)
        ring.setWidthF(1.5)
        p.setPen(ring)
        xs, ys, slot = model.xs, model.ys, self.buffers.node_slot
        for i in model.nodes():
            if i < len(slot) and slot[i] >= 0 and x0 <= xs[i] <= x1 and y0 <= ys[i] <= y1:
                t = model.type_of(i)
                p.setBrush(style.node_colour(model, i))
                if style.communities is None and t in style.square_types:
                    p.drawRect(QRectF(xs[i] - r, ys[i] - r, 2 * r, 2 * r))
                else:
                    p.drawEllipse(QPointF(xs[i], ys[i]), r, r)

    def _labels(self, p: QPainter, vp: Viewport, style: Style, detail: Detail, on_screen: list[int],
                vector: bool = False, inside: QRectF | None = None,
                occupied: Occupancy | None = None) -> list[QRectF]:
        """Names beside the nodes, most important first (degree); a label that would overlap
        one already placed (or a disc) tries the next of eight spots around its node, and is
        skipped if none is free (hover or select the node to read it). Near the edge of
        ``inside`` (the part of the frame on screen) a spot that keeps it whole is preferred.
        Returns the rectangles drawn (frame coordinates), so tests can check no two overlap."""
        model = self.model
        p.setFont(self.font)
        halo = QColor(style.background)
        halo.setAlpha(210)
        off = detail.node_px / 2 + 3
        xs, ys, names = model.xs, model.ys, model.names
        taken = occupied if occupied is not None else self.occupancy(vp, detail, on_screen)
        order = sorted(on_screen, key=lambda i: -len(model.incident_edges(i)))
        placed: list[QRectF] = []
        for i in order:
            sx, sy = vp.to_screen(xs[i], ys[i])
            text = names[i]
            if len(text) > LABEL_MAX_CHARS:
                text = text[: LABEL_MAX_CHARS - 1] + "…"
            st = self.static_text(text)
            size = st.size()
            w, h = size.width(), size.height()
            d = off * 0.7
            # right of the node, then left, below, above, then the four diagonals: the first free spot wins
            spots = [(sx + off, sy - h / 2), (sx - off - w, sy - h / 2),
                     (sx - w / 2, sy + off - 1), (sx - w / 2, sy - off - h + 1),
                     (sx + d, sy + d - 1), (sx + d, sy - d - h + 1),
                     (sx - d - w, sy + d - 1), (sx - d - w, sy - d - h + 1)]
            if inside is not None and inside.contains(QPointF(sx, sy)):
                # on screen: a label cut by the widget's edge reads worse than none (hover shows it)
                spots = [(x, y) for x, y in spots if inside.contains(QRectF(x, y, w, h))]
            for lx, ly in spots:
                rect = QRectF(lx - 2, ly, w + 4, h)
                if taken.free(rect):
                    break
            else:
                continue
            taken.take(rect)
            placed.append(rect)
            p.fillRect(rect, halo)
            p.setPen(style.text)
            if vector:
                p.drawText(QRectF(lx, ly, w + 2, h), Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, text)
            else:
                p.drawStaticText(QPointF(lx, ly), st)
        return placed

    def occupancy(self, vp: Viewport, detail: Detail, on_screen: list[int]) -> "Occupancy":
        """A grid of the screen with the discs already taken: a label must not hide a node."""
        taken = Occupancy()
        r = detail.node_px / 2 * 0.7
        xs, ys = self.model.xs, self.model.ys
        for i in on_screen:
            sx, sy = vp.to_screen(xs[i], ys[i])
            taken.take(QRectF(sx - r, sy - r, 2 * r, 2 * r), pad=0.0)
        return taken

    def _edge_labels(self, p: QPainter, vp: Viewport, style: Style, on_screen: list[int],
                     occupied: Occupancy | None = None) -> dict[int, QRectF]:
        """A relation's type at the middle of its line, once per edge, only where it overlaps
        no node, node label or other relation label (parallel edges share one spot: one label)."""
        model = self.model
        p.setFont(self.edge_font)
        halo = QColor(style.background)
        halo.setAlpha(200)
        colour = mix(style.text, style.background, 0.35)
        xs, ys = model.xs, model.ys
        taken = occupied if occupied is not None else Occupancy()
        placed: dict[int, QRectF] = {}
        for j in self._visible_edges(on_screen)[:MAX_EDGE_LABELS]:
            a, b = model.src[j], model.dst[j]
            ax, ay = vp.to_screen(xs[a], ys[a])
            bx, by = vp.to_screen(xs[b], ys[b])
            if math.hypot(bx - ax, by - ay) < 70:
                continue
            st = self.static_text(model.rel_type_of(j), edge=True)
            size = st.size()
            w, h = size.width(), size.height()
            mx, my = (ax + bx) / 2, (ay + by) / 2
            for lx, ly in ((mx - w / 2, my - h - 1), (mx - w / 2, my + 1)):
                rect = QRectF(lx - 2, ly, w + 4, h)
                if taken.free(rect):
                    break
            else:
                continue
            taken.take(rect)
            placed[j] = rect
            p.fillRect(rect, halo)
            p.setPen(colour)
            p.drawStaticText(QPointF(lx, ly), st)
        return placed


class Occupancy:
    """Which cells of the screen a label or disc already covers: a set of 8 px cells, so
    asking "is this rectangle free?" costs a few set look-ups, whatever the number of labels."""

    CELL = 8.0
    PAD = 2.0  # labels may touch by this much (their halos), not overlap their text

    def __init__(self) -> None:
        self.cells: set[tuple[int, int]] = set()

    def _ranges(self, rect: QRectF, pad: float) -> tuple[range, range]:
        c = self.CELL
        x0: float = rect.left()
        y0: float = rect.top()
        x1: float = rect.right()
        y1: float = rect.bottom()
        return (range(int((x0 + pad) // c), int((x1 - pad) // c) + 1),
                range(int((y0 + pad) // c), int((y1 - pad) // c) + 1))

    def free(self, rect: QRectF) -> bool:
        """No cell of ``rect`` (shrunk by ``PAD``) taken; stops at the first taken cell."""
        cells = self.cells
        xs, ys = self._ranges(rect, self.PAD)
        for cx in xs:
            for cy in ys:
                if (cx, cy) in cells:
                    return False
        return True

    def take(self, rect: QRectF, pad: float = 0.0) -> None:
        """Mark ``rect``'s cells taken, whole: only the rectangle asking later is shrunk by ``PAD``,
        so two labels overlap by at most ``PAD`` (their halos), never by the sum of both pads."""
        xs, ys = self._ranges(rect, pad)
        self.cells.update((cx, cy) for cx in xs for cy in ys)
