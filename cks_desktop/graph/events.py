"""Change events the store emits after a transaction commits.

A plain callback list, no Qt: the GUI wraps it in a signal. Listeners are
called after the commit, so they only ever see data that is really in the
database: for the store's own writes on the thread that made the change, for
writes by other processes (``external=True``, found by the store's change feed,
``graph/feed.py``) on the feed's worker thread.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass

from cks_desktop.callbacks import Callbacks
from cks_desktop.graph.model import Object, Relation, Session

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class GraphChanged:
    """One committed batch in one session."""

    session_id: str
    change_id: str | None
    origin: str
    added_objects: tuple[Object, ...] = ()
    updated_objects: tuple[Object, ...] = ()
    removed_objects: tuple[str, ...] = ()  # ids
    added_relations: tuple[Relation, ...] = ()
    updated_relations: tuple[Relation, ...] = ()
    removed_relations: tuple[str, ...] = ()  # ids
    types_changed: bool = False
    reverts: str | None = None  # the change this one undid (a revert), if any
    external: bool = False  # written by another process/connection, seen through the change feed
    evidence_changed: bool = False  # sources (evidence rows) were added, moved or removed


@dataclass(frozen=True)
class SessionEvent:
    kind: str  # "created", "renamed", "deleted", "updated"; "documents": its documents changed (feed only)
    session: Session
    external: bool = False  # done by another process/connection, seen through the change feed


StoreEvent = GraphChanged | SessionEvent
Listener = Callable[[StoreEvent], None]


class EventHub(Callbacks[[StoreEvent]]):
    """The store's listeners; called after commit, on the thread that wrote."""

    def __init__(self) -> None:
        super().__init__("store")
