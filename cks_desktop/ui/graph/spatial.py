"""A uniform grid over node positions: hit tests and neighbourhood queries.

A grid rather than a tree because nodes are points of roughly equal size in a
layout with roughly even density: one dict lookup per cell answers "which
node is under the cursor" in microseconds, rebuilding for 20k nodes costs a
few milliseconds, and moving one node is a remove and an insert.

Memory matters here (the view's budget is 1 KB per node): a cell is keyed by
one int packing its two coordinates (a tuple key would cost more), and each
node's cell is remembered in an ``array`` indexed by node, not in a dict.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Iterable, Iterator, Sequence

_BIAS = 1 << 30  # keys stay below 2**63 (they live in an array("q"))
_NONE = -1


def _pack(kx: int, ky: int) -> int:
    return ((kx + _BIAS) << 32) | ((ky + _BIAS) & 0xFFFFFFFF)


class SpatialGrid:
    def __init__(self, cell: float) -> None:
        self.cell = float(cell)
        self._cells: dict[int, list[int]] = {}
        self._where = array("q")
        self._count = 0

    def __len__(self) -> int:
        return self._count

    def _cell_of(self, x: float, y: float) -> tuple[int, int]:
        c = self.cell
        return math.floor(x / c), math.floor(y / c)

    def _key(self, x: float, y: float) -> int:
        return _pack(*self._cell_of(x, y))

    def _ensure(self, i: int) -> None:
        if i >= len(self._where):
            self._where.extend([_NONE] * (i + 1 - len(self._where)))

    def clear(self) -> None:
        self._cells = {}
        self._where = array("q")
        self._count = 0

    def rebuild(self, xs: Sequence[float], ys: Sequence[float], members: Iterable[int]) -> None:
        self.clear()
        self._where = array("q", [_NONE]) * len(xs)
        cells, where, c, floor = self._cells, self._where, self.cell, math.floor
        count = 0
        for i in members:
            key = _pack(floor(xs[i] / c), floor(ys[i] / c))
            bucket = cells.get(key)
            if bucket is None:
                cells[key] = [i]
            else:
                bucket.append(i)
            where[i] = key
            count += 1
        self._count = count

    def insert(self, i: int, x: float, y: float) -> None:
        self._ensure(i)
        if self._where[i] != _NONE:
            self.remove(i)
        key = self._key(x, y)
        self._cells.setdefault(key, []).append(i)
        self._where[i] = key
        self._count += 1

    def remove(self, i: int) -> None:
        if i >= len(self._where) or self._where[i] == _NONE:
            return
        key = self._where[i]
        self._where[i] = _NONE
        self._count -= 1
        bucket = self._cells.get(key)
        if bucket is not None:
            try:
                bucket.remove(i)
            except ValueError:
                pass
            if not bucket:
                del self._cells[key]

    def move(self, i: int, x: float, y: float) -> None:
        key = self._key(x, y)
        self._ensure(i)
        if self._where[i] != key:
            self.remove(i)
            self._cells.setdefault(key, []).append(i)
            self._where[i] = key
            self._count += 1

    def in_rect(self, x0: float, y0: float, x1: float, y1: float) -> Iterator[int]:
        """Candidates in the cells overlapping the rectangle (callers check exact bounds)."""
        kx0, ky0 = self._cell_of(min(x0, x1), min(y0, y1))
        kx1, ky1 = self._cell_of(max(x0, x1), max(y0, y1))
        cells = self._cells
        if (kx1 - kx0 + 1) * (ky1 - ky0 + 1) > 4 * len(cells):
            for key, bucket in cells.items():  # a huge rectangle: walk the occupied cells
                kx, ky = (key >> 32) - _BIAS, (key & 0xFFFFFFFF) - _BIAS
                if kx0 <= kx <= kx1 and ky0 <= ky <= ky1:
                    yield from bucket
            return
        for kx in range(kx0, kx1 + 1):
            for ky in range(ky0, ky1 + 1):
                found = cells.get(_pack(kx, ky))
                if found:
                    yield from found

    def nearest(self, x: float, y: float, radius: float, xs: Sequence[float], ys: Sequence[float],
                accept: Sequence[int] | None = None) -> int | None:
        """The node nearest to (x, y) within ``radius`` (optionally only where accept[i])."""
        best, best_d2 = None, radius * radius
        for i in self.in_rect(x - radius, y - radius, x + radius, y + radius):
            if accept is not None and not accept[i]:
                continue
            dx, dy = xs[i] - x, ys[i] - y
            d2 = dx * dx + dy * dy
            if d2 <= best_d2:
                best, best_d2 = i, d2
        return best

    def within(self, x: float, y: float, radius: float, xs: Sequence[float],
               ys: Sequence[float]) -> list[int]:
        r2 = radius * radius
        out = []
        for i in self.in_rect(x - radius, y - radius, x + radius, y + radius):
            dx, dy = xs[i] - x, ys[i] - y
            if dx * dx + dy * dy <= r2:
                out.append(i)
        return out
