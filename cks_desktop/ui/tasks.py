"""Keep references to fire-and-forget tasks and report their failures.

asyncio only keeps weak references to tasks, so a task nobody holds can vanish
mid-flight; and an exception in a task nobody awaits is otherwise only noticed
at garbage collection. Every background job of the window goes through one
``TaskTracker`` so that shutdown can cancel and await them all.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)
T = TypeVar("T")


class TaskTracker:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, T], *, name: str | None = None) -> asyncio.Task[T]:
        task = asyncio.ensure_future(coro)
        if name:
            task.set_name(name)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is not None:
            # The crash hook (ui/crash.py) shows a dialog and keeps the app running.
            sys.excepthook(type(exc), exc, exc.__traceback__)

    @property
    def pending(self) -> list[asyncio.Task[Any]]:
        return [t for t in self._tasks if not t.done()]

    async def cancel_all(self, timeout: float = 5.0) -> None:
        tasks = self.pending
        for task in tasks:
            task.cancel()
        if tasks:
            done, still = await asyncio.wait(tasks, timeout=timeout)
            for task in still:
                log.warning("task %s did not finish within %.1f s of being cancelled", task.get_name(), timeout)
