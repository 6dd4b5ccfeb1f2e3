"""``read_text_file``: read a text file, but only inside folders the person allowed.

Containment is checked on real paths (``os.path.realpath`` on both the file
and each allowed folder), so ``..`` segments and symlinks that lead outside
are refused however they are spelled. A relative path is looked up in each
allowed folder in order. Windows drive (``C:\\``) and UNC (``\\\\server``)
paths are refused on POSIX with a sentence saying why, rather than being read
as odd relative file names. Policy ``always``: every distinct path is confirmed.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import re
import stat
from pathlib import Path
from typing import Any

from cks_desktop.tools.builtin import schemas as S
from cks_desktop.tools.context import ToolContext
from cks_desktop.tools.types import Policy, Scope, ToolError, ToolOutput, ToolSpec

DEFAULT_MAX_BYTES = 200_000
MAX_MAX_BYTES = 5_000_000
_WINDOWS_FORM = re.compile(r"^(?:[A-Za-z]:(?:[\\/]|$)|\\\\|//[^/])")


def _folders_text(folders: list[str]) -> str:
    return ", ".join(folders) if folders else "(none)"


def is_windows_form(path: str) -> bool:
    return bool(_WINDOWS_FORM.match(path))


def within(path: str, folder: str) -> bool:
    try:
        return os.path.commonpath([path, folder]) == folder
    except ValueError:  # different drives on Windows
        return False


def locate(raw: str, allowed: list[Path]) -> tuple[str, list[str]]:
    """The real path of ``raw`` if it lies inside an allowed folder; else ToolError."""
    folders = [os.path.realpath(os.path.expanduser(str(f))) for f in allowed]
    shown = _folders_text(folders)
    if not folders:
        raise ToolError("No folders are allowed for reading files; the person can add one in Settings → "
                        "Agent → Allowed folders.")
    if "\x00" in raw:
        raise ToolError(f"{raw!r} contains a NUL character, which no file name can hold.")
    if os.name != "nt" and is_windows_form(raw):
        raise ToolError(f"{raw!r} is a Windows path, but this computer uses paths like "
                        f"{folders[0]}/notes.txt. Allowed folders: {shown}.")
    expanded = os.path.expanduser(raw)
    candidates = [expanded] if os.path.isabs(expanded) else [os.path.join(f, expanded) for f in folders]
    inside = []
    for cand in candidates:
        real = os.path.realpath(cand)
        if any(within(real, f) for f in folders):
            inside.append(real)
            if os.path.exists(real):
                return real, folders
    if not inside:
        raise ToolError(f"{raw!r} is outside the folders this app may read ({shown}); links and '..' are "
                        "followed before checking.")
    raise ToolError(f"No file {raw!r} in the allowed folders ({shown}).")


def read_capped(real: str, max_bytes: int) -> tuple[str, int, int, bool]:
    """(text, bytes shown, file size, truncated). Blocking: run it on a thread."""
    if os.path.isdir(real):
        raise ToolError(f"{real} is a folder, not a file.")
    # O_NONBLOCK: opening a FIFO (or a device) would otherwise wait forever for a writer.
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        raise ToolError(f"Cannot open {real}: {exc.strerror or exc}.") from None
    with os.fdopen(fd, "rb") as fh:
        info = os.fstat(fh.fileno())
        if not stat.S_ISREG(info.st_mode):
            raise ToolError(f"{real} is not a regular file (a pipe, socket or device); only text files can be read.")
        size = info.st_size
        data = fh.read(max_bytes + 1)
    truncated = len(data) > max_bytes
    data = data[:max_bytes]
    if b"\x00" in data:
        raise ToolError(f"{real} looks like a binary file (it contains NUL bytes); only text files can be read.")
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    # Not final when cut short: a character split by the cap is dropped, not shown as U+FFFD.
    text = decoder.decode(data, final=not truncated)
    return text, len(data), size, truncated


async def read_text_file(args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
    max_bytes = args.get("max_bytes", DEFAULT_MAX_BYTES)
    real, _ = locate(args["path"], list(ctx.run.allowed_folders))
    text, shown, size, truncated = await asyncio.to_thread(read_capped, real, max_bytes)
    if truncated:
        text += (f"\n\n[read_text_file: showing the first {shown:,} of {size:,} bytes; call again with a larger "
                 "max_bytes to read more]")
    return ToolOutput(content=text, structured={"path": real, "size": size, "bytes_read": shown,
                                                "truncated": truncated})


def file_tools() -> list[ToolSpec]:
    return [
        S.make_tool(
            "read_text_file",
            summary_args=("path",),
            title="Read text file",
            handler=read_text_file,
            scopes=frozenset({Scope.FS_READ}),
            policy=Policy.ALWAYS,
            annotations=S.READ_ONLY,
            required=("path",),
            properties={
                "path": {"type": "string", "minLength": 1, "maxLength": 4096,
                         "description": "An absolute path, or a path relative to an allowed folder."},
                "max_bytes": {"type": "integer", "minimum": 1, "maximum": MAX_MAX_BYTES,
                              "default": DEFAULT_MAX_BYTES,
                              "description": f"Read at most this many bytes (1–{MAX_MAX_BYTES:,}, default "
                                             f"{DEFAULT_MAX_BYTES:,})."},
            },
            description="Reads a UTF-8 text file from a folder the person allowed in Settings and returns its "
                        "text (undecodable bytes show as U+FFFD; long files are cut at max_bytes with a "
                        "notice). Files outside those folders, folders and binary files are refused. The "
                        "person is asked to approve each file read.",
        ),
    ]


TOOLS = file_tools  # found by ``builtin_specs`` (tools/builtin/__init__.py)
PLACE = 50
