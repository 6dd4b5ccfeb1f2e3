"""The sessions list as data (Qt-free): what is shown, and the actions on it.

The store is the source of truth; the list is refreshed from store events
(``SessionEvent``), so a session created from the CLI-backed MCP server or a
tool shows up too.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cks_desktop.callbacks import Callbacks
from cks_desktop.graph.events import SessionEvent
from cks_desktop.graph.model import Session
from cks_desktop.plural import counted

DEFAULT_TITLE = "New session"
MAX_TITLE = 200


class TitleError(ValueError):
    pass


def clean_title(title: str) -> str:
    title = " ".join(title.split())
    if not title:
        raise TitleError("A session needs a title.")
    if len(title) > MAX_TITLE:
        raise TitleError(f"A title can have at most {MAX_TITLE} characters.")
    return title


class SessionsPresenter:
    def __init__(self, store: Any) -> None:
        self.store = store
        self.sessions: list[Session] = []
        self.filter_text = ""
        self._listeners: Callbacks[[]] = Callbacks("sessions list")

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` whenever the list changes; the returned function unsubscribes it."""
        return self._listeners.subscribe(listener)

    def _changed(self) -> None:
        self._listeners.emit()

    # -- reading -----------------------------------------------------------------
    def refresh(self) -> None:
        self.sessions = sorted(self.store.list_sessions(), key=lambda s: s.created_at, reverse=True)
        self._changed()

    def visible(self) -> list[Session]:
        needle = self.filter_text.casefold().strip()
        if not needle:
            return list(self.sessions)
        return [s for s in self.sessions if needle in s.title.casefold()]

    def set_filter(self, text: str) -> None:
        self.filter_text = text
        self._changed()

    def get(self, session_id: str) -> Session | None:
        return next((s for s in self.sessions if s.id == session_id), None)

    def title_of(self, session_id: str) -> str:
        session = self.get(session_id)
        return session.title if session else ""

    def unique_title(self, base: str = DEFAULT_TITLE) -> str:
        taken = {s.title for s in self.sessions}
        if base not in taken:
            return base
        n = 2
        while f"{base} {n}" in taken:
            n += 1
        return f"{base} {n}"

    def describe_for_delete(self, session_id: str) -> str:
        counts = self.store.counts(session_id)
        objects, relations = counts.get("objects", 0), counts.get("relations", 0)
        return (f"Its graph ({counted(objects, 'object')}, {counted(relations, 'relation')}) and its chat "
                "will be deleted. This cannot be undone.")

    # -- actions -----------------------------------------------------------------
    def create(self, title: str | None = None) -> Session:
        session = self.store.create_session(clean_title(title) if title else self.unique_title())
        self._upsert(session)
        return session

    def rename(self, session_id: str, title: str) -> Session:
        session = self.store.rename_session(session_id, clean_title(title))
        self._upsert(session)
        return session

    def delete(self, session_id: str) -> None:
        self.store.delete_session(session_id)
        self._remove(session_id)

    # -- store events ----------------------------------------------------------------
    def on_store_event(self, event: object) -> None:
        if not isinstance(event, SessionEvent):
            return
        if event.kind == "deleted":
            self._remove(event.session.id)
        else:
            self._upsert(event.session)

    def _upsert(self, session: Session) -> None:
        for i, known in enumerate(self.sessions):
            if known.id == session.id:
                if known != session:
                    self.sessions[i] = session
                    self._changed()
                return
        self.sessions.insert(0, session)
        self.sessions.sort(key=lambda s: s.created_at, reverse=True)
        self._changed()

    def _remove(self, session_id: str) -> None:
        before = len(self.sessions)
        self.sessions = [s for s in self.sessions if s.id != session_id]
        if len(self.sessions) != before:
            self._changed()
