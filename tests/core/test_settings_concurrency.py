"""Settings shared by several processes: no lost updates, no partial writes.

The races are real: parallel ``python -m cks_desktop mcp add`` processes, a
lock held by another real process, and a really full filesystem (a small
tmpfs mounted for the test when running as root).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from cks_desktop.settings import Settings, SettingsSaveError

ENV = {k: v for k, v in os.environ.items() if k != "CKS_DESKTOP_HOME"}


def cks(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(data_dir), *args],
                          capture_output=True, text=True, timeout=60, env=ENV)


def settings_file(data_dir: Path) -> Path:
    from cks_desktop.paths import resolve

    return resolve(data_dir).settings_file


# -- the merge ----------------------------------------------------------------------------------
def test_two_writers_each_keep_their_own_changes(tmp_path: Path) -> None:
    f = tmp_path / "settings.json"
    f.write_text(json.dumps({"mcpServers": {"old": {"command": "a"}}, "ui": {"enter_sends": True}}))
    window, terminal = Settings.load(f), Settings.load(f)
    terminal.mcp_servers["added"] = {"command": "b"}
    terminal.save()
    window.data["ui"]["geometry"] = "xyz"  # a stale view: it never saw "added"
    window.save()
    data = json.loads(f.read_text())
    assert set(data["mcpServers"]) == {"old", "added"} and data["ui"]["geometry"] == "xyz"
    assert set(window.mcp_servers) == {"old", "added"}  # the saver adopts the merged file


def test_deletes_and_policy_changes_merge_key_by_key(tmp_path: Path) -> None:
    f = tmp_path / "settings.json"
    f.write_text(json.dumps({"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}},
                             "agent": {"tool_policies": {"x": "auto"}}}))
    one, two = Settings.load(f), Settings.load(f)
    one.mcp_servers.pop("a")
    one.set_tool_policy("y", "once")
    one.save()
    two.set_tool_policy("x", None)
    two.mcp_servers["b"] = {"command": "b2"}
    two.save()
    data = json.loads(f.read_text())
    assert data["mcpServers"] == {"b": {"command": "b2"}}
    assert data["agent"]["tool_policies"] == {"y": "once"}


def test_a_server_entry_is_replaced_whole_not_mixed(tmp_path: Path) -> None:
    f = tmp_path / "settings.json"
    f.write_text(json.dumps({"mcpServers": {"s": {"command": "a", "env": {"K": "1"}}}}))
    one, two = Settings.load(f), Settings.load(f)
    one.mcp_servers["s"] = {"command": "a", "env": {"K": "2"}}
    one.save()
    two.mcp_servers["s"] = {"url": "http://127.0.0.1:1/mcp"}
    two.save()
    assert json.loads(f.read_text())["mcpServers"]["s"] == {"url": "http://127.0.0.1:1/mcp"}


def test_reload_keeps_unsaved_changes_and_held_references(tmp_path: Path) -> None:
    f = tmp_path / "settings.json"
    window = Settings.load(f)
    servers = window.mcp_servers  # callers hold sections of data across saves
    window.data["ui"]["enter_sends"] = False  # not saved yet
    other = Settings.load(f)
    other.mcp_servers["from-terminal"] = {"command": "x"}
    other.save()
    assert window.reload() == {"mcpServers"}
    assert "from-terminal" in servers and window.data["ui"]["enter_sends"] is False
    assert window.reload() == set()  # nothing new
    window.save()
    data = json.loads(f.read_text())
    assert data["ui"]["enter_sends"] is False and "from-terminal" in data["mcpServers"]
    assert servers is window.mcp_servers


def test_listeners_hear_what_a_save_or_reload_brought_in(tmp_path: Path) -> None:
    f = tmp_path / "settings.json"
    window, terminal = Settings.load(f), Settings.load(f)
    heard: list[set[str]] = []
    window.subscribe(heard.append)
    window.data["ui"]["geometry"] = "g"
    window.save()
    assert heard == []  # only its own change: nothing came from elsewhere
    terminal.mcp_servers["t1"] = {"command": "x"}
    terminal.save()
    window.data["ui"]["geometry"] = "h"
    window.save()  # the merge brought "t1" in
    assert heard == [{"mcpServers"}]
    terminal.max_iterations = 3
    terminal.save()
    assert window.reload() == {"agent"} and heard[-1] == {"agent"}


def test_true_and_one_are_different_values(tmp_path: Path) -> None:
    f = tmp_path / "settings.json"
    f.write_text(json.dumps({"ui": {"flag": 1}}))
    s = Settings.load(f)
    s.data["ui"]["flag"] = True
    s.save()
    assert json.loads(f.read_text())["ui"]["flag"] is True


def test_a_file_broken_after_load_is_kept_aside_not_overwritten(tmp_path: Path) -> None:
    f = tmp_path / "settings.json"
    f.write_text(json.dumps({"mcpServers": {"a": {"command": "a"}}}))
    s = Settings.load(f)
    f.write_bytes(b'{"half')
    s.max_iterations = 3
    s.save()
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("settings.json.broken-")]
    assert len(aside) == 1 and aside[0].read_bytes() == b'{"half'
    data = json.loads(f.read_text())
    assert data["agent"]["max_iterations"] == 3 and "a" in data["mcpServers"]


# -- the lock -----------------------------------------------------------------------------------
HOLDER = """
import sys
from pathlib import Path
from cks_desktop.filelock import file_lock
with file_lock(Path(sys.argv[1])):
    print("locked", flush=True)
    sys.stdin.readline()
