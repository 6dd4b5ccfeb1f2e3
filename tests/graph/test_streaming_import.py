"""Streamed imports and reverts: chunk by chunk, one transaction, compact history.

The chunk size is lowered (a module setting read on every call) so that a test-sized
import spans many chunks; everything else is the real store on a real SQLite file.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.graph import stream
from cks_desktop.graph.compact_ops import expand
from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.events import GraphChanged, StoreEvent
from cks_desktop.graph.feed import net_effect
from cks_desktop.graph.history import decode_ops
from cks_desktop.graph.model import Session
from cks_desktop.graph.store import GraphStore
from cks_desktop.ids import new_id
from tests.graph.conftest import dump, graph_rows
from tests.reliability.crash_batches import replay


@pytest.fixture(autouse=True)
def small_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stream, "STREAM_CHUNK", 97)  # an odd size: chunks end mid-objects and mid-relations
    monkeypatch.setattr(stream, "STREAM_OVER", 500)


def _document(n: int, bad_last: bool = False) -> str:
    ids = [new_id("o_") for _ in range(n)]
    relations = [{"id": new_id("r_"), "type": f"rel{j % 3}", "source_id": ids[j % n],
                  "target_id": ids[(j * 7 + 1) % n], "properties": {"w": j} if j % 2 else {}} for j in range(3 * n)]
    if bad_last:
        relations.append({"id": new_id("r_"), "type": "rel", "source_id": ids[0], "target_id": "nobody here",
                          "properties": {}})
    return json.dumps({"format": "cks-graph", "version": 1, "session": {"id": "s", "title": "x"},
                       "objects": [{"id": ids[i], "type": f"Type{i % 4}", "name": f"object {i}",
                                    "properties": {"rank": i, "text": "é" * (i % 3)}} for i in range(n)],
                       "relations": relations})


def _stored(store: GraphStore, change_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    with store.connection_lock() as conn:
        ops, inverse = conn.execute("SELECT ops, inverse_ops FROM changes WHERE id = ?", (change_id,)).fetchone()
    return decode_ops(ops), decode_ops(inverse)


def test_an_import_of_n_objects_is_reverted_exactly(store: GraphStore, session: Session) -> None:
    store.apply(session.id, [{"op": "add_object", "type": "Keep", "name": "kept before"}], "user")
    before = graph_rows(store, session.id)
    n = 600
    seen: list[StoreEvent] = []
    store.subscribe(seen.append)
    result = store.import_data(session.id, "json", _document(n), "import")
    assert result.summary == f"adds {n} objects, {3 * n} relations"
    assert store.counts(session.id) == {"objects": n + 1, "relations": 3 * n}
    # one event with everything, one change, recorded compactly
    [event] = [e for e in seen if isinstance(e, GraphChanged)]
    assert (len(event.added_objects), len(event.added_relations)) == (n, 3 * n)
    ops, inverse = _stored(store, result.change.id)
    assert [op["op"] for op in ops] == ["add_objects", "add_relations"]
    assert [op["op"] for op in inverse] == ["remove_objects"] and len(inverse[0]["ids"]) == n
    effect = net_effect(ops)  # what the change feed tells other processes
    assert (len(effect.added_objects), len(effect.added_relations)) == (n, 3 * n)
    imported = graph_rows(store, session.id)

    revert = store.revert(session.id, result.change.id, "user")  # streams (STREAM_OVER is 500)
    assert revert.summary == f"removes {n} objects, {3 * n} relations"
    assert graph_rows(store, session.id) == before
    # the revert's inverse re-adds everything, compactly, and reverting it restores the import exactly
    _, again = _stored(store, revert.change.id)
    assert {op["op"] for op in again} == {"add_objects", "add_relations"}
    store.revert(session.id, revert.change.id, "user")
    assert graph_rows(store, session.id) == imported
    # the change history replays to exactly the stored graph (the crash test's checker)
    with store.connection_lock() as conn:
        changes = conn.execute("SELECT id, ops FROM changes WHERE session_id = ? ORDER BY id",
                               (session.id,)).fetchall()
    objs, rels = replay(changes)
    assert len(objs) == n + 1 and len(rels) == 3 * n
    assert {i for i in objs} == {r[0] for r in imported[0]}


def test_a_failing_import_leaves_the_database_byte_identical(db_path: Path) -> None:
    with GraphStore.open(db_path) as store:
        session = store.create_session("s")
        store.import_data(session.id, "json", _document(50), "import")
    digest = hashlib.sha256(db_path.read_bytes()).hexdigest()
    with GraphStore.open(db_path) as store:
        rows = dump(store)
        with pytest.raises(StoreError) as caught:  # 400 objects, 1200 relations, then one to nobody
            store.import_data(session.id, "json", _document(400, bad_last=True), "import")
        assert str(caught.value).startswith("Nothing was imported: relation 1200 (r_")
        assert "No object 'nobody here'" in str(caught.value)
        assert dump(store) == rows
        # meanwhile another connection saw nothing either: the file has no trace of the chunks
        other = sqlite3.connect(str(db_path))
        assert other.execute("SELECT count(*) FROM objects").fetchone() == (50,)
        other.close()
    assert hashlib.sha256(db_path.read_bytes()).hexdigest() == digest


def test_every_error_of_a_streamed_import_is_found_across_chunks(store: GraphStore, session: Session) -> None:
    """Validation is the whole batch's: errors in different chunks are all counted, an
    object of an earlier chunk is found by a relation of a later one, and nothing is written."""
    store.apply(session.id, [{"op": "add_object", "type": "Type3", "name": "object 3"}], "user")
    before = dump(store)
    doc = json.loads(_document(300))
    doc["relations"].append({"type": "rel", "source_id": doc["objects"][0]["id"], "target_id": "ghost"})
    doc["relations"].append({"type": "rel", "source_id": "ghost 2", "target_id": doc["objects"][299]["id"]})
    with pytest.raises(StoreError) as caught:
        store.import_data(session.id, "json", json.dumps(doc), "import")
    assert str(caught.value).startswith("Nothing was imported: 2 problems: relation 900")  # both named
    assert "'ghost'" in str(caught.value) and "'ghost 2'" in str(caught.value)
    assert dump(store) == before
    # the same import without the bad relations merges "object 3" into the existing one
    doc["relations"] = doc["relations"][:-2]
    result = store.import_data(session.id, "json", json.dumps(doc), "import")
    assert store.counts(session.id) == {"objects": 300, "relations": 900}
    store.revert(session.id, result.change.id, "user")
    assert dump(store, fts_segments=False)["objects"] == before["objects"]


def test_old_plain_inverse_lists_still_revert_streamed(store: GraphStore, session: Session) -> None:
    """A change recorded before streaming (one plain op per id) reverts through the streamed path."""
    n = 400
    ops: list[dict[str, Any]] = [{"op": "add_object", "type": "T", "name": f"t{i}", "label": f"$t{i}",
                                  "properties": {"i": i}} for i in range(n)]
    ops += [{"op": "add_relation", "type": "next", "source": f"$t{i}", "target": f"$t{i + 1}"} for i in range(n - 1)]
    before = graph_rows(store, session.id)
    result = store.apply(session.id, ops, "import")
    _, inverse = _stored(store, result.change.id)
    assert len(inverse) == 2 * n - 1  # the plain format
    imported = graph_rows(store, session.id)
    revert = store.revert(session.id, result.change.id, "user")
    assert graph_rows(store, session.id) == before
    store.revert(session.id, revert.change.id, "user")
    assert graph_rows(store, session.id) == imported


def test_compact_ops_expand_to_their_plain_ops() -> None:
    ops = [{"op": "add_objects", "objects": [["o_1", "T", "a", {}, "t0", "t1"]]},
           {"op": "add_relations", "relations": [["r_1", "R", "o_1", "o_1", {"x": 1}, "t0"]]},
           {"op": "remove_objects", "ids": ["o_1"]}, {"op": "remove_objects", "ids": "not a list"}]
    assert list(expand(ops)) == [
        {"op": "add_object", "id": "o_1", "type": "T", "name": "a", "properties": {}, "created_at": "t0",
         "updated_at": "t1"},
        {"op": "add_relation", "id": "r_1", "type": "R", "source": "o_1", "target": "o_1", "properties": {"x": 1},
         "created_at": "t0"},
        {"op": "remove_object", "ref": "o_1"}, {"op": "remove_objects", "ids": "not a list"}]


def test_a_malformed_compact_op_is_one_clear_error(store: GraphStore, session: Session) -> None:
    from cks_desktop.graph.errors import ValidationFailed

    with pytest.raises(ValidationFailed) as caught:
        store.apply(session.id, [{"op": "remove_objects", "ids": "o_x"}], "user")
    assert caught.value.errors == [{"index": 0, "message": "'remove_objects' needs exactly 'ids': a list of object ids"}]
