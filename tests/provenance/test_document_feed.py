"""The change feed carries documents: another process's
`documents add|remove` (a real `python -m cks_desktop` on the same data folder) arrives as ONE
``SessionEvent("documents")``; this process's own adds are not emitted again."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.graph.events import SessionEvent, StoreEvent
from cks_desktop.graph.store import GraphStore


class Heard:
    def __init__(self) -> None:
        self.events: list[StoreEvent] = []
        self._cond = threading.Condition()

    def __call__(self, event: StoreEvent) -> None:
        with self._cond:
            self.events.append(event)
            self._cond.notify_all()

    def documents(self) -> list[SessionEvent]:
        return [e for e in self.events if isinstance(e, SessionEvent) and e.kind == "documents"]

    def wait_documents(self, n: int) -> list[SessionEvent]:
        with self._cond:
            assert self._cond.wait_for(lambda: len(self.documents()) >= n, timeout=15), self.events
            return self.documents()


def _until(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait for a condition the feed's worker makes true (bounded; checks on a short tick)."""
    tick = threading.Event()
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        tick.wait(0.01)


def _cks(home: Path, *args: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), *args],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_documents_of_another_process_arrive_once_and_our_own_not_again(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _cks(home, "sessions", "create", "Docs")
    (tmp_path / "a.txt").write_text("Ada Lovelace met Charles Babbage.")
    (tmp_path / "b.txt").write_text("Babbage designed the Analytical Engine.")
    store = GraphStore.open(next(home.rglob("*.sqlite3")))
    try:
        (session,) = store.list_sessions()
        heard = Heard()
        store.subscribe(heard)
        store.start_feed(interval=0.05)
        _cks(home, "documents", "add", "--session", session.id, str(tmp_path / "a.txt"))
        (first,) = heard.wait_documents(1)
        assert first.external and first.session.id == session.id

        # our own add: the documents store notifies its listeners; the feed says nothing
        feed = store.feed
        assert feed is not None
        scans = feed.scans
        DocumentStore(store).add(session.id, [read_path(tmp_path / "b.txt", 10**7)])
        _until(lambda: feed.scans > scans)  # the feed saw the commit ...
        polls = feed.polls
        _until(lambda: feed.polls > polls + 1)  # ... and finished that poll (and one more)
        assert len(heard.documents()) == 1
        _cks(home, "documents", "remove", "--session", session.id, "a.txt")
        events = heard.wait_documents(2)
        assert len(events) == 2  # the remove from the terminal; never our own add
        assert [d.name for d in DocumentStore(store).list_documents(session.id)] == ["b.txt"]
    finally:
        store.close()
