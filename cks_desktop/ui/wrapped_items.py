"""Item views whose text wraps instead of ending in "…": a delegate that says how tall an item is.

Qt's own size hint for a wrapped item lays its text out at a width the item does not really give
it: a style sheet's padding (``QListView::item { padding: 0 6px }``) and the style's text margins
(``PM_FocusFrameHMargin`` + 1 on each side) are taken off only when the item is drawn, so the last
wrapped line fell below the item and was cut. ``WrappedTextDelegate`` measures the text at the
width the item's text rectangle really has (``needed_height``): the cell's width (a table's
column less its grid line, a list's viewport less its spacing), then the style's text rectangle
(which the style sheet's padding shrinks), less the text margins, plus a little room above and
below. Used by the inspector's properties and by the graph search's results.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize
from PySide6.QtGui import QFont, QTextLayout, QTextOption
from PySide6.QtWidgets import (
    QAbstractItemView, QApplication, QListView, QStyle, QStyledItemDelegate, QStyleOptionViewItem, QTableView,
)

CELL_PADDING = 8  # px above and below a wrapped text together: its lines do not touch the grid


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


def cell_width(view: QAbstractItemView, index: QModelIndex | QPersistentModelIndex) -> int | None:
    """The width an item of ``view`` has, or None where its text does not wrap."""
    if isinstance(view, QTableView) and view.wordWrap():
        return view.columnWidth(index.column()) - (1 if view.showGrid() else 0)
    if isinstance(view, QListView) and view.wordWrap():
        return view.viewport().width() - 2 * view.spacing()
    return None


def text_rect_width(option: QStyleOptionViewItem, width: int) -> int:
    """The width the text of an item ``width`` px wide is drawn in (the style's text rectangle,
    less its text margins on both sides)."""
    opt = QStyleOptionViewItem(option)
    widget = opt.widget
    style = widget.style() if widget is not None else QApplication.style()
    opt.rect = QRect(0, 0, max(1, width), opt.fontMetrics.height())
    text = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, widget)
    margin = style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, opt, widget) + 1
    return text.width() - 2 * margin


class WrappedTextDelegate(QStyledItemDelegate):
    """Sizes each item to show every wrapped line of its text at the width it has."""

    def sizeHint(self, option: QStyleOptionViewItem,  # noqa: N802 (Qt naming)
                 index: QModelIndex | QPersistentModelIndex) -> QSize:
        size = super().sizeHint(option, index)
        view = option.widget
        width = cell_width(view, index) if isinstance(view, QAbstractItemView) else None
        if width is None:
            return size
        return QSize(min(size.width(), max(1, width)), max(size.height(), self.needed_height(option, index, width)))

    def needed_height(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex,
                      width: int) -> int:
        """The height an item ``width`` px wide needs to show every wrapped line of its text."""
        opt = QStyleOptionViewItem(option)
        self.initStyleOption(opt, index)
        widget = opt.widget
        style = widget.style() if widget is not None else QApplication.style()
        opt.rect = QRect(0, 0, max(1, width), opt.fontMetrics.height())
        text = style.subElementRect(QStyle.SubElement.SE_ItemViewItemText, opt, widget)
        chrome = max(0, opt.rect.height() - text.height()) + CELL_PADDING  # room above and below
        return text_height(opt.text, opt.font, text_rect_width(opt, width)) + chrome
