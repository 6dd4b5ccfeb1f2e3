"""A list of plain callbacks: how Qt-free models tell whoever listens that something happened.

The core never imports Qt, so its models (the store, the registry, MCP connections and
logs) announce changes through this; the UI wraps a subscription in a Qt signal. A
listener that raises is logged and skipped: a broken view must never undo or block
the change it was being told about.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Generic, ParamSpec

log = logging.getLogger(__name__)

P = ParamSpec("P")


class Callbacks(Generic[P]):
    def __init__(self, what: str) -> None:
        self._what = what
        self._listeners: list[Callable[P, object]] = []

    def subscribe(self, listener: Callable[P, object]) -> Callable[[], None]:
        """Add ``listener``; the returned function removes it again."""
        self._listeners.append(listener)
        return lambda: self.unsubscribe(listener)

    def unsubscribe(self, listener: Callable[P, object]) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)

    def emit(self, *args: P.args, **kwargs: P.kwargs) -> None:
        for listener in list(self._listeners):
            try:
                listener(*args, **kwargs)
            except Exception:
                log.exception("a %s listener failed", self._what)

    def __len__(self) -> int:
        return len(self._listeners)
