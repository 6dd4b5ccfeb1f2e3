"""``read_text_file`` cannot leave the folders the person allowed, however the
path is spelled: ``..``, symlinked files and parent folders, absolute paths,
``~``, Windows drive, ``\\\\?\\`` and UNC forms, ``file://`` URLs, NUL bytes,
a sibling folder sharing the allowed folder's prefix, look-alike dots. It never
raises, never blocks on a FIFO, and its refusals do not reveal whether a file
outside exists."""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from pathlib import Path

import pytest

from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.builtin import build_registry
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller, ToolCall, ToolResult

SECRET = "ZZOUTSIDEZZ"


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    allowed = tmp_path / "allowed"
    (allowed / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    sibling = tmp_path / "allowed-evil"
    sibling.mkdir()
    (allowed / "notes.txt").write_text("hello\n")
    (outside / "secret.txt").write_text(f"{SECRET}\n")
    (sibling / "secret.txt").write_text(f"{SECRET}\n")
    (allowed / "escape.txt").symlink_to(outside / "secret.txt")
    (allowed / "outdir").symlink_to(outside, target_is_directory=True)
    (allowed / "sub" / "up").symlink_to(tmp_path, target_is_directory=True)
    (allowed / "inner").symlink_to(allowed / "notes.txt")
    (allowed / "dangling").symlink_to(outside / "nothing-here.txt")
    os.mkfifo(allowed / "pipe")
    linked_root = tmp_path / "linked-allowed"
    linked_root.symlink_to(allowed, target_is_directory=True)
    return {"root": tmp_path, "allowed": allowed, "outside": outside, "sibling": sibling, "linked": linked_root}


@functools.cache
def registry() -> ToolRegistry:
    return build_registry(None)  # type: ignore[arg-type]


def read(tree: dict[str, Path], path: str, folder: str = "allowed") -> ToolResult:
    run = Run(session_id="s", caller=Caller.MODEL, approver=StaticApprover(Decision.ALLOW),
              allowed_folders=(tree[folder],))

    async def go() -> ToolResult:
        return await asyncio.wait_for(registry().invoke(ToolCall("r", "read_text_file", {"path": path}), run), 10)

    return asyncio.run(go())


ESCAPES = [
    "../outside/secret.txt", "sub/../../outside/secret.txt", "./../outside/secret.txt",
    "{outside}/secret.txt", "{allowed}/../outside/secret.txt", "{allowed}/sub/../../outside/secret.txt",
    "escape.txt", "outdir/secret.txt", "sub/up/outside/secret.txt", "{allowed}/outdir/secret.txt",
    "{sibling}/secret.txt", "../allowed-evil/secret.txt", "dangling",
    "~/secret.txt", "/proc/self/root{outside}/secret.txt", "//{outside}/secret.txt",
    "C:\\Windows\\win.ini", "C:/Windows/win.ini", "c:secret.txt", "\\\\?\\C:\\secret.txt",
    "\\\\server\\share\\secret.txt", "//server/share/secret.txt", "\\\\.\\pipe\\x",
    "file://{outside}/secret.txt", "file:///etc/passwd", "file:../outside/secret.txt",
    "notes.txt\x00../../outside/secret.txt", "\x00", "{outside}/secret.txt\x00",
    "\uff0e\uff0e/outside/secret.txt", "..\u2215outside\u2215secret.txt", "%2e%2e/outside/secret.txt",
    "..\\outside\\secret.txt", "pipe", "sub", "/", "a" * 4096,
]


@pytest.mark.parametrize("spelling", ESCAPES)
def test_no_spelling_escapes(tree: dict[str, Path], spelling: str, monkeypatch: pytest.MonkeyPatch,
                             caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("HOME", str(tree["outside"]))
    path = spelling.format(**{k: str(v) for k, v in tree.items()})
    with caplog.at_level(logging.ERROR):
        res = read(tree, path)
    assert res.is_error, f"{path!r} was read: {res.content[:200]}"
    assert SECRET not in res.content
    assert "Traceback" not in res.content and "Error:" not in res.content, res.content  # one sentence
    assert not caplog.records, f"{path!r} logged an internal failure: {caplog.records[0].getMessage()}"


def test_inside_still_reads(tree: dict[str, Path]) -> None:
    for path in ("notes.txt", "inner", "sub/../notes.txt", str(tree["allowed"] / "notes.txt"),
                 str(tree["linked"] / "notes.txt")):
        res = read(tree, path)
        assert not res.is_error and res.content == "hello\n", (path, res.content)
    # The allowed folder given through a symlink works as the folder itself.
    res = read(tree, str(tree["allowed"] / "notes.txt"), folder="linked")
    assert not res.is_error, res.content


def test_refusals_do_not_reveal_what_exists_outside(tree: dict[str, Path]) -> None:
    there = read(tree, str(tree["outside"] / "secret.txt")).content
    missing = read(tree, str(tree["outside"] / "absent.txt")).content
    assert there.replace("secret.txt", "X") == missing.replace("absent.txt", "X")
