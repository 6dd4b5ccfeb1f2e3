"""Which sessions' chats are answering, and which finished while the person looked elsewhere.

The window runs one chat per session and lets them run in the background; without a mark in the
sessions list a person cannot tell that another session is still working, or that it has an
answer waiting. ``SessionActivity`` watches each ``ChatController`` it is given (their plain
callback lists, no Qt) and keeps one state per session:

- ``RUNNING``: its chat is answering and it is not the session on screen;
- ``UNREAD``: its chat finished (answer, error or Stop) while another session was on screen;
  cleared when the session is opened;
- ``IDLE``: anything else (the session on screen never carries a mark).

Listeners get ``(session_id, state)`` on every change; the sidebar draws the marks.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import Protocol

from cks_desktop.callbacks import Callbacks


class Activity(str, Enum):
    IDLE = ""
    RUNNING = "running"
    UNREAD = "unread"


class _Controller(Protocol):
    session_id: str

    @property
    def running(self) -> bool: ...

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]: ...


class SessionActivity:
    def __init__(self) -> None:
        self.current = ""
        self._running: set[str] = set()
        self._unread: set[str] = set()
        self._unsubscribe: dict[str, Callable[[], None]] = {}
        self._changed: Callbacks[[str, Activity]] = Callbacks("session activity")

    def subscribe(self, listener: Callable[[str, Activity], None]) -> Callable[[], None]:
        return self._changed.subscribe(listener)

    def state(self, session_id: str) -> Activity:
        if session_id == self.current:
            return Activity.IDLE
        if session_id in self._running:
            return Activity.RUNNING
        return Activity.UNREAD if session_id in self._unread else Activity.IDLE

    def states(self) -> dict[str, Activity]:
        """Every session with a mark."""
        ids = (self._running | self._unread) - {self.current}
        return {sid: self.state(sid) for sid in sorted(ids)}

    def watch(self, controller: _Controller) -> None:
        sid = controller.session_id
        if sid in self._unsubscribe:
            return
        self._unsubscribe[sid] = controller.subscribe(lambda: self._controller_changed(controller))
        self._controller_changed(controller)

    def forget(self, session_id: str) -> None:
        unsubscribe = self._unsubscribe.pop(session_id, None)
        if unsubscribe is not None:
            unsubscribe()
        self._running.discard(session_id)
        self._unread.discard(session_id)

    def opened(self, session_id: str) -> None:
        """``session_id`` is now on screen: its mark goes, the previous one's may show."""
        before = {sid: self.state(sid) for sid in {self.current, session_id} if sid}
        self.current = session_id
        self._unread.discard(session_id)
        for sid, old in before.items():
            if self.state(sid) != old:
                self._changed.emit(sid, self.state(sid))

    def _controller_changed(self, controller: _Controller) -> None:
        sid = controller.session_id
        old = self.state(sid)
        if controller.running:
            self._running.add(sid)
        elif sid in self._running:
            self._running.discard(sid)
            if sid != self.current:
                self._unread.add(sid)
        if self.state(sid) != old:
            self._changed.emit(sid, self.state(sid))
