"""How full the context is: the composer's small meter.

The agent loop emits a ``ContextUsage`` before each model request (the estimate of the request
as sent, what it may use, the model's window, and what was compacted to fit). The meter shows
``tokens / budget`` as a thin ring with a percentage — the budget, not the window, because the
budget is where compaction starts: 100 % means "old parts are being shortened now". Above
``WARN_AT`` the ring takes the theme's warning colour. The numbers are on hover
(``usage_text``, plain text). With no usage known (a new or reopened session: the numbers are
not saved) the meter is hidden rather than showing a guess.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QPen
from PySide6.QtWidgets import QSizePolicy, QWidget

from cks_desktop.agent.events import ContextUsage
from cks_desktop.plural import counted
from cks_desktop.ui import theme
from cks_desktop.ui.text import plain_tooltip

WARN_AT = 0.8  # share of the budget above which the meter warns
RING_PX = 14


def fill_of(usage: ContextUsage) -> float:
    """The share of what a request may use that this one uses (0 when nothing is known)."""
    room = usage.budget if usage.budget > 0 else usage.window
    return max(0.0, usage.tokens / room) if room > 0 else 0.0


def percent_text(usage: ContextUsage) -> str:
    return f"{min(999, round(fill_of(usage) * 100))}%"


def usage_text(usage: ContextUsage) -> str:
    """The hover text: the numbers and what was shortened, one fact a line (Qt-free)."""
    lines = [
        f"Context: {percent_text(usage)} full",
        f"About {usage.tokens:,} tokens sent of the {usage.budget:,} a request may use.",
        f"The model's window is {usage.window:,} tokens; the rest is room for the answer.",
    ]
    shortened = []
    if usage.stubbed:
        shortened.append(f"{counted(usage.stubbed, 'old tool result')} sent as a short stub")
    if usage.cut:
        shortened.append(f"{counted(usage.cut, 'part')} cut with a notice")
    if usage.summarised:
        shortened.append(f"{counted(usage.summarised, 'earlier message')} summarised")
    if usage.dropped:
        shortened.append(f"{counted(usage.dropped, 'earlier message')} left out")
    if shortened:
        lines.append("To fit: " + "; ".join(shortened) + ". The chat itself keeps everything.")
    else:
        lines.append("Nothing was shortened.")
    return "\n".join(lines)


class ContextMeter(QWidget):
    """A ring and a percentage; hidden until the session's first request is measured."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("contextMeter")
        self.setSizePolicy(QSizePolicy.Policy.Fixed, QSizePolicy.Policy.Fixed)
        self.usage: ContextUsage | None = None
        self.show_usage(None)

    @property
    def warning(self) -> bool:
        return self.usage is not None and fill_of(self.usage) > WARN_AT

    def text(self) -> str:
        """The percentage shown beside the ring ("" when hidden)."""
        return percent_text(self.usage) if self.usage is not None else ""

    def show_usage(self, usage: ContextUsage | None) -> None:
        """The last measured request of the shown session, or None (nothing known: hidden)."""
        self.usage = usage
        if usage is None:
            self.setToolTip("")
            self.setAccessibleName("Context use")
            self.hide()
            return
        self.setToolTip(plain_tooltip(usage_text(usage)))
        self.setAccessibleName(f"Context {percent_text(usage)} full")
        self.updateGeometry()
        self.show()
        self.update()

    def sizeHint(self) -> QSize:  # noqa: N802
        metrics = self.fontMetrics()
        return QSize(RING_PX + 4 + metrics.horizontalAdvance("100%") + 2, max(RING_PX, metrics.height()) + 4)

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802
        if self.usage is None:
            return
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        top = (self.height() - RING_PX) / 2
        ring = QRectF(1.5, top + 1.5, RING_PX - 3, RING_PX - 3)
        pen = QPen(theme.color("border"), 2.5)
        painter.setPen(pen)
        painter.drawEllipse(ring)
        share = min(1.0, fill_of(self.usage))
        pen.setColor(theme.color("warning" if self.warning else "accent"))
        pen.setCapStyle(Qt.PenCapStyle.RoundCap)
        painter.setPen(pen)
        painter.drawArc(ring, 90 * 16, -round(share * 360 * 16))  # clockwise from the top
        painter.setPen(theme.color("warning" if self.warning else "muted"))
        text_box = QRectF(RING_PX + 4, 0, self.width() - RING_PX - 4, self.height())
        painter.drawText(text_box, int(Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter), self.text())
        painter.end()
