"""Plain callbacks from the core → Qt signals on the GUI thread.

The store calls its listeners on the thread that wrote (tools run big batches
in worker threads), and the MCP manager calls its own from the loop. A Qt
signal emitted from another thread is queued to the receiver's thread, so
widgets only ever see these events on the GUI thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal


class EventBridge(QObject):
    arrived = Signal(object)  # not `event`: that name is QObject.event(), which Qt calls for every event

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._unsubscribe: list[Callable[[], None]] = []

    def attach(self, subscribe: Callable[[Callable[[Any], None]], Callable[[], None] | None]) -> None:
        """``subscribe`` is e.g. ``store.subscribe``; its events are re-emitted as ``arrived``."""
        unsubscribe = subscribe(self.arrived.emit)
        if callable(unsubscribe):
            self._unsubscribe.append(unsubscribe)

    def detach(self) -> None:
        for unsubscribe in self._unsubscribe:
            unsubscribe()
        self._unsubscribe.clear()
