"""The chat's look: the reading column, the avatar, the tool-row icons and chips.

Its part of the app-wide style sheet is ``ui/chat/sheet.py``. Lengths come from the token scale:
``COLUMN_MAX_CHARS`` caps the reading column (about 90 characters of the body font), the spacing
between items is the token ``md``.

Colours painted outside the sheet (the avatar, icons) are made from theme tokens at the time of
use and re-made on ``themeChanged`` (pitfall 7) — the chat view calls ``restyle`` on its items.
"""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QGuiApplication, QPainter, QPixmap
from PySide6.QtWidgets import QWidget

from cks_desktop.ui import theme

COLUMN_MAX_CHARS = 90  # the reading column's cap, in average characters of the body font
BUBBLE_SHARE = 0.85  # the person's bubble takes at most this share of the column



def column_width(widget: QWidget) -> int:
    """The widest the reading column gets, from the widget's body font."""
    return widget.fontMetrics().averageCharWidth() * COLUMN_MAX_CHARS


_avatars: dict[tuple[str, int, float], QPixmap] = {}


def avatar(size: int) -> QPixmap:
    """The assistant's mark: a sparkle on an accent rounded square, in the current scheme."""
    ratio = QGuiApplication.primaryScreen().devicePixelRatio() if QGuiApplication.primaryScreen() else 1.0
    key = (theme.current_scheme(), size, ratio)
    if key not in _avatars:
        pm = QPixmap(round(size * ratio), round(size * ratio))
        pm.setDevicePixelRatio(ratio)
        pm.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pm)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(Qt.PenStyle.NoPen)
        painter.setBrush(theme.color("accent"))
        painter.drawRoundedRect(QRectF(0, 0, size, size), size * 0.3, size * 0.3)
        glyph = theme.icon("sparkle", "on_accent")
        inset = round(size * 0.18)
        glyph.paint(painter, inset, inset, size - 2 * inset, size - 2 * inset)
        painter.end()
        _avatars[key] = pm
    return _avatars[key]


def tool_icon(source: str, name: str, state_failed: bool, state: str) -> tuple[str, str]:
    """(Phosphor icon name, colour role) of a tool row: by source, or by the state when that
    says more (failed, denied, waiting for the person)."""
    if state_failed:
        return "warning-circle", "danger"
    if state == "denied":
        return "prohibit", "normal"
    if state == "cancelled":
        return "x-circle", "normal"
    if state == "pending_approval":
        return "hand-palm", "accent"
    if source.startswith("mcp:"):
        return "puzzle-piece", "normal"  # a tool of an MCP server
    if source == "unknown":
        return "question", "normal"
    if name in ("read_text_file",):
        return "file-text", "normal"
    return "share-network", "normal"  # the app's own graph tools


CHIP_TONES = {"done": "success", "error": "danger", "interrupted": "danger", "pending_approval": "accent",
              "running": "accent", "denied": "", "cancelled": "", "reverted": ""}
