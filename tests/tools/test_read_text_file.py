"""read_text_file: only inside allowed folders, however the path is spelled."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cks_desktop.tools.approval import Decision
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller
from tests.tools.conftest import ScriptedApprover, call

pytestmark = pytest.mark.asyncio


@pytest.fixture
def tree(tmp_path: Path) -> dict[str, Path]:
    allowed = tmp_path / "allowed"
    (allowed / "sub").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (allowed / "notes.txt").write_text("hello from notes\n", encoding="utf-8")
    (allowed / "sub" / "deep.md").write_text("# deep\n", encoding="utf-8")
    (outside / "secret.txt").write_text("top secret\n", encoding="utf-8")
    (allowed / "escape").symlink_to(outside / "secret.txt")
    (allowed / "outdir").symlink_to(outside, target_is_directory=True)
    (allowed / "inner-link").symlink_to(allowed / "notes.txt")
    return {"allowed": allowed, "outside": outside}


@pytest.fixture
def file_run(session_id: str, tree: dict[str, Path]) -> Run:
    return Run(session_id, Caller.MODEL, approver=ScriptedApprover(default=Decision.ALLOW),
               allowed_folders=(tree["allowed"],))


async def test_reads_files_inside_the_allowed_folders(registry: ToolRegistry, file_run: Run,
                                                      tree: dict[str, Path]) -> None:
    absolute = await call(registry, file_run, "read_text_file", path=str(tree["allowed"] / "notes.txt"))
    assert not absolute.is_error, absolute.content
    assert absolute.content == "hello from notes\n"
    assert absolute.structured["truncated"] is False and absolute.structured["size"] == 17
    relative = await call(registry, file_run, "read_text_file", path="sub/deep.md")
    assert relative.content == "# deep\n"
    linked = await call(registry, file_run, "read_text_file", path="inner-link")
    assert linked.content == "hello from notes\n"
    dotted = await call(registry, file_run, "read_text_file", path="sub/../notes.txt")
    assert dotted.content == "hello from notes\n"


@pytest.mark.parametrize("spelling", [
    "../outside/secret.txt",
    "sub/../../outside/secret.txt",
    "escape",
    "outdir/secret.txt",
    "{outside}/secret.txt",
    "/etc/passwd",
])
async def test_escapes_are_refused(registry: ToolRegistry, file_run: Run, tree: dict[str, Path],
                                   spelling: str) -> None:
    path = spelling.format(outside=tree["outside"])
    res = await call(registry, file_run, "read_text_file", path=path)
    assert res.is_error and "outside the folders" in res.content
    assert str(tree["allowed"].resolve()) in res.content  # the sentence names the allowed folders
    assert "top secret" not in res.content


@pytest.mark.skipif(os.name == "nt", reason="POSIX behaviour")
@pytest.mark.parametrize("spelling", ["C:\\Users\\me\\notes.txt", "c:/temp/x.txt", "\\\\server\\share\\x.txt",
                                      "//server/share/x.txt"])
async def test_windows_paths_are_refused_on_posix(registry: ToolRegistry, file_run: Run, tree: dict[str, Path],
                                                  spelling: str) -> None:
    res = await call(registry, file_run, "read_text_file", path=spelling)
    assert res.is_error and "Windows path" in res.content and str(tree["allowed"].resolve()) in res.content


async def test_folders_binary_missing_and_nothing_allowed(registry: ToolRegistry, file_run: Run,
                                                          tree: dict[str, Path], session_id: str) -> None:
    (tree["allowed"] / "blob.bin").write_bytes(b"abc\x00def")
    res = await call(registry, file_run, "read_text_file", path="blob.bin")
    assert res.is_error and "binary" in res.content
    res = await call(registry, file_run, "read_text_file", path="sub")
    assert res.is_error and "folder" in res.content
    res = await call(registry, file_run, "read_text_file", path="missing.txt")
    assert res.is_error and "No file" in res.content
    closed = Run(session_id, Caller.MODEL, approver=ScriptedApprover(default=Decision.ALLOW))
    res = await call(registry, closed, "read_text_file", path=str(tree["allowed"] / "notes.txt"))
    assert res.is_error and "No folders are allowed" in res.content


async def test_cap_and_undecodable_bytes(registry: ToolRegistry, file_run: Run, tree: dict[str, Path]) -> None:
    (tree["allowed"] / "big.txt").write_bytes("é".encode() * 10 + b"\xff tail")
    res = await call(registry, file_run, "read_text_file", path="big.txt", max_bytes=5)
    assert res.content.startswith("éé") and "\ufffd" not in res.content.split("\n")[0]  # split char dropped
    assert "showing the first 5 of 26 bytes" in res.content and res.structured["truncated"]
    whole = await call(registry, file_run, "read_text_file", path="big.txt")
    assert whole.content == "é" * 10 + "\ufffd tail"


async def test_every_distinct_read_is_approved(registry: ToolRegistry, session_id: str,
                                               tree: dict[str, Path]) -> None:
    approver = ScriptedApprover(Decision.ALLOW, Decision.DENY)
    run = Run(session_id, Caller.MODEL, approver=approver, allowed_folders=(tree["allowed"],))
    assert not (await call(registry, run, "read_text_file", path="notes.txt")).is_error
    assert not (await call(registry, run, "read_text_file", path="notes.txt")).is_error
    denied = await call(registry, run, "read_text_file", path="sub/deep.md")
    assert denied.is_error and "declined" in denied.content
    assert [r.call.arguments["path"] for r in approver.requests] == ["notes.txt", "sub/deep.md"]
