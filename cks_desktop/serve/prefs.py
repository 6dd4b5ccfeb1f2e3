"""What the person chose for ``mcp serve``, kept in the settings file's ``mcp_serve`` section.

    "mcp_serve": {
        "shared_sessions": ["01J…", …],   # sessions other apps may see (``sessions share ID``)
        "approval": "host" | "app"        # who asks before a call the app would ask about
    }

The section (``settings.Sharing``) is read and written through these functions only, so the
window, the CLI and a running server agree on what "shared" means. The settings file is merged
key by key on save, so two processes sharing different sessions at once both win.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Literal, cast

from cks_desktop.settings import Sharing
from cks_desktop.settings.sections import SHARE_APPROVALS

if TYPE_CHECKING:
    from cks_desktop.settings import Settings

ApprovalMode = Literal["host", "app"]
APPROVAL_MODES = cast("tuple[ApprovalMode, ...]", SHARE_APPROVALS)
DEFAULT_APPROVAL: ApprovalMode = "host"


def shared_sessions(settings: "Settings") -> list[str]:
    """The ids of the sessions the person shared with other apps, in the order they shared them."""
    return list(dict.fromkeys(s for s in settings.section(Sharing).shared_sessions if s))


def _set_shared(settings: "Settings", sessions: list[str]) -> None:
    settings.set_section(replace(settings.section(Sharing), shared_sessions=tuple(sessions)))


def share(settings: "Settings", session_id: str) -> bool:
    """Mark a session shared; False when it already was. The caller saves."""
    current = shared_sessions(settings)
    if session_id in current:
        return False
    _set_shared(settings, [*current, session_id])
    return True


def unshare(settings: "Settings", session_id: str) -> bool:
    """Take a session back; False when it was not shared. The caller saves."""
    current = shared_sessions(settings)
    if session_id not in current:
        return False
    _set_shared(settings, [s for s in current if s != session_id])
    return True


def approval_mode(settings: "Settings") -> ApprovalMode:
    """``host``: the MCP host asks its user (the default); ``app``: this app asks too."""
    return "app" if settings.section(Sharing).approval == "app" else DEFAULT_APPROVAL


def set_approval_mode(settings: "Settings", mode: ApprovalMode) -> None:
    if mode not in APPROVAL_MODES:
        raise ValueError(f"approval must be one of {', '.join(APPROVAL_MODES)}")
    settings.set_section(replace(settings.section(Sharing), approval=mode))
