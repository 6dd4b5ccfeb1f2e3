"""The batched geometry the renderer draws: one point polygon per node type, one path of all edges.

Built from the model in world coordinates (the painter's transform maps
them to the screen), so panning and zooming never touch them. Changes are
incremental: new nodes and edges are appended, moved nodes rewrite only
their own points and their edges' path elements, removed ones are parked
far outside the world (``PARKED``) until holes pile up and a rebuild
reclaims them.

A full rebuild (opening a session, a layout, a filter) fills the Qt
containers through ``QDataStream`` from bytes packed with ``struct``: one C
loop instead of 80k ``moveTo``/``lineTo`` calls, about twice as fast for
40k edges. Qt's stream format for these types is fixed and documented
("Serializing Qt Data Types"): a count, then the elements (a path element
is its type and two doubles), big-endian. Plain value types, so this also
works in the worker thread that opens a session.
"""

from __future__ import annotations

import struct
from array import array
from collections.abc import Iterable, Sequence

from PySide6.QtCore import QByteArray, QDataStream, QPointF
from PySide6.QtGui import QPainterPath, QPolygonF

from cks_desktop.ui.graph.model import GraphModel

PARKED = 1.0e9
EDGES_PER_PATH = 4096  # one path per this many edges: the renderer can yield to the event loop between them
_CHUNK = 1024
_SEGMENTS = struct.Struct(">" + "iddidd" * _CHUNK)  # moveTo a, lineTo b; compiled once


def points_polygon(xs: Sequence[float], ys: Sequence[float]) -> QPolygonF:
    n = len(xs)
    flat = [0.0] * (2 * n)
    flat[0::2] = xs
    flat[1::2] = ys
    poly = QPolygonF()
    QDataStream(QByteArray(struct.pack(f">I{2 * n}d", n, *flat))) >> poly
    return poly


def segments_path(ax: Sequence[float], ay: Sequence[float], bx: Sequence[float], by: Sequence[float]) -> QPainterPath:
    """One sub-path (moveTo, lineTo) per segment, streamed in chunks (small transient memory)."""
    n = len(ax)
    path = QPainterPath()
    for lo in range(0, n, _CHUNK):
        hi = min(n, lo + _CHUNK)
        k = hi - lo
        vals: list[float | int] = [0] * (6 * k)  # MoveToElement = 0
        vals[1::6] = ax[lo:hi]
        vals[2::6] = ay[lo:hi]
        vals[3::6] = [1] * k  # LineToElement = 1
        vals[4::6] = bx[lo:hi]
        vals[5::6] = by[lo:hi]
        body = _SEGMENTS.pack(*vals) if k == _CHUNK else struct.pack(">" + "iddidd" * k, *vals)
        chunk = QPainterPath()
        # count, elements, fill rule (odd-even)
        QDataStream(QByteArray(struct.pack(">i", 2 * k) + body + b"\x00\x00\x00\x00")) >> chunk
        if lo == 0:
            path = chunk
        else:
            path.addPath(chunk)
    return path


