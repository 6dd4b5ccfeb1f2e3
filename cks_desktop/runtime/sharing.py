"""Sharing the graph with other apps: which sessions are served, the bearer token, what `mcp serve` serves.

The window's Share page and the CLI (``sessions share|unshare|shared``, ``mcp serve``, ``mcp token``)
call this and nothing below it, so a refusal is the same sentence in both: an unknown session is the
store's own sentence, a settings file that cannot be written is the settings' sentence, and no
keychain is :data:`NO_KEYCHAIN`. Each refusal is a :class:`SharingRefused`; nothing is written then.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from cks_desktop.graph.errors import StoreError
from cks_desktop.plural import counted
from cks_desktop.serve import prefs
from cks_desktop.settings import Settings, SettingsSaveError, Sharing

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.secrets import SecretStore
    from cks_desktop.serve.token import Token

NO_KEYCHAIN = ("No secure keychain is available, so no token is kept: `mcp serve --http` makes a new one at "
               "each start and prints it.")
NOTHING_SHARED = "No session is shared. Share one with: cks-desktop sessions share ID"


class SharingRefused(Exception):
    """One sentence, shown as is by the window and the CLI."""


class NoKeychain(SharingRefused):
    """No secure keychain: a token cannot be kept (:data:`NO_KEYCHAIN`)."""


@dataclass(frozen=True)
class SharedSession:
    id: str
    title: str


@dataclass(frozen=True)
class ShareChange:
    session_id: str
    title: str  # "" when the session is unknown (unsharing a deleted one)
    shared: bool  # after the change
    changed: bool  # False: it already was so


@dataclass(frozen=True)
class ServePlan:
    """What `mcp serve` offers: ``pinned`` one session (None: the shared ones), in a few words."""

    pinned: str | None
    what: str


class SharingUseCase:
    def __init__(self, store: "GraphStore", settings: Settings, secrets: "SecretStore | None" = None) -> None:
        self.store = store
        self.settings = settings
        self._secrets = secrets

    # shared sessions

    def shared(self) -> list[SharedSession]:
        """The shared sessions that still exist, in the order they were shared."""
        rows = []
        for sid in prefs.shared_sessions(self.settings):
            try:
                rows.append(SharedSession(sid, self.store.get_session(sid).title))
            except StoreError:
                continue  # deleted since
        return rows

    def shared_ids(self) -> list[str]:
        return prefs.shared_sessions(self.settings)

    def share(self, session_id: str) -> ShareChange:
        try:
            session = self.store.get_session(session_id)
        except StoreError as exc:
            raise SharingRefused(str(exc)) from None
        before = self.settings.section(Sharing)
        changed = prefs.share(self.settings, session.id)
        if changed:
            self._save(before)
        return ShareChange(session.id, session.title, shared=True, changed=changed)

    def unshare(self, session_id: str) -> ShareChange:
        """Take a session back; an unknown (deleted) session can be unshared too."""
        try:
            title = self.store.get_session(session_id).title
        except StoreError:
            title = ""
        before = self.settings.section(Sharing)
        changed = prefs.unshare(self.settings, session_id)
        if changed:
            self._save(before)
        return ShareChange(session_id, title, shared=False, changed=changed)

    def approval(self) -> prefs.ApprovalMode:
        return prefs.approval_mode(self.settings)

    def set_approval(self, mode: prefs.ApprovalMode) -> None:
        if mode == self.approval():
            return
        before = self.settings.section(Sharing)
        try:
            prefs.set_approval_mode(self.settings, mode)
        except ValueError as exc:
            raise SharingRefused(f"{exc}.") from None
        self._save(before)

    # tokens

    def token(self, *, rotate: bool = False) -> "Token":
        return bearer_token(self.secrets(), rotate=rotate)

    def kept_token(self, *, rotate: bool = False) -> "Token":
        return kept_token(self.secrets(), rotate=rotate)

    def secrets(self) -> "SecretStore":
        if self._secrets is None:
            from cks_desktop.secrets import SecretStore

            self._secrets = SecretStore()
        return self._secrets

    # serving

    def plan(self, pinned: str | None) -> ServePlan:
        """What `mcp serve [--session ID]` serves: the one named, else the shared ones that exist,
        else a new session made for this launch (a host given the server without further thought
        writes into a session of its own, never into the person's)."""
        from cks_desktop.serve.server import open_session

        try:
            if pinned:
                session = open_session(self.store, pinned)
                return ServePlan(session.id, f"session {session.id} ({session.title})")
            shared = self.shared()
            if shared:
                return ServePlan(None, counted(len(shared), "shared session"))
            session = open_session(self.store, None)
        except StoreError as exc:
            raise SharingRefused(str(exc)) from None
        return ServePlan(session.id, f"session {session.id} ({session.title}); no session is shared (sessions share ID)")

    def _save(self, before: Sharing) -> None:
        """Write the settings file; when it cannot be written, the choice goes back to ``before``
        (what the file still says) and the refusal is the settings' sentence."""
        try:
            self.settings.save()
        except SettingsSaveError as exc:
            self.settings.set_section(before)
            raise SharingRefused(str(exc)) from None


def bearer_token(secrets: "SecretStore", *, rotate: bool = False) -> "Token":
    """The bearer token `mcp serve --http` requires: the kept one, or a new one (``rotate``: always new)."""
    from cks_desktop.serve.token import ensure_token

    made = ensure_token(secrets, rotate=rotate)
    if secrets.last_error:
        raise SharingRefused(secrets.last_error)
    return made


def kept_token(secrets: "SecretStore", *, rotate: bool = False) -> "Token":
    """Like :func:`bearer_token`, but refuses when no keychain can keep it (``mcp token``, the Share page's rotate)."""
    if not secrets.secure:
        raise NoKeychain(NO_KEYCHAIN)
    return bearer_token(secrets, rotate=rotate)
