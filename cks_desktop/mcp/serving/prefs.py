"""What the person chose for ``mcp serve``, kept in the settings file's ``mcp_serve`` section.

    "mcp_serve": {
        "shared_sessions": ["01J…", …],   # sessions other apps may see (``sessions share ID``)
        "approval": "host" | "app"        # who asks before a call the app would ask about
    }

The section is read and written through these functions only, so the window, the CLI and
a running server agree on what "shared" means. The settings file is merged key by key on
save (``settings.py``), so two processes sharing different sessions at once both win.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from cks_desktop.settings import Settings

SECTION = "mcp_serve"
ApprovalMode = Literal["host", "app"]
APPROVAL_MODES: tuple[ApprovalMode, ...] = ("host", "app")
DEFAULT_APPROVAL: ApprovalMode = "host"


def _section(settings: "Settings", *, create: bool = False) -> dict[str, Any]:
    section = settings.data.get(SECTION)
    if isinstance(section, dict):
        return section
    if not create:
        return {}
    fresh: dict[str, Any] = {}
    settings.data[SECTION] = fresh
    return fresh


def shared_sessions(settings: "Settings") -> list[str]:
    """The ids of the sessions the person shared with other apps, in the order they shared them."""
    value = _section(settings).get("shared_sessions")
    if not isinstance(value, list):
        return []
    seen: list[str] = []
    for item in value:
        if isinstance(item, str) and item and item not in seen:
            seen.append(item)
    return seen


def share(settings: "Settings", session_id: str) -> bool:
    """Mark a session shared; False when it already was. The caller saves."""
    current = shared_sessions(settings)
    if session_id in current:
        return False
    _section(settings, create=True)["shared_sessions"] = [*current, session_id]
    return True


def unshare(settings: "Settings", session_id: str) -> bool:
    """Take a session back; False when it was not shared. The caller saves."""
    current = shared_sessions(settings)
    if session_id not in current:
        return False
    _section(settings, create=True)["shared_sessions"] = [s for s in current if s != session_id]
    return True


def approval_mode(settings: "Settings") -> ApprovalMode:
    """``host``: the MCP host asks its user (the default); ``app``: this app asks too."""
    value = _section(settings).get("approval")
    return value if value in APPROVAL_MODES else DEFAULT_APPROVAL


def set_approval_mode(settings: "Settings", mode: ApprovalMode) -> None:
    if mode not in APPROVAL_MODES:
        raise ValueError(f"approval must be one of {', '.join(APPROVAL_MODES)}")
    _section(settings, create=True)["approval"] = mode
