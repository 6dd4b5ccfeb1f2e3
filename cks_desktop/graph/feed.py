"""The store's change feed: commits made by OTHER processes, as the store's own events.

Why: a window open on a session must show what ``cks-desktop tools call``,
``sessions import`` or ``mcp serve`` (answering Claude Desktop) write into the same
data folder, and ``sessions watch`` prints it. The store already emits
``GraphChanged``/``SessionEvent`` for its own writes; a feed finds the writes of
everyone else and emits exactly the same events (``external=True``) through the
same ``EventHub``, so every listener (graph view, sidebar, inspector, chat) reacts
to both without knowing the difference.

This module is the backend-neutral part:

- ``ChangeFeed``: what a backend implements. SQLite (``graph/sqlite_feed.py``)
  polls ``PRAGMA data_version`` on its own connection on a worker thread; a
  PostgreSQL backend would ``LISTEN`` on a channel its writers ``NOTIFY``.
- ``OwnWrites``: the store notes each of its own writes here BEFORE it commits,
  so a feed that sees the commit (SQLite's feed connection sees every commit of
  the file, its own process's included) skips it: nothing is emitted twice.
- ``net_effect``: which objects and relations a recorded change added, updated
  and removed, read from its resolved ops (the same net rules the writer uses).
- ``document_events``: a session's documents (``documents`` table: ``documents
  add|remove`` record no ``changes`` row) added or removed elsewhere, as
  ``SessionEvent("documents", session)``: the open window's Documents panel follows a
  terminal's ``documents add``.

Events of a feed are emitted on the feed's worker thread, after the commit; the
GUI hops them to its thread through ``ui/bridge.py`` like worker-thread writes.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Protocol

from cks_desktop.graph.compact_ops import expand
from cks_desktop.graph.events import SessionEvent, StoreEvent
from cks_desktop.graph.model import Session

Emit = Callable[[StoreEvent], None]

OWN_NOTE_TTL_S = 120.0  # a note of our own write that no feed consumed (a failed commit) is forgotten


class ChangeFeed(Protocol):
    """Emits, through the store's listeners, the commits other processes make.

    ``start`` returns once the feed knows where "now" is: every commit made after
    it returns is emitted (within about half a second), none made before. ``stop``
    waits for the worker and is idempotent. Neither blocks for long: the work runs
    on the feed's own thread (or connection), never on the caller's loop.
    """

    @property
    def running(self) -> bool: ...

    def start(self) -> None: ...

    def stop(self) -> None: ...


class OwnWrites:
    """The writes this store made itself, noted before commit, consumed by the feed.

    Only kept while a feed runs (``active``); otherwise noting is free. Thread-safe:
    the store notes on any thread, the feed consumes on its worker.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.active = False
        self._changes: dict[str, float] = {}
        self._sessions: dict[str, tuple[Session | None, float]] = {}  # None: deleted
        self._documents: dict[str, tuple[str, float]] = {}  # session -> signature of its document ids

    def note_change(self, change_id: str) -> None:
        if not self.active:
            return
        with self._lock:
            self._changes[change_id] = time.monotonic()
            self._prune()

    def note_session(self, session_id: str, state: Session | None) -> None:
        """``state`` is the session as this write leaves it, None when it deletes it."""
        if not self.active:
            return
        with self._lock:
            self._sessions[session_id] = (state, time.monotonic())
            self._prune()

    def note_documents(self, session_id: str, ids: str) -> None:
        """``ids``: the signature of the session's document ids as this write (an add or
        remove) leaves them (``sqlite_feed.document_signatures``)."""
        if not self.active:
            return
        with self._lock:
            self._documents[session_id] = (ids, time.monotonic())
            self._prune()

    def take_documents(self, session_id: str, ids: str) -> bool:
        """True (and forgotten) when our last document write left the session with ``ids``."""
        with self._lock:
            noted = self._documents.get(session_id)
            if noted is None or noted[0] != ids:
                return False
            del self._documents[session_id]
            return True

    def is_own_change(self, change_id: str) -> bool:
        with self._lock:
            return change_id in self._changes

    def take_change(self, change_id: str) -> bool:
        """True (and forgotten) when ``change_id`` is one of ours."""
        with self._lock:
            return self._changes.pop(change_id, None) is not None

    def take_session(self, session_id: str, state: Session | None) -> bool:
        """True (and forgotten) when our last write to the session left it as ``state``."""
        with self._lock:
            noted = self._sessions.get(session_id)
            if noted is None or noted[0] != state:
                return False
            del self._sessions[session_id]
            return True

    def clear(self) -> None:
        with self._lock:
            self._changes.clear()
            self._sessions.clear()
            self._documents.clear()

    def _prune(self) -> None:
        if len(self._changes) + len(self._sessions) + len(self._documents) < 256:
            return
        cutoff = time.monotonic() - OWN_NOTE_TTL_S
        self._changes = {k: t for k, t in self._changes.items() if t >= cutoff}
        self._sessions = {k: v for k, v in self._sessions.items() if v[1] >= cutoff}
        self._documents = {k: d for k, d in self._documents.items() if d[1] >= cutoff}


