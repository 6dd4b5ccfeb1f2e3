"""One app-wide rule: a dialog or secondary window opens whole on the screen, centred on the
window it belongs to.

A form taller than a 700-pixel screen (the MCP server editor with its OAuth fields) put its Save
button below the screen's edge, and a window that placed itself (the document viewer beside the
inspector) opened half off the screen. ``install`` puts one event filter on the application: when a
top-level window that has an owner (a ``QDialog``, a message box, the document viewer) is shown for
the first time it is shrunk to the owner's screen's available area and centred on its owner,
frame included; every later show only keeps it inside the screen, so a place the person chose is
kept. Forms that can be taller than a screen scroll inside (their own scroll areas). Popups, menus
and tool tips are not windows of this kind and are left alone.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import (QApplication, QFileDialog, QHeaderView, QListView, QSplitter, QTreeView,
                               QWidget)

from cks_desktop.ui import window_fit

_NAME = "cksDialogFit"
_PLACED = "cksDialogPlaced"  # a dynamic property: centred once already
FILE_DIALOG_SIZE = (880, 540)  # Qt's own file dialog: room for its four columns (then fitted to the screen)
_KINDS = (Qt.WindowType.Dialog, Qt.WindowType.Sheet, Qt.WindowType.Window, Qt.WindowType.Tool)


class DialogFit(QObject):
    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.setObjectName(_NAME)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:  # noqa: N802 (Qt naming)
        if event.type() == QEvent.Type.Show and isinstance(watched, QWidget) and _secondary(watched):
            first = not watched.property(_PLACED)
            watched.setProperty(_PLACED, True)
            if first and isinstance(watched, QFileDialog):
                size_file_dialog(watched)
            place(watched, centre=first, frame=window_fit.FRAME_GUESS)
            # once the window manager has framed it, its real frame is known: correct with that
            QTimer.singleShot(0, watched, lambda w=watched, c=first: place(w, centre=c, frame=None))
        return False


def _secondary(widget: QWidget) -> bool:
    return (widget.isWindow() and widget.parentWidget() is not None
            and widget.windowType() in _KINDS)


def size_file_dialog(dialog: QFileDialog) -> None:
    """Qt's own file dialog (where the platform has none; a native one never shows this widget)
    opens at a size its columns fit in: the name takes the room left, size, type and date their text's."""
    dialog.resize(max(dialog.width(), FILE_DIALOG_SIZE[0]), max(dialog.height(), FILE_DIALOG_SIZE[1]))
    widen_places(dialog)
    for view in dialog.findChildren(QTreeView):
        header = view.header()
        if header.count() < 2:
            continue
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, header.count()):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)


def widen_places(dialog: QFileDialog) -> None:
    """The places panel on the dialog's left ("Computer", the home folder) as wide as its longest
    entry, so no place is cut to "Comp…"; the folder view keeps the rest."""
    places = dialog.findChild(QListView, "sidebar")
    splitter = dialog.findChild(QSplitter, "splitter")
    if places is None or splitter is None or splitter.count() < 2:
        return
    if places.model() is None or places.model().rowCount() == 0:
        return
    # the delegate's own width for the longest entry: icon, text and the theme's item padding
    scroll = places.verticalScrollBar().sizeHint().width() if places.verticalScrollBar().isVisible() else 0
    wanted = places.sizeHintForColumn(0) + 2 * places.frameWidth() + scroll
    sizes = splitter.sizes()
    total = sum(sizes)
    left = min(max(sizes[0], wanted), total // 3)
    if left != sizes[0]:
        splitter.setSizes([left, total - left, *sizes[2:]][:len(sizes)])


def place(widget: QWidget, *, centre: bool, frame: tuple[int, int] | None) -> None:
    """Shrink ``widget`` to its owner's screen and (``centre``) centre it on its owner; with
    ``frame`` None only when the window manager's frame can be measured."""
    owner = widget.parentWidget()
    if owner is None or not widget.isVisible():
        return
    owner = owner.window()
    screen = owner.screen() or widget.screen() or QApplication.primaryScreen()
    if screen is None:
        return
    inner, outer = widget.geometry(), widget.frameGeometry()
    measured = (outer.width() - inner.width(), outer.height() - inner.height())
    if frame is None and measured == (0, 0):
        return  # no window manager (offscreen): the place it got stands
    extra = frame if frame is not None and measured == (0, 0) else measured
    a = screen.availableGeometry()
    area = window_fit.Rect(a.x(), a.y(), a.width(), a.height())
    if centre:
        o = owner.frameGeometry()
        best = window_fit.centred_on(window_fit.Rect(o.x(), o.y(), o.width(), o.height()), area,
                                     (inner.width(), inner.height()), extra)
    else:
        best = window_fit.fitted(area, window_fit.Rect(outer.x(), outer.y(), inner.width(), inner.height()), extra)
    if (best.width, best.height) != (inner.width(), inner.height()):
        widget.resize(best.width, best.height)
    if (best.x, best.y) != (outer.x(), outer.y()):
        widget.move(best.x, best.y)


def install(app: QCoreApplication) -> None:
    """Put the rule on ``app`` once (calling it again does nothing)."""
    if app.findChild(DialogFit, _NAME) is None:
        app.installEventFilter(DialogFit(app))
