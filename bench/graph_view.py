"""Benchmark of the graph view (a script, not a test): issue 6's targets, each beside its floor.

A floor is the bare batched drawing (or layout, or placement) of the SAME
geometry, measured in the same run on the same machine, so a figure can be
read against what this machine can do at best, whatever the load. It builds
a store with a knowledge-graph-like session (communities of related objects,
a few links between them), then measures, through the real ``GraphView``:

1. opening without saved positions: time to a drawn graph, time to the full
   layout, and the worst event-loop lag meanwhile (a 5 ms ticker);
2. opening with saved positions: time to a drawn graph;
3. panning from the cached frame, a full redraw at fit-to-view and after a
   zoom (level of detail), for the big session and a 5k one;
4. one object added by a tool (``registry.invoke``): time until it is in the
   next frame, and the local settling;
5. memory of the view per node (RSS growth while building the model, the
   draw buffers and the grid for the session; the frame pixmap is reported
   apart, it does not grow with the graph).

    python bench/graph_view.py            # 20k objects / 40k relations (a few minutes)
    python bench/graph_view.py --quick    # 5k / 10k, under a minute
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def knowledge_graph(n: int, m: int, seed: int = 11) -> list[dict[str, Any]]:
    """Communities (10-300 objects) with a tree and extra links inside, ~3% links across."""
    rng = random.Random(seed)
    types = ("Person", "Organization", "Place", "Concept", "Event", "Document", "Project", "Tool")
    rel_types = ("knows", "works_at", "located_in", "mentions", "part_of", "uses")
    ops: list[dict[str, Any]] = [{"op": "add_object", "type": types[i % len(types)], "name": f"Object {i}",
                                  "label": f"$o{i}", "properties": {"rank": i}} for i in range(n)]
    groups, start = [], 0
    while start < n:
        size = min(n - start, rng.randint(10, 300))
        groups.append((start, size))
        start += size
    pairs: set[tuple[int, int]] = set()
    for g0, size in groups:
        for k in range(1, size):
            pairs.add((g0 + k, g0 + rng.randrange(max(0, k - 8), k)))
    while len(pairs) < m:
        if rng.random() < 0.97:
            g0, size = rng.choice(groups)
            if size < 3:
                continue
            a, b = g0 + rng.randrange(size), g0 + rng.randrange(size)
        else:
            a, b = rng.randrange(n), rng.randrange(n)
        if a != b:
            pairs.add((a, b))
    ops += [{"op": "add_relation", "source": f"$o{a}", "target": f"$o{b}", "type": rel_types[k % len(rel_types)]}
            for k, (a, b) in enumerate(pairs)]
    return ops


def rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:
        import tracemalloc
        return tracemalloc.get_traced_memory()[0]


class LagMeter:
    """Worst delay of a 5 ms asyncio ticker: how long the event loop was kept from running."""

    def __init__(self) -> None:
        self.worst = 0.0
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            t = loop.time()
            await asyncio.sleep(0.005)
            self.worst = max(self.worst, loop.time() - t - 0.005)

    def start(self) -> None:
        self.worst = 0.0
        self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> float:
        assert self._task is not None
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
        return self.worst * 1000


def best_ms(fn: Any, reps: int) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times) * 1000


def median_ms(fn: Any, reps: int) -> float:
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1000


def floor_draw(canvas: Any, antialias: bool) -> float:
    """The bare batched drawing of the canvas's own geometry: one path, one point call per type."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor, QPainter, QPen, QPixmap

    from cks_desktop.ui.graph.canvas import MARGIN
    from cks_desktop.ui.graph.render import world_transform
    from cks_desktop.ui.graph.viewport import Viewport

    vp = canvas.viewport
    mx, my = int(vp.width * MARGIN), int(vp.height * MARGIN)
    big = Viewport(vp.width + 2 * mx, vp.height + 2 * my, vp.scale, vp.cx, vp.cy)
    pm = QPixmap(int(big.width), int(big.height))
    buffers = canvas.buffers

    def draw() -> None:
        p = QPainter(pm)
        p.fillRect(pm.rect(), QColor("white"))
        p.setRenderHint(QPainter.RenderHint.Antialiasing, antialias)
        p.setTransform(world_transform(big))
        pen = QPen(QColor("#bbbbbb"))
        pen.setCosmetic(True)
        pen.setWidthF(0)
        p.setPen(pen)
        p.drawPath(buffers.edges)
        node = QPen(QColor("#0072B2"))
        node.setCosmetic(True)
        node.setWidthF(3)
        node.setCapStyle(Qt.PenCapStyle.SquareCap)
        p.setPen(node)
        for poly in buffers.polys.values():
            p.drawPoints(poly)
        p.end()

    return best_ms(draw, 5)


