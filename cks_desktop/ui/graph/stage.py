"""The canvas with what floats over it: the legend card, the inspector sheet, the overview map.

Why overlays and not a splitter: beside a sessions list and a chat dock, a splitter of legend,
canvas and inspector left the canvas 200 px of a 1280 px window. Here the canvas always
fills the stage; the legend is a small card in its top-left corner (sized to its rows, never more
than half the stage's height, collapsible to its title), the inspector a side sheet over its right
edge (a share of the width between fixed bounds, always leaving canvas visible beside it), and the
overview map (a child of the canvas) is capped to a quarter of the canvas and kept clear of the
sheet. Closing the sheet (✕, Esc in the canvas) gives the whole canvas back.

The canvas is told how much of it the sheet covers (``covered_right``): Fit, centring and label
placement use only the part beside the sheet, and a picture that was fitted (no pan or zoom since)
is fitted again when the stage is resized or the sheet opens or closes, so at 1024 px, where the
sheet takes more than half the graph's room, no node or label is left under it.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, QRect
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QWidget

from cks_desktop.ui.graph.canvas import GraphCanvas
from cks_desktop.ui.graph.minimap import Minimap

MARGIN = 12  # between an overlay and the stage's edge
SHEET_SHARE = 0.42  # of the stage's width, between the two bounds below
SHEET_MIN, SHEET_MAX = 280, 400
CANVAS_LEFT_VISIBLE = 160  # px of canvas the sheet always leaves uncovered
LEGEND_MAX_SHARE = 0.5  # of the stage's height
LEGEND_WIDTH = (150, 240)


def sheet_width(stage_width: int) -> int:
    """The inspector sheet's width on a stage this wide."""
    wanted = max(SHEET_MIN, min(SHEET_MAX, int(stage_width * SHEET_SHARE)))
    return max(0, min(wanted, stage_width - CANVAS_LEFT_VISIBLE))


class GraphStage(QWidget):
    def __init__(self, canvas: GraphCanvas, legend: QWidget, inspector: QWidget, minimap: Minimap,
                 parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("graphStage")
        self.canvas = canvas
        self.legend = legend
        self.inspector = inspector
        self.minimap = minimap
        for child in (canvas, legend, inspector):
            child.setParent(self)
            child.installEventFilter(self)
        legend.raise_()
        inspector.raise_()
        self.setMinimumSize(240, 200)
        self._placed = (0, 0, 0)  # the canvas's width, height and covered part when last placed

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802
        if event.type() in (QEvent.Type.Show, QEvent.Type.Hide, QEvent.Type.LayoutRequest):
            if watched is not self.canvas:
                self.place()
        return False

    def event(self, event: QEvent) -> bool:
        if event.type() == QEvent.Type.LayoutRequest:  # an overlay's size hint changed
            self.place()
        return super().event(event)

    def resizeEvent(self, event: QResizeEvent) -> None:  # noqa: N802
        super().resizeEvent(event)
        self.place()

    def covered_right(self) -> int:
        """How much of the canvas's right edge the inspector sheet covers (0 when it is closed)."""
        return self.inspector.width() + MARGIN if self.inspector.isVisibleTo(self) else 0

    def place(self) -> None:
        w, h = self.width(), self.height()
        self.canvas.setGeometry(0, 0, w, h)
        if self.inspector.isVisibleTo(self):
            sw = max(sheet_width(w), min(self.inspector.minimumSizeHint().width(), w))
            self.inspector.setGeometry(QRect(w - sw - MARGIN // 2, MARGIN // 2, sw, max(0, h - MARGIN)))
        hint = self.legend.sizeHint()
        lw = max(LEGEND_WIDTH[0], min(LEGEND_WIDTH[1], hint.width()))
        room = w - 2 * MARGIN - self.covered_right()
        lw = max(min(LEGEND_WIDTH[0], w - 2 * MARGIN), min(lw, room))  # the sheet may cover it, not crush it
        lh = max(0, min(hint.height(), int(h * LEGEND_MAX_SHARE)))
        self.legend.setGeometry(MARGIN, MARGIN, lw, lh)
        self.canvas.covered_top_left = (MARGIN, MARGIN, lw, lh) if self.legend.isVisibleTo(self) and lh else None
        self.canvas.covered_right = self.covered_right()  # Fit and centring keep clear of the sheet
        placed, self._placed = self._placed, (w, h, self.canvas.covered_right)
        if self.canvas.fitted and placed != self._placed:
            self.canvas.fit()  # a fitted picture stays fitted to what is seen of it: nothing goes under the sheet
        self.minimap.right_inset = self.covered_right()
        self.minimap.place()