@dataclass
class NetEffect:
    """What one change did, as ids in first-touched order (see ``net_effect``)."""

    added_objects: list[str] = field(default_factory=list)
    updated_objects: list[str] = field(default_factory=list)
    removed_objects: list[str] = field(default_factory=list)
    added_relations: list[str] = field(default_factory=list)
    updated_relations: list[str] = field(default_factory=list)
    removed_relations: list[str] = field(default_factory=list)
    types_changed: bool = False
    evidence_changed: bool = False  # sources were added, moved or removed (graph/evidence.py)


def net_effect(ops: Iterable[dict[str, Any]]) -> NetEffect:
    """The net effect of a change's RESOLVED ops (as ``changes.ops`` records them).

    The same rule as the writer's: a thing whose first op in the batch creates it
    did not exist before; one whose last op removes it is gone after. Existed and
    alive → updated; new and alive → added; existed and gone → removed; new and
    gone → nothing. ``add_object`` with ``outcome: reused`` wrote nothing.
    """
    objs: dict[str, list[bool]] = {}  # id -> [existed_before, alive_after]
    rels: dict[str, list[bool]] = {}
    types_changed = False
    evidence_changed = False

    def touch(table: dict[str, list[bool]], ident: Any, creates: bool, alive: bool) -> None:
        if not isinstance(ident, str):
            return
        state = table.get(ident)
        if state is None:
            table[ident] = [not creates, alive]
        else:
            state[1] = alive

    for op in expand(ops):  # compact ops (a streamed import's add_objects, ...) as their plain ops
        kind = op.get("op") if isinstance(op, dict) else None
        if kind == "add_object":
            outcome = op.get("outcome")
            if outcome == "reused":
                continue
            touch(objs, op.get("id"), outcome != "updated", True)
        elif kind == "update_object":
            touch(objs, op.get("ref"), False, True)
        elif kind == "remove_object":
            for rel_id in op.get("removed_relations") or ():
                touch(rels, rel_id, False, False)
            touch(objs, op.get("ref"), False, False)
        elif kind == "add_relation":
            touch(rels, op.get("id"), True, True)
        elif kind == "update_relation":
            touch(rels, op.get("relation_id"), False, True)
        elif kind == "remove_relation":
            touch(rels, op.get("relation_id"), False, False)
        elif kind in ("define_type", "undefine_type"):
            types_changed = True
        elif kind in ("add_evidence", "remove_evidence", "move_evidence", "set_evidence_review") \
                and op.get("outcome") not in ("reused", "unchanged"):
            evidence_changed = True
        if kind in ("remove_object", "remove_relation") and op.get("removed_evidence"):
            evidence_changed = True

    effect = NetEffect(types_changed=types_changed, evidence_changed=evidence_changed)
    for table, added, updated, removed in (
            (objs, effect.added_objects, effect.updated_objects, effect.removed_objects),
            (rels, effect.added_relations, effect.updated_relations, effect.removed_relations)):
        for ident, (existed, alive) in table.items():
            if alive:
                (updated if existed else added).append(ident)
            elif existed:
                removed.append(ident)
    return effect


def session_events(before: dict[str, Session], after: dict[str, Session],
                   own: OwnWrites) -> tuple[list[StoreEvent], list[StoreEvent]]:
    """The session events between two snapshots (id → Session) that we did not cause:
    ``(created/renamed/updated, deleted)`` — the caller emits the first list before the
    graph changes it found and the second after them."""
    first: list[StoreEvent] = []
    last: list[StoreEvent] = []
    for sid, session in after.items():
        old = before.get(sid)
        if old == session or own.take_session(sid, session):
            continue
        if old is None:
            kind = "created"
        elif old.title != session.title:
            kind = "renamed"
        else:
            kind = "updated"
        first.append(SessionEvent(kind, session, external=True))
    for sid, old in before.items():
        if sid not in after and not own.take_session(sid, None):
            last.append(SessionEvent("deleted", old, external=True))
    return first, last


def document_events(before: dict[str, str], after: dict[str, str],
                    sessions: dict[str, Session], own: OwnWrites) -> list[StoreEvent]:
    """``SessionEvent("documents", session)`` for each live session whose document ids differ
    between two snapshots (session id -> signature of its ids) and that we did not cause. A
    deleted session's documents go with it: its "deleted" event says enough."""
    out: list[StoreEvent] = []
    for sid in sorted(set(before) | set(after)):
        ids = after.get(sid, "")
        if before.get(sid, "") == ids or sid not in sessions or own.take_documents(sid, ids):
            continue
        out.append(SessionEvent("documents", sessions[sid], external=True))
    return out
