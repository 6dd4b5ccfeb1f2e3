"""A psycopg connection that looks like the store's ``sqlite3.Connection``.

The store and the modules that keep tables in it call ``execute``,
``executemany``, ``fetchone``/``fetchall``/iteration, ``lastrowid`` and
``in_transaction``; this wrapper offers exactly those over a psycopg 3
connection in autocommit mode (SQLite's ``isolation_level=None``: a statement
outside ``BEGIN`` commits by itself), with every statement translated by
``dialect.translate``.

Two things differ underneath and are handled here:

- ``BEGIN IMMEDIATE`` (SQLite: take the write lock now) becomes ``BEGIN`` plus a
  transaction-scoped advisory lock, the database-wide WRITE LOCK. Every graph
  write takes it, so writers queue as they do on SQLite, the planner validates
  against the latest committed graph, and ``changes.seq`` grows in commit order
  (what the change feed resumes from). Readers never wait for it.
- Op lists are TEXT on PostgreSQL, but the history stores large ones as zlib
  bytes (``history.ZLIB_MAGIC``): those go in as ``CKZ1:`` + base64 and come out
  of an ``ops``/``inverse_ops`` column as the same bytes again.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import psycopg
from psycopg import pq

from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.history import ZLIB_MAGIC
from cks_desktop.graph.pg.dialect import numbered_params, translate

WRITE_LOCK = 0x434B5357  # "CKSW": the advisory lock every writer takes (see the module docstring)
_B64 = "CKZ1:"
_OP_COLUMNS = frozenset({"ops", "inverse_ops"})


# A lone UTF-16 surrogate as a JSON escape: SQLite's json_each takes it, PostgreSQL's jsonb
# refuses the whole list. No stored text can hold one, so it can only ever match nothing.
_LONE_SURROGATE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F])|"
                             r"(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u[dD][c-fC-F][0-9a-fA-F]{2}")


def _param(value: Any) -> Any:
    kind = type(value)
    if kind is bytes and value.startswith(ZLIB_MAGIC):
        return _B64 + base64.b64encode(value).decode("ascii")
    if kind is str and value[:1] == "[" and "\\u" in value:
        return _LONE_SURROGATE.sub(r"\\ufffd", value)
    return value


def _params(params: Sequence[Any] | dict[str, Any], index_text: bool = False) -> Sequence[Any] | dict[str, Any]:
    """Parameters as PostgreSQL takes them. Text cannot hold U+0000 there (SQLite's can):
    in the search index's text it separates words like any other control character;
    anywhere else it is refused with one sentence before anything is sent."""
    if isinstance(params, dict):
        return params
    out = [_param(v) for v in params]
    for i, v in enumerate(out):
        if type(v) is str and "\x00" in v:
            if not index_text:
                raise StoreError("PostgreSQL cannot store the character U+0000 (NUL) in text; "
                                 "remove it and try again.")
            out[i] = v.replace("\x00", " ")
    return out


class Cursor:
    """The part of ``sqlite3.Cursor`` the store uses."""

    def __init__(self, cur: psycopg.Cursor[Any], lastrowid: int | None = None) -> None:
        self._cur = cur
        self.lastrowid = lastrowid
        desc = cur.description
        self._decode = [i for i, d in enumerate(desc or ()) if d.name in _OP_COLUMNS]

    def _row(self, row: Any) -> Any:
        if not self._decode or row is None:
            return row
        out = list(row)
        for i in self._decode:
            v = out[i]
            if isinstance(v, str) and v.startswith(_B64):
                out[i] = base64.b64decode(v[len(_B64):])
        return tuple(out)

    @property
    def rowcount(self) -> int:
        return self._cur.rowcount

    @property
    def description(self) -> Any:
        return self._cur.description

    def fetchone(self) -> Any:
        if self._cur.description is None:
            return None
        return self._row(self._cur.fetchone())

    def fetchall(self) -> list[Any]:
        if self._cur.description is None:
            return []
        return [self._row(r) for r in self._cur.fetchall()]

    def fetchmany(self, size: int = 1) -> list[Any]:
        if self._cur.description is None:
            return []
        return [self._row(r) for r in self._cur.fetchmany(size)]

    def __iter__(self) -> Iterator[Any]:
        if self._cur.description is None:
            return iter(())
        return (self._row(r) for r in self._cur)


class PgConnection:
    """``sqlite3.Connection``'s surface over one psycopg connection (autocommit)."""

    def __init__(self, conn: psycopg.Connection[Any], serial_keys: dict[str, str]) -> None:
        self.raw = conn
        self._serial_keys = serial_keys  # table -> its identity column (for lastrowid)

    @property
    def in_transaction(self) -> bool:
        return self.raw.info.transaction_status != pq.TransactionStatus.IDLE

    @property
    def broken(self) -> bool:
        return self.raw.closed or self.raw.broken

    def execute(self, sql: str, params: Sequence[Any] | dict[str, Any] = ()) -> Cursor:
        word = sql.lstrip()[:16].upper()
        if word.startswith("BEGIN"):
            self.raw.execute("BEGIN")
            if "IMMEDIATE" in word or "EXCLUSIVE" in word:
                self.raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            return Cursor(self.raw.cursor())
        text, numbered = translate(sql)
        args: Sequence[Any] | dict[str, Any] = _params(params)
        if numbered and not isinstance(args, dict):
            args = numbered_params(list(args))
        returning = self._returning(sql)
        if returning is not None:
            text = f"{text} RETURNING {returning}"
        cur = self.raw.execute(text, args or None)
        if returning is not None:
            row = cur.fetchone()
            return Cursor(cur, int(row[0]) if row else None)
        return Cursor(cur)

    def _returning(self, sql: str) -> str | None:
        head = sql.lstrip()
        if not head[:6].upper() == "INSERT" or "RETURNING" in sql.upper():
            return None
        parts = head.split(None, 4)
        if len(parts) < 3:
            return None
        table = parts[2].split("(")[0] if parts[1].upper() == "INTO" else None
        return self._serial_keys.get(table or "")

    def executemany(self, sql: str, seq: Iterable[Sequence[Any]]) -> Cursor:
        text, numbered = translate(sql)
        index_text = text.lstrip()[:24].upper().startswith("INSERT INTO OBJECTS_FTS")
        rows = [numbered_params(list(_params(r, index_text))) if numbered else _params(r, index_text) for r in seq]
        cur = self.raw.cursor()
        if rows:
            cur.executemany(text, rows)
        return Cursor(cur)

    def commit(self) -> None:
        if self.in_transaction:
            self.raw.execute("COMMIT")

    def rollback(self) -> None:
        if self.in_transaction:
            self.raw.execute("ROLLBACK")
