"""Whole-graph layout with igraph's Fruchterman–Reingold, off the event loop.

igraph lays out 20k nodes in about 1.4 s, but it holds the GIL the whole
time, so a thread would freeze the window just the same. The layout runs in
a worker *process* (forkserver on Linux, spawn elsewhere; never plain fork
in a process that runs Qt threads). The pool is started early (``warm``) so
the first real layout does not pay for the process start and the igraph
import. Edges go over the pipe as one ``array('i')`` of bytes, positions come
back as one ``array('d')``: pickling 60k tuples would cost more than the
layout of a small graph.

Scripts that create a ``GraphView`` must keep their top-level code under
``if __name__ == "__main__":`` (the multiprocessing rule: a worker imports the
main module). ``CKS_LAYOUT_PROCESS=0`` disables the worker. When a worker
process is not available (disabled, a sandbox without ``fork``/``spawn``, or a
pool that broke), the same algorithm runs in the GUI process in slices
of a few iterations sized to stay under ~25 ms each, yielding to the event
loop between slices: slower overall, but the window never stalls.

This module is imported by the worker process: it must not import Qt.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import random
import sys
import time
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
# multiprocessing and its process pool are imported with the first worker (after the window is up);
# BrokenExecutor is the base of the pool's BrokenProcessPool, without importing multiprocessing
from concurrent.futures import BrokenExecutor as BrokenProcessPool, Future

if TYPE_CHECKING:
    import multiprocessing.context
    from concurrent.futures import ProcessPoolExecutor

from cks_desktop.ui.graph.placement import EDGE_LENGTH, normalise

log = logging.getLogger(__name__)

NITER = 500
KK_MAX_NODES = 300  # components up to this size get Kamada-Kawai (~0.15 s at 200 nodes)
IN_PROCESS_MAX_NODES = 60  # below this a full layout takes < 15 ms: not worth a round trip
SLICE_BUDGET_S = 0.025


def _pairs(edges: Sequence[int]) -> list[tuple[int, int]]:
    return list(zip(edges[0::2], edges[1::2]))


def _fixed_bounds(n: int, fixed: dict[int, tuple[float, float]]) -> dict[str, list[float]]:
    """igraph's min/max constraints pin nodes: min == max == the pinned coordinate."""
    if not fixed:
        return {}
    inf = math.inf
    minx, maxx, miny, maxy = [-inf] * n, [inf] * n, [-inf] * n, [inf] * n
    for i, (x, y) in fixed.items():
        minx[i] = maxx[i] = x
        miny[i] = maxy[i] = y
    return {"minx": minx, "maxx": maxx, "miny": miny, "maxy": maxy}


def _graph(n: int, pairs: list[tuple[int, int]]):  # -> igraph.Graph (imported lazily)
    import igraph

    return igraph.Graph(n=n, edges=pairs)


def _fr(graph, seed: list[list[float]] | None, niter: int,
        start_temp: float | None, fixed: dict[int, tuple[float, float]]) -> list[list[float]]:
    n = graph.vcount()
    kwargs: dict = {"niter": niter, "grid": n > 400}
    if seed is not None:
        kwargs["seed"] = seed
    if start_temp is not None:
        kwargs["start_temp"] = start_temp
    kwargs.update(_fixed_bounds(n, fixed))
    return graph.layout_fruchterman_reingold(**kwargs).coords


FR_UNIT = 1.2  # igraph's grid FR puts neighbours about this far apart


def compute_layout(n: int, edge_bytes: bytes, seed_bytes: bytes | None = None, niter: int = NITER,
                   fixed: dict[int, tuple[float, float]] | None = None) -> bytes:
    """The worker's job: FR layout, rescaled to the view's units. Returns xs then ys as doubles.

    Without pinned nodes the result is normalised (median relation =
    ``EDGE_LENGTH``, centred). With pinned nodes the pins must keep their
    exact world coordinates, so everything is run in FR units at one fixed
    scale instead and scaled back.
    """
    if n == 0:
        return b""
    edges = array("i")
    edges.frombytes(edge_bytes)
    pairs = _pairs(edges)
    random.seed(n * 7919 + len(pairs))  # igraph draws from Python's random: the same graph, the same picture
    unit = EDGE_LENGTH / FR_UNIT
    seed = None
    if seed_bytes is not None:
        flat = array("d")
        flat.frombytes(seed_bytes)
        div = unit if fixed else 1.0
        seed = [[flat[2 * i] / div, flat[2 * i + 1] / div] for i in range(n)]
    if fixed:
        scaled = {i: (x / unit, y / unit) for i, (x, y) in fixed.items()}
        coords = _fr(_graph(n, pairs), seed, niter, None, scaled)
        return array("d", [c[0] * unit for c in coords] + [c[1] * unit for c in coords]).tobytes()
    if seed is None:
        xs, ys = packed_components(n, pairs, niter)
    else:
        coords = _fr(_graph(n, pairs), seed, niter, None, {})
        xs, ys = normalise([c[0] for c in coords], [c[1] for c in coords], pairs)
    return array("d", xs + ys).tobytes()


