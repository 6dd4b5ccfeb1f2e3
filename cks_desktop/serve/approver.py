"""Who approves a host's call when the app's own policy would ask (``once``/``always``).

The registry asks an approver only for calls whose effective policy is not ``auto``: the
removals, merges and reverts, and reading files. An MCP host asks its own user before each
tool call (Claude Desktop, VS Code and Cursor all show a prompt), so:

* read-only calls (``read_text_file``) are approved: the host asked, and nothing changes;
* the others follow the person's setting (``prefs.approval_mode``):
  - ``host`` (the default): approved, the host asked;
  - ``app``: this app asks too, through ``app_approver`` (the window's approval dialog when
    the window serves, see ``ShareService``); with none (``mcp serve`` in a terminal) the
    call is refused with a sentence saying how to allow it, unless the server was started
    with ``--yes``.

Auto calls (additions, updates) never reach this: every graph write is in the history and
can be reverted, so they run as they do in a chat.
"""

from __future__ import annotations

from collections.abc import Callable

from cks_desktop.serve import prefs
from cks_desktop.serve.hints import is_read_only
from cks_desktop.tools.approval import ApprovalRequest, Approver, Decision

HEADLESS_HINT = ("This app is set to ask before such calls itself (mcp_serve.approval = \"app\") and no window "
                 "is open to ask in; the person can allow them with `cks-desktop mcp serve --yes`, or choose "
                 "\"the host asks\" in Settings → Share with other apps.")


class HostApprover:
    """Approves what the registry would ask about: the MCP host already asked its user."""

    denial_hint = ""

    async def request_approval(self, request: ApprovalRequest) -> Decision:
        return Decision.ALLOW


class ServeApprover:
    """The approver of every served run (see the module docstring)."""

    def __init__(self, mode: Callable[[], prefs.ApprovalMode], *, app_approver: Approver | None = None,
                 yes: bool = False) -> None:
        self._mode = mode
        self.app_approver = app_approver
        self.yes = yes
        self.denial_hint = ""

    async def request_approval(self, request: ApprovalRequest) -> Decision:
        if is_read_only(request.tool) or self.yes or self._mode() == "host":
            return Decision.ALLOW
        if self.app_approver is not None:
            self.denial_hint = self.app_approver.denial_hint
            return await self.app_approver.request_approval(request)
        self.denial_hint = HEADLESS_HINT
        return Decision.DENY
