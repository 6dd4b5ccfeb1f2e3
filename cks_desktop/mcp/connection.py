"""One MCP server connection, owned by one task (STACK.md R4, pitfall 7).

The SDK's client is built on anyio task groups and cancel scopes, which must be
entered and exited in the same task. So ``start()`` creates an owner task that
spawns/connects, negotiates, lists the tools, registers them, then waits for
``stop()`` or for the server to go away, and finally leaves every context it
entered. Any task may make calls on the live session meanwhile.

Protocol eras. ``mcp.Client`` negotiates: with ``protocol: "auto"`` it probes the
stateless 2026-07-28 revision (``server/discover``) and falls back to the
2025-11-25 ``initialize`` handshake, so both kinds of server work. List changes
arrive as ``notifications/tools/list_changed`` on a handshake connection and
through a ``subscriptions/listen`` stream on a 2026 connection; both only set a
flag that one refresher task acts on, so a burst of changes costs one relisting.

Timeouts. A call may take ``timeout`` seconds (default 120), and every progress
notification for it starts the clock again: the SDK's own per-request timeout
does not reset on progress, so the deadline is ours (``deadline.Deadline``, ``asyncio.timeout``'s
semantics, moved forward by the progress callback). Progress moves it at most to
``PROGRESS_CEILING_FACTOR`` times the timeout after the call began, or a server
that only ever reports progress would hold a call for ever. When it fires, or
when Stop cancels the calling task, the SDK sends ``notifications/cancelled``.

Start-up may take the server's own ``timeout`` (at least ``MIN_STARTUP`` s, at most
the app's ``startup_timeout``). A server that writes lines to stdout that are not
JSON-RPC fails at once, quoting the first line, when it writes more than
``GARBAGE_LIMIT`` of them before the handshake, or when nothing valid follows the
first one within ``GARBAGE_GRACE`` s; a few noisy lines before a good handshake are
only noted in the log. The ``WireGuard`` (``wire_guard.py``) also turns an answer the
SDK cannot read into an error at once, and keeps one bad tool from failing a listing.

A listing's left-out tools (a bad schema, a wire name already taken, ...) and its
shortened descriptions are named in the ``ready`` status's reason.

Faults never raise into the chat: a call on a server that is not running, one
that times out, a JSON-RPC error, a server that dies mid-call — each becomes an
error ``ToolOutput``. The status (with its reason) says what happened, and the
server's stderr lands in its log (``stderr_log.py``).
"""

from __future__ import annotations

import asyncio
import enum
import logging
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp import Client, MCPError
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp_types import CONNECTION_CLOSED, PARSE_ERROR
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from cks_desktop import APP_ID, __version__
from cks_desktop.callbacks import Callbacks
from cks_desktop.mcp.client_hooks import ClientHooks
from cks_desktop.mcp.config import ServerConfig
from cks_desktop.mcp.features import ServerFeatures
from cks_desktop.mcp.convert import MAX_DESCRIPTION, SkippedTool, build_specs, result_to_output
from cks_desktop.mcp.deadline import Deadline
from cks_desktop.mcp.oauth import (OAuthSession, OpenUrl, describe_exception, refused_token_sentence,
                                   sign_in_sentence, uses_oauth)
from cks_desktop.mcp.resource_tool import reader_spec
from cks_desktop.mcp.resources import supports_resources
from cks_desktop.mcp.stderr_log import ServerLog, StderrPipe
from cks_desktop.mcp.spawn import login_shell_path
from cks_desktop.mcp.transport import StartFailure, leaf, open_transport, snippet
from cks_desktop.mcp.wire_guard import WireGuard
from cks_desktop.tools.types import ToolOutput
from cks_desktop.tools.wire_names import to_wire

if TYPE_CHECKING:
    from cks_desktop.secrets import SecretStore
    from cks_desktop.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