def packed_components(n: int, pairs: list[tuple[int, int]], niter: int = NITER) -> tuple[list[float], list[float]]:
    """Lay out each connected component on its own, then pack them in rows, largest first.

    Components up to ``KK_MAX_NODES`` use Kamada–Kawai, whose even edge
    lengths read better than FR's tight clusters and long bridges at that
    size; larger ones use FR (KK is quadratic). A quick pass (``niter`` below
    ``NITER``) always uses FR.

    A knowledge graph is rarely one component; laid out as one, FR flings the
    small components to the far edges and fit-to-view shrinks the main one
    to a dot. Packed, every component is legible at the same scale.
    """
    graph = _graph(n, pairs)
    groups = [sorted(g) for g in graph.connected_components()]
    xs, ys = [0.0] * n, [0.0] * n
    gap = EDGE_LENGTH
    blocks: list[tuple[float, float, list[int], list[float], list[float]]] = []  # (w, h, members, xs, ys)

    def block(members: list[int], bx: list[float], by: list[float]) -> None:
        x0, y0 = min(bx), min(by)
        blocks.append((max(bx) - x0 + gap, max(by) - y0 + gap, members,
                       [x - x0 for x in bx], [y - y0 for y in by]))

    singles = [g[0] for g in groups if len(g) == 1]
    for members in groups:
        if len(members) == 1:
            continue
        if len(members) == 2:
            block(members, [0.0, EDGE_LENGTH], [0.0, 0.0])
            continue
        sub = graph.induced_subgraph(members)
        if len(members) <= KK_MAX_NODES and niter >= NITER:
            coords = sub.layout_kamada_kawai().coords  # even spacing reads better in small graphs
        else:
            coords = _fr(sub, None, niter, None, {})
        sub_pairs = [tuple(e) for e in sub.get_edgelist()]
        bx, by = normalise([c[0] for c in coords], [c[1] for c in coords], sub_pairs)
        block(members, bx, by)
    if singles:  # isolated objects: a tidy grid
        side = math.ceil(math.sqrt(len(singles)))
        step = EDGE_LENGTH * 0.8
        block(singles, [(k % side) * step for k in range(len(singles))],
              [(k // side) * step for k in range(len(singles))])
    # Shelf packing, tallest first, into rows about as wide as the whole is tall: compact, and
    # the biggest component ends up first with the small ones beside and below it.
    blocks.sort(key=lambda b: (-b[1], -b[0]))
    area = sum(b[0] * b[1] for b in blocks)
    row_width = max([b[0] for b in blocks] + [math.sqrt(area) * 1.3]) if blocks else 0.0
    cx = cy = row_h = 0.0
    for w, h, members, bx, by in blocks:
        if cx > 0 and cx + w > row_width:
            cx, cy, row_h = 0.0, cy + row_h, 0.0
        for k, i in enumerate(members):
            xs[i], ys[i] = bx[k] + cx, by[k] + cy
        cx += w
        row_h = max(row_h, h)
    if n:
        mx, my = sum(xs) / n, sum(ys) / n
        xs = [x - mx for x in xs]
        ys = [y - my for y in ys]
    return xs, ys


def timed_layout(*args: Any) -> tuple[bytes, float]:
    """``compute_layout`` and the CPU seconds it took in the process that ran it."""
    started = time.process_time()
    flat = compute_layout(*args)
    return flat, time.process_time() - started


def _warm() -> bool:
    import igraph  # noqa: F401  (the import is the point: the worker is ready when a layout comes)

    return True


def _process_context() -> "multiprocessing.context.BaseContext | None":
    import multiprocessing

    if os.environ.get("CKS_LAYOUT_PROCESS") == "0":
        return None
    if getattr(sys, "frozen", False):
        # A frozen child re-runs the app's entry point; packaging/entry.py calls
        # multiprocessing.freeze_support() first thing, which turns it into the worker.
        return multiprocessing.get_context("spawn")
    methods = multiprocessing.get_all_start_methods()
    if "forkserver" in methods:
        ctx = multiprocessing.get_context("forkserver")
        # The default preload is ``__main__``: the forkserver would re-import whatever script
        # started us. Preload only this module (and igraph), which is all a worker needs.
        ctx.set_forkserver_preload([__name__, "igraph"])
        return ctx
    return multiprocessing.get_context("spawn")


class LayoutRunner:
    """Runs layouts in one worker process (or in slices when there is none)."""

    def __init__(self, *, use_process: bool = True) -> None:
        self._pool: "ProcessPoolExecutor | None" = None
        # the same answer as ``_process_context() is not None`` without importing multiprocessing
        self._use_process = use_process and os.environ.get("CKS_LAYOUT_PROCESS") != "0"
        self._warming: Future[bool] | None = None
        self.last_cpu_s = 0.0  # CPU time of the last layout where it ran (the benchmark reports it)

    @property
    def uses_process(self) -> bool:
        return self._use_process

    def _ensure_pool(self) -> "ProcessPoolExecutor | None":
        if not self._use_process:
            return None
        if self._pool is None:
            from concurrent.futures import ProcessPoolExecutor

            ctx = _process_context()
            if ctx is None:
                self._use_process = False
                return None
            try:
                self._pool = ProcessPoolExecutor(max_workers=1, mp_context=ctx)
            except (OSError, ValueError) as exc:
                log.warning("no layout worker process (%s); laying out in slices instead", exc)
                self._use_process = False
                return None
        return self._pool

    def warm(self) -> None:
        """Start the worker and import igraph in it now, so the first layout is quick."""
        pool = self._ensure_pool()
        if pool is not None and self._warming is None:
            try:
                self._warming = pool.submit(_warm)
            except (BrokenProcessPool, RuntimeError, OSError) as exc:
                log.warning("layout worker failed to start (%s); laying out in slices instead", exc)
                self._drop_pool()

    def _drop_pool(self) -> None:
        pool, self._pool = self._pool, None
        self._use_process = False
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)

    async def layout(self, n: int, edges: Sequence[int], seed: Sequence[float] | None = None,
                     fixed: dict[int, tuple[float, float]] | None = None,
                     niter: int = NITER) -> tuple[list[float], list[float]]:
        """Positions for nodes 0..n-1 given a flat edge list [a0, b0, a1, b1, ...].

        ``seed`` (flat x0, y0, x1, y1, ...) starts from an existing picture;
        ``fixed`` maps node -> (x, y) for pinned nodes that must not move.
        """
        edge_bytes = array("i", edges).tobytes()
        seed_bytes = array("d", seed).tobytes() if seed is not None else None
        if n <= IN_PROCESS_MAX_NODES:
            flat = self._timed(n, edge_bytes, seed_bytes, niter, fixed)
            return _split(flat, n)
        pool = self._ensure_pool()
        if pool is not None:
            loop = asyncio.get_running_loop()
            try:
                flat, self.last_cpu_s = await loop.run_in_executor(pool, timed_layout, n, edge_bytes, seed_bytes,
                                                                   niter, fixed)
                return _split(flat, n)
            except (BrokenProcessPool, OSError, RuntimeError) as exc:  # the pool died or cannot start
                log.warning("layout worker failed (%s); laying out in slices instead", exc)
                self._drop_pool()
        return await sliced_layout(n, _pairs(array("i", edges)), seed, fixed or {}, niter)

    def _timed(self, *args: Any) -> bytes:
        flat, self.last_cpu_s = timed_layout(*args)
        return flat

    def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)


def _split(flat_bytes: bytes, n: int) -> tuple[list[float], list[float]]:
    flat = array("d")
    flat.frombytes(flat_bytes)
    return list(flat[:n]), list(flat[n:])


async def sliced_layout(n: int, pairs: list[tuple[int, int]], seed: Sequence[float] | None,
                        fixed: dict[int, tuple[float, float]], niter: int = NITER) -> tuple[list[float], list[float]]:
    """The same FR layout on this thread, a few iterations at a time, yielding in between.

    The temperature is lowered from slice to slice by hand (each igraph call
    would otherwise restart its own cooling schedule from the top).
    """
    if n == 0:
        return [], []
    unit = EDGE_LENGTH / FR_UNIT
    div = unit if fixed else 1.0
    coords = None if seed is None else [[seed[2 * i] / div, seed[2 * i + 1] / div] for i in range(n)]
    scaled = {i: (x / unit, y / unit) for i, (x, y) in fixed.items()}
    graph = _graph(n, pairs)
    t0 = math.sqrt(n) / 10
    done, step = 0, 2
    while done < niter:
        step = min(step, niter - done)
        temp = max(t0 * (1 - done / niter), 1e-3)
        started = time.perf_counter()
        coords = _fr(graph, coords, step, temp, scaled)
        spent = time.perf_counter() - started
        done += step
        per_iter = spent / step
        step = max(1, min(50, int(SLICE_BUDGET_S / per_iter) if per_iter > 0 else 50))
        await asyncio.sleep(0)
    assert coords is not None
    if fixed:
        return [c[0] * unit for c in coords], [c[1] * unit for c in coords]
    return normalise([c[0] for c in coords], [c[1] for c in coords], pairs)
