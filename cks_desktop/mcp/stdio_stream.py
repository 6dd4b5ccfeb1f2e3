"""Our stdio transport: a spawned MCP server's stdin/stdout as the two memory-object streams of
``SessionMessage`` that the SDK's ``mcp.Client`` takes (the same contract as ``stdio_client``).

Why our own. The SDK's reader keeps the unfinished line in a ``str`` and, for every 64 KB chunk
read, concatenates it and splits the whole buffer again: a message of n bytes costs O(n²/64 KB).
A 100 MB ``resources/read`` answer took about a minute inside that loop before anything of ours
saw it. Here the line buffer is a ``bytearray``: each chunk is appended once and searched for
``b"\\n"`` only from where the last search ended, so a message costs O(n); a complete line is
decoded and parsed once (pydantic's JSON parser, as the SDK does); a line longer than
``PARSE_OFF_LOOP_BYTES`` is parsed on a worker thread, since a 50 MB answer takes pydantic most of
a second and the loop (the GUI's) must not wait for it.

Everything else follows the SDK's transport, so the connection behaves the same:

- the server is started as ``transport.py``/``spawn.py`` plan it (the resolved program, the
  minimal environment merged over the SDK's default one, the working folder), in its own
  process group (a new session; a Job Object on Windows through the SDK's own helper), with
  stderr going to the server's log pipe;
- one line at a time and no read-ahead while a delivery waits (a zero-size buffer: a server
  that floods stdout is held back by the pipe, not by our memory);
- a line that is not JSON-RPC is handed on as the parse error (the SDK's convention), which
  ``wire_guard`` reports or turns into an error response; a line that is not UTF-8 the same,
  where the SDK's reader would have died; a line longer than ``MAX_LINE_BYTES`` is skipped
  up to its end and reported the same way, so a server that never ends a line cannot exhaust
  memory;
- shutdown as the specification orders: stop traffic, let the writer flush (bounded), close
  stdin, wait, then terminate the process group (SIGTERM, then SIGKILL), every wait bounded
  and shielded so a cancelled caller neither leaks the server nor hangs on it.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.lowlevel
import anyio.to_thread
import mcp_types as types
from anyio.abc import AsyncResource
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.shared.message import SessionMessage

from cks_desktop.mcp import json_pieces
from cks_desktop.mcp.result_cap import cap_message

log = logging.getLogger(__name__)

READ_SIZE = 1 << 20  # per read from the pipe (the SDK reads 64 KB)
MAX_LINE_BYTES = 512 * 1024 * 1024  # one message; past this the line is dropped with a sentence
PARSE_OFF_LOOP_BYTES = 256 * 1024  # a longer line is decoded and parsed on a worker thread, not the loop
STDIN_GRACE = 2.0  # the server's time to exit by itself once its stdin closed
TERM_GRACE = 2.0  # SIGTERM → SIGKILL
REAP_TIMEOUT = 2.0
FLUSH_TIMEOUT = 0.5
_POLL = 0.01


class LineTooLong(ValueError):
    """A server line past ``MAX_LINE_BYTES`` (handed to the session as a parse error)."""


class LineSplitter:
    """Newline-delimited messages out of byte chunks, in linear time (see the module docstring)."""

    def __init__(self, max_line: int = MAX_LINE_BYTES) -> None:
        self._buf = bytearray()
        self._scanned = 0  # bytes of _buf already searched for a newline
        self._max = max_line
        self._skipping = False  # inside a line that was too long: drop up to its newline

    def feed(self, chunk: bytes) -> list[bytes | LineTooLong]:
        """The complete lines in ``chunk`` (with what came before), without their newline."""
        out: list[bytes | LineTooLong] = []
        buf = self._buf
        buf += chunk
        start = 0
        while True:
            end = buf.find(b"\n", max(start, self._scanned))
            if end < 0:
                break
            if self._skipping:
                self._skipping = False
            elif end - start > self._max:
                out.append(self._too_long())
            else:
                with memoryview(buf) as view, view[start:end] as part:  # one copy, not two; released
                    out.append(bytes(part))                           # before the buffer is resized
            start = end + 1
        if start:
            del buf[:start]  # a bytearray drops its head without moving the rest again and again
        self._scanned = len(buf)
        if len(buf) > self._max:
            if not self._skipping:
                out.append(self._too_long())
            self._skipping = True
            buf.clear()
            self._scanned = 0
        return out

    def _too_long(self) -> LineTooLong:
        size = f"{self._max // (1024 * 1024)} MB" if self._max >= 1024 * 1024 else f"{self._max:,} bytes"
        return LineTooLong(f"a message from the server is longer than {size}; it was dropped")


def parse_line(line: bytes | LineTooLong, encoding: str = "utf-8") -> SessionMessage | Exception:
    """One line as the SDK's session expects it: the message, or the parse error as a value."""
    if isinstance(line, Exception):
        return line
    try:
        text = line.decode(encoding)
    except UnicodeDecodeError as exc:
        return ValueError(f"a line from the server is not valid {encoding} text ({exc.reason} at byte {exc.start})")
    try:
        message = types.jsonrpc_message_adapter.validate_json(text, by_name=False)
    except ValueError as exc:  # pydantic's ValidationError; wire_guard quotes the line it carries
        return exc
    return SessionMessage(message)


