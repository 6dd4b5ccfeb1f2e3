"""Plain callbacks from the core → Qt signals on the GUI thread.

The store calls its listeners on the thread that wrote (tools run big batches
in worker threads), and the MCP manager calls its own from the loop. A Qt
signal emitted from another thread is queued to the receiver's thread, so
widgets only ever see these events on the GUI thread.

Events are always queued, from the GUI thread too: a write the person made in the window
(an edit, a Revert) returns first, and the views redraw afterwards in the next turn of the
event loop, never inside the store's write.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal


class EventBridge(QObject):
    arrived = Signal(object)  # not `event`: that name is QObject.event(), which Qt calls for every event
    _queued = Signal(object)  # what the core calls; delivered as ``arrived`` in a later loop turn

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._unsubscribe: list[Callable[[], None]] = []
        self._queued.connect(self.arrived, Qt.ConnectionType.QueuedConnection)

    def attach(self, subscribe: Callable[[Callable[[Any], None]], Callable[[], None] | None]) -> None:
        """``subscribe`` is e.g. ``store.subscribe``; its events are re-emitted as ``arrived``."""
        unsubscribe = subscribe(self._queued.emit)
        if callable(unsubscribe):
            self._unsubscribe.append(unsubscribe)

    def detach(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
