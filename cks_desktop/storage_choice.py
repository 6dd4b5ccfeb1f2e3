"""Where the graph lives: the embedded SQLite file (the default) or a team's PostgreSQL.

One place decides it for the window, the headless commands and Settings →
Storage: ``--database`` (a ``postgresql://`` address, libpq's ``host=… dbname=…`` form, or a file path) wins, then
the ``storage`` section of the settings, then the data folder's own file. The
address never holds the password: it comes from the system keychain (saved by
Settings → Storage or ``cks-desktop team password``) or from libpq's own
PGPASSFILE / ``~/.pgpass``.

Qt-free; psycopg is imported only when a PostgreSQL database is chosen.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, unquote, urlsplit

from cks_desktop.graph.errors import StoreError

if TYPE_CHECKING:
    from cks_desktop.graph.model import Session
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.secrets import SecretStore
    from cks_desktop.settings import Settings

SSL_MODES = ("disable", "prefer", "require", "verify-ca", "verify-full")


# libpq's own parameter names (PQconndefaults of libpq 18, plus older ones; a test checks the
# list against the installed libpq). A keyword/value connection string ("host=db dbname=cks
# user=ann") starts with one of them and "="; so does no sensible file name.
LIBPQ_KEYWORDS = frozenset({
    "application_name", "channel_binding", "client_encoding", "connect_timeout", "dbname",
    "fallback_application_name", "gssdelegation", "gssencmode", "gsslib", "host", "hostaddr",
    "keepalives", "keepalives_count", "keepalives_idle", "keepalives_interval", "krbsrvname",
    "load_balance_hosts", "max_protocol_version", "min_protocol_version", "oauth_client_id",
    "oauth_client_secret", "oauth_issuer", "oauth_scope", "options", "passfile", "password", "port",
    "replication", "require_auth", "requirepeer", "requiressl", "scram_client_key", "scram_server_key",
    "service", "ssl_max_protocol_version", "ssl_min_protocol_version", "sslcert", "sslcertmode",
    "sslcompression", "sslcrl", "sslcrldir", "sslkey", "sslkeylogfile", "sslmode", "sslnegotiation",
    "sslpassword", "sslrootcert", "sslsni", "target_session_attrs", "tcp_user_timeout", "user",
})
_KEYWORD_FORM = re.compile(r"\s*([A-Za-z_]+)\s*=")
# Secrets libpq reads from an address: the password, the client key's password, an OAuth
# client secret, and SCRAM keys (as good as the password). None may be in one.
SECRET_KEYWORDS = frozenset({"password", "sslpassword", "oauth_client_secret", "scram_client_key",
                             "scram_server_key"})


def is_postgres(database: str | Path | None) -> bool:
    """A PostgreSQL connection: a ``postgresql://`` (or ``postgres://``) URL or libpq's
    keyword/value form (``host=db dbname=cks user=ann``); anything else is a file path."""
    if not database:
        return False
    text = str(database)
    if text.split("://", 1)[0] in ("postgresql", "postgres"):
        return True
    keyword = _KEYWORD_FORM.match(text)
    return keyword is not None and keyword.group(1) in LIBPQ_KEYWORDS


@dataclass
class PgSettings:
    """What a member enters in Settings → Storage (no password: that goes to the keychain)."""

    host: str = "localhost"
    port: int = 5432
    database: str = "cks"
    user: str = ""
    sslmode: str = "prefer"
    sslrootcert: str = ""  # the server's CA certificate file, for verify-ca / verify-full

    def url(self) -> str:
        user = quote(self.user, safe="") + "@" if self.user else ""
        query = [f"sslmode={self.sslmode}"] if self.sslmode and self.sslmode != "prefer" else []
        if self.sslrootcert:
            query.append(f"sslrootcert={quote(self.sslrootcert, safe='/')}")
        host = f"[{self.host}]" if ":" in self.host else self.host
        return (f"postgresql://{user}{host}:{int(self.port)}/{quote(self.database, safe='')}"
                + ("?" + "&".join(query) if query else ""))

    @classmethod
    def from_url(cls, url: str) -> "PgSettings":
        parts = urlsplit(url)
        query = dict(p.split("=", 1) for p in parts.query.split("&") if "=" in p)
        return cls(host=parts.hostname or "localhost", port=parts.port or 5432,
                   database=unquote(parts.path.lstrip("/")) or "cks", user=unquote(parts.username or ""),
                   sslmode=query.get("sslmode", "prefer"), sslrootcert=unquote(query.get("sslrootcert", "")))

    def problem(self) -> str | None:
        """One sentence about what is missing or wrong, or None."""
        if not self.host.strip():
            return "Enter the database server's host name."
        if not self.database.strip():
            return "Enter the database name."
        if not self.user.strip():
            return "Enter your user name on the database server."
        if not 0 < int(self.port) < 65536:
            return "The port must be a number from 1 to 65535."
        if self.sslmode not in SSL_MODES:
            return f"TLS must be one of {', '.join(SSL_MODES)}."
        return None


def chosen(settings: "Settings") -> PgSettings | None:
    """The PostgreSQL connection the settings choose, or None for the embedded file."""
    from cks_desktop.settings import Storage

    section = settings.section(Storage)
    if section.backend != "postgresql":
        return None
    fields = {k: v for k, v in (section.postgresql or {}).items() if k in PgSettings.__dataclass_fields__}
    try:
        return PgSettings(**fields)
    except TypeError:
        return None


def choose(settings: "Settings", pg: PgSettings | None) -> None:
    """Record the choice (the caller saves the settings)."""
    from dataclasses import replace

    from cks_desktop.settings import Storage

    section = settings.section(Storage)
    settings.set_section(replace(section, backend="postgresql" if pg is not None else "file",
                                 postgresql=asdict(pg) if pg is not None else section.postgresql))


def secret_ref(url: str) -> str:
    """The keychain name of this connection's password: the address without it."""
    from cks_desktop.graph.pg.store import where

    return f"database:{where(url)}"


