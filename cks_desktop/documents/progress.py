"""Progress and cancel for reading a document that takes long (a PDF of thousands of pages).

The reader calls ``ReadProgress.step(name, done, total)`` as it goes (a PDF: once per page); the
front end is told through ``on_step`` (the CLI prints a line now and then, the window moves its
progress dialog) and stops the read by setting ``cancel`` (the window's Cancel button; the CLI
stops on Ctrl+C through KeyboardInterrupt). A cancelled read raises ``ReadCancelled`` at the next
step, before anything was stored: nothing of the request is added.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from cks_desktop.documents.errors import DocumentError


class ReadCancelled(DocumentError):
    """The person stopped the reading; nothing of the request was added."""


@dataclass
class ReadProgress:
    """Where a long read is (``on_step(file name, done, total)``), and the way to stop it."""

    on_step: Callable[[str, int, int], None] | None = None
    cancel: threading.Event = field(default_factory=threading.Event)

    def step(self, name: str, done: int, total: int) -> None:
        """Report; raises ``ReadCancelled`` when the person asked to stop (safe on any thread)."""
        self.stop_if_cancelled()
        if self.on_step is not None:
            self.on_step(name, done, total)

    def stop_if_cancelled(self) -> None:
        """Raise ``ReadCancelled`` when the person asked to stop (also between the read and the write)."""
        if self.cancel.is_set():
            raise ReadCancelled("Stopped: nothing was added.")
