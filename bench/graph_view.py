"""Benchmark of the graph view (a script, not a test): its targets, each beside its floor.

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


async def on_screen(canvas: Any) -> None:
    """Until the canvas shows a frame of its current state (big frames are drawn in pieces)."""
    canvas.update()
    while not canvas.frame_is_current():
        await asyncio.sleep(0.002)


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


def cpu_ms(fn: Any, reps: int) -> float:
    """Median CPU time of this thread: on a shared machine, what the work costs without the waiting."""
    times = []
    for _ in range(reps):
        t = time.thread_time()
        fn()
        times.append(time.thread_time() - t)
    return statistics.median(times) * 1000


def floor_draw(canvas: Any, antialias: bool) -> float:
    """The bare batched drawing of the canvas's own geometry: one path, one point call per type."""
    from PySide6.QtCore import Qt
    from PySide6.QtGui import QColor, QPainter, QPen, QPixmap

    from cks_desktop.ui.graph.frames import MARGIN
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
        for path in buffers.edge_paths:
            p.drawPath(path)
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
    t0, c0 = time.perf_counter(), time.process_time()
    view.set_session(big)
    await view.sync.opened.wait()
    while view.model.node_count and view.sync.layout_running and not view.canvas.buffers.drawn_nodes:
        await asyncio.sleep(0.002)
    await on_screen(view.canvas)
    drawn, drawn_cpu = time.perf_counter() - t0, time.process_time() - c0
    await view.sync.laid_out.wait()
    await on_screen(view.canvas)
    laid_out, laid_out_cpu = time.perf_counter() - t0, time.process_time() - c0
    worst = await lag.stop()
    objects, relations = store.all_objects(big), store.all_relations(big)
    index = {o.id: k for k, o in enumerate(objects)}
    pairs = [(index[r.source_id], index[r.target_id]) for r in relations]
    tf, cf = time.perf_counter(), time.process_time()
    packed_components(len(objects), pairs, NITER)
    floor_layout, floor_cpu = time.perf_counter() - tf, time.process_time() - cf
    row(f"open {n:,}/{m:,}, no saved positions: drawn", f"{drawn:.2f} s", "≤ 2 s",
        f"CPU of this process {drawn_cpu:.2f} s")
    row("... full layout done", f"{laid_out:.2f} s", "≤ 2.5 s", f"igraph FR alone {floor_layout:.2f} s")
    row("... CPU time of the layout worker", f"{view.sync.layout_cpu_s:.2f} s", "≤ 2.5 s",
        f"igraph FR alone {floor_cpu:.2f} s; meanwhile this process used {laid_out_cpu:.2f} s on the other core")
    row("... worst event-loop lag meanwhile", f"{worst:.0f} ms", "≤ 50 ms")

    # 2. reopen with saved positions
    await view.sync.flush()
    view.set_session(five)
    await view.sync.opened.wait()
    await view.sync.laid_out.wait()
    lag.start()
    t0, c0 = time.perf_counter(), time.process_time()
    view.set_session(big)
    await view.sync.opened.wait()
    await on_screen(view.canvas)
    reopened, reopened_cpu = time.perf_counter() - t0, time.process_time() - c0
    worst = await lag.stop()
    row("reopen with saved positions: drawn", f"{reopened:.2f} s", "≤ 0.5 s",
        f"CPU of this process {reopened_cpu:.2f} s (all threads)")
    row("... worst event-loop lag meanwhile", f"{worst:.0f} ms", "≤ 50 ms")

    # 3. frames
    canvas = view.canvas
    canvas.fit()
    canvas._render_frame()
    floor_plain, floor_aa = floor_draw(canvas, False), floor_draw(canvas, True)
    fit_ms = median_ms(canvas._render_frame, 7)
    row("full redraw at fit-to-view (LOD)", f"{fit_ms:.1f} ms", "≤ 50 ms",
        f"bare {floor_plain:.1f} ms, antialiased {floor_aa:.1f} ms")
    row("... the same, CPU time", f"{cpu_ms(canvas._render_frame, 7):.1f} ms", "≤ 50 ms",
        f"bare {cpu_ms(lambda: floor_draw(canvas, False), 1) / 5:.1f} ms")

    def pan() -> None:
        canvas.viewport.pan_pixels(3, 2)
        canvas.repaint()

    canvas.repaint()
    pan_ms = median_ms(pan, 30)
    pan_cpu = cpu_ms(pan, 30)
    cached = canvas.frames.front.pixmap if canvas.frames.front else None

    def blit() -> None:
        from PySide6.QtGui import QPainter, QPixmap
        target = QPixmap(canvas.width(), canvas.height())
        p = QPainter(target)
        p.drawPixmap(0, 0, cached)
        p.end()

    row("pan one frame (cached frame + overlays)", f"{pan_ms:.2f} ms", "≤ 5 ms",
        f"bare blit {best_ms(blit, 20):.2f} ms (CPU {pan_cpu:.2f} ms)")
    canvas.fit()
    canvas.zoom_by(4.0)
    canvas._render_frame()
    zoom_floor = floor_draw(canvas, True)
    zoom_ms = median_ms(canvas._render_frame, 7)
    row("full redraw after zooming in 4x", f"{zoom_ms:.1f} ms", "≤ 100 ms", f"bare antialiased {zoom_floor:.1f} ms")
    row("... the same, CPU time", f"{cpu_ms(canvas._render_frame, 7):.1f} ms", "≤ 100 ms", "")

    view.set_session(five)
    await view.sync.opened.wait()
    await view.sync.laid_out.wait()
    canvas.fit()
    canvas._render_frame()
    small_floor = floor_draw(canvas, False)
    small_ms = median_ms(canvas._render_frame, 9)
    row(f"{small:,} objects: full redraw at fit", f"{small_ms:.1f} ms", "≤ 20 ms", f"bare {small_floor:.1f} ms")
    row("... the same, CPU time", f"{cpu_ms(canvas._render_frame, 9):.1f} ms", "≤ 20 ms",
        f"bare {cpu_ms(lambda: floor_draw(canvas, False), 1) / 5:.1f} ms")

    # 4. one object added by a tool
    view.set_session(big)
    await view.sync.opened.wait()
    await view.sync.laid_out.wait()
    canvas.fit()
    await on_screen(canvas)
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
    canvas.repaint()  # the next frame: the cached base plus the overlay, where the change is drawn at once
    frame = time.perf_counter()
    await on_screen(canvas)
    rebuilt = time.perf_counter()
    i = view.model.index[store.resolve(big, "Newcomer").id]
    assert view.model.placed[i] and canvas.buffers.node_slot[i] >= 0
    row("one object added by a tool: on screen", f"{(frame - t0) * 1000:.0f} ms", "next frame",
        f"tool call alone {(applied - t0) * 1000:.0f} ms")
    row("... and in the redrawn cached frame", f"{(rebuilt - t0) * 1000:.0f} ms", "")
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

    # 5. memory per node, in a fresh process (this one has freed memory Python would reuse)
    await view.aclose()
    view.close()
    import subprocess
    def child(mode: str) -> list[float]:
        done = subprocess.run([sys.executable, __file__, "--memory-child", str(store.path), big, mode],
                              capture_output=True, text=True, timeout=300)
        return [float(f) for f in done.stdout.strip().splitlines()[-1].split()] if done.returncode == 0 else [
            float("nan")] * 3

    total, python, native = child("trace")
    (rss,) = child("rss")[:1]
    frame_bytes = cached.width() * cached.height() * 4 if cached is not None else 0
    row("memory of the view per node (kept)", f"{total:.0f} B", "≤ 1024 B",
        f"Python {python:.0f} B + Qt buffers {native:.0f} B; + one frame pixmap {frame_bytes / 1e6:.1f} MB")
    row("... process RSS growth while building, per node", f"{rss:.0f} B", "",
        "includes build-time scratch the allocator keeps for reuse")
    store.close()


