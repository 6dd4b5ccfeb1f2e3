"""A really full disk: a 2 MB tmpfs mounted for the test and
filled to the last byte — not a simulation. Reads and export keep working, every
failing write says "the disk is full" (never "disk error"), no traceback.

Needs root and permission to mount (a CI container usually has both); otherwise
the tests are skipped with the reason."""

from __future__ import annotations

import errno
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cks_desktop.diskfull import disk_full_sentence, is_disk_full
from cks_desktop.graph.errors import DatabaseError
from cks_desktop.graph.store import GraphStore

ENV = {k: v for k, v in os.environ.items() if k != "CKS_DESKTOP_HOME"}
SIZE = "2m"


def cks(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), *args],
                          capture_output=True, text=True, timeout=60, env=ENV)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A freshly mounted 2 MB tmpfs, unmounted afterwards."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    if shutil.which("mount") is None:
        pytest.skip("no mount command")
    mount_point = tmp_path / f"disk-{uuid.uuid4().hex[:8]}"
    mount_point.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={SIZE}", "tmpfs", str(mount_point)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {done.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


def fill_up(disk: Path) -> None:
    """Write until the file system says ENOSPC (then it is really full)."""
    with open(disk / "filler", "wb") as f:
        try:
            while True:
                f.write(b"\0" * 65536)
                f.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    with pytest.raises(OSError):  # not even one more byte
        with open(disk / "filler2", "wb") as f:
            f.write(b"x" * 4096)
            f.flush()
            os.fsync(f.fileno())


def make_graph(home: Path) -> str:
    store = GraphStore.open(home / "cks.sqlite3")
    try:
        sid = store.create_session("full").id
        store.apply(sid, [{"op": "add_object", "type": "Note", "name": f"n{i}", "properties": {"text": "w" * 50}}
                          for i in range(200)]
                    + [{"op": "add_relation", "source": "n0", "target": "n1", "type": "next"}], "test")
        return sid
    finally:
        store.close()


def no_traceback(proc: subprocess.CompletedProcess[str]) -> None:
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr


def test_reads_and_export_work_on_a_full_disk_and_writes_say_the_disk_is_full(small_disk: Path) -> None:
    home = small_disk / "home"
    home.mkdir()
    sid = make_graph(home)
    fill_up(small_disk)

    listing = cks(home, "sessions", "list", "--json")
    no_traceback(listing)
    assert listing.returncode == 0, listing.stderr
    assert json.loads(listing.stdout)["sessions"][0]["objects"] == 200
    assert "disk error" not in listing.stderr

    shown = cks(home, "sessions", "show", sid, "--json")
    assert shown.returncode == 0 and json.loads(shown.stdout)["counts"]["relations"] == 1, shown.stderr

    exported = cks(home, "sessions", "export", sid, "--format", "json")
    no_traceback(exported)
    assert exported.returncode == 0, exported.stderr
    assert len(json.loads(exported.stdout)["objects"]) == 200

    search = cks(home, "tools", "call", "search_objects", "--session", sid, "--args", '{"query": "n7"}', "--json")
    no_traceback(search)
    assert search.returncode == 0, search.stderr

    for write in (("sessions", "create", "more"),
                  ("sessions", "export", sid, "--format", "json", "-o", str(small_disk / "out.json")),
                  ("storage", "export", str(small_disk / "salvage")),
                  ("storage", "backup")):
        proc = cks(home, *write)
        no_traceback(proc)
        assert proc.returncode != 0, (write, proc.stdout)
        line = proc.stderr.strip().splitlines()[-1]
        assert "The disk is full" in line and "disk error" not in line, (write, proc.stderr)

    (small_disk / "filler").unlink()  # space again: everything is writable and whole
    assert cks(home, "sessions", "create", "after").returncode == 0
    assert cks(home, "storage", "check").returncode == 0


def test_a_disk_that_fills_while_the_store_is_open(small_disk: Path) -> None:
    home = small_disk / "home"
    home.mkdir()
    sid = make_graph(home)
    store = GraphStore.open(home / "cks.sqlite3")
    try:
        fill_up(small_disk)
        with pytest.raises(DatabaseError) as info:
            store.apply(sid, [{"op": "add_object", "type": "Note", "name": f"big{i}", "properties": {"t": "z" * 3000}}
                              for i in range(300)], "test")
        assert str(info.value).startswith("The disk is full: the database "), info.value
        assert store.counts(sid) == {"objects": 200, "relations": 1}
        assert len(json.loads(store.export(sid, "json"))["objects"]) == 200
        assert store.search_objects(sid, "n7")
    finally:
        store.close()
    (small_disk / "filler").unlink()
    reopened = GraphStore.open(home / "cks.sqlite3")
    try:
        assert reopened.damage is None and reopened.counts(sid)["objects"] == 200
    finally:
        reopened.close()


def test_the_shared_disk_full_helper_knows_every_disguise(small_disk: Path) -> None:
    fill_up(small_disk)
    try:
        (small_disk / "more").write_bytes(b"x" * 100_000)
    except OSError as exc:
        assert is_disk_full(exc, small_disk)
    io_error = OSError(errno.EIO, "Input/output error")
    assert is_disk_full(io_error, small_disk)  # an I/O error where no space is left
    assert not is_disk_full(io_error, Path(__file__))  # the same error elsewhere is not
    assert disk_full_sentence(small_disk / "x").startswith("The disk is full: ")
