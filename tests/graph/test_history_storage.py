"""The change history after big batches: light history reads, compact storage, compaction.

Found: after a 100k-object import every inspector click parsed the import's
400k ops under the store's lock, the history took 170 MB (510 MB after one
revert) and was never pruned.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.graph.errors import NotFound, StoreError
from cks_desktop.graph.history import COMPRESS_OVER, ZLIB_MAGIC, decode_ops
from cks_desktop.graph.model import Session
from cks_desktop.graph.store import GraphStore
from tests.graph.conftest import graph_rows

MAIN = Path(__file__).resolve().parents[2]


def _import_ops(n: int) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = [
        {"op": "add_object", "type": "Thing", "name": f"thing {i}", "label": f"$t{i}",
         "properties": {"description": f"the {i}th thing of a long list of things", "rank": i}} for i in range(n)]
    ops += [{"op": "add_relation", "type": "next", "source": f"$t{i}", "target": f"$t{i + 1}"} for i in range(n - 1)]
    return ops


def _stored(store: GraphStore, change_id: str) -> tuple[Any, Any]:
    with store.connection_lock() as conn:
        return conn.execute("SELECT ops, inverse_ops FROM changes WHERE id = ?", (change_id,)).fetchone()


@pytest.mark.sqlite_only(reason="watches the reads with SQLite's authorizer")
def test_history_of_an_object_never_reads_the_op_lists(store: GraphStore, session: Session) -> None:
    """The inspector's query (``changes_touching``) and ``list_changes(with_ops=False)`` must not
    even read the op columns: an authorizer refuses any read of them while they run."""
    result = store.apply(session.id, _import_ops(2000), "import")
    first = store.all_objects(session.id)[0].id
    store.apply(session.id, [{"op": "update_object", "ref": first, "set_properties": {"x": 1}}], "user")

    def refuse_op_columns(action: int, table: str | None, column: str | None, *_: Any) -> int:
        if action == sqlite3.SQLITE_READ and table == "changes" and column in ("ops", "inverse_ops"):
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    with store.connection_lock() as conn:
        conn.set_authorizer(refuse_op_columns)
    try:
        history = store.changes_touching(session.id, first, 30)
        listed = store.list_changes(session.id, with_ops=False)
    finally:
        with store.connection_lock() as conn:
            conn.set_authorizer(None)
    assert [c.origin for c in history] == ["user", "import"]
    assert history[1].id == result.change.id and history[1].summary == result.summary
    assert [c.id for c in listed] == [c.id for c in history]
    # reading one change whole still works
    assert len(store.get_change(session.id, result.change.id).ops) == 2000 + 1999


def test_large_op_lists_are_stored_compressed_and_read_back(store: GraphStore, session: Session) -> None:
    ops = _import_ops(3000)
    result = store.apply(session.id, ops, "import")
    stored_ops, stored_inverse = _stored(store, result.change.id)
    assert isinstance(stored_ops, bytes) and stored_ops.startswith(ZLIB_MAGIC)
    change = store.get_change(session.id, result.change.id)
    plain = json.dumps(change.ops, separators=(",", ":"), ensure_ascii=False)
    assert len(stored_ops) < len(plain) / 4, (len(stored_ops), len(plain))
    assert change.ops == result.ops
    assert decode_ops(stored_inverse) == change.inverse_ops
    before = graph_rows(store, session.id)
    # the revert's inverse holds full copies of everything it removed: compressed too
    revert = store.revert(session.id, result.change.id, "user")
    assert store.counts(session.id) == {"objects": 0, "relations": 0}
    _, revert_inverse = _stored(store, revert.change.id)
    assert isinstance(revert_inverse, bytes) and revert_inverse.startswith(ZLIB_MAGIC)
    store.revert(session.id, revert.change.id, "user")  # redo from the compressed copies
    assert graph_rows(store, session.id) == before


def test_small_changes_stay_plain_json_and_old_text_rows_still_revert(store: GraphStore, session: Session) -> None:
    small = store.apply(session.id, [{"op": "add_object", "type": "T", "name": "a"}], "user")
    stored_ops, stored_inverse = _stored(store, small.change.id)
    assert isinstance(stored_ops, str) and len(stored_ops) < COMPRESS_OVER
    big = store.apply(session.id, _import_ops(1000), "import")
    # a database written by an older version holds every op list as plain JSON text
    with store.transaction() as conn:
        for column in ("ops", "inverse_ops"):
            value = conn.execute(f"SELECT {column} FROM changes WHERE id = ?", (big.change.id,)).fetchone()[0]
            conn.execute(f"UPDATE changes SET {column} = ? WHERE id = ?",
                         (json.dumps(decode_ops(value)), big.change.id))
    assert isinstance(_stored(store, big.change.id)[0], str)
    store.revert(session.id, big.change.id, "user")
    assert [o.name for o in store.all_objects(session.id)] == ["a"]


def _history(store: GraphStore, session_id: str, n: int) -> list[str]:
    return [store.apply(session_id, [{"op": "add_object", "type": "T", "name": f"o{i}"}], "user").change.id
            for i in range(n)]


def test_compaction_keeps_the_newest_and_drops_only_history(store: GraphStore, session: Session) -> None:
    other = store.create_session("other")
    ids = _history(store, session.id, 6)
    theirs = _history(store, other.id, 2)
    graph_before = graph_rows(store, session.id)
    assert store.history_compaction_preview(session.id, keep_last=2) == (4, 2)
    result = store.compact_history(session.id, keep_last=2)
    assert (result.dropped, result.kept) == (4, 2)
    assert "can no longer be reverted" in result.sentence()
    assert [c.id for c in store.list_changes(session.id, with_ops=False)] == ids[:1:-1][:2]
    assert graph_rows(store, session.id) == graph_before  # the graph is unchanged
    with pytest.raises(NotFound):
        store.revert(session.id, ids[0], "user")
    store.revert(session.id, ids[-1], "user")  # a kept change still reverts
    assert [c.id for c in store.list_changes(other.id, with_ops=False)] == theirs[::-1]  # other sessions untouched
    with store.connection_lock() as conn:
        orphans = conn.execute("SELECT count(*) FROM change_objects co WHERE NOT EXISTS "
                               "(SELECT 1 FROM changes c WHERE c.id = co.change_id)").fetchone()[0]
    assert orphans == 0
    # keeping more than there is drops nothing; keep_days keeps today's; 0 drops everything
    assert store.compact_history(session.id, keep_last=100).dropped == 0
    assert store.compact_history(session.id, keep_days=1).dropped == 0
    assert store.compact_history(session.id, keep_days=0).kept == 0
    with pytest.raises(StoreError):
        store.compact_history(session.id)
    with pytest.raises(StoreError):
        store.compact_history(session.id, keep_days=1, keep_last=1)


def _cks(home: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), *args],
                          capture_output=True, text=True, timeout=120, input=stdin, cwd=str(MAIN))


def test_cli_compact_asks_first_and_gives_the_space_back(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    with GraphStore.open(home / "cks.sqlite3") as store:
        session = store.create_session("big")
        big = store.apply(session.id, _import_ops(5000), "import")
        store.revert(session.id, big.change.id, "user")
        store.apply(session.id, [{"op": "add_object", "type": "T", "name": "kept"}], "user")
    refused = _cks(home, "sessions", "compact", session.id, "--keep-last", "1", stdin="")
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    assert "no longer be reverted" in refused.stderr and "--yes" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    with GraphStore.open(home / "cks.sqlite3") as store:
        assert len(store.list_changes(session.id, with_ops=False)) == 3  # nothing dropped
    done = _cks(home, "sessions", "compact", session.id, "--keep-last", "1", "--yes", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["dropped"], report["kept"]) == (2, 1)
    assert report["bytes_after"] < report["bytes_before"]
    with GraphStore.open(home / "cks.sqlite3") as store:
        assert [o.name for o in store.all_objects(session.id)] == ["kept"]
    bad = _cks(home, "sessions", "compact", session.id, "--keep-days", "-3", "--yes")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
