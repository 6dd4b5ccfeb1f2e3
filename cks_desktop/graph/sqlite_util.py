"""Small SQLite helpers shared by the store modules.

The one thing here that matters for people: ``database_error`` turns the
many ways SQLite can fail into one sentence that names the file, because a
person looking at "database is locked" cannot tell which file or what to do.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
import sqlite3
from datetime import datetime, timezone
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

from cks_desktop.graph.errors import DatabaseError, StoreError

# Ids made by cks_desktop.ids.new_id: a one-letter prefix, "_", 26 Crockford base32 characters.
_ID_RE = re.compile(r"^[a-z]_[0-9A-HJKMNP-TV-Z]{26}\Z")


def is_id(value: str, prefix: str) -> bool:
    """True if ``value`` has the shape of an id this app made with ``prefix`` (e.g. "o_")."""
    return len(value) == 28 and value.startswith(prefix) and _ID_RE.match(value) is not None


def now_iso() -> str:
    """UTC now, ISO 8601 with milliseconds: sorts as text and reads well."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def dumps(value: Any) -> str:
    """Compact JSON as stored in the database (NaN/Infinity rejected: not JSON)."""
    if not value and isinstance(value, dict):
        return "{}"
    return _ENCODER.encode(value)


def database_error(exc: BaseException, path: Path | str) -> DatabaseError:
    """One readable sentence for a SQLite failure on ``path``."""
    from cks_desktop.diskfull import disk_full_sentence, is_disk_full

    text = str(exc).lower()
    if is_disk_full(exc, path):  # before "disk i/o": a full disk often surfaces as SQLITE_IOERR_*
        msg = disk_full_sentence(path, f"the database {path}")
    elif "locked" in text or "busy" in text:
        msg = (f"The database {path} is locked by another program that is writing to it; "
               "try again in a moment.")
    elif "not a database" in text or "malformed" in text or "corrupt" in text:
        msg = f"The file {path} is not a CKS Desktop database or it is damaged."
    elif "readonly" in text or "read-only" in text or "unable to open" in text or "permission" in text:
        msg = f"The database {path} cannot be opened for writing (read-only file or folder, or no permission)."
    elif "no such table" in text:
        msg = f"The database {path} is damaged or incomplete ({exc})."
    elif "disk i/o" in text:
        msg = f"Reading or writing the database {path} failed with a disk error."
    else:
        msg = f"The database {path} failed: {exc}."
    return DatabaseError(msg)


def encode_cursor(last_id: str) -> str:
    """An opaque paging cursor: callers must not build or parse these themselves."""
    return base64.urlsafe_b64encode(f"after:{last_id}".encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> str:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
    except (binascii.Error, UnicodeDecodeError, ValueError):
        raw = ""
    if not raw.startswith("after:") or len(raw) <= len("after:"):
        raise StoreError("That cursor is not valid; list again without a cursor.")
    return raw[len("after:"):]


def split_sql(script: str) -> list[str]:
    """Split a DDL script into statements (triggers keep their inner semicolons).

    Needed because ``executescript`` commits first, and migrations must run
    inside the caller's transaction.
    """
    statements: list[str] = []
    buf = ""
    for piece in script.split(";"):
        buf += piece + ";"
        if sqlite3.complete_statement(buf):
            if buf.strip(" \t\r\n;"):
                statements.append(buf.strip())
            buf = ""
    if buf.strip(" \t\r\n;"):
        raise ValueError(f"incomplete SQL statement in migration: {buf.strip()[:80]!r}")
    return statements


def search_text(props: dict[str, Any]) -> str:
    """Property VALUES flattened to text for the full-text index (keys are left out:
    searching "email" should find an address, not every object that has one)."""
    out: list[str] = []
    _collect(props.values(), out)
    return " ".join(out)


def _collect(values: Any, out: list[str]) -> None:
    for value in values:
        kind = type(value)
        if kind is str:
            out.append(value)
        elif kind is int or kind is float:
            out.append(str(value))
        elif kind is dict:
            _collect(value.values(), out)
        elif kind is list:
            _collect(value, out)


def json_list(values: Any) -> str:
    """A list of values as one JSON parameter, for ``IN (SELECT value FROM json_each(?))``.
    ASCII escapes: SQLite decodes them (surrogate pairs included), and a lone surrogate
    in a name being looked up cannot break the query's UTF-8 encoding."""
    return json.dumps(list(values))


ConnectionAccess = tuple[
    Callable[[], AbstractContextManager[sqlite3.Connection]],
    Callable[[], AbstractContextManager[sqlite3.Connection]],
]


def bare_connection_access(conn: sqlite3.Connection) -> ConnectionAccess:
    """``(read, write)`` context-manager factories over a bare connection opened with
    ``isolation_level=None``: the same shape as the store's ``connection_lock`` and
    ``transaction``, for modules that keep their own tables in the store's file and
    are used on a plain connection by tests and scripts."""

    @contextmanager
    def read() -> Iterator[sqlite3.Connection]:
        yield conn

    @contextmanager
    def write() -> Iterator[sqlite3.Connection]:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    return read, write