def parse_big_line(line: bytes, encoding: str = "utf-8") -> SessionMessage | Exception:
    """``parse_line`` for a long line, on a worker thread: decoded a piece at a time (``json_pieces``,
    so the GIL is given up between items), a tool result capped (``result_cap``), then the small
    rest validated as usual."""
    try:
        decoded = json_pieces.loads(line.decode(encoding))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return parse_line(line, encoding)  # the usual parse error, worded as for any line
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_python(cap_message(decoded), by_name=False))
    except ValueError as exc:
        return exc


@asynccontextmanager
async def stdio_streams(server: StdioServerParameters, errlog: TextIO = sys.stderr, *,
                        max_line: int = MAX_LINE_BYTES) -> AsyncIterator[tuple[Any, Any]]:
    """Spawn ``server`` and yield ``(read_stream, write_stream)`` for ``mcp.Client``.

    Raises ``OSError`` if the program cannot be started (as ``stdio_client`` does)."""
    process = await _spawn(server, errlog)
    # No awaits between the spawn and the task group: a cancellation in the gap would leak the process.
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    shutting_down = False
    writer_done = anyio.Event()

    async def stdout_reader() -> None:
        assert process.stdout is not None
        splitter = LineSplitter(max_line)
        try:
            async with read_writer:
                try:
                    while True:
                        try:
                            chunk = await process.stdout.receive(READ_SIZE)
                        except anyio.EndOfStream:
                            break
                        for line in splitter.feed(chunk):
                            if isinstance(line, bytes) and len(line) > PARSE_OFF_LOOP_BYTES:
                                parsed = await anyio.to_thread.run_sync(parse_big_line, line, server.encoding)
                            else:
                                parsed = parse_line(line, server.encoding)
                            try:
                                await read_writer.send(parsed)
                            except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                                return  # the session is gone
                finally:
                    await _drain(process)
        except anyio.ClosedResourceError:
            pass  # our shutdown closed stdout under the read
        except (anyio.BrokenResourceError, ConnectionError):
            if not shutting_down:
                log.exception("reading the MCP server's stdout failed")

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for item in write_reader:
                    data = item.message.model_dump_json(by_alias=True, exclude_unset=True) + "\n"
                    await process.stdin.send(data.encode(server.encoding, server.encoding_error_handler))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            await read_writer.aclose()  # the session sees the end instead of a request hanging
        finally:
            writer_done.set()

    async def shutdown() -> None:
        read_stream.close()
        write_stream.close()
        with anyio.move_on_after(FLUSH_TIMEOUT):
            await writer_done.wait()
        await _stop(process)
        for stream in (read_stream, write_stream, read_writer, write_reader):
            await stream.aclose()
        await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg:
        tg.start_soon(stdout_reader)
        tg.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream
        finally:
            shutting_down = True
            with anyio.CancelScope(shield=True):
                await shutdown()
            tg.cancel_scope.cancel()
    await anyio.lowlevel.cancel_shielded_checkpoint()


async def _spawn(server: StdioServerParameters, errlog: TextIO) -> Any:
    env = get_default_environment() | (server.env or {})
    cwd: str | Path | None = server.cwd
    if sys.platform == "win32":  # pragma: no cover - the SDK's Job Object helpers
        from mcp.os.win32.utilities import create_windows_process, get_windows_executable_command

        command = await anyio.to_thread.run_sync(get_windows_executable_command, server.command,
                                                 abandon_on_cancel=True)
        return await create_windows_process(command, server.args, env, errlog, cwd)
    return await anyio.open_process([server.command, *server.args], env=env, stderr=errlog, cwd=cwd,
                                    start_new_session=True)


async def _drain(process: Any) -> None:
    """Read and drop what the server still writes, so it is never stuck on a full pipe while exiting."""
    with anyio.CancelScope(shield=True):
        with suppress(anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError,
                      OSError):
            while True:
                await process.stdout.receive()


async def _exited(process: Any, timeout: float) -> bool:
    """Polls ``returncode`` (``wait()`` would also wait for pipe EOF, which a grandchild can hold)."""
    deadline = anyio.current_time() + timeout
    while process.returncode is None:
        if anyio.current_time() >= deadline:
            return False
        await anyio.sleep(_POLL)
    return True


async def _stop(process: Any) -> None:
    await _close(process.stdin)
    if not await _exited(process, STDIN_GRACE):
        if sys.platform == "win32":  # pragma: no cover
            from mcp.os.win32.utilities import terminate_windows_process_tree

            await terminate_windows_process_tree(process)
        else:
            from mcp.os.posix.utilities import terminate_posix_process_tree

            await terminate_posix_process_tree(process, TERM_GRACE)
        if not await _exited(process, REAP_TIMEOUT):
            log.warning("MCP server process %d is still alive after the kill; abandoning it", process.pid)
    if sys.platform == "win32":  # pragma: no cover
        from mcp.os.win32.utilities import close_process_job

        close_process_job(process)
    await _close(process.stdout)
    transport = getattr(getattr(process, "_process", None), "_transport", None)  # asyncio's, else it warns at GC
    close = getattr(transport, "close", None)
    if callable(close):
        with suppress(PermissionError):
            close()


async def _close(stream: AsyncResource | None) -> None:
    if stream is not None:
        with suppress(OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
            await stream.aclose()