class SceneBuffers:
    def __init__(self) -> None:
        self.polys: dict[int, QPolygonF] = {}
        self.node_slot = array("i")
        self.edge_paths: list[QPainterPath] = []  # edge k is sub-path k % EDGES_PER_PATH of path k // EDGES_PER_PATH
        self.edge_count = 0  # edges ever appended since the last rebuild (slots, holes included)
        self.edge_slot = array("i")
        self.drawn_nodes = 0
        self.drawn_edges = 0
        self.holes = 0
        self.version = 0  # bumped on every change: the cached frame compares it

    def edge_element(self, j: int, end: int) -> tuple[float, float]:
        """Where edge ``j``'s start (end=0) or end (end=1) is drawn (for tests and checks)."""
        k = self.edge_slot[j]
        el = self.edge_paths[k // EDGES_PER_PATH].elementAt(2 * (k % EDGES_PER_PATH) + end)
        return el.x, el.y

    def _drawable(self, model: GraphModel, mask: bytearray | None, i: int) -> bool:
        return bool(model.alive[i] and model.placed[i] and (mask is None or mask[i]))

    def rebuild(self, model: GraphModel, mask: bytearray | None) -> None:
        n, m = model.slot_count, len(model.ealive)
        alive, placed, ntype = model.alive, model.placed, model.ntype
        drawable = bytearray(n)
        by_type: dict[int, list[int]] = {}
        for i in range(n):
            if alive[i] and placed[i] and (mask is None or mask[i]):
                drawable[i] = 1
                bucket = by_type.get(ntype[i])
                if bucket is None:
                    by_type[ntype[i]] = [i]
                else:
                    bucket.append(i)
        node_slot = array("i", [-1]) * n
        gx, gy = model.xs.__getitem__, model.ys.__getitem__
        self.polys = {}
        for t, members in by_type.items():
            for k, i in enumerate(members):
                node_slot[i] = k
            self.polys[t] = points_polygon(list(map(gx, members)), list(map(gy, members)))
        self.node_slot = node_slot
        self.drawn_nodes = sum(len(v) for v in by_type.values())
        src, dst, ealive = model.src, model.dst, model.ealive
        chosen = [j for j in range(m) if ealive[j] and drawable[src[j]] and drawable[dst[j]]]
        edge_slot = array("i", [-1]) * m
        for k, j in enumerate(chosen):
            edge_slot[j] = k
        self.edge_paths = []
        for lo in range(0, len(chosen), EDGES_PER_PATH):
            part = chosen[lo:lo + EDGES_PER_PATH]
            a = [src[j] for j in part]
            b = [dst[j] for j in part]
            self.edge_paths.append(segments_path(list(map(gx, a)), list(map(gy, a)),
                                                 list(map(gx, b)), list(map(gy, b))))
        self.edge_count = len(chosen)
        self.edge_slot = edge_slot
        self.drawn_edges = len(chosen)
        self.holes = 0
        self.version += 1

    def _grow(self, model: GraphModel) -> None:
        if len(self.node_slot) < model.slot_count:
            self.node_slot.extend([-1] * (model.slot_count - len(self.node_slot)))
        if len(self.edge_slot) < len(model.ealive):
            self.edge_slot.extend([-1] * (len(model.ealive) - len(self.edge_slot)))

    def add(self, model: GraphModel, mask: bytearray | None, nodes: Iterable[int], edges: Iterable[int]) -> None:
        """Append new nodes and edges without touching the rest."""
        self._grow(model)
        xs, ys = model.xs, model.ys
        for i in nodes:
            if self.node_slot[i] >= 0 or not self._drawable(model, mask, i):
                continue
            poly = self.polys.get(model.ntype[i])
            if poly is None:
                poly = self.polys[model.ntype[i]] = QPolygonF()
            self.node_slot[i] = len(poly)  # type: ignore[arg-type]  # QPolygonF is a sequence; the stubs miss it
            poly.append(QPointF(xs[i], ys[i]))
            self.drawn_nodes += 1
        for j in edges:
            if self.edge_slot[j] >= 0 or not model.ealive[j]:
                continue
            a, b = model.src[j], model.dst[j]
            if self.node_slot[a] < 0 or self.node_slot[b] < 0:
                continue
            k = self.edge_count
            if k // EDGES_PER_PATH >= len(self.edge_paths):
                self.edge_paths.append(QPainterPath())
            path = self.edge_paths[k // EDGES_PER_PATH]
            path.moveTo(xs[a], ys[a])
            path.lineTo(xs[b], ys[b])
            self.edge_slot[j] = k
            self.edge_count += 1
            self.drawn_edges += 1
        self.version += 1

    def remove(self, model: GraphModel, nodes: Iterable[int], edges: Iterable[int]) -> None:
        """Park removed nodes and edges far away (a rebuild later reclaims the space)."""
        self._grow(model)
        for j in edges:
            k = self.edge_slot[j]
            if k >= 0:
                path, e = self.edge_paths[k // EDGES_PER_PATH], k % EDGES_PER_PATH
                path.setElementPositionAt(2 * e, PARKED, PARKED)
                path.setElementPositionAt(2 * e + 1, PARKED, PARKED)
                self.edge_slot[j] = -1
                self.drawn_edges -= 1
                self.holes += 1
        for i in nodes:
            k = self.node_slot[i]
            if k >= 0:
                poly = self.polys.get(model.ntype[i])
                if poly is not None and k < len(poly):  # type: ignore[arg-type]  # as above
                    poly[k] = QPointF(PARKED, PARKED)  # type: ignore[index]
                self.node_slot[i] = -1
                self.drawn_nodes -= 1
                self.holes += 1
        self.version += 1

    @property
    def fragmented(self) -> bool:
        return self.holes > 512 + (self.drawn_nodes + self.drawn_edges) // 5

    def move(self, model: GraphModel, nodes: Iterable[int]) -> None:
        """Follow position changes of ``nodes`` (and their edges)."""
        self._grow(model)
        xs, ys, src, dst = model.xs, model.ys, model.src, model.dst
        paths = self.edge_paths
        for i in nodes:
            k = self.node_slot[i]
            if k < 0:
                continue
            x, y = xs[i], ys[i]
            self.polys[model.ntype[i]][k] = QPointF(x, y)  # type: ignore[index]  # as above
            for j in model.incident_edges(i):
                k = self.edge_slot[j]
                if k >= 0:
                    path, e = paths[k // EDGES_PER_PATH], k % EDGES_PER_PATH
                    if src[j] == i:
                        path.setElementPositionAt(2 * e, x, y)
                    if dst[j] == i:
                        path.setElementPositionAt(2 * e + 1, x, y)
        self.version += 1
