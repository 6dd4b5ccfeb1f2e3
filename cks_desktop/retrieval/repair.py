"""The retrieval index is derived data: damaged or made by another version, it is rebuilt.

Every read and write of the index goes through ``reading``/``writing``: a SQLite error that says a
table is corrupt, or that its shape is not this version's (a missing column or table), becomes
``IndexDamaged`` *inside* the store's lock, so the store does not mistake a damaged index for a
damaged session database (which would turn the whole file read-only). ``rebuild`` then drops the
index's tables and makes them again (the documents, the graph and the chats are untouched), and the
search runs once more; ``REBUILT`` is the sentence the person reads.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from cks_desktop.graph.integrity import is_corruption

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore

REBUILT = "The search index was damaged or made by another version ({problem}); it was rebuilt from the documents, " \
          "the graph and the chats."
_SHAPE = ("no such column", "no such table", "has no column", "columns but", "vtable constructor failed")
_PASSAGES_FTS = "CREATE VIRTUAL TABLE passages_fts USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')"


class IndexDamaged(Exception):
    """The index cannot be read as it is: ``problem`` says why."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def damaged(exc: sqlite3.Error) -> bool:
    """A corrupt table, or one whose shape is not this version's."""
    text = str(exc).lower()
    return is_corruption(exc) or any(s in text for s in _SHAPE)


@contextmanager
def _index_errors() -> Iterator[None]:
    """A damaged index's error as ``IndexDamaged``; every other error as it was."""
    try:
        yield
    except sqlite3.Error as exc:
        if damaged(exc):
            raise IndexDamaged(str(exc)) from None
        raise


@contextmanager
def reading(store: "GraphStore") -> Iterator[sqlite3.Connection]:
    """The store's connection for reads of the index (see the module docstring)."""
    with store.connection_lock() as conn, _index_errors():
        yield conn


@contextmanager
def writing(store: "GraphStore") -> Iterator[sqlite3.Connection]:
    """A write transaction on the index (rolled back on any error)."""
    with store.transaction() as conn, _index_errors():
        yield conn


def rebuild(store: "GraphStore", problem: str) -> str:
    """Drop and make again every table of the index; the sentence to show."""
    from cks_desktop.retrieval import index, items

    with store.transaction() as conn:
        conn.execute("DROP TABLE IF EXISTS passages_fts")
        conn.execute(_PASSAGES_FTS)
        conn.execute("DELETE FROM passages")  # every document is cut again; no vector can be trusted
        items.drop_tables(conn)
    items.forget(store)
    index.bump()
    return REBUILT.format(problem=problem.rstrip("."))
