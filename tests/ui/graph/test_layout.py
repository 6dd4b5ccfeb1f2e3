"""Whole-graph layout: igraph in a worker process, packed components, pins, the sliced fallback."""

from __future__ import annotations

import asyncio
import math
from array import array

import pytest

from cks_desktop.ui.graph.layout import LayoutRunner, compute_layout, packed_components, sliced_layout
from cks_desktop.ui.graph.placement import EDGE_LENGTH


def _two_triangles_and_loners() -> tuple[int, list[tuple[int, int]]]:
    return 9, [(0, 1), (1, 2), (2, 0), (3, 4), (4, 5), (5, 3)]  # 6, 7, 8 alone


def _split(flat: bytes, n: int) -> tuple[list[float], list[float]]:
    a = array("d")
    a.frombytes(flat)
    return list(a[:n]), list(a[n:])


def test_components_are_packed_apart_at_edge_length_scale() -> None:
    n, pairs = _two_triangles_and_loners()
    xs, ys = packed_components(n, pairs, niter=200)
    assert all(math.isfinite(v) for v in xs + ys)
    for a, b in pairs:
        assert 0.3 * EDGE_LENGTH < math.hypot(xs[a] - xs[b], ys[a] - ys[b]) < 3 * EDGE_LENGTH
    centre = [(sum(xs[i] for i in g) / 3, sum(ys[i] for i in g) / 3) for g in ((0, 1, 2), (3, 4, 5))]
    assert math.dist(*centre) > EDGE_LENGTH  # two components do not sit on top of each other
    spots = {(round(xs[i]), round(ys[i])) for i in range(n)}
    assert len(spots) == n


def test_pinned_nodes_keep_their_exact_world_coordinates() -> None:
    n, pairs = 5, [(0, 1), (1, 2), (2, 3), (3, 4)]
    edges = array("i", [v for p in pairs for v in p]).tobytes()
    xs, ys = _split(compute_layout(n, edges, None, 200, {0: (500.0, -300.0)}), n)
    assert (xs[0], ys[0]) == pytest.approx((500.0, -300.0))
    assert math.hypot(xs[1] - 500.0, ys[1] + 300.0) < 4 * EDGE_LENGTH


@pytest.mark.asyncio
async def test_sliced_layout_yields_to_the_loop() -> None:
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.ensure_future(ticker())
    pairs = [(i, (i + 1) % 300) for i in range(300)]
    xs, ys = await sliced_layout(300, pairs, None, {}, niter=200)
    done.set()
    await task
    assert len(xs) == 300 and all(math.isfinite(v) for v in xs + ys)
    assert ticks >= 3  # the loop ran between slices


@pytest.mark.asyncio
async def test_runner_uses_a_worker_process() -> None:
    runner = LayoutRunner()
    try:
        runner.warm()
        n = 120
        edges = [v for i in range(n - 1) for v in (i, i + 1)]
        xs, ys = await asyncio.wait_for(runner.layout(n, edges, niter=100), 60)
        assert runner.uses_process
        assert len(xs) == n and len(ys) == n
        assert all(math.isfinite(v) for v in xs + ys)
    finally:
        runner.close()


@pytest.mark.asyncio
async def test_runner_without_processes_falls_back_to_slices() -> None:
    runner = LayoutRunner(use_process=False)
    xs, ys = await asyncio.wait_for(runner.layout(80, [v for i in range(79) for v in (i, i + 1)], niter=40), 30)
    assert not runner.uses_process and len(xs) == 80
