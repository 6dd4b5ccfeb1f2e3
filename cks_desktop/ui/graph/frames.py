"""The canvas's cached frame, and drawing a big frame without stalling the window.

The base picture (edges, nodes, labels) is rendered into a pixmap a margin
larger than the widget. While the view only pans, painting is one blit of
that pixmap (well under a millisecond). When the picture must be redrawn:

- a small graph is simply drawn now (a few ms);
- a big one is drawn into a back buffer in pieces of at most ``BUDGET_S``
  per event-loop turn (``FrameRenderer.steps``), while the old frame keeps
  being shown, moved and scaled to the current view; the back buffer
  replaces it when complete. PySide holds the GIL inside every QPainter
  call, so a Python thread could not draw in parallel; pieces are what keeps
  the event loop's lag down to a few ms instead of a whole frame (40-50 ms
  for 20k nodes on this machine).

A frame in progress is never abandoned for a newer state (a stream of store
events would otherwise starve it): it is finished, shown, and a new one
starts if the view or the geometry moved on meanwhile.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from PySide6.QtCore import QPointF, QRectF, QTimer
from PySide6.QtGui import QColor, QPainter, QPixmap

from cks_desktop.ui.graph.render import FrameRenderer, Style
from cks_desktop.ui.graph.viewport import Viewport

MARGIN = 0.15  # of the widget size, rendered beyond each edge so small pans need no redraw
BUDGET_S = 0.010
SYNC_EDGES = 6000  # frames with fewer edges than this are drawn at once


@dataclass
class Frame:
    pixmap: QPixmap
    key: tuple
    cx: float
    cy: float
    scale: float
    mx: int
    my: int


def _seen(frame: Frame, vp: Viewport, clear: float | None) -> QRectF:
    """The part of ``frame`` (a margin larger than the widget) a person sees: the widget's
    rectangle, less the right part under the inspector sheet."""
    width = vp.width if clear is None else max(1.0, min(vp.width, clear))
    return QRectF(frame.mx, frame.my, width, vp.height)


@dataclass
class _Job:
    frame: Frame
    painter: QPainter
    steps: Iterator[None]


class FrameCache:
    def __init__(self, renderer: FrameRenderer, done: Callable[[], None]) -> None:
        self.renderer = renderer
        self.front: Frame | None = None
        self._job: _Job | None = None
        self._done = done  # called when a frame finished in the background (schedule a repaint)
        self.last_render_ms = 0.0
        self._started = 0.0

    @property
    def rendering(self) -> bool:
        return self._job is not None

    def _new_frame(self, vp: Viewport, dpr: float, key: tuple) -> tuple[Frame, Viewport]:
        mx, my = int(vp.width * MARGIN), int(vp.height * MARGIN)
        w, h = int(vp.width) + 2 * mx, int(vp.height) + 2 * my
        pixmap = QPixmap(max(1, int(w * dpr)), max(1, int(h * dpr)))
        pixmap.setDevicePixelRatio(dpr)
        return Frame(pixmap, key, vp.cx, vp.cy, vp.scale, mx, my), Viewport(w, h, vp.scale, vp.cx, vp.cy)

    def render_now(self, vp: Viewport, dpr: float, key: tuple, style: Style,
                   bounds: tuple[float, float, float, float] | None, clear: float | None = None) -> None:
        """Finish any frame in progress, then draw a frame for ``vp`` completely.

        ``clear``: how much of the widget's width (from its left) is seen, the rest being under the
        inspector sheet; labels near the sheet are placed on the seen side of their node."""
        self.finish()
        frame, big = self._new_frame(vp, dpr, key)
        started = time.perf_counter()
        painter = QPainter(frame.pixmap)
        self.renderer.paint(painter, big, style, bounds=bounds, inside=_seen(frame, vp, clear))
        painter.end()
        self.last_render_ms = (time.perf_counter() - started) * 1000
        self.front = frame

    def start(self, vp: Viewport, dpr: float, key: tuple, style: Style,
              bounds: tuple[float, float, float, float] | None, clear: float | None = None) -> None:
        """Begin drawing a frame for ``vp`` in pieces (no-op if one is already on its way)."""
        if self._job is not None:
            return
        frame, big = self._new_frame(vp, dpr, key)
        painter = QPainter(frame.pixmap)
        inside = _seen(frame, vp, clear)
        self._job = _Job(frame, painter, self.renderer.steps(painter, big, style, bounds=bounds, inside=inside))
        self._started = time.perf_counter()
        QTimer.singleShot(0, self._advance)

    def _advance(self) -> None:
        job = self._job
        if job is None:
            return
        deadline = time.perf_counter() + BUDGET_S
        for _ in job.steps:
            if time.perf_counter() >= deadline:
                QTimer.singleShot(0, self._advance)
                return
        self._complete()
        self._done()

    def _complete(self) -> None:
        job, self._job = self._job, None
        if job is None:
            return
        job.painter.end()
        self.last_render_ms = (time.perf_counter() - self._started) * 1000
        self.front = job.frame

    def finish(self) -> None:
        """Complete a frame in progress right away (before a grab or an export)."""
        job = self._job
        if job is not None:
            for _ in job.steps:
                pass
            self._complete()

    def blit(self, p: QPainter, vp: Viewport, key: tuple) -> bool:
        """The front frame at the current pan offset; False if it is stale or does not cover the view."""
        f = self.front
        if f is None or f.key != key:
            return False
        ox = -f.mx + (f.cx - vp.cx) * f.scale
        oy = -f.my + (f.cy - vp.cy) * f.scale
        if not (-2 * f.mx <= ox <= 0 and -2 * f.my <= oy <= 0):
            return False
        p.drawPixmap(QPointF(ox, oy), f.pixmap)
        return True

    def preview(self, p: QPainter, vp: Viewport, background: QColor) -> None:
        """The front frame, however stale, moved and scaled to the current view (or just the background)."""
        p.fillRect(QRectF(0, 0, vp.width, vp.height), background)
        f = self.front
        if f is None:
            return
        k = vp.scale / f.scale
        w2 = f.pixmap.width() / f.pixmap.devicePixelRatio() / 2
        h2 = (f.pixmap.height() / f.pixmap.devicePixelRatio()) / 2
        p.save()
        p.translate((f.cx - vp.cx) * vp.scale + vp.width / 2 - w2 * k, (f.cy - vp.cy) * vp.scale + vp.height / 2 - h2 * k)
        p.scale(k, k)
        p.drawPixmap(QPointF(0, 0), f.pixmap)
        p.restore()