"""


def test_a_lock_held_by_another_process_times_out_with_a_sentence(tmp_path: Path) -> None:
    f = tmp_path / "settings.json"
    s = Settings.load(f)
    s.save()
    before = f.read_bytes()
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(s.lock_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env=ENV)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        s.max_iterations = 4
        with pytest.raises(SettingsSaveError) as caught:
            s.save(timeout=0.3)
        assert "locked for more than 0.3 seconds" in str(caught.value) and "\n" not in str(caught.value)
        assert f.read_bytes() == before
    finally:
        holder.communicate("\n", timeout=30)
    s.save()  # free again
    assert json.loads(f.read_text())["agent"]["max_iterations"] == 4


@pytest.mark.slow
def test_parallel_cli_adds_lose_nothing(tmp_path: Path) -> None:
    """Two real `mcp add` loops at once (10 processes each, overlapping): all 20 servers are kept."""
    data_dir = tmp_path / "d"
    failures: list[str] = []

    def loop(prefix: str) -> None:
        for i in range(10):
            proc = cks(data_dir, "mcp", "add", f"{prefix}{i}", "--disabled", "--", "python", "server.py")
            if proc.returncode != 0:
                failures.append(proc.stderr)

    threads = [threading.Thread(target=loop, args=(p,)) for p in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=240)
    assert not failures, failures
    servers = json.loads(settings_file(data_dir).read_text())["mcpServers"]
    assert sorted(servers) == sorted([f"a{i}" for i in range(10)] + [f"b{i}" for i in range(10)])


# -- a really full disk (item 14) -----------------------------------------------------------------
@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    """A 512 KiB tmpfs, filled to the last byte after ``prepare`` files are written (root only)."""
    if sys.platform != "linux" or os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a small tmpfs needs root on Linux")
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    proc = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", str(mount_point)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        pytest.skip(f"mounting a tmpfs is not permitted here: {proc.stderr.strip()}")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", str(mount_point)], capture_output=True)
        if os.path.ismount(mount_point):
            subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


def fill(folder: Path) -> None:
    """Write until the filesystem says ENOSPC (whole pages first, then single bytes)."""
    with open(folder / "filler", "wb", buffering=0) as fh:
        for size in (65536, 4096, 1):
            try:
                while True:
                    fh.write(b"\0" * size)
            except OSError as exc:
                assert exc.errno == 28, exc


def test_full_disk_cli_add_says_so_and_keeps_the_file(full_disk: Path) -> None:
    data_dir = full_disk / "d"
    assert cks(data_dir, "mcp", "add", "first", "--disabled", "--", "python", "a.py").returncode == 0
    f = settings_file(data_dir)
    before = f.read_bytes()
    fill(full_disk)
    proc = cks(data_dir, "mcp", "add", "second", "--disabled", "--", "python", "b.py")
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = [line for line in proc.stderr.strip().splitlines() if line]
    assert len(lines) == 1 and "the disk is full" in lines[0].lower(), proc.stderr
    assert f.read_bytes() == before
    assert not [p for p in f.parent.iterdir() if p.name.endswith(".tmp")]  # no partial temp file left


def test_full_disk_save_keeps_the_old_settings(full_disk: Path) -> None:
    f = full_disk / "settings.json"
    s = Settings.load(f)
    s.mcp_servers["kept"] = {"command": "x"}
    s.save()
    before = f.read_bytes()
    fill(full_disk)
    s.mcp_servers["lost"] = {"command": "y" * 10000}
    with pytest.raises(SettingsSaveError, match="(?i)the disk is full"):
        s.save()
    assert f.read_bytes() == before
    assert "lost" in s.mcp_servers  # the unsaved change is still in memory, to retry after freeing space
    (full_disk / "filler").unlink()
    s.save()
    assert set(json.loads(f.read_text())["mcpServers"]) == {"kept", "lost"}
