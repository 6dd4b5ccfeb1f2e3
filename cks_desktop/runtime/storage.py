"""Where the graph lives: choose the embedded file or a team's PostgreSQL, check a connection, copy a session, open the store.

The window's Settings → Storage and the CLI (``--database``, ``team …``) call this and nothing below
it, so a refusal is the same sentence in both: a :class:`StorageRefused`, nothing written. The
rules themselves (the address never holds a password, the keychain name of a password, the
copy as one change) are ``storage_choice``'s. Blocking calls (``check``, ``copy``, ``open``)
belong on a worker thread in the window.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cks_desktop.graph.errors import StoreError
from cks_desktop.settings import Settings
from cks_desktop.storage_choice import SSL_MODES, PgSettings, chosen, choose, is_postgres, secret_ref

if TYPE_CHECKING:
    from cks_desktop.graph.model import Session
    from cks_desktop.graph.pg.team import TeamInit
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.secrets import SecretStore

__all__ = ["SSL_MODES", "PgSettings", "StorageRefused", "StorageUseCase", "is_postgres", "open_chosen_store"]

NO_PASSWORD = "No password given; nothing was saved."


class StorageRefused(Exception):
    """One sentence, shown as is by the window and the CLI."""


def checked_address(address: str) -> str:
    """A PostgreSQL address without a secret in it, or the one sentence saying what is wrong."""
    from cks_desktop.storage_choice import refuse_password_in_address

    if not is_postgres(address):
        raise StorageRefused(f"{address!r} is not a PostgreSQL address (postgresql://user@host/database).")
    try:
        refuse_password_in_address(address)
    except StoreError as exc:
        raise StorageRefused(str(exc)) from None
    return address


def open_chosen_store(database: str | None, default_path: Path, settings: Settings | None,
                      secrets: "SecretStore | None" = None) -> "GraphStore":
    """The store to use: ``database`` (a PostgreSQL address or a file path), else the settings'
    choice (Settings → Storage), else ``default_path``. StorageRefused (one sentence) when it cannot be opened."""
    from cks_desktop.storage_choice import open_store, refuse_password_in_address

    try:
        if database:
            refuse_password_in_address(database)
            settings = None
        if is_postgres(database) or (settings is not None and chosen(settings) is not None):
            if secrets is None:
                from cks_desktop.secrets import SecretStore

                secrets = SecretStore()
            return open_store(database, default_path, secrets, settings)
        from cks_desktop.graph.store import GraphStore

        return GraphStore.open(Path(database).expanduser() if database else default_path)
    except StoreError as exc:
        raise StorageRefused(str(exc)) from None


class StorageUseCase:
    def __init__(self, settings: Settings, secrets: "SecretStore | None" = None) -> None:
        self.settings = settings
        self._secrets = secrets

    def secrets(self) -> "SecretStore":
        if self._secrets is None:
            from cks_desktop.secrets import SecretStore

            self._secrets = SecretStore()
        return self._secrets

    # the choice

    def chosen(self) -> PgSettings | None:
        """The team database the settings choose, or None for the embedded file."""
        return chosen(self.settings)

    def choose(self, pg: PgSettings | None, password: str = "") -> None:
        """Record the choice (applies at the next start; the caller saves the settings) and keep a
        typed password in the keychain. Choosing the file when the file is chosen writes nothing."""
        if pg is None:
            if chosen(self.settings) is not None:  # only a real switch back writes the section
                choose(self.settings, None)
            return
        problem = pg.problem()
        if problem is not None:
            raise StorageRefused(problem)
        choose(self.settings, pg)
        if password:
            self.save_password(pg.url(), password)

    # passwords (the keychain, never the settings file)

    def password(self, address: str, typed: str = "") -> str | None:
        return typed or self.secrets().get(secret_ref(address))

    def save_password(self, address: str, value: str) -> None:
        if not value:
            raise StorageRefused(NO_PASSWORD)
        secrets = self.secrets()
        secrets.set(secret_ref(address), value)
        if secrets.last_error:
            raise StorageRefused(secrets.last_error)

    def forget_password(self, address: str) -> None:
        secrets = self.secrets()
        secrets.delete(secret_ref(address))
        if secrets.last_error:
            raise StorageRefused(secrets.last_error)

    # a connection, a team, a copy

    def check(self, address: str, typed: str = "") -> str | None:
        """Connect once, write nothing: None when it works, else the one sentence saying why not."""
        from cks_desktop.storage_choice import check_connection

        return check_connection(address, self.password(address, typed))

    def init_team(self, address: str, members: dict[str, str | None]) -> "TeamInit":
        from cks_desktop.graph.pg.team import init_team

        try:
            return init_team(checked_address(address), members, password=self.password(address))
        except StoreError as exc:
            raise StorageRefused(str(exc)) from None

    def open(self, database: str | None, default_path: Path) -> "GraphStore":
        """``database`` (an address or a path), else this settings' choice, else ``default_path``."""
        return open_chosen_store(database, default_path, self.settings, self.secrets())

    def open_file(self, path: Path) -> "GraphStore":
        return open_chosen_store(str(path), path, None)

    def open_team(self, pg: PgSettings, typed: str = "") -> "GraphStore":
        from cks_desktop.graph.pg.store import PgGraphStore

        try:
            return PgGraphStore.connect(pg.url(), password=self.password(pg.url(), typed))
        except StoreError as exc:
            raise StorageRefused(str(exc)) from None

    def copy(self, source: "GraphStore", session_id: str, target: "GraphStore",
             title: str | None = None) -> "Session":
        """One session into another store as one change there; the source is not changed."""
        from cks_desktop.storage_choice import copy_session

        try:
            return copy_session(source, session_id, target, title)
        except StoreError as exc:
            raise StorageRefused(str(exc)) from None
