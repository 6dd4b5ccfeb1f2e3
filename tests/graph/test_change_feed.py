"""The store's change feed: commits of other connections and processes, as the store's own events.

Real second writers: another ``GraphStore`` on the same file (another connection, as a
second process has), and a real ``python -m cks_desktop tools call`` subprocess.
Waits are on a ``threading.Event`` with a bounded timeout, never sleeps.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from cks_desktop.graph.events import GraphChanged, SessionEvent, StoreEvent
from cks_desktop.graph.feed import OwnWrites, net_effect
from cks_desktop.graph.store import GraphStore
from cks_desktop import paths

LATENCY_S = 0.5


class Seen:
    """Collects events (from the feed's thread) and waits for one that matches."""

    def __init__(self) -> None:
        self.events: list[StoreEvent] = []
        self.threads: set[str] = set()
        self._cond = threading.Condition()

    def __call__(self, event: StoreEvent) -> None:
        with self._cond:
            self.events.append(event)
            self.threads.add(threading.current_thread().name)
            self._cond.notify_all()

    def wait_for(self, match: Callable[[StoreEvent], bool], timeout: float) -> StoreEvent:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for event in self.events:
                    if match(event):
                        return event
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no matching event within {timeout} s; saw {self.events!r}")
                self._cond.wait(left)


@pytest.fixture
def watched(db_path: Path) -> Iterator[tuple[GraphStore, Seen]]:
    store = GraphStore.open(db_path)
    seen = Seen()
    store.subscribe(seen)
    store.start_feed()
    try:
        yield store, seen
    finally:
        store.close()


@pytest.fixture
def other(db_path: Path, watched: tuple[GraphStore, Seen]) -> Iterator[GraphStore]:
    store = GraphStore.open(db_path)
    try:
        yield store
    finally:
        store.close()


def test_another_connections_writes_arrive_as_the_same_events(watched: tuple[GraphStore, Seen],
                                                               other: GraphStore) -> None:
    store, seen = watched
    mine: list[StoreEvent] = []
    other.subscribe(mine.append)

    session = other.create_session("From elsewhere")
    created = seen.wait_for(lambda e: isinstance(e, SessionEvent) and e.kind == "created", LATENCY_S)
    assert created == SessionEvent("created", session, external=True)

    result = other.apply(session.id, [
        {"op": "add_object", "type": "Person", "name": "Ada", "properties": {"born": 1815}, "label": "$a"},
        {"op": "add_object", "type": "Person", "name": "Charles"},
        {"op": "add_relation", "source": "$a", "target": "Charles", "type": "knows"},
    ], origin="test")
    assert result.change is not None
    change = seen.wait_for(lambda e: isinstance(e, GraphChanged), LATENCY_S)
    local = next(e for e in mine if isinstance(e, GraphChanged))
    assert change == GraphChanged(**{**local.__dict__, "external": True})

    ada = result.created["$a"]
    second = other.apply(session.id, [{"op": "update_object", "ref": ada, "set_properties": {"died": 1852}},
                                      {"op": "remove_object", "ref": "Charles"}], origin="test")
    assert second.change is not None
    update = seen.wait_for(lambda e: isinstance(e, GraphChanged) and bool(e.removed_objects), LATENCY_S)
    local = [e for e in mine if isinstance(e, GraphChanged)][-1]
    assert update == GraphChanged(**{**local.__dict__, "external": True})
    assert update.updated_objects[0].properties == {"born": 1815, "died": 1852}

    reverted = other.revert(session.id, second.change.id, origin="test")
    back = seen.wait_for(lambda e: isinstance(e, GraphChanged) and e.reverts is not None, LATENCY_S)
    local = [e for e in mine if isinstance(e, GraphChanged)][-1]
    assert back == GraphChanged(**{**local.__dict__, "external": True})
    assert back.reverts == second.change.id and reverted.change is not None
    assert {o.name for o in back.added_objects} == {"Charles"} and len(back.added_relations) == 1

    other.rename_session(session.id, "Renamed")
    seen.wait_for(lambda e: isinstance(e, SessionEvent) and e.kind == "renamed"
                  and e.session.title == "Renamed", LATENCY_S)
    other.delete_session(session.id)
    seen.wait_for(lambda e: isinstance(e, SessionEvent) and e.kind == "deleted", LATENCY_S)
    assert seen.threads == {"cks-change-feed"}


def test_own_writes_are_emitted_once_and_not_again_by_the_feed(watched: tuple[GraphStore, Seen],
                                                                other: GraphStore) -> None:
    store, seen = watched
    session = store.create_session("Mine")
    store.apply(session.id, [{"op": "add_object", "type": "T", "name": "x"}], origin="me")
    store.rename_session(session.id, "Mine, renamed")
    # A write by the other connection afterwards: once the feed emitted it, it has read past ours.
    marker = other.create_session("Marker")
    seen.wait_for(lambda e: isinstance(e, SessionEvent) and e.session.id == marker.id, LATENCY_S)
    store.delete_session(session.id)
    marker2 = other.create_session("Marker 2")
    seen.wait_for(lambda e: isinstance(e, SessionEvent) and e.session.id == marker2.id, LATENCY_S)
    own = [e for e in seen.events if not getattr(e, "external")]
    external = [e for e in seen.events if getattr(e, "external")]
    assert [type(e).__name__ + ":" + getattr(e, "kind", "") for e in own] == [
        "SessionEvent:created", "GraphChanged:", "SessionEvent:renamed", "SessionEvent:deleted"]
    assert [e.session.id for e in external if isinstance(e, SessionEvent)] == [marker.id, marker2.id]


def test_a_real_second_process_is_seen_within_half_a_second(tmp_path: Path) -> None:
    home = tmp_path / "home"
    store = GraphStore.open(paths.resolve(home).ensure().database)
    try:
        session = store.create_session("Watched")
        seen = Seen()
        store.subscribe(seen)
        store.start_feed()
        done = threading.Event()
        wrote_at: list[float] = []

        def on(event: StoreEvent) -> None:
            if isinstance(event, GraphChanged) and event.external:
                wrote_at.append(time.monotonic())
                done.set()

        store.subscribe(on)
        proc = subprocess.Popen([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), "tools", "call",
                                 "add_object", "--session", session.id, "--json",
                                 "--args", json.dumps({"type": "Person", "name": "Grace"})],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        out, err = proc.communicate(timeout=60)
        finished = time.monotonic()
        assert proc.returncode == 0, err
        # The process commits a little before it exits; the event must come within 0.5 s of that.
        assert done.wait(timeout=LATENCY_S), f"not seen within {LATENCY_S} s of the process exiting"
        event = seen.wait_for(lambda e: isinstance(e, GraphChanged), 0)
        assert isinstance(event, GraphChanged)
        assert [o.name for o in event.added_objects] == ["Grace"]
        assert event.external and event.session_id == session.id and event.origin
        assert wrote_at[0] - finished < LATENCY_S
    finally:
        store.close()


def test_close_stops_the_feed_and_nothing_arrives_after(db_path: Path) -> None:
    store = GraphStore.open(db_path)
    feed = store.start_feed()
    assert store.start_feed() is feed and feed.running
    store.close()
    assert not feed.running and store.feed is None


def test_net_effect_follows_the_writers_rules() -> None:
    effect = net_effect([
        {"op": "add_object", "id": "o1", "type": "T", "name": "a", "properties": {}},
        {"op": "add_object", "id": "o2", "type": "T", "name": "b", "properties": {}},
        {"op": "remove_object", "ref": "o2", "type": "T", "name": "b", "removed_relations": ["r9"]},
        {"op": "add_object", "id": "o3", "type": "T", "name": "c", "outcome": "reused"},
        {"op": "add_object", "id": "o4", "type": "T", "name": "d", "properties": {}, "outcome": "updated"},
        {"op": "update_object", "ref": "o5", "name": "e"},
        {"op": "add_relation", "id": "r1", "type": "k", "source": "o1", "target": "o4", "properties": {}},
        {"op": "update_relation", "relation_id": "r2", "type": "k2"},
        {"op": "define_type", "kind": "object", "name": "T", "description": "", "properties_schema": None},
    ])
    assert effect.added_objects == ["o1"]
    assert effect.updated_objects == ["o4", "o5"]
    assert effect.removed_objects == []
    assert effect.removed_relations == ["r9"]
    assert effect.added_relations == ["r1"] and effect.updated_relations == ["r2"]
    assert effect.types_changed


def test_own_notes_cost_nothing_without_a_feed() -> None:
    own = OwnWrites()
    own.note_change("c_1")
    assert not own.take_change("c_1")
    own.active = True
    own.note_change("c_1")
    assert own.take_change("c_1") and not own.take_change("c_1")


def test_a_streamed_import_by_another_connection_arrives_whole(watched: tuple[GraphStore, Seen],
                                                                other: GraphStore, db_path: Path) -> None:
    store, seen = watched
    session = other.create_session("Import")
    mine: list[StoreEvent] = []
    other.subscribe(mine.append)
    with GraphStore.open(db_path.with_name("source.sqlite3")) as source:
        seed = source.create_session("Seed")
        source.apply(seed.id, [{"op": "add_object", "type": "T", "name": f"n{i}", "properties": {"i": i}}
                               for i in range(300)], origin="seed")
        source.apply(seed.id, [{"op": "add_relation", "source": f"n{i}", "target": f"n{i + 1}", "type": "next"}
                               for i in range(299)], origin="seed")
        exported = source.export(seed.id, "json")
    result = other.import_data(session.id, "json", exported, origin="import")
    assert result.change is not None
    event = seen.wait_for(lambda e: isinstance(e, GraphChanged), LATENCY_S * 4)
    local = next(e for e in mine if isinstance(e, GraphChanged))
    assert isinstance(event, GraphChanged) and event.external
    assert sorted(o.id for o in event.added_objects) == sorted(o.id for o in local.added_objects)
    assert sorted(r.id for r in event.added_relations) == sorted(r.id for r in local.added_relations)
    assert len(event.added_objects) == 300 and len(event.added_relations) == 299


def test_a_listener_may_close_the_store_from_the_feed_thread(db_path: Path) -> None:
    store = GraphStore.open(db_path)
    closed = threading.Event()

    def close_on_first(event: StoreEvent) -> None:
        store.close()
        closed.set()

    store.subscribe(close_on_first)
    feed = store.start_feed()
    with GraphStore.open(db_path) as other:
        other.create_session("Ends the watch")
        assert closed.wait(LATENCY_S * 4)
    deadline = time.monotonic() + 5
    while feed.running and time.monotonic() < deadline:  # the worker ends right after that event
        threading.Event().wait(0.01)
    assert store.feed is None and not feed.running


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the file watch is inotify (Linux); elsewhere it polls")
def test_a_commit_by_another_connection_wakes_the_feed_before_its_poll_is_due(db_path: Path) -> None:
    """A write to the database's -wal wakes the feed: with a 60 s poll interval the commit still
    arrives at once (before, it waited for the next poll)."""
    store = GraphStore.open(db_path)
    writer = GraphStore.open(db_path)
    try:
        session = store.create_session("Watched")
        seen = Seen()
        store.subscribe(seen)
        store.start_feed(interval=60.0)
        writer.apply(session.id, [{"op": "add_object", "type": "Person", "name": "Ada"}], "test")
        event = seen.wait_for(lambda e: isinstance(e, GraphChanged) and e.external, 5.0)
        assert isinstance(event, GraphChanged) and [o.name for o in event.added_objects] == ["Ada"]
    finally:
        writer.close()
        store.close()
