"""Viewport maths, the spatial grid, placement of new nodes and local settling."""

from __future__ import annotations

import math
import random
import time

import pytest

from cks_desktop.graph.events import GraphChanged
from cks_desktop.ui.graph.model import GraphModel
from cks_desktop.ui.graph.palette import TYPE_COLOURS, assign_colours
from cks_desktop.ui.graph.placement import EDGE_LENGTH, GRID_CELL, normalise, place_new, settle
from cks_desktop.ui.graph.spatial import SpatialGrid
from cks_desktop.ui.graph.viewport import MAX_SCALE, Viewport

from tests.ui.graph.test_model import S, obj, rel


def test_zoom_keeps_the_point_under_the_cursor() -> None:
    vp = Viewport(800, 600, 1.0, 10.0, -5.0)
    before = vp.to_world(123.0, 456.0)
    assert vp.zoom_at(2.5, 123.0, 456.0)
    after = vp.to_world(123.0, 456.0)
    assert after == pytest.approx(before)
    assert vp.to_screen(*vp.to_world(7.0, 9.0)) == pytest.approx((7.0, 9.0))
    vp.scale = MAX_SCALE
    assert not vp.zoom_at(2.0, 0, 0)


def test_fit_shows_the_bounds_and_does_not_blow_up_a_point() -> None:
    vp = Viewport(800, 600)
    vp.fit((-100.0, -50.0, 300.0, 150.0), margin_px=0)
    x0, y0, x1, y1 = vp.world_rect()
    assert x0 <= -100 and x1 >= 300 and y0 <= -50 and y1 >= 150
    vp.fit((5.0, 5.0, 5.0, 5.0), max_scale=1.5)
    assert vp.scale == 1.5 and (vp.cx, vp.cy) == (5.0, 5.0)
    vp.pan_pixels(15, 0)
    assert vp.cx == pytest.approx(5.0 - 10.0)


def test_grid_nearest_rect_and_moves() -> None:
    xs, ys = [0.0, 10.0, 100.0], [0.0, 0.0, 100.0]
    grid = SpatialGrid(30)
    grid.rebuild(xs, ys, [0, 1, 2])
    assert grid.nearest(9.0, 1.0, 5.0, xs, ys) == 1
    assert grid.nearest(50.0, 50.0, 5.0, xs, ys) is None
    assert grid.nearest(9.0, 1.0, 20.0, xs, ys, accept=[1, 0, 1]) == 0
    assert sorted(grid.in_rect(-5, -5, 15, 5)) == [0, 1]
    xs[2], ys[2] = 1.0, 1.0
    grid.move(2, 1.0, 1.0)
    assert sorted(grid.within(0.0, 0.0, 3.0, xs, ys)) == [0, 2]
    grid.remove(0)
    assert grid.nearest(0.0, 0.0, 3.0, xs, ys) == 2 and len(grid) == 2
    assert sorted(grid.in_rect(-1e6, -1e6, 1e6, 1e6)) == [1, 2]  # a huge rectangle walks the cells


def _placed_star(n: int = 30) -> tuple[GraphModel, SpatialGrid]:
    m = GraphModel()
    m.load(S, [obj(i) for i in range(n)], [rel(i, 0, i) for i in range(1, n)])
    rng = random.Random(1)
    for i in range(n):
        angle = rng.uniform(0, 2 * math.pi)
        r = 0.0 if i == 0 else EDGE_LENGTH
        m.set_position(i, r * math.cos(angle) + i, r * math.sin(angle))
    grid = SpatialGrid(GRID_CELL)
    grid.rebuild(m.xs, m.ys, range(n))
    return m, grid


def test_a_new_node_lands_next_to_its_neighbour_and_nothing_else_moves() -> None:
    m, grid = _placed_star()
    before = [(m.xs[i], m.ys[i]) for i in range(30)]
    m.apply_event(GraphChanged(S, "c", "model", added_objects=(obj(99),), added_relations=(rel(99, 5, 99),)))
    new = m.index["o_99"]
    started = time.perf_counter()
    placed = place_new(m, [new], grid, anchor=(0.0, 0.0))
    moved = settle(m, placed, grid)
    assert time.perf_counter() - started < 0.3
    assert placed == [new] and moved == [new]
    d = math.hypot(m.xs[new] - m.xs[5], m.ys[new] - m.ys[5])
    assert 0.3 * EDGE_LENGTH < d < 2.0 * EDGE_LENGTH
    assert [(m.xs[i], m.ys[i]) for i in range(30)] == before
    assert new in set(grid.within(m.xs[new], m.ys[new], 1.0, m.xs, m.ys))


def test_new_groups_without_ties_start_near_the_anchor_and_connected_ones_follow() -> None:
    m, grid = _placed_star(5)
    m.apply_event(GraphChanged(S, "c", "model", added_objects=(obj(50), obj(51), obj(52)),
                               added_relations=(rel(50, 50, 51), rel(51, 51, 52))))
    new = m.indices_of(["o_50", "o_51", "o_52"])
    place_new(m, new, grid, anchor=(1000.0, 1000.0))
    for i in new:
        assert m.placed[i]
        assert math.hypot(m.xs[i] - 1000.0, m.ys[i] - 1000.0) < 4 * EDGE_LENGTH


def test_settle_never_moves_pinned_nodes() -> None:
    m, grid = _placed_star(5)
    m.pinned.add(3)
    x, y = m.xs[3], m.ys[3]
    assert settle(m, [3], grid) == []
    assert (m.xs[3], m.ys[3]) == (x, y)


def test_normalise_scales_median_edge_to_the_unit() -> None:
    xs, ys = normalise([0.0, 2.0, 4.0], [0.0, 0.0, 0.0], [(0, 1), (1, 2)])
    assert xs == pytest.approx([-EDGE_LENGTH, 0.0, EDGE_LENGTH]) and ys == [0.0, 0.0, 0.0]
    xs, ys = normalise([0.0, 1.0], [0.0, 1.0], [])
    assert sum(xs) == pytest.approx(0.0)


def test_type_colours_are_stable_and_distinct() -> None:
    a = assign_colours(["Person", "Company", "Place"])
    b = assign_colours(["Place", "Person", "Company", "Person"])
    assert a == b and len(set(a.values())) == 3
    many = assign_colours([f"T{i}" for i in range(len(TYPE_COLOURS))])
    assert len(set(many.values())) == len(TYPE_COLOURS)
