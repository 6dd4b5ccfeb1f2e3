"""The LISTEN/NOTIFY change feed, with real second writers: another store (another
connection) and two real app processes writing at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from cks_desktop.graph.events import GraphChanged, SessionEvent, StoreEvent
from cks_desktop.graph.pg.store import PgGraphStore
from tests import pgcluster

ROOT = Path(__file__).resolve().parents[2]


class Seen:
    """Events with the time they arrived; ``wait`` blocks (bounded) on a condition."""

    def __init__(self) -> None:
        self.events: list[tuple[float, StoreEvent]] = []
        self._cond = threading.Condition()

    def __call__(self, event: StoreEvent) -> None:
        with self._cond:
            self.events.append((time.monotonic(), event))
            self._cond.notify_all()

    def wait(self, pred: "callable[[list[StoreEvent]], bool]", timeout: float = 5.0) -> bool:  # type: ignore[valid-type]
        with self._cond:
            return self._cond.wait_for(lambda: pred([e for _, e in self.events]), timeout)

    def external_changes(self) -> list[GraphChanged]:
        return [e for _, e in self.events if isinstance(e, GraphChanged) and e.external]


@pytest.fixture
def watched(pg_url: str) -> Iterator[tuple[PgGraphStore, Seen]]:
    store = PgGraphStore.connect(pg_url)
    seen = Seen()
    store.subscribe(seen)
    store.start_feed()
    try:
        yield store, seen
    finally:
        store.close()


def test_another_members_change_arrives_within_a_second_as_the_same_event(
        watched: tuple[PgGraphStore, Seen], pg_url: str) -> None:
    store, seen = watched
    with PgGraphStore.connect(pg_url) as other:
        s = other.create_session("team")
        assert seen.wait(lambda ev: any(isinstance(e, SessionEvent) and e.kind == "created" for e in ev))
        sent = time.monotonic()
        r = other.apply(s.id, [{"op": "add_object", "type": "Person", "name": "Ann", "label": "$a"},
                               {"op": "add_object", "type": "Person", "name": "Bo", "label": "$b"},
                               {"op": "add_relation", "source": "$a", "target": "$b", "type": "knows"}], "mcp")
        assert seen.wait(lambda ev: len([e for e in ev if isinstance(e, GraphChanged)]) == 1, 1.0)
        (event,) = seen.external_changes()
        arrived = [t for t, e in seen.events if e is event][0]
        assert arrived - sent < 1.0
        assert event.change_id == r.change.id and event.origin == "mcp"  # type: ignore[union-attr]
        assert {o.name for o in event.added_objects} == {"Ann", "Bo"} and len(event.added_relations) == 1
        other.rename_session(s.id, "renamed")
        assert seen.wait(lambda ev: any(isinstance(e, SessionEvent) and e.kind == "renamed" for e in ev), 1.0)
    # own writes: emitted once by the store itself, never again by the feed
    before = len(seen.events)
    store.apply(s.id, [{"op": "add_object", "type": "T", "name": "own"}], "t")
    with PgGraphStore.connect(pg_url) as other:  # a later external write proves the feed went past it
        other.apply(s.id, [{"op": "add_object", "type": "T", "name": "after"}], "t")
    assert seen.wait(lambda ev: any(isinstance(e, GraphChanged) and e.external and
                                    e.added_objects and e.added_objects[0].name == "after" for e in ev))
    names = [(e.added_objects[0].name, e.external) for _, e in seen.events[before:] if isinstance(e, GraphChanged)]
    assert names == [("own", False), ("after", True)]


def test_reconnecting_resumes_without_losing_events(watched: tuple[PgGraphStore, Seen], pg_url: str,
                                                    pg_cluster: pgcluster.Cluster) -> None:
    store, seen = watched
    feed = store.feed
    assert feed is not None
    s = store.create_session("s")
    with PgGraphStore.connect(pg_url) as other:
        other.apply(s.id, [{"op": "add_object", "type": "T", "name": "before"}], "t")
        assert seen.wait(lambda ev: len([e for e in ev if isinstance(e, GraphChanged) and e.external]) == 1)
        with psycopg.connect(pg_cluster.dsn(), autocommit=True) as admin:  # cut the feed's connection
            killed = admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                                   "AND application_name = 'cks-desktop-feed'", (pg_url.rsplit("/", 1)[1],)).fetchall()
        assert killed == [(True,)]
        for i in range(5):  # written while the feed is away: no notification reaches it
            other.apply(s.id, [{"op": "add_object", "type": "T", "name": f"during-{i}"}], "t")
        assert seen.wait(lambda ev: len([e for e in ev if isinstance(e, GraphChanged) and e.external]) == 6, 10)
    names = [e.added_objects[0].name for e in seen.external_changes()]
    assert names == ["before"] + [f"during-{i}" for i in range(5)]
    assert feed.reconnects == 1


def _spawn(url: str, session_id: str, n: int, name: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    return subprocess.Popen([sys.executable, "-m", "tests.pg.feed_writer", url, session_id, str(n), str(n), name],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=ROOT, env=env)


@pytest.mark.parametrize("n", [pytest.param(1000, marks=pytest.mark.slow), 150])
def test_two_processes_writing_at_once_end_with_the_same_graph_and_see_each_other(pg_url: str, n: int) -> None:
    with PgGraphStore.connect(pg_url) as store:
        session = store.create_session("race")
    procs = [_spawn(pg_url, session.id, n, name) for name in ("a", "b")]
    try:
        for p in procs:
            assert p.stdout is not None and p.stdout.readline().strip() == "ready", p.stderr.read() if p.stderr else ""
        for p in procs:  # both start writing at once
            assert p.stdin is not None
            p.stdin.write("go\n")
            p.stdin.flush()
        outs = []
        for p in procs:
            out, err = p.communicate(timeout=240)
            assert p.returncode == 0, err
            outs.append(json.loads(out.strip().splitlines()[-1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    a, b = outs
    assert len(a["wrote"]) == len(b["wrote"]) == n
    assert a["names"] == b["names"] and len(a["names"]) == 2 * n  # the same graph, no change lost
    assert sorted(a["seen"]) == sorted(b["wrote"]) and sorted(b["seen"]) == sorted(a["wrote"])
    assert len(set(a["seen"])) == n  # each seen exactly once
    with PgGraphStore.connect(pg_url) as store:
        assert len(store.list_changes(session.id, limit=1000, with_ops=False)) == min(1000, 2 * n)