def memory_child(db: str, session: str, mode: str) -> int:
    """Print what the view keeps per node for ``session``: Python objects (tracemalloc, exact),
    Qt containers (their element sizes), and the process's RSS growth while building.

    Run in a fresh process: one that has already freed memory would reuse it
    and show no growth at all. The store's rows are read inside the build and
    dropped with it, as the view does, so only what the view retains counts.
    """
    import tracemalloc

    from PySide6.QtGui import QGuiApplication

    from cks_desktop.graph.store import GraphStore
    from cks_desktop.ui.graph.buffers import SceneBuffers
    from cks_desktop.ui.graph.model import GraphModel
    from cks_desktop.graph.positions import PositionStore
    from cks_desktop.ui.graph.spatial import SpatialGrid

    app = QGuiApplication.instance() or QGuiApplication([])
    store = GraphStore.open(Path(db))
    warm = GraphModel()  # first-use costs (imports, Qt's lazy init) are not per node
    warm.load_heads(session, store.object_heads(session)[:10], [], {})
    SceneBuffers().rebuild(warm, None)

    def build() -> tuple[GraphModel, SceneBuffers, SpatialGrid]:
        model = GraphModel()
        model.load_heads(session, store.object_heads(session), store.relation_heads(session),
                         PositionStore.for_store(store).load(session))
        model.incident_edges(0)  # the adjacency, as the view builds it on first use
        buffers = SceneBuffers()
        buffers.rebuild(model, None)
        grid = SpatialGrid(60.0)
        grid.rebuild(model.xs, model.ys, list(model.nodes()))
        return model, buffers, grid

    gc.collect()
    if mode == "rss":  # no tracemalloc here: its own bookkeeping would be counted
        rss0 = rss_bytes()
        model, _, _ = build()
        gc.collect()
        print(f"{(rss_bytes() - rss0) / max(1, model.node_count):.0f}")
        store.close()
        return 0
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    model, buffers, grid = build()
    gc.collect()
    python = tracemalloc.get_traced_memory()[0] - base
    native = 16 * sum(len(p) for p in buffers.polys.values()) + 24 * sum(path.elementCount() for path in buffers.edge_paths)
    n = max(1, model.node_count)
    print(f"{(python + native) / n:.0f} {python / n:.0f} {native / n:.0f}")
    store.close()
    del app
    return 0


def main() -> int:
    if len(sys.argv) == 5 and sys.argv[1] == "--memory-child":
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
        return memory_child(sys.argv[2], sys.argv[3], sys.argv[4])
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5k/10k instead of 20k/40k (under a minute)")
    args = parser.parse_args()
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication
    from cks_desktop.ui.event_loop import AppEventLoop

    app = QApplication.instance() or QApplication(sys.argv)
    app.setQuitOnLastWindowClosed(False)
    n, m, small = (5_000, 10_000, 2_000) if args.quick else (20_000, 40_000, 5_000)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"graph view benchmark: {n:,} objects / {m:,} relations; {os.cpu_count()} cores; "
          f"load average {load:.2f}; Qt platform {os.environ['QT_QPA_PLATFORM']}", flush=True)
    out: list[tuple[str, str, str, str]] = []
    with asyncio.Runner(loop_factory=lambda: AppEventLoop(app)) as runner:
        runner.run(run(n, m, small, out))
    print("\n| figure | measured | target | floor (same run) |\n|---|---|---|---|")
    for name, value, target, floor in out:
        print(f"| {name} | {value} | {target} | {floor} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