STARTUP_TIMEOUT = 60.0  # npx/uvx may download a package on first start
MIN_STARTUP = 5.0  # a short call timeout still leaves an interpreter time to start
PROGRESS_CEILING_FACTOR = 10  # progress extends a call to at most this many times its timeout
GARBAGE_LIMIT = 100  # non-JSON stdout lines tolerated before the handshake
GARBAGE_GRACE = 3.0  # seconds a valid message may take to follow the first non-JSON line
MAX_TOOL_PAGES = 100
CLIENT_INFO = types.Implementation(name=APP_ID, version=__version__)
PROGRESS_EVERY = 0.1  # seconds between the progress reports a chat row is sent (a flood is thinned)
ProgressReport = Callable[[float, "float | None", "str | None"], None]


class Status(str, enum.Enum):
    STOPPED = "stopped"
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    RESTARTING = "restarting"
    NEEDS_AUTH = "needs_auth"  # the server asks for OAuth: "Sign in to <server>" (oauth.py)

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class StatusEvent:
    server: str
    status: Status
    reason: str = ""
    previous: Status | None = None
    crashed: bool = False  # went down on its own after being ready (the manager restarts those)
    at: float = 0.0


StatusListener = Callable[[StatusEvent], None]


class McpConnection:
    """A connection to one configured server, and the registry entries of its tools.

    ``target`` replaces the configured transport with anything ``mcp.Client``
    accepts (tests pass an in-process server). ``registry`` may be None (a
    probe: connect, list, disconnect).
    """

    def __init__(self, config: ServerConfig, *, log: ServerLog, registry: "ToolRegistry | None" = None,
                 secrets: "SecretStore | None" = None, target: Any = None,
                 startup_timeout: float = STARTUP_TIMEOUT,
                 login_path: Callable[[], Awaitable[str | None]] | None = None,
                 hooks: ClientHooks | None = None) -> None:
        self.config = config
        self.hooks = hooks or ClientHooks()  # elicitation, sampling, roots, logging (client_hooks.py)
        self.instructions: str | None = None  # the server's own, from the handshake (quoted as data in prompts)
        self._roots_sent: list[str] | None = None
        self.log = log
        self.registry = registry
        self.secrets = secrets
        self.target = target
        self.startup_timeout = startup_timeout
        self._login_path = login_path or login_shell_path
        self.status = Status.STOPPED
        self.reason = ""
        self.tools: list[types.Tool] = []
        self.skipped: list[SkippedTool] = []
        self.protocol_version: str | None = None
        self.server_info: types.Implementation | None = None
        self.garbage_lines = 0
        self._listeners: Callbacks[[StatusEvent]] = Callbacks("MCP status")
        self._client: Client | None = None
        self._task: asyncio.Task[None] | None = None
        self._pipe: StderrPipe | None = None
        self._stop = asyncio.Event()
        self._lost = asyncio.Event()
        self._ready = asyncio.Event()
        self._refresh_wanted = asyncio.Event()
        self._stopping = False
        self._timed_out = False
        self._abort_reason: str | None = None
        self._abort = asyncio.Event()
        self._guard: WireGuard | None = None
        self._first_garbage: str | None = None
        self._garbage_at_start = 0
        self._garbage_timer: asyncio.TimerHandle | None = None
        self._oauth: OAuthSession | None = None
        self._sign_in: OpenUrl | None = None  # set for one start: the person asked to sign in
        self.sign_in_timeout = 300.0
        self._step_up_opener: OpenUrl | None = None  # the host can show a browser for a step-up during a call
        self.features = ServerFeatures(self)  # resources and prompts (features.py, resources.py, prompts.py)

    @property
    def step_up_opener(self) -> OpenUrl | None:
        return self._step_up_opener

    @step_up_opener.setter
    def step_up_opener(self, opener: OpenUrl | None) -> None:
        self._step_up_opener = opener
        if self._oauth is not None:  # a live connection takes it at once
            self._oauth.step_up_opener = opener

    @property
    def name(self) -> str:
        return self.config.name

    # -- the request path of resources.py / prompts.py (requests.send) -------------------
    @property
    def client(self) -> Client | None:
        """The live SDK client (None when not connected); requests go through ``requests.send``."""
        return self._client

    @property
    def ready(self) -> bool:
        return self._client is not None and self.status is Status.READY

    @property
    def stopping(self) -> bool:
        return self._stopping

    def connection_lost(self) -> None:
        """A request saw the connection close: wind down (the manager reconnects), as a tool call does."""
        self._lost.set()

    # -- status ----------------------------------------------------------------
    def subscribe(self, listener: StatusListener) -> Callable[[], None]:
        return self._listeners.subscribe(listener)

    def set_status(self, status: Status, reason: str = "", *, crashed: bool = False) -> None:
        previous = self.status
        if previous is status and self.reason == reason:
            return
        self.status, self.reason = status, reason
        if status is Status.FAILED:
            self.log.note(f"failed: {reason}")
        elif status is Status.NEEDS_AUTH:
            self.log.note(f"needs sign-in: {reason}")
        event = StatusEvent(self.name, status, reason, previous, crashed, time.time())
        self._listeners.emit(event)

    async def wait_for(self, *statuses: Status, timeout: float) -> Status:
        """Wait (bounded) until the status is one of ``statuses``; return it."""
        if self.status in statuses:
            return self.status
        fut: asyncio.Future[Status] = asyncio.get_running_loop().create_future()

        def on_event(event: StatusEvent) -> None:
            if event.status in statuses and not fut.done():
                fut.set_result(event.status)

        unsubscribe = self.subscribe(on_event)
        try:
            return await asyncio.wait_for(fut, timeout)
        finally:
            unsubscribe()

    def stderr_tail(self, n: int = 200) -> list[str]:
        return self.log.tail(n)

    # -- lifecycle -------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self, *, sign_in: OpenUrl | None = None) -> bool:
        """Connect; return True when ready. Never raises for a server's fault (see ``reason``).

        ``sign_in`` (opens a URL in the person's browser): the person asked to sign in, so a
        server that asks for OAuth gets the whole flow during this start (``oauth.py``).
        """
        if self.running:
            await self._await_settled()
            return self.status is Status.READY
        self._sign_in = sign_in if uses_oauth(self.config) else None
        self._stop, self._lost, self._ready = asyncio.Event(), asyncio.Event(), asyncio.Event()
        self._stopping = self._timed_out = False
        self._abort, self._abort_reason, self._first_garbage = asyncio.Event(), None, None
        self._garbage_at_start = 0
        self._guard = WireGuard(on_garbage=self._on_garbage, version=self._negotiated_version)
        self.set_status(Status.STARTING)
        self._task = asyncio.create_task(self._run(), name=f"mcp:{self.name}")
        await self._await_settled()
        return self.status is Status.READY

    @property
    def effective_startup_timeout(self) -> float:
        """The server's own timeout, at least ``MIN_STARTUP``, at most the app's start-up ceiling
        (plus the browser step's own bounded wait during a sign-in)."""
        extra = self.sign_in_timeout if self._sign_in is not None else 0.0
        return min(self.startup_timeout, max(self.config.timeout, MIN_STARTUP)) + extra

    def cancel_sign_in(self) -> None:
        """End a sign-in waiting for the browser (the start then says it was cancelled)."""
        if self._oauth is not None:
            self._oauth.cancel()

    async def _await_settled(self) -> None:
        task = self._task
        if task is None:
            return
        ready = asyncio.create_task(self._ready.wait())
        abort = asyncio.create_task(self._abort.wait())
        try:
            done, _ = await asyncio.wait({ready, abort, task}, timeout=self.effective_startup_timeout,
                                         return_when=asyncio.FIRST_COMPLETED)
        finally:
            ready.cancel()
            abort.cancel()
            if self._garbage_timer is not None:
                self._garbage_timer.cancel()
                self._garbage_timer = None
        if task.done() or self._ready.is_set():
            return
        if abort in done:
            self._timed_out = True  # ends the start like a timeout, with the abort's reason
            task.cancel()
            await asyncio.wait({task})
        elif not done:
            self._timed_out = True
            task.cancel()
            await asyncio.wait({task})

    # -- non-JSON output at start ------------------------------------------------
    def _negotiated_version(self) -> str | None:
        client = self._client
        return client.protocol_version if client is not None else None

    def _garbage_reason(self) -> str:
        return (f"The server wrote something to its standard output that is not JSON-RPC: "
                f"{self._first_garbage!r}. It may not be an MCP server, or it prints messages to stdout "
                "(they belong on stderr).")

    def _on_garbage(self, line: str) -> None:
        """A non-JSON stdout line (the guard calls this); before the handshake it may end the start."""
        if self._ready.is_set() or self._abort.is_set() or self.config.transport.remote:
            return  # HTTP hands transport errors over the same way; those are not stdout lines
        self._garbage_at_start += 1
        if self._first_garbage is None:
            self._first_garbage = line[:200]
            guard = self._guard
            seen = guard.valid_messages if guard is not None else 0
            self._garbage_timer = asyncio.get_running_loop().call_later(
                GARBAGE_GRACE, self._garbage_deadline, seen)
        if self._garbage_at_start > GARBAGE_LIMIT:
            self._abort_start(self._garbage_reason())

    def _garbage_deadline(self, valid_before: int) -> None:
        self._garbage_timer = None
        guard = self._guard
        if guard is not None and guard.valid_messages == valid_before and not self._ready.is_set():
            self._abort_start(self._garbage_reason())

    def _abort_start(self, reason: str) -> None:
        if not self._abort.is_set():
            self._abort_reason = reason
            self._abort.set()

    async def stop(self) -> None:
        """Disconnect (the server process is ended) and take the tools out of the registry."""
        task = self._task
        if task is None or task.done():
            self._unregister()
            if self.status not in (Status.FAILED, Status.STOPPED):
                self.set_status(Status.STOPPED)
            return
        self._stopping = True
        self._stop.set()
        if not self._ready.is_set():
            task.cancel()  # still connecting: nothing to wind down politely
        await asyncio.wait({task})

    async def restart(self) -> bool:
        await self.stop()
        return await self.start()

    def mark_restarting(self, reason: str) -> None:
        self.set_status(Status.RESTARTING, reason)

    # -- the owner task --------------------------------------------------------
    def _on_eof(self) -> None:
        self._lost.set()

    async def _make_target(self, stack: AsyncExitStack) -> Any:
        if self.target is not None:
            return self.target
        self._oauth = None
        if uses_oauth(self.config):
            self._oauth = await stack.enter_async_context(OAuthSession(
                self.config, self.secrets, open_url=self._sign_in, allow_step_up=self.step_up_opener,
                timeout=self.sign_in_timeout))
        opened = await open_transport(self.config, secrets=self.secrets, log=self.log, stack=stack,
                                      login_path=self._login_path, on_eof=self._on_eof, guard=self._guard,
                                      auth=self._oauth.auth if self._oauth is not None else None)
        self._pipe = opened.pipe
        return opened.transport

    def _stderr_hint(self) -> str:
        lines = self.log.server_tail(5)
        return (" Last lines of its error output: " + " | ".join(lines)) if lines else ""

    async def _drain_stderr(self, timeout: float = 1.0) -> None:
        if self._pipe is not None:
            self._pipe.close_writer()
            await self._pipe.drained(timeout)

    async def _run(self) -> None:
        crashed = False
        reason = ""
        needs_auth = False
        try:
            async with AsyncExitStack() as stack:
                target = await self._make_target(stack)
                client = Client(target, mode=self.config.protocol, message_handler=self._on_message,
                                cache=None, client_info=CLIENT_INFO,
                                **self.hooks.client_kwargs(self.config, self.log))
                try:
                    await stack.enter_async_context(client)
                finally:
                    if self._pipe is not None:
                        self._pipe.close_writer()  # the child has its own copy now
                self._client = client
                self.protocol_version = client.protocol_version
                self.server_info = client.server_info
                self.instructions = client.instructions
                self._roots_sent = [str(r.uri) for r in self.hooks.roots_for(self.config)]
                await self._set_log_level(client)
                await self._refresh_tools(client)
                self.log.note(f"ready: protocol {self.protocol_version}, {len(self.tools)} tools")
                self._ready.set()
                if self._oauth is not None:
                    self._oauth.end_interactive()
                    await self._oauth.close_listener()
                    if self._sign_in is not None:
                        self.log.note("signed in")
                self.set_status(Status.READY, self._listing_note())
                helpers = [asyncio.create_task(self._refresher(client)),
                           asyncio.create_task(self.features.run(client))]
                if self.protocol_version in MODERN_PROTOCOL_VERSIONS:
                    helpers.append(asyncio.create_task(self._listener(client)))
                stop = asyncio.create_task(self._stop.wait())
                lost = asyncio.create_task(self._lost.wait())
                try:
                    await asyncio.wait({stop, lost}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for t in (*helpers, stop, lost):
                        t.cancel()
                    await asyncio.wait({*helpers, stop, lost})
                crashed = self._lost.is_set() and not self._stopping
                self._client = None
                self._unregister()
        except StartFailure as exc:
            reason = exc.reason
        except asyncio.CancelledError:
            if not self._timed_out:
                self._finish(Status.STOPPED, "")
                raise
            await self._drain_stderr()
            if self._abort_reason is not None:
                reason = f"{self._abort_reason}{self._stderr_hint()}"
            elif self._first_garbage is not None:
                reason = (f"The server did not finish starting within {self.effective_startup_timeout:g} s. "
                          f"{self._garbage_reason()}{self._stderr_hint()}")
            else:
                reason = (f"The server did not finish starting within {self.effective_startup_timeout:g} s."
                          f"{self._stderr_hint()}")
        except Exception as exc:  # every fault of a server becomes a status, never a crash
            auth_reason = self._auth_reason(exc)
            # a sign-in without a browser that failed is a failure to fix in the settings: "Sign in"
            # would only send the same refused request again (oauth_grants.machine_failure)
            needs_auth = auth_reason is not None and not self._machine_sign_in
            reason = auth_reason or await self._explain(leaf(exc))
        finally:
            self._client = None
            self._unregister()
            self.features.reset()
            if self._pipe is not None:
                self._pipe.close_writer()
        if crashed and self.config.transport.remote:
            reason = "The connection to the server was lost."
        elif crashed:
            await self._drain_stderr()
            reason = f"The server stopped unexpectedly.{self._stderr_hint()}"
        self._sign_in = None
        if reason and needs_auth and not crashed:
            self._finish(Status.NEEDS_AUTH, reason)
        elif reason:
            self._finish(Status.FAILED, reason, crashed=crashed)
        else:
            self._finish(Status.STOPPED, "")

    def _auth_reason(self, exc: BaseException) -> str | None:
        """The sign-in sentence when a start ended for want of authorization (or in a failed sign-in)."""
        found = describe_exception(exc)
        session = self._oauth
        if found is None and session is not None:
            found = session.error or (self._challenge_sentence(session.challenge) if session.challenge else None)
        return found

    @property
    def _machine_sign_in(self) -> bool:
        """Signed in to without a browser (client credentials, identity assertion: oauth_grants.py)."""
        return uses_oauth(self.config) and self.config.oauth is not None and self.config.oauth.machine

    def _challenge_sentence(self, challenge: Any) -> str:
        if self._machine_sign_in and not challenge.step_up:
            return refused_token_sentence(self.config, challenge)
        return sign_in_sentence(self.name, challenge)

    def _finish(self, status: Status, reason: str, *, crashed: bool = False) -> None:
        if status is Status.STOPPED:
            self.log.note("stopped")
        self.set_status(status, reason, crashed=crashed)

    async def _explain(self, exc: BaseException) -> str:
        if isinstance(exc, MCPError) and exc.error.code == CONNECTION_CLOSED:
            await self._drain_stderr()
            return f"The server exited while starting.{self._stderr_hint()}"
        if isinstance(exc, MCPError) and exc.error.code == PARSE_ERROR:
            return f"The server's answer could not be read: {exc.error.message}."
        if isinstance(exc, MCPError):
            return f"The server refused the connection: {exc.error.message}"
        if isinstance(exc, TimeoutError):
            return f"The server did not list its tools within {self.config.timeout:g} s."
        if isinstance(exc, FileNotFoundError | PermissionError):
            return f"The server could not be started: {exc.strerror or exc} ({exc.filename or self.config.command})."
        if self.config.transport.remote and type(exc).__module__.startswith(("httpx", "httpcore")):
            return f"Could not reach {self.config.url}: {exc or type(exc).__name__}."
        # No known cause: a fault of ours or of the SDK (an ImportError at a first start was one).
        # The status keeps one line; the log and the terminal get the whole traceback, frames and all.
        log.error("MCP server %s failed unexpectedly", self.name, exc_info=exc)
        return f"The connection failed: {type(exc).__name__}: {exc} (the full traceback is in the app's log)"

    # -- tools -----------------------------------------------------------------
    async def _refresh_tools(self, client: Client) -> None:
        if self._guard is not None:
            self._guard.take_skipped()  # what earlier listings left out is stale now
        tools: list[types.Tool] = []
        cursor: str | None = None
        seen: set[str] = set()
        async with asyncio.timeout(self.config.timeout):
            for _ in range(MAX_TOOL_PAGES):
                page = await client.list_tools(cursor=cursor)
                tools += page.tools
                cursor = page.next_cursor
                if not cursor or cursor in seen:
                    break
                seen.add(cursor)
            else:
                self.log.note(f"the tool list had more than {MAX_TOOL_PAGES} pages; the rest was ignored")
        self.tools = tools
        self._register()

    def _handler_for(self, tool_name: str) -> Callable[[dict[str, Any], Any], Awaitable[ToolOutput]]:
        async def handler(arguments: dict[str, Any], ctx: Any) -> ToolOutput:
            run = getattr(ctx, "run", None)
            sink = getattr(run, "on_progress", None)
            call_id = str(getattr(ctx, "call_id", ""))
            report = (lambda p, t, m: sink(call_id, p, t, m)) if sink is not None else None
            return await self.call_tool(tool_name, arguments, report_progress=report)

        return handler

    def _register(self) -> None:
        """Put the listed tools in the registry; whatever is wrong with one tool costs that tool only."""
        taken: dict[str, str] = {}
        if self.registry is not None:  # wire names other servers' (and built-in) tools already hold
            taken = {to_wire(s.name): s.name for s in self.registry.specs() if s.source != self.config.source}
        refused = self._guard.take_skipped() if self._guard is not None else []
        specs, skipped = build_specs(self.config, self.tools, self._handler_for, taken=taken)
        if supports_resources(self):  # the reader read_mcp_resource delegates to (resource_tool.py)
            specs.append(reader_spec(self))
        self.skipped = refused + skipped
        if self.registry is not None:
            self.registry.replace_source(self.config.source, specs)
            for spec in specs:
                if self.registry.get(spec.name) is not spec:
                    tool = spec.annotations.get("tool", spec.name)
                    self.skipped.append(SkippedTool(str(tool), "its input schema cannot be used to check arguments"))
        for item in self.skipped:
            self.log.note(f"tool '{item.name}' left out: {item.reason}")
        if self.status is Status.READY:
            self.set_status(Status.READY, self._listing_note())

    def _listing_note(self) -> str:
        """What the status says about the listing: tools left out, descriptions shortened."""
        def named(name: str) -> str:
            return repr(name if len(name) <= 80 else name[:77] + "...")

        parts: list[str] = []
        if self.skipped:
            shown = "; ".join(f"{named(s.name)} ({s.reason})" for s in self.skipped[:3])
            more = f"; and {len(self.skipped) - 3} more (see the log)" if len(self.skipped) > 3 else ""
            count = "1 tool was" if len(self.skipped) == 1 else f"{len(self.skipped)} tools were"
            parts.append(f"{count} left out: {shown}{more}.")
        left_out = {s.name for s in self.skipped}
        long = [t.name for t in self.tools if len(t.description or "") > MAX_DESCRIPTION and t.name not in left_out
                and self.config.tool_enabled(t.name)]
        if long:
            names = ", ".join(named(n) for n in long[:3]) + (f" and {len(long) - 3} more" if len(long) > 3 else "")
            parts.append(f"The description of {names} was shortened to {MAX_DESCRIPTION:,} characters.")
        return " ".join(parts)

    def _unregister(self) -> None:
        if self.registry is not None:
            self.registry.unregister_source(self.config.source)

    async def _refresher(self, client: Client) -> None:
        while True:
            await self._refresh_wanted.wait()
            self._refresh_wanted.clear()
            try:
                await self._refresh_tools(client)
                self.log.note(f"tool list changed: {len(self.tools)} tools")
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                self.log.note(f"could not refresh the tool list: {leaf(exc)}")

    async def _listener(self, client: Client) -> None:
        """2026-07-28 connections deliver list changes only on a listen stream we open."""
        caps = client.server_capabilities.tools
        if caps is None or not caps.list_changed:
            return
        for _ in range(3):
            try:
                async with client.listen(tools_list_changed=True) as sub:
                    async for _event in sub:
                        self._refresh_wanted.set()
                return
            except SubscriptionLost:
                self._refresh_wanted.set()  # changes may have been missed while it was down
            except (MCPError, ListenNotSupportedError) as exc:
                self.log.note(f"the server refused to report tool changes: {exc}")
                return

    async def _on_message(self, message: Any) -> None:
        if self.features.on_message(message):  # resources and prompts changed (features.py)
            return
        if isinstance(message, types.ToolListChangedNotification):
            self._refresh_wanted.set()
        elif isinstance(message, Exception):
            if self.config.transport.remote:
                self.log.note(f"transport error: {type(message).__name__}: {message}")
                return
            self.garbage_lines += 1
            self.log.note(f"the server wrote something that is not JSON-RPC to stdout: {snippet(message)}")

    # -- logging and roots (client_hooks.py) ----------------------------------------
    async def _set_log_level(self, client: Client) -> None:
        """On a handshake connection, ask for the configured level (``logging/setLevel``); a 2026-07-28
        connection opts in per request instead (``Client.log_level``). A refusal is only noted."""
        if self.protocol_version in MODERN_PROTOCOL_VERSIONS or client.server_capabilities.logging is None:
            return
        import warnings

        from mcp.shared.exceptions import MCPDeprecationWarning

        try:
            with warnings.catch_warnings():  # deprecated at 2026-07-28 only; this is a handshake connection
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                async with asyncio.timeout(min(self.config.timeout, 10.0)):
                    await client.session.set_logging_level(self.config.log_level)  # type: ignore[arg-type]
        except (MCPError, TimeoutError) as exc:
            self.log.note(f"the server did not take the log level {self.config.log_level!r}: {leaf(exc)}")

    async def roots_changed(self) -> bool:
        """Tell the server its roots changed (``notifications/roots/list_changed``) when they did since
        the last time it was told; 2026-07-28 has no such notification (a server asks per request)."""
        client = self._client
        now = [str(r.uri) for r in self.hooks.roots_for(self.config)]
        if client is None or now == self._roots_sent:
            return False
        self._roots_sent = now
        if self.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return False
        import warnings

        from mcp.shared.exceptions import MCPDeprecationWarning

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            await client.session.send_roots_list_changed()
        self.log.note(f"roots changed: {len(now)} folders")
        return True

    # -- calls -----------------------------------------------------------------
    def _auth_refusal(self, tool: str) -> ToolOutput | None:
        """A call the server refused for want of (enough) authorization: say "Sign in", not "error".

        A 401 (the sign-in ran out and could not be refreshed) makes the server need a sign-in;
        a step-up nobody could answer now leaves the server ready for its other tools."""
        session = self._oauth
        if session is None or (session.challenge is None and session.error is None):
            return None
        challenge, error = session.challenge, session.error
        session.challenge = session.error = None
        sentence = error or self._challenge_sentence(challenge)
        if session.machine and (challenge is None or not challenge.step_up):
            # no browser: a new token was asked for and refused; Settings, not "Sign in", fixes it
            self.set_status(Status.FAILED, sentence)
            return ToolOutput(f"'{tool}' on MCP server '{self.name}' could not run. {sentence}", is_error=True)
        if challenge is not None and not challenge.step_up:
            self.set_status(Status.NEEDS_AUTH, sentence)
        return ToolOutput(f"'{tool}' on MCP server '{self.name}' could not run. {sentence}", is_error=True,
                          structured={"needs_sign_in": self.name,
                                      "scope": challenge.scope if challenge is not None else None})

    async def call_tool(self, tool: str, arguments: dict[str, Any], *,
                        report_progress: ProgressReport | None = None) -> ToolOutput:
        """Call one tool; every failure comes back as an error result. Cancellation propagates.

        ``report_progress`` hears the server's progress notifications (at most every ``PROGRESS_EVERY`` s,
        and always the one that reaches the total), for the chat row's bar."""
        client = self._client
        if self.status is Status.NEEDS_AUTH:
            return ToolOutput(f"'{tool}' on MCP server '{self.name}' could not run. {self.reason}", is_error=True,
                              structured={"needs_sign_in": self.name, "scope": None})
        if client is None or self.status is not Status.READY:
            why = f" ({self.status.value}: {self.reason})" if self.reason else f" ({self.status.value})"
            return ToolOutput(f"The MCP server '{self.name}' is not running{why}.", is_error=True)
        loop = asyncio.get_running_loop()
        timeout = self.config.timeout
        now = loop.time()
        ceiling = now + timeout * PROGRESS_CEILING_FACTOR
        deadline = Deadline(loop, now + timeout)  # asyncio.timeout's semantics, cheaper per call (deadline.py)
        progressed = False

        shown_at = -PROGRESS_EVERY

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            nonlocal progressed, shown_at
            progressed = True
            if not deadline.expired():
                deadline.reschedule(min(loop.time() + timeout, ceiling))
            now = loop.time()
            if report_progress is not None and (now - shown_at >= PROGRESS_EVERY
                                                or (total is not None and progress >= total)):
                shown_at = now
                try:
                    report_progress(progress, total, message[:300] if isinstance(message, str) else None)
                except Exception:  # a listener's fault must not fail the call
                    log.exception("a progress listener failed")

        try:
            with deadline:
                result = await client.call_tool(tool, arguments, progress_callback=on_progress)
        except TimeoutError:
            if deadline.expired() and progressed and deadline.when() >= ceiling:
                return ToolOutput(f"'{tool}' on MCP server '{self.name}' kept reporting progress for "
                                  f"{timeout * PROGRESS_CEILING_FACTOR:g} s without finishing (progress extends its "
                                  f"{timeout:g} s timeout at most {PROGRESS_CEILING_FACTOR} times over); "
                                  "the call was cancelled.", is_error=True)
            if deadline.expired():
                return ToolOutput(f"'{tool}' on MCP server '{self.name}' did not answer within {timeout:g} s; "
                                  "the call was cancelled.", is_error=True)
            return ToolOutput(f"'{tool}' on MCP server '{self.name}' failed: the connection timed out.", is_error=True)
        except MCPError as exc:
            refused = self._auth_refusal(tool)
            if refused is not None:
                return refused
            if exc.error.code == CONNECTION_CLOSED:
                if self._stopping:
                    return ToolOutput(f"The MCP server '{self.name}' was stopped during the call.", is_error=True)
                self._lost.set()  # the owner task winds down; the manager reconnects
                if self.config.transport.remote:
                    return ToolOutput(f"The connection to MCP server '{self.name}' was lost during the call "
                                      f"to '{tool}'.", is_error=True)
                if self._pipe is not None:
                    await self._pipe.drained(0.5)
                return ToolOutput(f"The MCP server '{self.name}' stopped during the call to '{tool}'."
                                  f"{self._stderr_hint()}", is_error=True)
            if exc.error.code == PARSE_ERROR:  # the guard's (or the HTTP transport's) unreadable answer
                why = exc.error.message
                if "recursion limit" in why:
                    why = "the server's answer is nested too deeply to be read"
                elif "validation error" in why:  # the HTTP transport's own wording is a pydantic dump
                    why = "the server's answer is not a valid JSON-RPC message"
                return ToolOutput(f"'{tool}' on MCP server '{self.name}' failed: {why[:300]}.", is_error=True)
            return ToolOutput(f"MCP server '{self.name}' answered '{tool}' with an error: {exc.error.message} "
                              f"(code {exc.error.code}).", is_error=True,
                              structured={"code": exc.error.code, "data": exc.error.data})
        except Exception as exc:  # a malformed result, a schema mismatch, a transport error
            cause = leaf(exc)
            log.debug("MCP call %s/%s failed", self.name, tool, exc_info=cause)
            return ToolOutput(f"'{tool}' on MCP server '{self.name}' failed: {cause}", is_error=True)
        return result_to_output(result)

