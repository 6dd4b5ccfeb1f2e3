"""Which sessions an MCP host may reach, and the one ``Run`` each of them is served through.

Two shapes (``mcp serve`` decides which):

* **pinned** (``--session ID``, or the new session made for one launch): one session, one
  ``Run``; tools take no session argument.
* **shared**: the sessions the person shared (``prefs.shared_sessions``; ``sessions share
  ID``, or the window's "Share with other apps" page). Each tool call names one of them by
  title or id in the extra ``session`` argument; the name is resolved HERE, against the
  shared set as it is at that moment, before the registry sees the call, and the call then
  runs in that session's own ``Run``. The registry's pinning overwrites every ``session_id``
  in the arguments with that run's session, so no argument can reach a session that is not
  shared: pinning stays structural, only the choice of run is new.

The settings file is re-read when it changed on disk (one ``stat`` per call), so a session
shared or unshared by another process takes effect at the next call.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from cks_desktop.graph.errors import StoreError
from cks_desktop.serve import prefs

if TYPE_CHECKING:
    from cks_desktop.graph.model import Session
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.settings import Settings
    from cks_desktop.tools.context import Run

SESSION_ARGUMENT = "session"
RunFactory = Callable[[str], "Run"]


class ScopeError(Exception):
    """A session the host may not use (unknown, not shared, ambiguous): one sentence it can read."""


class SessionScope:
    def __init__(self, store: "GraphStore", run_factory: RunFactory, *, pinned: str | None = None,
                 settings: "Settings | None" = None) -> None:
        self.store = store
        self.pinned = pinned
        self.settings = settings
        self._run_factory = run_factory
        self._runs: dict[str, "Run"] = {}
        self._stamp: tuple[int, int] | None = self._file_stamp()

    # -- what is visible ------------------------------------------------------------------------
    @property
    def is_pinned(self) -> bool:
        return self.pinned is not None

    def _file_stamp(self) -> tuple[int, int] | None:
        if self.settings is None:
            return None
        try:
            st = os.stat(self.settings.path)
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def refresh(self) -> bool:
        """Re-read the settings if the file changed on disk; True when it did."""
        if self.settings is None:
            return False
        stamp = self._file_stamp()
        if stamp == self._stamp:
            return False
        self._stamp = stamp
        self.settings.reload()
        return True

    def shared_ids(self) -> list[str]:
        if self.pinned is not None:
            return [self.pinned]
        return prefs.shared_sessions(self.settings) if self.settings is not None else []

    def sessions(self) -> list["Session"]:
        """The sessions a host may see now (shared ones that still exist, in sharing order)."""
        self.refresh()
        out = []
        for sid in self.shared_ids():
            try:
                out.append(self.store.get_session(sid))
            except StoreError:
                continue  # deleted since it was shared
        return out

    def allows(self, session_id: str) -> bool:
        return any(s.id == session_id for s in self.sessions())

    # -- naming one -------------------------------------------------------------------------------
    def resolve(self, name: object) -> "Session":
        """The visible session named ``name`` (its id, or its title in any case).

        Pinned: the argument is ignored (there is one session). Shared: no name is fine when
        exactly one session is shared. Raises ``ScopeError`` otherwise, naming only what is shared.
        """
        visible = self.sessions()
        if self.pinned is not None:
            if not visible:
                raise ScopeError("The served session no longer exists.")
            return visible[0]
        if not visible:
            raise ScopeError("No session is shared with other apps yet; the person can share one with "
                             "`cks-desktop sessions share ID` or in Settings → Share with other apps.")
        if name is None or name == "":
            if len(visible) == 1:
                return visible[0]
            raise ScopeError(f"Say which session to use in the '{SESSION_ARGUMENT}' argument (a title or an id): "
                             f"{_listing(visible)}.")
        if not isinstance(name, str):
            raise ScopeError(f"'{SESSION_ARGUMENT}' must be a session's title or id (a string).")
        for s in visible:
            if s.id == name:
                return s
        wanted = name.strip().casefold()
        matches = [s for s in visible if s.title.strip().casefold() == wanted]
        if len(matches) == 1:
            return matches[0]
        if matches:
            raise ScopeError(f"{len(matches)} shared sessions are titled {name!r}; name one by its id: "
                             f"{_listing(matches)}.")
        raise ScopeError(f"No shared session has the title or id {name!r}. Shared sessions: {_listing(visible)}.")

    def run_for(self, session_id: str) -> "Run":
        """The one run a session's calls share (its approval memory lives as long as the server)."""
        run = self._runs.get(session_id)
        if run is None:
            run = self._runs[session_id] = self._run_factory(session_id)
        return run

    def any_run(self) -> "Run | None":
        """A run for listing tools: the first visible session's (None when nothing is shared)."""
        visible = self.sessions()
        return self.run_for(visible[0].id) if visible else None

    def runs(self) -> list["Run"]:
        return [self.run_for(s.id) for s in self.sessions()]


def _listing(sessions: list["Session"]) -> str:
    return "; ".join(f"{s.title!r} ({s.id})" for s in sessions[:20]) + (" …" if len(sessions) > 20 else "")
