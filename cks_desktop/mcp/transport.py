"""Opening a server's transport: a spawned stdio process or a streamable HTTP endpoint.

Both are handed to ``mcp.Client`` as a ``Transport`` (an async context manager
yielding the read and write streams), wrapped so that the connection learns
when the server's side ends (the SDK gives no signal when a stdio server exits
between calls, its read stream simply ends), and so that every message passes
a ``WireGuard`` (``wire_guard.py``) before the SDK reads it.

Secret references are resolved here, right before use; the program is
resolved against the login shell's PATH (``spawn.py``); stderr goes into the
server's log through a pipe (``stderr_log.py``). Stdio servers run through our own transport
(``stdio_stream.py``: the SDK's streams and shutdown order, a linear line buffer in place of
the SDK's quadratic one); HTTP through the SDK's ``streamable_http_client``.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from mcp import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from cks_desktop.mcp.config import (
    ConfigError,
    ServerConfig,
    resolve_args,
    resolve_env,
    resolve_headers,
    resolve_url,
    shown,
)
from cks_desktop.mcp.stderr_log import ServerLog, StderrPipe
from cks_desktop.mcp.spawn import CommandNotFound, plan_spawn
from cks_desktop.mcp.stdio_stream import stdio_streams
from cks_desktop.mcp.wire_guard import WireGuard, line_of

if TYPE_CHECKING:
    from cks_desktop.secrets import SecretStore

HTTP_CONNECT_TIMEOUT = 30.0
HTTP_READ_TIMEOUT = 300.0  # a server may keep a response stream open a long time


class _GarbageFilter(logging.Filter):
    """The SDK logs a traceback for every non-JSON stdout line; we report those per server instead."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Failed to parse JSONRPC message")


logging.getLogger("mcp.client.stdio").addFilter(_GarbageFilter())


class StartFailure(Exception):
    """The server cannot be started at all (one sentence for the person)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def leaf(exc: BaseException) -> BaseException:
    """The first real error inside (possibly nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def snippet(exc: Exception) -> str:
    """The offending stdout text when the parser kept it (pydantic does), else the error."""
    return repr(line_of(exc)[:200])


class EofWatchingStream:
    """A transport's read stream that calls ``on_eof`` when the other side is gone,
    and hands each item to the guard (which may replace it) on the way."""

    def __init__(self, inner: Any, on_eof: Callable[[], None], guard: WireGuard | None = None) -> None:
        self._inner = inner
        self._on_eof = on_eof
        self._guard = guard

    @property
    def last_context(self) -> Any:  # the SDK reads the sender's context from HTTP streams
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> Any:
        try:
            item = await self._inner.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_eof()
            raise
        return self._guard.inbound(item) if self._guard is not None else item

    def __aiter__(self) -> "EofWatchingStream":
        return self

    async def __anext__(self) -> Any:
        # ``receive`` written out once more: this runs for every message the SDK reads (one frame less).
        try:
            item = await self._inner.receive()
        except anyio.EndOfStream:
            self._on_eof()
            raise StopAsyncIteration from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._on_eof()
            raise
        return self._guard.inbound(item) if self._guard is not None else item

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> "EofWatchingStream":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class GuardedWriteStream:
    """A transport's write stream that shows each outgoing message to the guard first."""

    def __init__(self, inner: Any, guard: WireGuard) -> None:
        self._inner = inner
        self._guard = guard

    async def send(self, item: Any) -> None:
        self._guard.outbound(item)
        await self._inner.send(item)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> "GuardedWriteStream":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


@asynccontextmanager
async def watch_eof(transport: Any, on_eof: Callable[[], None],
                    guard: WireGuard | None = None) -> AsyncIterator[tuple[Any, Any]]:
    async with transport as (read, write):
        yield (EofWatchingStream(read, on_eof, guard),
               GuardedWriteStream(write, guard) if guard is not None else write)


@dataclass
class OpenedTransport:
    transport: Any  # what mcp.Client takes
    pipe: StderrPipe | None = None  # the stdio child's stderr, drained into the log


async def open_transport(config: ServerConfig, *, secrets: "SecretStore | None", log: ServerLog,
                         stack: AsyncExitStack, login_path: Callable[[], Awaitable[str | None]],
                         on_eof: Callable[[], None], guard: WireGuard | None = None,
                         auth: Any = None) -> OpenedTransport:
    """Prepare the transport of one server; nothing is spawned until the client enters it.

    Raises ``StartFailure`` for what the person must fix (a missing secret or
    program). Resources that must outlive the call (the HTTP client) go on ``stack``.
    """
    try:
        if config.transport.remote:
            import httpx2  # the SDK's own HTTP client library

            headers = resolve_headers(config, secrets)
            url = resolve_url(config, secrets)
            http = await stack.enter_async_context(httpx2.AsyncClient(  # auth: oauth.GatedAuth, or None
                headers=headers, timeout=httpx2.Timeout(HTTP_CONNECT_TIMEOUT, read=HTTP_READ_TIMEOUT), auth=auth))
            log.note(f"connecting to {config.describe()}")  # references shown as [secret], never values
            return OpenedTransport(watch_eof(streamable_http_client(url, http_client=http), on_eof, guard))
        env = resolve_env(config, secrets)
        args = resolve_args(config, secrets)
        plan = plan_spawn(config.command, args, env, cwd=config.cwd, login_path=await login_path(),
                          inherit_env=config.inherit_env)
    except (ConfigError, CommandNotFound) as exc:
        raise StartFailure(str(exc)) from None
    # The stored arguments (keychain references), not the resolved ones, go to the log.
    shown_args = [*plan.args[:len(plan.args) - len(args)], *config.args]
    log.note(f"starting: {shown(' '.join([plan.command, *shown_args]))}".rstrip())
    pipe = log.open_pipe()
    params = StdioServerParameters(command=plan.command, args=plan.args, env=plan.env, cwd=plan.cwd)
    # Our stdio transport (stdio_stream.py): the SDK's contract, with a linear line buffer.
    return OpenedTransport(watch_eof(stdio_streams(params, errlog=pipe.writer), on_eof, guard), pipe)
