"""A small graph with two sessions, for the fuzz and security tests.

"mine" is the session a run is pinned to; "theirs" holds data no call pinned
to "mine" may read or change. Everything in "theirs" carries markers (``SECRET``
in properties, ``SECRET_TYPE`` as a type) that never appear in any argument a
test sends, so finding one in a result is a leak, whatever the tool.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cks_desktop.graph.sqlite_util import encode_cursor
from cks_desktop.graph.store import GraphStore

SECRET = "ZZSECRETZZ"
SECRET_TYPE = "ZZTYPEZZ"


@dataclass
class World:
    store: GraphStore
    mine: str
    theirs: str
    mine_objects: dict[str, str] = field(default_factory=dict)  # name -> id
    their_objects: dict[str, str] = field(default_factory=dict)
    mine_relations: list[str] = field(default_factory=list)
    their_relations: list[str] = field(default_factory=list)
    mine_changes: list[str] = field(default_factory=list)
    their_changes: list[str] = field(default_factory=list)

    @property
    def their_ids(self) -> set[str]:
        return {*self.their_objects.values(), *self.their_relations, *self.their_changes, self.theirs}


def build_world(path: Path) -> World:
    store = GraphStore.open(path)
    mine = store.create_session("mine").id
    theirs = store.create_session("theirs").id
    w = World(store, mine, theirs)
    r = store.apply(mine, [
        {"op": "add_object", "type": "Person", "name": "Ada", "properties": {"born": 1815}, "label": "$a"},
        {"op": "add_object", "type": "Person", "name": "Bob", "label": "$b"},
        {"op": "add_object", "type": "City", "name": "Twin", "label": "$t1"},
        {"op": "add_object", "type": "Band", "name": "Twin", "label": "$t2"},
        {"op": "add_object", "type": "Person", "name": "Shared Name", "label": "$s"},
        {"op": "add_relation", "source": "$a", "target": "$b", "type": "knows", "label": "$r1"},
        {"op": "add_relation", "source": "$b", "target": "$t1", "type": "lives_in", "label": "$r2"},
    ], "user")
    assert r.change is not None
    w.mine_changes.append(r.change.id)
    w.mine_objects = {"Ada": r.created["$a"], "Bob": r.created["$b"], "Twin City": r.created["$t1"],
                      "Twin Band": r.created["$t2"], "Shared Name": r.created["$s"]}
    w.mine_relations = [r.created["$r1"], r.created["$r2"]]
    r = store.apply(theirs, [
        {"op": "add_object", "type": SECRET_TYPE, "name": "Eve", "properties": {"secret": f"{SECRET}-1"},
         "label": "$e"},
        {"op": "add_object", "type": SECRET_TYPE, "name": "Shared Name", "properties": {"secret": f"{SECRET}-2"},
         "label": "$s"},
        {"op": "add_object", "type": SECRET_TYPE, "name": "Mallory", "properties": {"note": f"{SECRET}-3"},
         "label": "$m"},
        {"op": "add_relation", "source": "$e", "target": "$s", "type": "ZZRELZZ", "label": "$r",
         "properties": {"secret": f"{SECRET}-4"}},
        {"op": "define_type", "kind": "object", "name": SECRET_TYPE, "description": f"{SECRET}-5"},
    ], "user")
    assert r.change is not None
    w.their_changes.append(r.change.id)
    w.their_objects = {"Eve": r.created["$e"], "Shared Name": r.created["$s"], "Mallory": r.created["$m"]}
    w.their_relations = [r.created["$r"]]
    return w


def refs(w: World) -> list[str]:
    """Strings a model might use as a ref: names and ids of both sessions, labels."""
    return [*w.mine_objects, "ada", "ADA", " Ada ", *w.mine_objects.values(), *w.their_objects,
            *w.their_objects.values(), "$a", "$x", w.theirs, *w.their_relations]


def cursors(w: World) -> list[str]:
    return [encode_cursor(i) for i in (*w.mine_objects.values(), *w.their_objects.values(), *w.their_relations)]


def session_rows(store: GraphStore, session_id: str) -> dict[str, list[tuple[Any, ...]]]:
    """Every row that belongs to one session, in every table that has a session_id (a table with none
    of its rows is left out: one the app creates on first use, empty, changed nothing of it)."""
    with store.connection_lock() as conn:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        out = {}
        for t in tables:
            cols = [c[1] for c in conn.execute(f'PRAGMA table_info("{t}")')]
            if "session_id" in cols:
                rows = sorted(conn.execute(f'SELECT * FROM "{t}" WHERE session_id = ?', (session_id,)).fetchall(),
                              key=repr)
                if rows:
                    out[t] = rows
            if t == "sessions":
                out[t] = conn.execute("SELECT * FROM sessions WHERE id = ?", (session_id,)).fetchall()
        return out


def dump(store: GraphStore) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every table (full-text shadow tables included), sorted."""
    with store.connection_lock() as conn:
        tables = [r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        return {t: sorted(conn.execute(f'SELECT * FROM "{t}"').fetchall(), key=repr) for t in tables}


def leaks(w: World, text: str, sent: Any) -> list[str]:
    """Markers or ids of "theirs" in ``text`` that the caller did not send itself."""
    sent_text = json.dumps(sent, ensure_ascii=False, default=str)
    found = re.findall(SECRET + r"-\d", text)  # property values of theirs: never sent by any test
    found += [m for m in (SECRET_TYPE, "ZZRELZZ", *w.their_ids) if m in text and m not in sent_text]
    return found


def check_store(store: GraphStore) -> None:
    """Integrity, foreign keys and the full-text index."""
    with store.connection_lock() as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        conn.execute("INSERT INTO objects_fts(objects_fts) VALUES ('integrity-check')")
