"""A resettable deadline for the calling task: ``asyncio.timeout``'s semantics in a plain ``with``.

Why not ``asyncio.timeout`` itself. Every MCP tool call runs under a deadline that progress
notifications move forward (``connection.py``). ``asyncio.timeout`` is an asynchronous context
manager: entering and leaving it costs two coroutines besides the timer, most of its cost, paid on
every call. Nothing in it needs to await, so this one is synchronous and does the same:

- on entering, a timer at ``when`` (loop time) that cancels the task;
- ``reschedule(when)`` moves it (a time already past fires at once); after the block it does nothing;
- on leaving, the timer is cancelled; if it fired, the task's cancellation is taken back
  (``Task.uncancel``) and, unless someone else cancelled the task too, the block's
  ``CancelledError`` becomes ``TimeoutError`` — exactly as ``asyncio.timeout`` does, so a Stop
  (a cancellation from outside) still propagates as a cancellation.
"""

from __future__ import annotations

import asyncio
from types import TracebackType


class Deadline:
    """Use ``with Deadline(loop, when):`` inside a task; see the module docstring."""

    __slots__ = ("_loop", "_when", "_handle", "_task", "_cancelling", "_expired", "_inside")

    def __init__(self, loop: asyncio.AbstractEventLoop, when: float) -> None:
        self._loop = loop
        self._when = when
        self._handle: asyncio.Handle | None = None
        self._task: asyncio.Task[object] | None = None
        self._cancelling = 0
        self._expired = False
        self._inside = False

    def when(self) -> float:
        return self._when

    def expired(self) -> bool:
        """The deadline fired (the task was cancelled by it)."""
        return self._expired

    def __enter__(self) -> "Deadline":
        task = asyncio.current_task(self._loop)
        if task is None:
            raise RuntimeError("a Deadline must be entered inside a task")
        self._task = task
        self._cancelling = task.cancelling()
        self._inside = True
        self._arm()
        return self

    def reschedule(self, when: float) -> None:
        """Move the deadline to ``when`` (loop time); only while inside the block and not yet fired."""
        if not self._inside or self._expired:
            return
        self._when = when
        if self._handle is not None:
            self._handle.cancel()
        self._arm()

    def _arm(self) -> None:
        if self._when <= self._loop.time():
            self._handle = self._loop.call_soon(self._fire)
        else:
            self._handle = self._loop.call_at(self._when, self._fire)

    def _fire(self) -> None:
        self._handle = None
        if self._inside and self._task is not None:
            self._task.cancel()
            self._expired = True

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._inside = False
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None
        if self._expired and self._task is not None:
            if self._task.uncancel() <= self._cancelling and exc_type is not None \
                    and issubclass(exc_type, asyncio.CancelledError):
                raise TimeoutError from exc