def refuse_password_in_address(url: str | Path | None) -> None:
    """StoreError (one sentence, never echoing the address) when a PostgreSQL address holds a
    secret in any form libpq reads: ``postgresql://ann:pw@host``, ``?password=pw``,
    ``password=pw`` in the keyword form, and the other ``SECRET_KEYWORDS``. Other programs can
    read a command line, and the settings file is not the keychain. An address libpq cannot
    parse is refused too."""
    if not is_postgres(url):
        return
    import psycopg
    from psycopg import conninfo

    try:
        params = conninfo.conninfo_to_dict(str(url))
    except psycopg.ProgrammingError:  # its message may quote the address, password and all
        raise StoreError("The database address is not a valid PostgreSQL connection string; write it as "
                         "postgresql://user@host:port/database.") from None
    if urlsplit(str(url)).password or any(key in params for key in SECRET_KEYWORDS):
        raise StoreError("Do not put the password in the database address (other programs can read a "
                         "command line); save it in the keychain with `cks-desktop team password ADDRESS` or in a PGPASSFILE.")


def open_store(database: str | None, default_path: Path, secrets: "SecretStore | None" = None,
               settings: "Settings | None" = None) -> "GraphStore":
    """The store to use: ``database`` (address or path), else the settings' choice, else
    ``default_path``. StoreError (one sentence) when it cannot be opened."""
    from cks_desktop.graph.store import GraphStore

    if not database and settings is not None:
        pg = chosen(settings)
        database = pg.url() if pg is not None else None
    if not is_postgres(database):
        return GraphStore.open(Path(database) if database else default_path)
    assert database is not None
    refuse_password_in_address(database)
    from cks_desktop.graph.pg.store import PgGraphStore

    password = secrets.get(secret_ref(database)) if secrets is not None else None
    return PgGraphStore.connect(database, password=password)


def check_connection(url: str, password: str | None) -> str | None:
    """Connect once (Settings → Storage's "Test connection"): None when it works, else the
    one sentence saying why not. Writes nothing (the schema is not migrated)."""
    import psycopg
    from psycopg import conninfo

    from cks_desktop.graph.pg.store import failure_sentence, where

    extra: dict[str, Any] = {"connect_timeout": 5}
    if password:
        extra["password"] = password
    try:
        with psycopg.connect(conninfo.make_conninfo(url, **extra), autocommit=True) as conn:
            version = conn.info.server_version
        if version < 150000:
            return f"The server {where(url)} runs PostgreSQL {version // 10000}; CKS Desktop needs 15 or newer."
    except psycopg.Error as exc:
        return failure_sentence(exc, where(url))
    return None


def copy_session(source: "GraphStore", session_id: str, target: "GraphStore",
                 title: str | None = None) -> "Session":
    """Copy one session — objects, relations, type definitions, instructions, with their
    ids — into another store
    (e.g. from the embedded file to the team's database), as one change there (two when
    it defines types). The source is not changed; the history and chat stay behind. Nothing is written when the import fails."""
    original = source.get_session(session_id)
    data = source.export(session_id, "json")
    copy = target.create_session(title or original.title)
    try:
        if original.instructions:
            target.set_session_instructions(copy.id, original.instructions)
        types = [{"op": "define_type", "kind": t.kind, "name": t.name, "description": t.description,
                  "properties_schema": t.properties_schema} for t in source.type_defs(session_id)]
        if types:  # the json format carries no type definitions: first, so their schemas hold
            target.apply(copy.id, types, "copy")
        target.import_data(copy.id, "json", data, "copy")
    except BaseException:
        target.delete_session(copy.id)
        raise
    return target.get_session(copy.id)