async def run(n: int, m: int, small: int, out: list[tuple[str, str, str, str]]) -> None:
    from PySide6.QtWidgets import QApplication

    from cks_desktop.graph.store import GraphStore
    from cks_desktop.tools.approval import Decision, StaticApprover
    from cks_desktop.tools.builtin import build_registry
    from cks_desktop.tools.context import Run
    from cks_desktop.tools.types import Caller, ToolCall
    from cks_desktop.ui.graph.layout import NITER, packed_components
    from cks_desktop.ui.graph.placement import place_new, settle
    from cks_desktop.ui.graph.view import GraphView

    def row(name: str, value: str, target: str, floor: str = "") -> None:
        out.append((name, value, target, floor))
        print(f"  {name:48s} {value:>12s}   target {target:>10s}   floor {floor}", flush=True)

    tmp = Path(tempfile.mkdtemp(prefix="cks-bench-"))
    store = GraphStore.open(tmp / "bench.sqlite3")
    registry = build_registry(store)
    t = time.perf_counter()
    big = store.create_session("big").id
    store.apply(big, knowledge_graph(n, m), "bench")
    five = store.create_session("5k").id
    store.apply(five, knowledge_graph(small, 2 * small, seed=5), "bench")
    print(f"built the store ({n:,} + {small:,} objects) in {time.perf_counter() - t:.1f} s", flush=True)

    view = GraphView(store, registry)
    view.resize(1280, 800)
    view.show()
    QApplication.processEvents()
    await asyncio.sleep(0.5)  # let the layout worker start, as it would while the window opens
    lag = LagMeter()

    # 1. first open: no saved positions
    lag.start()
    t0 = time.perf_counter()
    view.set_session(big)
    await view.sync.opened.wait()
    while view.model.node_count and view.sync.layout_running and not view.canvas.buffers.drawn_nodes:
        await asyncio.sleep(0.002)
    view.canvas.repaint()
    drawn = time.perf_counter() - t0
    await view.sync.laid_out.wait()
    view.canvas.repaint()
    laid_out = time.perf_counter() - t0
    worst = await lag.stop()
    objects, relations = store.all_objects(big), store.all_relations(big)
    index = {o.id: k for k, o in enumerate(objects)}
    pairs = [(index[r.source_id], index[r.target_id]) for r in relations]
    tf = time.perf_counter()
    packed_components(len(objects), pairs, NITER)
    floor_layout = time.perf_counter() - tf
    row(f"open {n:,}/{m:,}, no saved positions: drawn", f"{drawn:.2f} s", "≤ 2 s")
    row("... full layout done", f"{laid_out:.2f} s", "≤ 2.5 s", f"igraph FR alone {floor_layout:.2f} s")
    row("... worst event-loop lag meanwhile", f"{worst:.0f} ms", "≤ 50 ms")

    # 2. reopen with saved positions
    await view.sync.flush()
    view.set_session(five)
    await view.sync.opened.wait()
    await view.sync.laid_out.wait()
    lag.start()
    t0 = time.perf_counter()
    view.set_session(big)
    await view.sync.opened.wait()
    view.canvas.repaint()
    reopened = time.perf_counter() - t0
    worst = await lag.stop()
    row("reopen with saved positions: drawn", f"{reopened:.2f} s", "≤ 0.5 s")
    row("... worst event-loop lag meanwhile", f"{worst:.0f} ms", "≤ 50 ms")

    # 3. frames
    canvas = view.canvas
    canvas.fit()
    canvas._render_frame()
    floor_plain, floor_aa = floor_draw(canvas, False), floor_draw(canvas, True)
    fit_ms = median_ms(canvas._render_frame, 7)
    row("full redraw at fit-to-view (LOD)", f"{fit_ms:.1f} ms", "≤ 50 ms",
        f"bare {floor_plain:.1f} ms, antialiased {floor_aa:.1f} ms")

    def pan() -> None:
        canvas.viewport.pan_pixels(3, 2)
        canvas.repaint()

    canvas.repaint()
    pan_ms = median_ms(pan, 30)
    cached = canvas._frame

    def blit() -> None:
        from PySide6.QtGui import QPainter, QPixmap
        target = QPixmap(canvas.width(), canvas.height())
        p = QPainter(target)
        p.drawPixmap(0, 0, cached)
        p.end()

    row("pan one frame (cached frame + overlays)", f"{pan_ms:.2f} ms", "≤ 5 ms", f"bare blit {best_ms(blit, 20):.2f} ms")
    canvas.fit()
    canvas.zoom_by(4.0)
    canvas._render_frame()
    zoom_floor = floor_draw(canvas, True)
    zoom_ms = median_ms(canvas._render_frame, 7)
    row("full redraw after zooming in 4x", f"{zoom_ms:.1f} ms", "≤ 100 ms", f"bare antialiased {zoom_floor:.1f} ms")

    view.set_session(five)
    await view.sync.opened.wait()
    await view.sync.laid_out.wait()
    canvas.fit()
    canvas._render_frame()
    small_floor = floor_draw(canvas, False)
    small_ms = median_ms(canvas._render_frame, 9)
    row(f"{small:,} objects: full redraw at fit", f"{small_ms:.1f} ms", "≤ 20 ms", f"bare {small_floor:.1f} ms")

    # 4. one object added by a tool
    view.set_session(big)
    await view.sync.opened.wait()
    await view.sync.laid_out.wait()
    canvas.fit()
    canvas.repaint()
    target = objects[n // 2].id
    seen = asyncio.get_running_loop().create_future()

    def on_change(delta: Any) -> None:
        if delta is not None and delta.added_nodes and not seen.done():
            seen.set_result(time.perf_counter())

    view.changed.connect(on_change)
    run_ = Run(big, Caller.MODEL, approver=StaticApprover(Decision.ALLOW))
    call = ToolCall("bench", "evolve_knowledge", {"operations": [
        {"op": "add_object", "type": "Person", "name": "Newcomer", "label": "$n"},
        {"op": "add_relation", "source": "$n", "target": target, "type": "knows"}]})
    t0 = time.perf_counter()
    result = await registry.invoke(call, run_)
    assert not result.is_error, result.content
    applied = await asyncio.wait_for(seen, 10)
    canvas.repaint()
    frame = time.perf_counter()
    i = view.model.index[store.resolve(big, "Newcomer").id]
    assert view.model.placed[i] and canvas.buffers.node_slot[i] >= 0
    row("one object added by a tool: in the next frame", f"{(frame - t0) * 1000:.0f} ms", "next frame",
        f"tool call alone {(applied - t0) * 1000:.0f} ms")
    m_ = view.model
    m_.placed[i] = 0
    ts = time.perf_counter()
    placed = place_new(m_, [i], canvas.grid, (canvas.viewport.cx, canvas.viewport.cy))
    tp = time.perf_counter()
    settle(m_, placed, canvas.grid)
    te = time.perf_counter()
    nb = m_.neighbors(i)
    tc = time.perf_counter()
    _ = (sum(m_.xs[k] for k in nb) / len(nb), sum(m_.ys[k] for k in nb) / len(nb))
    centroid = time.perf_counter() - tc
    row("... placement + local settling", f"{(te - ts) * 1000:.1f} ms", "≤ 300 ms",
        f"centroid alone {centroid * 1000:.3f} ms (placement {(tp - ts) * 1000:.2f} ms)")

    # 5. memory per node
    await view.aclose()
    view.close()
    from cks_desktop.ui.graph.model import GraphModel
    from cks_desktop.ui.graph.render import SceneBuffers
    from cks_desktop.ui.graph.spatial import SpatialGrid
    from cks_desktop.ui.graph.viewstate import ViewState

    saved = {o.id: (float(k), float(k % 97), False) for k, o in enumerate(objects)}
    gc.collect()
    before = rss_bytes()
    model = GraphModel()
    model.load(big, objects, relations, saved)
    model.incident_edges(0)  # adjacency built, as the view builds it on first use
    buffers = SceneBuffers()
    buffers.rebuild(model, ViewState().visible_mask(model))
    grid = SpatialGrid(60.0)
    grid.rebuild(model.xs, model.ys, list(model.nodes()))
    gc.collect()
    per_node = (rss_bytes() - before) / n
    frame_bytes = cached.width() * cached.height() * 4 if cached is not None else 0
    row("memory of the view per node", f"{per_node:.0f} B", "≤ 1024 B",
        f"+ one frame pixmap {frame_bytes / 1e6:.1f} MB, any graph size")
    store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5k/10k instead of 20k/40k (under a minute)")
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication
    import qasync

    app = QApplication.instance() or QApplication(sys.argv)
    app.setQuitOnLastWindowClosed(False)
    n, m, small = (5_000, 10_000, 2_000) if args.quick else (20_000, 40_000, 5_000)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"graph view benchmark: {n:,} objects / {m:,} relations; {os.cpu_count()} cores; "
          f"load average {load:.2f}; Qt platform {os.environ['QT_QPA_PLATFORM']}", flush=True)
    out: list[tuple[str, str, str, str]] = []
    with asyncio.Runner(loop_factory=lambda: qasync.QEventLoop(app)) as runner:
        runner.run(run(n, m, small, out))
    print("\n| figure | measured | target | floor (same run) |\n|---|---|---|---|")
    for name, value, target, floor in out:
        print(f"| {name} | {value} | {target} | {floor} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
