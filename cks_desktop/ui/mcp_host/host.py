"""The window's ``McpHost``: a server's requests shown as modal dialogs, one at a time.

Requests from every server wait their turn (FIFO), in the same queue as the window's
approvals when the window passes its ``turn`` (the approver's lock): one modal host dialog at a time. Each dialog is opened with
``open()`` and awaited (``ui.dialogs.run_dialog``), never ``exec()``. Sampling asks twice when
the server's setting is ``ask``: the request (allow, edit or deny), then, once the session's model
answered, the answer (send or not); with ``allow`` the model runs and the answer goes back
without a dialog. Cancelling the asking task (the server gave up, the app quits) closes the
open dialog.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from PySide6.QtWidgets import QApplication, QWidget

from cks_desktop.mcp.host import ElicitationAnswer, ElicitationRequest, Sampler, SamplingAnswer, SamplingRequest
from cks_desktop.ui.dialogs import run_dialog
from cks_desktop.ui.mcp_host.elicitation_dialog import ElicitationDialog
from cks_desktop.ui.mcp_host.sampling_dialog import SamplingReplyDialog, SamplingRequestDialog


class GuiMcpHost:
    def __init__(self, parent: Callable[[], QWidget | None], sampler: Sampler | None,
                 on_open: Callable[[object], None] | None = None, turn: asyncio.Lock | None = None) -> None:
        self._parent = parent
        self.sampler = sampler
        self._on_open = on_open or (lambda dialog: None)
        self._turn = turn if turn is not None else asyncio.Lock()

    async def _show(self, dialog: ElicitationDialog | SamplingRequestDialog | SamplingReplyDialog) -> None:
        owner = self._parent()
        if owner is not None:
            QApplication.alert(owner)
        try:
            waiting = asyncio.ensure_future(run_dialog(dialog))
            await asyncio.sleep(0)  # open() has run: tests and the self-test may find it now
            self._on_open(dialog)
            await waiting
        finally:
            dialog.deleteLater()

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        async with self._turn:
            dialog = ElicitationDialog(request, self._parent())
            await self._show(dialog)
            return dialog.answer()

    async def sample(self, request: SamplingRequest) -> SamplingAnswer:
        if self.sampler is None:
            return SamplingAnswer.refuse(f"MCP server '{request.server}' asked for a completion, but no model is "
                                         "set up in this app.")
        if not request.ask:
            return await self.sampler(request)
        async with self._turn:
            asking = SamplingRequestDialog(request, self._parent())
            await self._show(asking)
            if not asking.allowed:
                return SamplingAnswer.refuse("The person declined the request for a completion.")
            edited = asking.edited_request()
        answer = await self.sampler(edited)  # the model runs outside the queue: other requests may ask meanwhile
        if answer.reply is None:
            return answer
        async with self._turn:
            showing = SamplingReplyDialog(request.server, answer.reply, self._parent())
            await self._show(showing)
            if not showing.send:
                return SamplingAnswer.refuse("The person chose not to send the model's answer.")
        return answer
