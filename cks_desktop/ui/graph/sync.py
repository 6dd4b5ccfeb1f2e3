"""Keeping the picture in step with the store: opening, live changes, layouts, saving.

Opening a session reads every object and relation, the saved positions, and
builds the model and the draw buffers in a worker thread, so even 20k objects
never stall the window (the GIL is handed back every few ms). With saved
positions the first frame is the person's own picture; without, a quick
rough layout is drawn first and the full one replaces it when the worker
process has it.

Live changes are applied in the next event-loop turn: removed things
vanish, new nodes are placed beside their neighbours and settled locally
(nothing else moves), and what changed glows for a moment. While a session
is being (re)built, events are queued and applied after it; applying an
event twice is harmless (an "added" object already known counts as updated).

Positions are saved shortly after they change (debounced, in a thread): all
of them after a layout, just the moved ones after a drag or a placement.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine
from typing import Any

from cks_desktop.graph.events import GraphChanged, SessionEvent
from cks_desktop.ui.graph.canvas import GraphCanvas
from cks_desktop.ui.graph.layout import NITER, LayoutRunner
from cks_desktop.ui.graph.model import Delta, GraphModel
from cks_desktop.ui.graph.placement import GRID_CELL, keep_in_sight, place_new, settle
from cks_desktop.graph.positions import PositionStore
from cks_desktop.ui.graph.buffers import SceneBuffers
from cks_desktop.ui.graph.spatial import SpatialGrid
from cks_desktop.plural import counted

log = logging.getLogger(__name__)

THREAD_REBUILD_FROM = 5000  # slots; below, rebuilding the buffers takes a few ms
SYNC_OPEN_MAX = 1500  # sessions this small are read and drawn without a thread hop (a few ms)
QUICK_LAYOUT_FROM = 2000  # graphs this big get a rough layout drawn before the full one
QUICK_NITER = 30
BIG_BATCH = 1500  # more new objects than this (and > 30% of the graph) → a full layout
MAX_FLASH = 2000
GRAVEYARD = 20_000  # positions of recently removed objects, for an undo that brings them back
SAVE_DELAY_S = 1.5

Spawn = Callable[[Coroutine[Any, Any, Any]], Any]


def _build_geometry(model: GraphModel, mask: bytearray | None) -> tuple[SceneBuffers, SpatialGrid]:
    buffers = SceneBuffers()
    buffers.rebuild(model, mask)
    grid = SpatialGrid(GRID_CELL)
    grid.rebuild(model.xs, model.ys, [i for i in model.nodes() if model.placed[i]])
    return buffers, grid


class GraphSync:
    def __init__(self, store: Any, canvas: GraphCanvas, positions: PositionStore | None,
                 runner: LayoutRunner, spawn: Spawn, changed: Callable[[Delta | None], None]) -> None:
        self.store = store
        self.canvas = canvas
        self.model = canvas.model
        self.state = canvas.state
        self.positions = positions
        self.runner = runner
        self.spawn = spawn
        self.changed = changed  # called after the picture changed (legend, status, inspector follow)
        self.busy = False
        self.layout_running = False
        self._gen = 0
        self._layout_gen = 0
        self._queued: list[GraphChanged] = []
        self._dirty: set[str] = set()
        self._save_handle: asyncio.TimerHandle | None = None
        self._full_save: asyncio.Future[Any] | None = None
        self._graveyard: dict[str, tuple[float, float, bool]] = {}
        self.requested_positions: dict[str, tuple[float, float]] = {}  # from "add object here"
        self.target: str | None = None  # the session shown, or being opened
        self.layout_cpu_s = 0.0  # CPU seconds the last layout took where it ran (all its passes)
        self._rebuild_gen = 0
        self.opened = asyncio.Event()  # set when the current session's first picture is drawn
        self.laid_out = asyncio.Event()  # set when no layout is pending

    @property
    def session_id(self) -> str | None:
        return self.model.session_id

    # -- opening ------------------------------------------------------------------
    def open_session(self, session_id: str | None) -> asyncio.Future[Any]:
        """Start opening a session; from now on its events are queued until it is drawn.

        A small session (up to ``SYNC_OPEN_MAX`` objects, a few ms of work) is
        read and drawn right here, so it is on screen in the same event-loop
        turn; a bigger one is read and built in a worker thread. Returns an
        awaitable that is done when the first picture is there.
        """
        self._gen += 1
        self._layout_gen += 1
        gen = self._gen
        self.target = session_id or None
        self.opened.clear()
        self.laid_out.clear()
        self._queued.clear()
        self.busy = bool(session_id)
        if session_id and self._is_small(session_id):
            try:
                self._save_now()
                built = self._read(session_id)
            except Exception:  # the same failure will be reported by the regular path
                pass
            else:
                self._show(gen, session_id, built)
                done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                done.set_result(None)  # no task: nothing is scheduled when nothing is left to do
                return done
        return self.spawn(self._open(gen, session_id or None))

    def _is_small(self, session_id: str) -> bool:
        try:
            return int(self.store.counts(session_id).get("objects", 0)) <= SYNC_OPEN_MAX
        except Exception:  # the threaded open that follows reads the same table and reports the fault
            return False

    def _read(self, session_id: str) -> tuple[GraphModel, SceneBuffers, SpatialGrid]:
        saved = self.positions.load(session_id) if self.positions is not None else {}
        model = GraphModel()
        if hasattr(self.store, "object_heads"):  # the lean rows: no properties parsed
            model.load_heads(session_id, self.store.object_heads(session_id), self.store.relation_heads(session_id),
                             saved)
        else:
            model.load(session_id, self.store.all_objects(session_id), self.store.all_relations(session_id), saved)
        buffers, grid = _build_geometry(model, None)
        return model, buffers, grid

    async def _open(self, gen: int, session_id: str | None) -> None:
        await self.flush()
        if gen != self._gen:
            return
        if not session_id:
            self._graveyard.clear()
            self.state.reset()
            self.model.reset(None)
            self.canvas.rebuild()
            self.canvas.status_text = ""
            self.opened.set()
            self.laid_out.set()
            self.changed(None)
            return
        self.canvas.status_text = "Opening…"
        self.canvas.update()
        try:
            built = await asyncio.to_thread(self._read, session_id)
        except Exception as exc:  # a deleted session or a broken file: say so, show nothing
            if gen == self._gen:
                self.busy = False
                self.state.reset()
                self.model.reset(None)
                self.canvas.rebuild()
                self.canvas.status_text = f"Could not open this session's graph: {exc}"
                self.opened.set()
                self.laid_out.set()
                self.changed(None)
            return
        if gen == self._gen:
            self._show(gen, session_id, built)

    def _show(self, gen: int, session_id: str, built: tuple[GraphModel, SceneBuffers, SpatialGrid]) -> None:
        model, buffers, grid = built
        self._graveyard.clear()
        self.state.reset()
        self.model.adopt(model)
        self.canvas.adopt(buffers, grid)
        self.busy = False
        unplaced = self.model.unplaced()
        if self.model.node_count and len(unplaced) == self.model.node_count:
            self.canvas.status_text = f"Laying out {counted(self.model.node_count, 'object', grouped=True)}…"
            self.canvas.fit()
            self.start_relayout(quick_first=self.model.node_count >= QUICK_LAYOUT_FROM)
        else:
            self.canvas.status_text = ""
            if len(unplaced) > BIG_BATCH and len(unplaced) > 0.3 * self.model.node_count:
                self.start_relayout()  # many objects arrived while the session was closed
            elif unplaced:
                self._place(unplaced)
                self.canvas.rebuild()
            self.canvas.fit()
            if not self.layout_running:
                self.laid_out.set()
        self._drain()
        self.opened.set()
        self.changed(None)

    def _drain(self) -> None:
        queued, self._queued = self._queued, []
        for ev in queued:
            self._apply(ev)

    # -- live changes -----------------------------------------------------------------
    def on_event(self, event: object) -> Delta | None:
        if isinstance(event, SessionEvent):
            if event.kind == "deleted" and event.session.id == self.target:
                self.open_session(None)
            return None
        if not isinstance(event, GraphChanged) or event.session_id != self.target:
            return None
        if self.busy:
            self._queued.append(event)
            return None
        return self._apply(event)

    def _apply(self, ev: GraphChanged) -> Delta:
        model, canvas, state = self.model, self.canvas, self.state
        delta = model.apply_event(ev)
        if delta.empty:
            if delta.touched_ids:  # properties changed: nothing to redraw but the glow and the inspector
                self._flash(delta)
                self.changed(delta)
            return delta
        if delta.removed_nodes or delta.removed_edges:
            for i in delta.removed_nodes:
                canvas.grid.remove(i)
            self._graveyard.update(delta.removed_positions)
            while len(self._graveyard) > GRAVEYARD:
                self._graveyard.pop(next(iter(self._graveyard)))
            canvas.buffers.remove(model, delta.removed_nodes, delta.removed_edges)
            state.prune(model)
        fresh = [i for i in delta.added_nodes if not model.placed[i]]
        restored = self._restore(fresh)
        for i in restored:
            canvas.grid.insert(i, model.xs[i], model.ys[i])
        todo = [i for i in fresh if not model.placed[i]]
        if len(todo) > BIG_BATCH and len(todo) > 0.3 * model.node_count:
            self.start_relayout()
        elif todo:
            self._place(todo)
        mask = state.visible_mask(model)
        if delta.retyped or delta.rewired or state.focused or model.needs_compaction() \
                or canvas.buffers.fragmented:
            if model.needs_compaction():
                model.compact()
            self.rebuild()
        else:
            canvas.buffers.add(model, mask, delta.added_nodes, delta.added_edges)
            if delta.updated_nodes or delta.updated_edges:
                canvas.buffers.version += 1  # names changed: labels in the cached frame are stale
        self._flash(delta)
        canvas.ensure_style()
        canvas.invalidate()
        self.changed(delta)
        return delta

    def rebuild(self) -> None:
        """Rebuild the draw buffers from the model (a filter, focus, retyped nodes, compaction).

        Small graphs now; big ones in a worker thread (events wait in the queue), the
        old picture staying on screen meanwhile (the change glow shows what is new)."""
        if self.model.slot_count < THREAD_REBUILD_FROM:
            self.canvas.rebuild()
            return
        self._rebuild_gen += 1
        self.spawn(self._rebuild_off_loop(self._rebuild_gen))

    async def _rebuild_off_loop(self, gen: int) -> None:
        model, state = self.model, self.state

        def build() -> tuple[SceneBuffers, SpatialGrid]:
            return _build_geometry(model, state.visible_mask(model))

        self.busy = True
        try:
            buffers, grid = await asyncio.to_thread(build)
        finally:
            self.busy = False
        if gen == self._rebuild_gen:
            self.canvas.adopt(buffers, grid)
        self._drain()
        self.changed(None)

    def _flash(self, delta: Delta) -> None:
        if delta.touched_ids and len(delta.touched_ids) <= MAX_FLASH:
            self.state.flash(delta.touched_ids, time.monotonic())
            self.canvas.flash_running()
            self.canvas.update()

    def _restore(self, fresh: list[int]) -> list[int]:
        out = []
        for i in fresh:
            oid = self.model.ids[i]
            saved = self.requested_positions.pop(oid, None) if oid else None
            if saved is None and oid is not None and oid in self._graveyard:
                x, y, pinned = self._graveyard.pop(oid)
                if pinned:
                    self.model.pinned.add(i)
                saved = (x, y)
            if saved is not None:
                self.model.set_position(i, saved[0], saved[1])
                out.append(i)
                self._dirty.add(oid)  # type: ignore[arg-type]
        if out:
            self._schedule_save()
        return out

    def _place(self, nodes: list[int]) -> None:
        vp = self.canvas.viewport
        placed = place_new(self.model, nodes, self.canvas.grid, (vp.cx, vp.cy))
        settle(self.model, placed, self.canvas.grid)
        allowed, blocked = self.canvas.sight()
        keep_in_sight(self.model, placed, self.canvas.grid, allowed, blocked)
        self.mark_moved(placed)

    # -- layouts ----------------------------------------------------------------------
    def start_relayout(self, *, quick_first: bool = False) -> Any:
        self.layout_running = True
        self.laid_out.clear()
        return self.spawn(self.relayout(quick_first=quick_first))

    async def relayout(self, *, quick_first: bool = False) -> bool:
        """Lay out the whole graph in the worker; pinned objects stay put. True if applied."""
        self._layout_gen += 1
        gen = self._layout_gen
        self.layout_running = True
        self.laid_out.clear()
        self.layout_cpu_s = 0.0
        try:
            passes = [QUICK_NITER, NITER] if quick_first else [NITER]
            for k, niter in enumerate(passes):
                ids, edges, fixed = await self._off_loop(self._layout_job)
                xs, ys = await self.runner.layout(len(ids), edges, fixed=fixed or None, niter=niter)
                self.layout_cpu_s += self.runner.last_cpu_s
                if gen != self._layout_gen:
                    return False
                await self._apply_layout(ids, xs, ys, final=k == len(passes) - 1)
                if gen != self._layout_gen:
                    return False
            return True
        finally:
            if gen == self._layout_gen:
                self.layout_running = False
                self.canvas.status_text = ""
                self.canvas.update()
                self.laid_out.set()

    async def _off_loop(self, fn: Callable[..., Any], *args: Any) -> Any:
        """Run model-wide work in a thread; store events wait in the queue meanwhile."""
        self.busy = True
        try:
            return await asyncio.to_thread(fn, *args)
        finally:
            self.busy = False
            self._drain()

    def _layout_job(self) -> tuple[list[str], list[int], dict[int, tuple[float, float]]]:
        """The worker's input: node ids in order, a flat edge list over them, pinned positions."""
        model = self.model
        order = [i for i in model.nodes()]
        ids = [model.ids[i] for i in order]
        slot_of = dict(zip(order, range(len(order))))
        edges: list[int] = []
        src, dst = model.src, model.dst
        for j in model.edges():
            a, b = slot_of.get(src[j]), slot_of.get(dst[j])
            if a is not None and b is not None:
                edges.append(a)
                edges.append(b)
        fixed = {slot_of[i]: (model.xs[i], model.ys[i]) for i in model.pinned
                 if i in slot_of and model.placed[i]}
        return ids, edges, fixed  # type: ignore[return-value]

    def _place_all(self, ids: list[str], xs: list[float], ys: list[float]) -> tuple[SceneBuffers, SpatialGrid]:
        model = self.model
        index, pinned, mx, my, placed = model.index, model.pinned, model.xs, model.ys, model.placed
        for k, oid in enumerate(ids):
            i = index.get(oid)
            if i is not None and i not in pinned:
                mx[i], my[i] = xs[k], ys[k]
                placed[i] = 1
        model.position_version += 1
        return _build_geometry(model, self.state.visible_mask(model))

    async def _apply_layout(self, ids: list[str], xs: list[float], ys: list[float], *, final: bool) -> None:
        self.busy = True
        try:
            buffers, grid = await asyncio.to_thread(self._place_all, ids, xs, ys)
        finally:
            self.busy = False
        self.canvas.adopt(buffers, grid)
        late = self.model.unplaced()  # objects that arrived during the layout
        if late:
            self._place(late)
            self.canvas.rebuild()
        self.canvas.fit()
        self._drain()
        self.opened.set()
        if final:
            self._save_all()
        self.changed(None)

    # -- saving -------------------------------------------------------------------------
    def mark_moved(self, nodes: list[int]) -> None:
        for i in nodes:
            oid = self.model.ids[i]
            if oid is not None:
                self._dirty.add(oid)
        self._schedule_save()

    def _schedule_save(self) -> None:
        if self.positions is None or self._save_handle is not None:
            return
        loop = asyncio.get_running_loop()
        self._save_handle = loop.call_later(SAVE_DELAY_S, lambda: self.spawn(self.flush()))

    def _rows(self, ids: list[str]) -> list[tuple[str, float, float, bool]]:
        model = self.model
        rows = []
        for oid in ids:
            i = model.index.get(oid)
            if i is not None and model.placed[i]:
                rows.append((oid, model.xs[i], model.ys[i], i in model.pinned))
        return rows

    async def flush(self) -> None:
        """Write positions that changed since the last save (now)."""
        full, self._full_save = self._full_save, None
        if full is not None:
            await full
        if self._save_handle is not None:
            self._save_handle.cancel()
            self._save_handle = None
        if self.positions is None or not self._dirty or self.session_id is None:
            self._dirty.clear()
            return
        rows = self._rows(sorted(self._dirty))
        self._dirty.clear()
        await asyncio.to_thread(self.positions.save, self.session_id, rows)

    def _save_now(self) -> None:
        """Flush pending position changes synchronously (a small session switch)."""
        if self._save_handle is not None:
            self._save_handle.cancel()
            self._save_handle = None
        if self.positions is not None and self._dirty and self.session_id is not None:
            self.positions.save(self.session_id, self._rows(sorted(self._dirty)))
        self._dirty.clear()

    def _save_all(self) -> None:
        if self.positions is None or self.session_id is None:
            return
        self._dirty.clear()
        session, positions, model = self.session_id, self.positions, self.model

        def save() -> bool:
            return positions.save(session, model.positions_snapshot(), replace=True)

        self._full_save = self.spawn(asyncio.to_thread(save))
