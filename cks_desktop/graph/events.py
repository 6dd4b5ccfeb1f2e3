"""Change events the store emits after a transaction commits.

A plain callback list, no Qt: the GUI wraps it in a signal. Listeners are
called on the thread that made the change, after the commit, so they only ever
see data that is really in the database.
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


@dataclass(frozen=True)
class SessionEvent:
    kind: str  # "created", "renamed", "deleted", "updated"
    session: Session


StoreEvent = GraphChanged | SessionEvent
Listener = Callable[[StoreEvent], None]


class EventHub(Callbacks[[StoreEvent]]):
    """The store's listeners; called after commit, on the thread that wrote."""

    def __init__(self) -> None:
        super().__init__("store")
