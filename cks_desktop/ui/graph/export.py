"""Export what the canvas shows as PNG (at 2x, for slides) or SVG (for print and editing).

Both use the canvas's own renderer, so the file looks like the view,
with full detail where the view is zoomed in enough for labels to be
readable, and plain dots where it is not. Highlights that mean something
(the selection, a path, search matches, tool-call marks) are kept; the hover
and the fading change glow are not. SVG export draws nodes as circles and
labels as text (``FrameRenderer.paint(vector=True)``).
"""

from __future__ import annotations

import time
from pathlib import Path

from PySide6.QtCore import QRect, QRectF, QSize
from PySide6.QtGui import QImage, QPainter
from PySide6.QtSvg import QSvgGenerator

from cks_desktop.ui.graph.canvas import GraphCanvas
from cks_desktop.ui.graph.viewport import Viewport


def _paint(canvas: GraphCanvas, p: QPainter, *, vector: bool) -> None:
    vp = Viewport(canvas.viewport.width, canvas.viewport.height, canvas.viewport.scale,
                  canvas.viewport.cx, canvas.viewport.cy)
    canvas.ensure_style()
    canvas.renderer.paint(p, vp, canvas.style_, vector=vector, inside=QRectF(0, 0, vp.width, vp.height))
    flashes, canvas.state.flashes = canvas.state.flashes, {}
    try:
        canvas.overlay.paint(p, vp, canvas.style_, time.monotonic(), mask=canvas.state.visible_mask(canvas.model))
    finally:
        canvas.state.flashes = flashes


def export_png(canvas: GraphCanvas, path: str | Path, scale: float = 2.0) -> None:
    """Write the view as a PNG, ``scale`` times the widget's size. Raises OSError on failure."""
    w, h = int(canvas.viewport.width), int(canvas.viewport.height)
    image = QImage(int(w * scale), int(h * scale), QImage.Format.Format_ARGB32_Premultiplied)
    image.setDevicePixelRatio(scale)
    p = QPainter(image)
    _paint(canvas, p, vector=False)
    p.end()
    if not image.save(str(path), "PNG"):  # type: ignore[call-overload]  # the stubs say bytes; PySide6 wants str
        raise OSError(f"Could not write {path}.")


def export_svg(canvas: GraphCanvas, path: str | Path, title: str = "") -> None:
    """Write the view as an SVG file. Raises OSError on failure."""
    w, h = int(canvas.viewport.width), int(canvas.viewport.height)
    generator = QSvgGenerator()
    generator.setFileName(str(path))
    generator.setSize(QSize(w, h))
    generator.setViewBox(QRect(0, 0, w, h))
    generator.setTitle(title or "Knowledge graph")
    generator.setDescription("Exported from CKS Desktop")
    p = QPainter()
    if not p.begin(generator):
        raise OSError(f"Could not write {path}.")
    _paint(canvas, p, vector=True)
    p.end()
    if not Path(path).exists() or Path(path).stat().st_size == 0:
        raise OSError(f"Could not write {path}.")
