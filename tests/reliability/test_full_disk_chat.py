"""A chat on a really full disk (a 2 MB tmpfs mounted by the test, filled to the last byte).

The real `cks-desktop chat` in a subprocess against the OpenAI-compatible fake: the answer is
shown, one sentence says the disk is full and what was not saved, no traceback, the session is
whole, and once space is free the next turn is saved as usual."""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cks_desktop.graph.store import GraphStore
from tests.agent.test_chat_cli import chat
from tests.fakes.providers import make_fake
from tests.fakes.script import text_turn


SIZE = "24m"  # the data dir of a chat (its database, the daily backup, logs) with room to spare


def fill_up(disk: Path) -> None:
    """Write (unbuffered) until the file system says ENOSPC: then it is really full."""
    with open(disk / "filler", "wb", buffering=0) as f:
        try:
            while True:
                f.write(b"\0" * 65536)
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    with pytest.raises(OSError):  # not even one more byte
        with open(disk / "filler2", "wb", buffering=0) as f:
            f.write(b"x" * 4096)
            os.fsync(f.fileno())


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A freshly mounted small tmpfs, unmounted afterwards (as tests/reliability/test_full_disk.py)."""
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


def test_a_chat_on_a_full_disk_shows_the_answer_and_says_what_was_not_saved(small_disk: Path) -> None:
    home = small_disk / "home"
    home.mkdir()
    with GraphStore.open(home / "cks.sqlite3") as store:
        session = store.create_session("full")
        store.apply(session.id, [{"op": "add_object", "type": "Person", "name": "Bob"}], "user")
    # a first turn on free space: the transcript and its tables exist
    with make_fake("openai") as fake:
        fake.queue(text_turn("Hi, ", "first answer."))
        first = chat(home, fake, session.id, "Hello")
    assert first.returncode == 0, first.stderr
    fill_up(small_disk)

    with make_fake("openai") as fake:
        fake.queue(text_turn("Bob is ", "in the graph."))
        proc = chat(home, fake, session.id, "Who is here?")
    assert "Traceback" not in proc.stderr and "Traceback" not in proc.stdout, proc.stderr
    assert proc.returncode == 0 and "Bob is in the graph." in proc.stdout, (proc.stdout, proc.stderr)
    # the database opens read-only on a full disk and says so; then one sentence for the turn
    lines = [line for line in proc.stderr.strip().splitlines() if line and "open read-only" not in line]
    assert len(lines) == 1, proc.stderr
    assert "The disk is full" in lines[0] and "could not be saved" in lines[0], lines[0]

    (small_disk / "filler").unlink()
    with GraphStore.open(home / "cks.sqlite3") as store:
        assert [o.name for o in store.all_objects(session.id)] == ["Bob"]
    with make_fake("openai") as fake:
        fake.queue(text_turn("Space again."))
        again = chat(home, fake, session.id, "And now?")
    assert again.returncode == 0 and again.stderr == "", again.stderr
    assert "Space again." in again.stdout
