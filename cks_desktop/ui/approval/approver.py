"""The GUI's ``Approver``: queue requests, show one dialog at a time.

Requests from any running chat wait their turn (FIFO). Cancelling the asking
task (Stop) removes its request from the queue or closes its open dialog, and
the registry treats that as the run being cancelled. ``deny_all`` answers
everything pending with Deny (quitting).

The dialog is made by an injected ``present`` coroutine, so the queueing logic
is tested without widgets and the widget without the queue.

``turn`` is the lock every modal dialog of the window waits on: the main window gives
the same one to its MCP host (elicitation, sampling; ``ui/mcp_host/host.py``), so an
approval and a server's question never stack; they show one at a time, in arrival order.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from cks_desktop.tools.approval import ApprovalRequest, Decision

Present = Callable[[ApprovalRequest], Awaitable[Decision]]


class GuiApprover:
    denial_hint = ""

    def __init__(self, present: Present, turn: asyncio.Lock | None = None) -> None:
        self._present = present
        self._turn = turn if turn is not None else asyncio.Lock()  # FIFO: waiters acquire in arrival order
        self._active: asyncio.Task[Decision] | None = None
        self._arrivals = 0  # numbers requests as they arrive
        self._denied_through = 0  # every request numbered up to this is answered Deny

    @property
    def busy(self) -> bool:
        return self._turn.locked()

    async def request_approval(self, request: ApprovalRequest) -> Decision:
        self._arrivals += 1
        number = self._arrivals
        async with self._turn:
            if number <= self._denied_through:
                return Decision.DENY
            self._active = task = asyncio.ensure_future(self._present(request))
            try:
                return await task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if task.cancelled() and current is not None and not current.cancelling():
                    return Decision.DENY  # deny_all closed the dialog, not our caller
                raise
            finally:
                self._active = None

    def deny_all(self) -> None:
        """Answer the open dialog and every request queued so far with Deny."""
        self._denied_through = self._arrivals
        if self._active is not None and not self._active.done():
            self._active.cancel()
