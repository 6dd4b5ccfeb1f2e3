"""Tab and Shift+Tab walk the window's regions in reading order (sessions, graph toolbar, search,
canvas, inspector, chat), whatever order their widgets were made in.

No ``setTabOrder`` chain is fixed at start: widgets that come and go (the in-place rename editor,
the empty graph's buttons, an inspector's rows) keep their place because the order is worked out
at each key press from Qt's own focus chain, sorted by the region each widget sits in. Widgets in
no region (the status bar, tab bars) come after the last region, in Qt's order.
"""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget


def reachable(widget: QWidget) -> bool:
    """Whether Tab may stop on ``widget``: shown, enabled, taking focus from Tab, not a proxy's front."""
    return (widget.isVisible() and widget.isEnabled() and widget.focusProxy() is None
            and bool(widget.focusPolicy() & Qt.FocusPolicy.TabFocus))


def region_of(widget: QWidget, regions: Sequence[QWidget]) -> int:
    """The index of the nearest region holding ``widget`` (``len(regions)`` when none does)."""
    index = {id(region): i for i, region in enumerate(regions)}
    node: QWidget | None = widget
    while node is not None:
        if id(node) in index:
            return index[id(node)]
        node = node.parentWidget()
    return len(regions)


def tab_order(window: QWidget, regions: Sequence[QWidget]) -> list[QWidget]:
    """The widgets Tab stops on in ``window``, region by region, each region's in Qt's chain order."""
    chain: list[QWidget] = []
    node: QWidget | None = window.nextInFocusChain()
    while node is not None and node is not window and len(chain) < 10_000:
        if node.window() is window and reachable(node):
            chain.append(node)
        node = node.nextInFocusChain()
    position = {id(w): i for i, w in enumerate(chain)}
    return sorted(chain, key=lambda w: (region_of(w, regions), position[id(w)]))


def next_stop(window: QWidget, regions: Sequence[QWidget], current: QWidget | None, forward: bool) -> QWidget | None:
    """Where Tab (``forward``) or Shift+Tab goes from ``current``; None when nothing can take the focus."""
    order = tab_order(window, regions)
    if not order:
        return None
    while current is not None and current not in order:  # inside a stop (a combo box's line edit)
        current = current.parentWidget()
    if current is None:
        return order[0] if forward else order[-1]
    step = 1 if forward else -1
    return order[(order.index(current) + step) % len(order)]
