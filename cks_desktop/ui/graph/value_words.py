"""A property's value in plain words for the inspector's Value column.

The cell keeps the value's JSON (what Edit shows and what is parsed back), but a person reads
``["Nobel Prize in Physics 1903", "Nobel Prize in Chemistry 1911"]`` better as two lines, and
``{"city": "Paris", "year": 1891}`` as ``city: Paris`` and ``year: 1891``. Only the display
changes; text that is not a JSON list or object is shown as it is.

The cell's height is measured at the width its text really gets (``needed_height``): the column's
width less the grid line, the style's text rectangle and its text margins on both sides, plus a
little room above and below. Measured at a wider width, a wrapped value's last line would fall
below the row and be cut.
"""

from __future__ import annotations

import json
import math
from typing import Any

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize
from PySide6.QtGui import QFont, QTextLayout, QTextOption
from PySide6.QtWidgets import QApplication, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QTableView

BULLET = "• "
CELL_PADDING = 8  # px above and below a wrapped value together: its lines do not touch the grid


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "—"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, ensure_ascii=False)  # nested deeper: kept exact


def plain_words(text: str) -> str:
    """``text`` (a cell's JSON or plain text) as a person reads it."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return text
    try:
        value = json.loads(stripped)
    except ValueError:
        return text
    if isinstance(value, list):
        if not value:
            return "(none)"
        if len(value) == 1:
            return _scalar(value[0])
        return "\n".join(BULLET + _scalar(item) for item in value)
    if isinstance(value, dict):
        if not value:
            return "(none)"
        return "\n".join(f"{key}: {_scalar(item)}" for key, item in value.items())
    return text


class PlainValueDelegate(QStyledItemDelegate):
    """Draws a value cell in plain words (``plain_words``); its editor still holds the JSON."""

    def displayText(self, value: Any, locale: Any) -> str:  # noqa: N802 (Qt naming)
        if not isinstance(value, str):
            return super().displayText(value, locale)
        return plain_words(value).replace("\n", "\u2028")  # Qt breaks a drawn cell's line only here

    def sizeHint(self, option: QStyleOptionViewItem,  # noqa: N802 (Qt naming)
                 index: QModelIndex | QPersistentModelIndex) -> QSize:
        size = super().sizeHint(option, index)
        view = option.widget
        if not isinstance(view, QTableView) or not view.wordWrap():
            return size
        width = view.columnWidth(index.column()) - (1 if view.showGrid() else 0)
        return QSize(size.width(), max(size.height(), self.needed_height(option, index, width)))

    def needed_height(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex,
                      cell_width: int) -> int:
        """The height a cell ``cell_width`` px wide needs to show every wrapped line of its text."""
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        line = opt.fontMetrics.height()
        opt.rect = QRect(0, 0, max(1, cell_width), line)
        text_rect = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, widget)
        margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, opt, widget) + 1
        chrome = max(0, opt.rect.height() - text_rect.height()) + CELL_PADDING  # room above and below
        return text_height(opt.text, opt.font, text_rect.width() - 2 * margin) + chrome


def text_height(text: str, font: QFont, width: int) -> int:
    """The height of ``text`` word-wrapped at ``width`` px, laid out as a view item draws it."""
    layout = QTextLayout(text, font)
    option = QTextOption()
    option.setWrapMode(QTextOption.WrapMode.WordWrap)  # as QCommonStyle draws a wrapped item
    layout.setTextOption(option)
    height = 0.0
    layout.beginLayout()
    while (line := layout.createLine()).isValid():
        line.setLineWidth(max(1, width))
        height += line.height()
    layout.endLayout()
    return math.ceil(height)  # a partial pixel row is still a row
