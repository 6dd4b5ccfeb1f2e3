"""A uniform grid over node positions: hit tests and neighbourhood queries.

A grid rather than a tree because nodes are points of roughly equal size in a
layout with roughly even density: one dict lookup per cell answers "which
node is under the cursor" in microseconds, rebuilding for 20k nodes costs a
few milliseconds, and moving one node is a remove and an insert.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence


class SpatialGrid:
    def __init__(self, cell: float) -> None:
        self.cell = float(cell)
        self._cells: dict[tuple[int, int], list[int]] = {}
        self._where: dict[int, tuple[int, int]] = {}

    def __len__(self) -> int:
        return len(self._where)

    def _key(self, x: float, y: float) -> tuple[int, int]:
        c = self.cell
        return (math.floor(x / c), math.floor(y / c))

    def clear(self) -> None:
        self._cells.clear()
        self._where.clear()

    def rebuild(self, xs: Sequence[float], ys: Sequence[float], members: Iterable[int]) -> None:
        self.clear()
        cells, where, c, floor = self._cells, self._where, self.cell, math.floor
        for i in members:
            key = (floor(xs[i] / c), floor(ys[i] / c))
            bucket = cells.get(key)
            if bucket is None:
                cells[key] = [i]
            else:
                bucket.append(i)
            where[i] = key

    def insert(self, i: int, x: float, y: float) -> None:
        if i in self._where:
            self.remove(i)
        key = self._key(x, y)
        self._cells.setdefault(key, []).append(i)
        self._where[i] = key

    def remove(self, i: int) -> None:
        key = self._where.pop(i, None)
        if key is None:
            return
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
        if self._where.get(i) != key:
            self.remove(i)
            self._cells.setdefault(key, []).append(i)
            self._where[i] = key

    def in_rect(self, x0: float, y0: float, x1: float, y1: float) -> Iterator[int]:
        """Candidates in the cells overlapping the rectangle (callers check exact bounds)."""
        kx0, ky0 = self._key(min(x0, x1), min(y0, y1))
        kx1, ky1 = self._key(max(x0, x1), max(y0, y1))
        cells = self._cells
        if (kx1 - kx0 + 1) * (ky1 - ky0 + 1) > 4 * len(cells):
            for (kx, ky), bucket in cells.items():  # a huge rectangle: walk the occupied cells
                if kx0 <= kx <= kx1 and ky0 <= ky <= ky1:
                    yield from bucket
            return
        for kx in range(kx0, kx1 + 1):
            for ky in range(ky0, ky1 + 1):
                bucket = cells.get((kx, ky))
                if bucket:
                    yield from bucket

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
