"""A damaged database file: checked at open and after an error,
never written to, and the way out works — read-only reads, `storage export`,
`storage restore` from the automatic (rotated, backup-API) backup.

Real files damaged with real bytes, the real CLI in a subprocess."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cks_desktop.graph import backup
from cks_desktop.graph.errors import DamagedDatabase
from cks_desktop.graph.store import GraphStore

ENV = {k: v for k, v in os.environ.items() if k != "CKS_DESKTOP_HOME"}


def cks(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), *args],
                          capture_output=True, text=True, timeout=60, env=ENV)


def fill(db: Path, objects: int = 3000) -> str:
    """A database with one session of ``objects`` objects (closed: the WAL is checkpointed away)."""
    store = GraphStore.open(db)
    try:
        sid = store.create_session("notes").id
        store.apply(sid, [{"op": "add_object", "type": "Note", "name": f"n{i}", "properties": {"text": "x" * 300}}
                          for i in range(objects)], "test")
        return sid
    finally:
        store.close()


def damage_table(db: Path, table: str = "objects") -> None:
    """Overwrite the b-tree root page of ``table`` with random bytes."""
    conn = sqlite3.connect(db)
    try:
        root = conn.execute("SELECT rootpage FROM sqlite_master WHERE name = ?", (table,)).fetchone()[0]
        size = conn.execute("PRAGMA page_size").fetchone()[0]
    finally:
        conn.close()
    with open(db, "r+b") as f:
        f.seek((root - 1) * size)
        f.write(os.urandom(size))


def damage_middle(db: Path) -> None:
    """Random bytes in the middle of the file: the finding's own recipe."""
    size = db.stat().st_size
    with open(db, "r+b") as f:
        f.seek(size // 2)
        f.write(os.urandom(8192))


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def last_line(proc: subprocess.CompletedProcess[str], code: int) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    return proc.stderr.strip().splitlines()[-1]


def test_a_damaged_file_is_read_only_says_so_and_offers_the_way_out(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    db = home / "cks.sqlite3"
    sid = fill(db)
    damage_middle(db)
    before = digest(db)

    listing = cks(home, "sessions", "list", "--json")  # reads go on, with a warning
    assert listing.returncode == 0, listing.stderr
    assert json.loads(listing.stdout)["sessions"][0]["id"] == sid
    assert "is damaged and is open read-only" in listing.stderr and "Traceback" not in listing.stderr

    for write in (("sessions", "create", "another"), ("sessions", "rename", sid, "x"),
                  ("tools", "call", "add_object", "--session", sid, "--args", '{"type": "T", "name": "y"}')):
        proc = cks(home, *write)
        assert proc.returncode != 0, proc
        text = proc.stderr + proc.stdout
        assert "is damaged" in text and "nothing is written to it" in text, text
        assert "storage export" in text and "storage restore" in text and "Traceback" not in text
    assert digest(db) == before  # not one byte written

    check = cks(home, "storage", "check")
    assert check.returncode == 1 and "is damaged" in check.stdout, check

    out = tmp_path / "salvage"
    exported = cks(home, "storage", "export", str(out), "--json")
    assert "Traceback" not in exported.stderr
    result = json.loads(exported.stdout)
    assert [row["session_id"] for row in result["written"] + result["failed"]] == [sid]
    for row in result["written"]:
        assert json.loads(Path(row["file"]).read_text())["format"] == "cks-graph"
    assert digest(db) == before


def test_restore_puts_the_newest_sound_backup_back_and_keeps_the_damaged_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    db = home / "cks.sqlite3"
    sid = fill(db, 200)
    made = cks(home, "storage", "backup", "--json")
    assert made.returncode == 0, made.stderr
    assert Path(json.loads(made.stdout)["path"]).is_file()
    damage_table(db)
    damaged = digest(db)

    assert last_line(cks(home, "storage", "backup"), 1).endswith(
        "so it was not backed up and the existing backups were kept.")  # a broken file never rotates a good one out
    assert len(backup.list_backups(db)) == 1

    restored = cks(home, "storage", "restore", "--json")
    assert restored.returncode == 0, restored.stderr
    kept = Path(json.loads(restored.stdout)["previous_file"])
    assert digest(kept) == damaged  # the damaged file was moved aside, not deleted
    assert cks(home, "storage", "check").returncode == 0
    shown = cks(home, "sessions", "show", sid, "--json")
    assert json.loads(shown.stdout)["counts"]["objects"] == 200 and shown.stderr == ""
    assert cks(home, "sessions", "create", "writable again").returncode == 0


def test_restore_refuses_while_another_program_has_the_database_open(tmp_path: Path) -> None:
    db = tmp_path / "cks.sqlite3"
    fill(db, 10)
    backup.make_backup(db)
    holder = subprocess.Popen([sys.executable, "-c", "import sys; from cks_desktop.graph.store import GraphStore; "
                               f"s = GraphStore.open({str(db)!r}); s.list_sessions(); print('open', flush=True); "
                               "sys.stdin.read()"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=ENV)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
        with pytest.raises(backup.BackupError, match="in use by another program"):
            backup.restore(db)
    finally:
        holder.communicate(timeout=30)  # closes its stdin (it exits) and our pipes
    backup.restore(db)


def test_backups_rotate_and_only_the_newest_two_are_kept(tmp_path: Path) -> None:
    db = tmp_path / "cks.sqlite3"
    fill(db, 5)
    assert backup.backup_due(db)
    made = [backup.make_backup(db) for _ in range(3)]
    kept = backup.list_backups(db)
    assert [b.path for b in kept] == [made[2].path, made[1].path]
    assert not backup.backup_due(db)
    assert not list(backup.backup_dir(db).glob("*.partial"))
    conn = sqlite3.connect(kept[0].path)  # a self-contained, sound copy
    try:
        assert conn.execute("PRAGMA quick_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "delete"
        assert conn.execute("SELECT count(*) FROM objects").fetchone()[0] == 5
    finally:
        conn.close()


def test_damage_found_while_running_turns_the_store_read_only(tmp_path: Path) -> None:
    """After the open-time check passed, a read that meets a broken page marks the store
    damaged: from then on every write is refused (the check runs again after errors)."""
    db = tmp_path / "cks.sqlite3"
    sid = fill(db, 2000)
    store = GraphStore.open(db)
    try:
        assert store.damage is None and store.read_only_reason is None
        with store.connection_lock() as conn:
            conn.execute("PRAGMA cache_size = 0")  # so the next read goes to the file
        damage_table(db)
        with pytest.raises(DamagedDatabase):
            store.all_objects(sid)
        assert store.damage
        before = digest(db)
        with pytest.raises(DamagedDatabase, match="nothing is written to it"):
            store.create_session("x")
        with pytest.raises(DamagedDatabase):
            store.apply(sid, [{"op": "add_object", "type": "T", "name": "y"}], "t")
        with pytest.raises(DamagedDatabase):  # other modules' writes go through transaction()
            with store.transaction() as conn:
                conn.execute("UPDATE sessions SET title = 'z'")
        assert digest(db) == before
    finally:
        store.close()


def test_a_file_missing_a_table_opens_read_only_with_the_same_way_out(tmp_path: Path) -> None:
    db = tmp_path / "cks.sqlite3"
    fill(db, 3)
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE relations")
    conn.commit()
    conn.close()
    store = GraphStore.open(db)
    try:
        assert store.damage and store.damage.startswith("missing table relations, index relations_by_")
        with pytest.raises(DamagedDatabase, match="missing table relations"):
            store.create_session("x")
    finally:
        store.close()


def test_the_open_check_is_bounded_in_time(tmp_path: Path) -> None:
    db = tmp_path / "cks.sqlite3"
    fill(db, 3000)
    unbounded = GraphStore.open(db, check_budget=None)
    assert unbounded.integrity_checked
    unbounded.close()
    tiny = GraphStore.open(db, check_budget=0.0)  # a file too big for the budget: the check stops, open goes on
    try:
        assert not tiny.integrity_checked and tiny.damage is None and tiny.read_only_reason is None
        tiny.create_session("still writable")
    finally:
        tiny.close()


def fts_integrity(db: Path) -> str:
    conn = sqlite3.connect(db)
    try:
        conn.execute("INSERT INTO objects_fts(objects_fts) VALUES('integrity-check')")
        return "ok"
    except sqlite3.DatabaseError as exc:
        return str(exc)
    finally:
        conn.close()


def test_a_damaged_full_text_index_is_found_and_rebuilt_from_the_objects(tmp_path: Path) -> None:
    """Garbage in the full-text index's pages (blobs in ``objects_fts_data``) and in its own copy
    of the text: SQLite's checks pass, FTS5's fails. Opening rebuilds the index from the objects:
    searches find the right objects again and writes go on into a sound index."""
    db = tmp_path / "cks.sqlite3"
    store = GraphStore.open(db)
    try:
        sid = store.create_session("notes").id
        store.apply(sid, [{"op": "add_object", "type": "Note", "name": f"n{i}",
                           "properties": {"text": f"topic{i % 50} " * 40}} for i in range(3000)], "test")
        found_before = sorted(o.name for o, _ in store.search_objects(sid, "topic7", limit=1000))
    finally:
        store.close()
    assert len(found_before) == 60
    conn = sqlite3.connect(db)
    try:  # keep the record sizes and the b-trees sound: only the bytes inside the index change
        conn.execute("UPDATE objects_fts_data SET block = substr(block, 1, 4) || randomblob(length(block) - 4) "
                     "WHERE id > 10 AND id % 3 = 0")
        conn.execute("UPDATE objects_fts_content SET c0 = 'wrong', c1 = 'topic7' WHERE rowid % 7 = 0")
        conn.commit()
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        conn.close()
    assert "malformed" in fts_integrity(db)
    store = GraphStore.open(db)
    try:
        assert store.damage is None and store.read_only_reason is None and store.integrity_checked
        assert sorted(o.name for o, _ in store.search_objects(sid, "topic7", limit=1000)) == found_before
        store.apply(sid, [{"op": "add_object", "type": "Note", "name": "late", "properties": {"text": "topic7"}}],
                    "test")
        assert "late" in {o.name for o, _ in store.search_objects(sid, "topic7", limit=1000)}
    finally:
        store.close()
    assert fts_integrity(db) == "ok"


def test_a_full_text_index_that_cannot_be_rebuilt_leaves_the_file_read_only(tmp_path: Path) -> None:
    """The index's structure record overwritten: FTS5 cannot even open the table, so it cannot be
    dropped and rebuilt. The file is then damaged like any other: read-only, one sentence."""
    db = tmp_path / "cks.sqlite3"
    sid = fill(db, 500)
    conn = sqlite3.connect(db)
    try:
        conn.execute("UPDATE objects_fts_data SET block = randomblob(length(block)) WHERE id = 10")
        conn.commit()
    finally:
        conn.close()
    before = digest(db)
    store = GraphStore.open(db)
    try:
        assert store.damage and "full-text index objects_fts" in store.damage
        assert len(store.all_objects(sid)) == 500  # reads go on
        with pytest.raises(DamagedDatabase, match="nothing is written to it"):
            store.apply(sid, [{"op": "add_object", "type": "T", "name": "y"}], "t")
    finally:
        store.close()
    assert digest(db) == before


def test_the_full_text_check_never_waits_for_another_writer(tmp_path: Path) -> None:
    """FTS5's check is an INSERT and needs the write lock; while another program writes, opening
    skips it (unfinished) instead of waiting out the busy timeout, and reads go on."""
    db = tmp_path / "cks.sqlite3"
    sid = fill(db, 200)
    other = sqlite3.connect(db, isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("UPDATE sessions SET title = 'busy'")
        started = time.monotonic()
        store = GraphStore.open(db, busy_timeout=5)
        try:
            assert time.monotonic() - started < 1.5
            assert store.damage is None and not store.integrity_checked
            assert len(store.all_objects(sid)) == 200
        finally:
            store.close()
    finally:
        other.execute("ROLLBACK")
        other.close()
