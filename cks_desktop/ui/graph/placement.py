"""Where new nodes go, without reshuffling the picture a person already knows.

A new object is placed next to the objects it is related to (their centroid,
or beside its only neighbour on the side away from that neighbour's other
relations), then a few force iterations move *only the new nodes*: springs
pull them to their neighbours, nearby nodes push them apart. Everything
else stays exactly where it was, which is the point: a person watching the
graph grow should not lose their bearings every time a tool writes.

Units: a relation is about ``EDGE_LENGTH`` world units long; layouts from
igraph are rescaled to that (``normalise``) so placement, hit tests and label
thresholds all mean the same thing whatever the layout algorithm returned.
"""

from __future__ import annotations

import math
import random
import statistics
from collections import deque
from collections.abc import Callable, Iterable, Sequence

from cks_desktop.ui.graph.model import GraphModel
from cks_desktop.ui.graph.spatial import SpatialGrid

EDGE_LENGTH = 60.0
NODE_RADIUS = 8.5
GRID_CELL = EDGE_LENGTH


def normalise(xs: Sequence[float], ys: Sequence[float], edges: Sequence[tuple[int, int]],
              centre: tuple[float, float] = (0.0, 0.0)) -> tuple[list[float], list[float]]:
    """Rescale a layout so the median relation is ``EDGE_LENGTH`` long, centred on ``centre``."""
    n = len(xs)
    if n == 0:
        return [], []
    lengths = []
    step = max(1, len(edges) // 4000)
    for k in range(0, len(edges), step):
        a, b = edges[k]
        d = math.hypot(xs[a] - xs[b], ys[a] - ys[b])
        if d > 0:
            lengths.append(d)
    if lengths:
        unit = statistics.median(lengths)
    else:  # no relations: make the average spacing one edge length
        w = (max(xs) - min(xs)) or 1.0
        h = (max(ys) - min(ys)) or 1.0
        unit = math.sqrt(w * h / n) if n > 1 else 1.0
    factor = EDGE_LENGTH / unit if unit > 0 else 1.0
    mx = sum(xs) / n
    my = sum(ys) / n
    return ([(x - mx) * factor + centre[0] for x in xs], [(y - my) * factor + centre[1] for y in ys])


def free_spot(grid: SpatialGrid, xs: Sequence[float], ys: Sequence[float], x: float, y: float,
              rng: random.Random, clearance: float = EDGE_LENGTH * 0.8) -> tuple[float, float]:
    """The first point on a spiral around (x, y) with no node within ``clearance``."""
    angle = rng.uniform(0, 2 * math.pi)
    radius = 0.0
    for _ in range(400):
        px, py = x + radius * math.cos(angle), y + radius * math.sin(angle)
        if not grid.within(px, py, clearance, xs, ys):
            return px, py
        angle += 2.4  # golden-angle-ish steps cover the ring evenly
        radius += clearance * 0.35
    return x + radius, y


def _beside(model: GraphModel, grid: SpatialGrid, anchor: int, rng: random.Random) -> tuple[float, float]:
    """A spot one edge length from ``anchor``, on its least crowded side."""
    xs, ys = model.xs, model.ys
    ax, ay = xs[anchor], ys[anchor]
    others = [nb for nb in model.neighbors(anchor) if model.placed[nb] and nb != anchor]
    if others:
        ox = sum(xs[k] for k in others) / len(others) - ax
        oy = sum(ys[k] for k in others) / len(others) - ay
        base = math.atan2(-oy, -ox) if (ox or oy) else rng.uniform(0, 2 * math.pi)
    else:
        base = rng.uniform(0, 2 * math.pi)
    best, best_crowd = (ax + EDGE_LENGTH, ay), 1 << 30
    for k in range(7):
        angle = base + (k - 3) * 0.45 + rng.uniform(-0.1, 0.1)
        px, py = ax + EDGE_LENGTH * math.cos(angle), ay + EDGE_LENGTH * math.sin(angle)
        crowd = len(grid.within(px, py, EDGE_LENGTH * 0.6, xs, ys))
        if crowd < best_crowd:
            best, best_crowd = (px, py), crowd
            if crowd == 0 and abs(k - 3) <= 1:
                break
    return best


def place_new(model: GraphModel, new: Iterable[int], grid: SpatialGrid, anchor: tuple[float, float],
              rng: random.Random | None = None) -> list[int]:
    """Give every unplaced node in ``new`` a position near its placed neighbours.

    Nodes connected (directly or through other new nodes) to the existing
    picture are placed outward from it in breadth-first order; groups with no
    connection at all start from a free spot near ``anchor`` (the view centre).
    """
    rng = rng or random.Random(0x5EED)
    pending = [i for i in dict.fromkeys(new) if model.alive[i] and not model.placed[i]]
    todo = set(pending)
    placed_now: list[int] = []
    xs, ys = model.xs, model.ys

    def put(i: int, x: float, y: float) -> None:
        xs[i], ys[i] = x, y
        model.placed[i] = 1
        grid.insert(i, x, y)
        todo.discard(i)
        placed_now.append(i)

    def place_one(i: int) -> None:
        anchors = [nb for nb in model.neighbors(i) if model.placed[nb] and nb != i]
        if len(anchors) >= 2:
            cx = sum(xs[k] for k in anchors) / len(anchors)
            cy = sum(ys[k] for k in anchors) / len(anchors)
            jitter = EDGE_LENGTH * 0.25
            put(i, cx + rng.uniform(-jitter, jitter), cy + rng.uniform(-jitter, jitter))
        elif anchors:
            put(i, *_beside(model, grid, anchors[0], rng))
        else:
            put(i, *free_spot(grid, xs, ys, anchor[0], anchor[1], rng))

    def grow_from(seeds: Iterable[int]) -> None:
        queue = deque(seeds)
        while queue:
            i = queue.popleft()
            if i not in todo:
                continue
            place_one(i)
            for nb in model.neighbors(i):
                if nb in todo:
                    queue.append(nb)

    grow_from(i for i in pending if any(model.placed[nb] for nb in model.neighbors(i)))
    for i in pending:  # groups with no tie to the picture
        if i in todo:
            grow_from([i])
    model.position_version += 1
    return placed_now


Rect = tuple[float, float, float, float]  # x0, y0, x1, y1 in world units


def keep_in_sight(model: GraphModel, nodes: Iterable[int], grid: SpatialGrid, allowed: Rect,
                  blocked: Sequence[Rect] = ()) -> list[int]:
    """Move each of ``nodes`` that landed outside ``allowed`` (the canvas a person sees) or under a
    ``blocked`` rectangle (the legend card) to the nearest clear spot inside, so a new object never
    appears at or past the edge or under the legend. A node whose placed neighbours are all out of
    sight stays beside them (the person is looking elsewhere; pulling it in would draw a long line).
    Returns the nodes moved."""
    x0, y0, x1, y1 = allowed
    if x1 <= x0 or y1 <= y0:
        return []
    xs, ys = model.xs, model.ys

    def seen(px: float, py: float) -> bool:
        return x0 <= px <= x1 and y0 <= py <= y1 and not any(
            bx0 <= px <= bx1 and by0 <= py <= by1 for bx0, by0, bx1, by1 in blocked)

    moved: list[int] = []
    span = max(x1 - x0, y1 - y0)
    batch = list(dict.fromkeys(nodes))
    members = set(batch)
    for i in batch:
        if not model.alive[i] or not model.placed[i] or i in model.pinned or seen(xs[i], ys[i]):
            continue
        neighbours = [nb for nb in model.neighbors(i) if nb != i and model.placed[nb] and nb not in members]
        if neighbours and not any(seen(xs[nb], ys[nb]) for nb in neighbours):
            continue
        start = (min(max(xs[i], x0), x1), min(max(ys[i], y0), y1))
        spot = _clear_spot_inside(grid, xs, ys, start, seen, span)
        if spot is None:
            continue
        xs[i], ys[i] = spot
        grid.move(i, *spot)
        moved.append(i)
    if moved:
        model.position_version += 1
    return moved


def _clear_spot_inside(grid: SpatialGrid, xs: Sequence[float], ys: Sequence[float], start: tuple[float, float],
                       seen: Callable[[float, float], bool], span: float) -> tuple[float, float] | None:
    """The first seen point on a spiral from ``start`` with no node near it; nearer is allowed on a
    crowded screen (a shorter clearance each time round), any seen point as the last resort."""
    for clearance in (EDGE_LENGTH * 0.8, EDGE_LENGTH * 0.4, EDGE_LENGTH * 0.15, 0.0):
        step = max(clearance, span / 40) * 0.35
        angle, radius = 0.0, 0.0
        for _ in range(600):
            px, py = start[0] + radius * math.cos(angle), start[1] + radius * math.sin(angle)
            if seen(px, py) and (clearance == 0.0 or not grid.within(px, py, clearance, xs, ys)):
                return px, py
            angle += 2.4
            radius += step
    return None


def settle(model: GraphModel, movable: Iterable[int], grid: SpatialGrid, iterations: int = 40) -> list[int]:
    """A few force iterations that move only ``movable`` (never pinned nodes)."""
    nodes = [i for i in dict.fromkeys(movable) if model.alive[i] and model.placed[i] and i not in model.pinned]
    if not nodes:
        return []
    iterations = max(6, min(iterations, 40_000 // max(1, len(nodes))))
    xs, ys = model.xs, model.ys
    nbrs = {i: [nb for nb in model.neighbors(i) if nb != i and model.placed[nb]] for i in nodes}
    length, reach = EDGE_LENGTH, EDGE_LENGTH * 0.75  # springs to the neighbours; a short-range push
    for it in range(iterations):
        temp = length * 0.25 * (1.0 - it / iterations) + 0.5
        for i in nodes:
            x, y = xs[i], ys[i]
            fx = fy = 0.0
            for nb in nbrs[i]:
                dx, dy = xs[nb] - x, ys[nb] - y
                d = math.hypot(dx, dy) or 0.01
                pull = (d - length) / d * 0.5
                fx += dx * pull
                fy += dy * pull
            for k in grid.within(x, y, reach, xs, ys):
                if k == i:
                    continue
                dx, dy = x - xs[k], y - ys[k]
                d = math.hypot(dx, dy)
                if d < 1e-3:
                    dx, dy, d = 0.7 + (i % 7) * 0.1, 0.7 - (k % 5) * 0.1, 1.0
                push = (reach - d) / d * 0.6  # only overlaps push: nothing else is disturbed
                fx += dx * push
                fy += dy * push
            f = math.hypot(fx, fy)
            if f > temp:
                fx, fy = fx / f * temp, fy / f * temp
            xs[i], ys[i] = x + fx, y + fy
            grid.move(i, xs[i], ys[i])
    model.position_version += 1
    return nodes
