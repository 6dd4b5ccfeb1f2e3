"""World ↔ screen maths for the canvas: zoom, pan, fit. Qt-free.

The world is the layout's coordinate system (``placement.EDGE_LENGTH`` units
between neighbours); the screen is the widget in logical pixels. The view is a
uniform scale around a world point shown at the widget's centre, which keeps
zooming about the cursor a two-line formula and makes the cached frame's
offset during a pan a plain subtraction.
"""

from __future__ import annotations

from dataclasses import dataclass

MIN_SCALE = 0.002
MAX_SCALE = 8.0
# Fit zooms a small graph up to this, the zoom limit: 3-10 objects then fill ~80% of the free
# canvas (discs stop growing at 44 px, only the lines get longer); 1.5 left a 6-object graph a
# small island in the middle of the canvas.
FIT_MAX_SCALE = MAX_SCALE
MIN_CLEAR_PX = 120.0  # of the canvas a sheet over its right edge always counts as visible


def clear_width(width: float, covered_right: float) -> float:
    """How much of a canvas ``width`` px wide is not under the sheet over its right edge.

    The whole uncovered part counts: capping the sheet at half the canvas (as once done) fitted
    the picture partly under a sheet wider than that (at 1024 px the sheet takes more than half
    the graph's room). Only an absurdly narrow rest is widened, so a fit never collapses."""
    if covered_right <= 0:
        return width
    return max(min(width, MIN_CLEAR_PX), width - covered_right)


@dataclass
class Viewport:
    width: float = 800.0
    height: float = 600.0
    scale: float = 1.0  # screen pixels per world unit
    cx: float = 0.0  # world point at the centre of the widget
    cy: float = 0.0

    def resize(self, width: float, height: float) -> None:
        self.width, self.height = max(1.0, width), max(1.0, height)

    def to_screen(self, x: float, y: float) -> tuple[float, float]:
        return ((x - self.cx) * self.scale + self.width / 2, (y - self.cy) * self.scale + self.height / 2)

    def to_world(self, sx: float, sy: float) -> tuple[float, float]:
        return ((sx - self.width / 2) / self.scale + self.cx, (sy - self.height / 2) / self.scale + self.cy)

    def world_rect(self, margin_px: float = 0.0) -> tuple[float, float, float, float]:
        """The world rectangle (x0, y0, x1, y1) on screen, grown by ``margin_px``."""
        x0, y0 = self.to_world(-margin_px, -margin_px)
        x1, y1 = self.to_world(self.width + margin_px, self.height + margin_px)
        return x0, y0, x1, y1

    def pan_pixels(self, dx: float, dy: float) -> None:
        """Move the picture by (dx, dy) screen pixels (a drag)."""
        self.cx -= dx / self.scale
        self.cy -= dy / self.scale

    def zoom_at(self, factor: float, sx: float, sy: float) -> bool:
        """Zoom by ``factor`` keeping the world point under (sx, sy) fixed; False at a limit."""
        new = min(MAX_SCALE, max(MIN_SCALE, self.scale * factor))
        if new == self.scale:
            return False
        wx, wy = self.to_world(sx, sy)
        self.scale = new
        self.cx = wx - (sx - self.width / 2) / new
        self.cy = wy - (sy - self.height / 2) / new
        return True

    def center_on(self, x: float, y: float) -> None:
        self.cx, self.cy = x, y

    def fit(self, bounds: tuple[float, float, float, float] | None, *, margin_px: float = 40.0,
            max_scale: float = FIT_MAX_SCALE, label_room_px: float = 90.0) -> None:
        """Show all of ``bounds``; a single point (or tiny graph) is not blown up past ``max_scale``.

        ``label_room_px`` more on the left and right: labels stick out beside their nodes.
        """
        if bounds is None:
            self.scale, self.cx, self.cy = 1.0, 0.0, 0.0
            return
        x0, y0, x1, y1 = bounds
        w = max(x1 - x0, 1e-9)
        h = max(y1 - y0, 1e-9)
        room = min(label_room_px, self.width * 0.06)
        avail_w = max(10.0, self.width - 2 * (margin_px + room))
        avail_h = max(10.0, self.height - 2 * margin_px)
        self.scale = min(max_scale, max(MIN_SCALE, min(avail_w / w, avail_h / h)))
        self.cx, self.cy = (x0 + x1) / 2, (y0 + y1) / 2

    def key(self) -> tuple[float, float, float, float, float]:
        return (self.scale, self.cx, self.cy, self.width, self.height)
