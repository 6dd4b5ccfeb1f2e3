"""All configured MCP servers: start them, watch them, restart crashed ones, close them.

``McpManager`` owns one ``McpConnection`` per configured server and one
``ServerLog`` per server name (so the log survives restarts). Servers start
concurrently in the background; a slow one never holds up the others or the
window. A server that crashes after being ready is restarted with backoff
(1 s, 2 s, 4 s) at most three times in a row; the count starts again once a
server has stayed up for a minute, or when the person restarts it by hand.
``aclose()`` stops every connection concurrently (a stuck server can take ~4 s
to kill, STACK.md pitfall 9), so no server process outlives the app.

Status changes reach listeners as ``StatusEvent``s (plain callbacks, no Qt).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mcp_types as types

from cks_desktop.callbacks import Callbacks
from cks_desktop.mcp.config import (
    ConfigError,
    ServerConfig,
    parse_server,
    parse_servers,
    protect_stored_servers,
    remove_server,
)
from cks_desktop.mcp.connection import (
    STARTUP_TIMEOUT,
    McpConnection,
    Status,
    StatusEvent,
    StatusListener,
)
from cks_desktop.mcp.client_hooks import ClientHooks
from cks_desktop.mcp.convert import SkippedTool
from cks_desktop.mcp.oauth import SIGN_IN_TIMEOUT, OpenUrl, uses_oauth
from cks_desktop.mcp.oauth import sign_out as oauth_sign_out
from cks_desktop.mcp.stderr_log import ServerLog, log_file_name

if TYPE_CHECKING:
    from cks_desktop.mcp.host import McpHost
    from cks_desktop.secrets import SecretStore
    from cks_desktop.settings import Settings
    from cks_desktop.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

RESTART_DELAYS = (1.0, 2.0, 4.0)
STABLE_AFTER = 60.0


@dataclass(frozen=True)
class ServerState:
    """One row of the GUI's server list."""

    name: str
    enabled: bool
    status: Status
    reason: str = ""
    tools: int = 0
    transport: str = ""
    target: str = ""  # the command line or the URL


@dataclass
class ProbeResult:
    ok: bool
    reason: str = ""
    tools: list[types.Tool] = field(default_factory=list)
    skipped: list[SkippedTool] = field(default_factory=list)
    protocol_version: str | None = None
    server_name: str = ""
    stderr: list[str] = field(default_factory=list)
    garbage_lines: int = 0
    status: str = ""  # the connection's ``Status`` value when the probe ended ("needs_auth": a browser sign-in)


class McpManager:
    def __init__(self, settings: "Settings", secrets: "SecretStore | None", registry: "ToolRegistry | None",
                 log_dir: Path, *, startup_timeout: float = STARTUP_TIMEOUT,
                 restart_delays: tuple[float, ...] = RESTART_DELAYS, stable_after: float = STABLE_AFTER,
                 login_path: Callable[[], Awaitable[str | None]] | None = None,
                 targets: dict[str, Any] | None = None, host: "McpHost | None" = None) -> None:
        self.settings = settings
        # What servers may ask of the app (elicitation, sampling) and the roots they see: one for
        # every connection; ``hooks.host`` is replaced when the window's dialogs are up.
        self.hooks = ClientHooks(host, lambda: self.settings.allowed_folders)
        self.secrets = secrets
        self.registry = registry
        self.log_dir = log_dir
        self.startup_timeout = startup_timeout
        self.restart_delays = restart_delays
        self.stable_after = stable_after
        self.login_path = login_path
        self.targets = targets or {}  # name -> in-process server (tests)
        self.connections: dict[str, McpConnection] = {}
        self.problems: dict[str, str] = {}
        self._logs: dict[str, ServerLog] = {}
        self._listeners: Callbacks[[StatusEvent]] = Callbacks("MCP manager")
        self._restart_tasks: dict[str, asyncio.Task[None]] = {}
        self._restarts: dict[str, int] = {}
        self._ready_at: dict[str, float] = {}
        self._closed = False
        # Set by a host that can show a browser (the GUI): a step-up (insufficient_scope) during a
        # call then opens it at once; without one, the call says "Sign in to <server> again".
        self._step_up_opener: OpenUrl | None = None
        self.sign_in_timeout = SIGN_IN_TIMEOUT

    @property
    def step_up_opener(self) -> OpenUrl | None:
        return self._step_up_opener

    @step_up_opener.setter
    def step_up_opener(self, opener: OpenUrl | None) -> None:
        self._step_up_opener = opener
        for conn in self.connections.values():  # the next connect of each picks it up
            conn.step_up_opener = opener

    # -- configuration -------------------------------------------------------------
    def configs(self) -> dict[str, ServerConfig]:
        configs, self.problems = parse_servers(self.settings.mcp_servers)
        return configs

    def config(self, name: str) -> ServerConfig:
        """One server's config; raises ``ConfigError`` (unknown name or invalid entry)."""
        if name not in self.settings.mcp_servers:
            raise ConfigError(f"There is no MCP server named '{name}'.")
        return parse_server(name, self.settings.mcp_servers[name])

    def server_log(self, name: str) -> ServerLog:
        if name not in self._logs:
            known = self.secrets.known_values if self.secrets is not None else None
            self._logs[name] = ServerLog(self.log_dir / log_file_name(name), secrets=known)
        return self._logs[name]

    def log_path(self, name: str) -> Path:
        return self.server_log(name).path

    def stderr_tail(self, name: str, n: int = 200) -> list[str]:
        return self.server_log(name).tail(n)

    # -- events -----------------------------------------------------------------
    def subscribe(self, listener: StatusListener) -> Callable[[], None]:
        return self._listeners.subscribe(listener)

    def _emit(self, event: StatusEvent) -> None:
        if event.status is Status.READY:
            self._ready_at[event.server] = time.monotonic()
        self._listeners.emit(event)
        if event.crashed and not self._closed:
            self._schedule_restart(event.server, event.reason)

    def statuses(self) -> list[ServerState]:
        configs = self.configs()
        rows: list[ServerState] = []
        for name in self.settings.mcp_servers:
            if name in self.problems:
                rows.append(ServerState(name, False, Status.FAILED, self.problems[name]))
                continue
            cfg = configs[name]
            conn = self.connections.get(name)
            status, reason = (conn.status, conn.reason) if conn else (Status.STOPPED, "")
            tools = 0
            if conn and conn.tools:  # the listed, enabled tools less those left out (convert.build_specs)
                listed = [t.name for t in conn.tools if cfg.tool_enabled(t.name)]
                names = set(listed)
                tools = max(0, len(listed) - len([s for s in conn.skipped if s.name in names]))
            rows.append(ServerState(name, cfg.enabled, status, reason, tools, cfg.transport, cfg.describe()))
        return rows

    # -- lifecycle --------------------------------------------------------------
    def _connection(self, config: ServerConfig) -> McpConnection:
        conn = self.connections.get(config.name)
        if conn is not None and conn.config == config:
            return conn
        conn = McpConnection(config, log=self.server_log(config.name), registry=self.registry,
                             secrets=self.secrets, target=self.targets.get(config.name),
                             startup_timeout=self.startup_timeout, login_path=self.login_path, hooks=self.hooks)
        conn.step_up_opener = self.step_up_opener
        conn.sign_in_timeout = self.sign_in_timeout
        conn.subscribe(self._emit)
        self.connections[config.name] = conn
        return conn

    async def start_all(self) -> None:
        """Start every enabled server concurrently; return when each is ready or failed."""
        moved = protect_stored_servers(self.settings, self.secrets)
        if moved:  # secrets an older version kept in clear go to the keychain before anything starts
            try:
                self.settings.save()
                log.info("moved to the keychain from the settings file: %s", ", ".join(moved))
            except OSError as exc:
                log.warning("could not save the settings after moving secrets to the keychain: %s", exc)
        configs = self.configs()
        for name, problem in self.problems.items():
            self._emit(StatusEvent(name, Status.FAILED, problem, None, False, time.time()))
        await asyncio.gather(*(self.start(name) for name, cfg in configs.items() if cfg.enabled))

    def start_all_in_background(self) -> "asyncio.Task[None]":
        return asyncio.create_task(self.start_all(), name="mcp:start-all")

    async def start(self, name: str) -> bool:
        """Start one server (a manual start also resets its automatic-restart count)."""
        self._cancel_restart(name)
        self._restarts.pop(name, None)
        config = self.config(name)
        old = self.connections.get(name)
        if old is not None and old.config != config:
            await old.stop()
        return await self._connection(config).start()

    async def stop(self, name: str) -> None:
        self._cancel_restart(name)
        conn = self.connections.get(name)
        if conn is not None:
            await conn.stop()

    async def restart(self, name: str) -> bool:
        await self.stop(name)
        return await self.start(name)

    async def sign_in(self, name: str, open_url: OpenUrl) -> bool:
        """Sign in to a server that asks for OAuth: (re)connect it with the browser step allowed.

        ``open_url`` shows the authorization page (the GUI's system browser, ``webbrowser``, or a
        printed URL). The tokens land in the keychain; True when the server is ready afterwards.
        """
        self._cancel_restart(name)
        self._restarts.pop(name, None)
        config = self.config(name)
        if not uses_oauth(config):
            conn = self._connection(config)
            conn.set_status(Status.FAILED, f"'{name}' does not use OAuth sign-in (it is not a URL server, it has "
                                           "an Authorization header, or its \"oauth\" is false).")
            return False
        await self.stop(name)
        return await self._connection(config).start(sign_in=open_url)

    def cancel_sign_in(self, name: str) -> None:
        conn = self.connections.get(name)
        if conn is not None:
            conn.cancel_sign_in()

    async def sign_out(self, name: str) -> bool:
        """Forget the server's tokens and registration and disconnect it; the next start says "Sign in"."""
        config = self.config(name)
        await self.stop(name)
        return await oauth_sign_out(config, self.secrets)

    async def remove(self, name: str, *, delete_config: bool = True) -> None:
        """Stop a server, forget it and (by default) delete its entry and secrets, then save."""
        await self.stop(name)
        self.connections.pop(name, None)
        if self.registry is not None:
            self.registry.unregister_source(f"mcp:{name}")
        if delete_config:
            remove_server(self.settings, name, self.secrets)
            self.settings.save()
        self._logs.pop(name, None)

    async def reload(self) -> None:
        """Bring running servers in line with the settings (after the person edited them)."""
        configs = self.configs()
        jobs: list[Awaitable[Any]] = []
        for name, conn in list(self.connections.items()):
            cfg = configs.get(name)
            if cfg is None:
                jobs.append(self.remove(name, delete_config=False))
            elif not cfg.enabled:
                jobs.append(self.stop(name))
            elif cfg != conn.config or conn.status in (Status.STOPPED, Status.FAILED, Status.NEEDS_AUTH):
                jobs.append(self.restart(name))
        for name, cfg in configs.items():
            if cfg.enabled and name not in self.connections:
                jobs.append(self.start(name))
        await asyncio.gather(*jobs)
        await self.roots_changed()

    async def roots_changed(self) -> None:
        """Tell each running server whose roots changed (the allowed folders were edited)."""
        for conn in list(self.connections.values()):
            try:
                await conn.roots_changed()
            except Exception as exc:  # a server gone meanwhile: its restart sends fresh roots anyway
                conn.log.note(f"could not tell the server its roots changed: {exc}")

    def instructions(self) -> dict[str, str]:
        """The instructions of each ready server that gave some (quoted as data in the system prompt)."""
        return {name: conn.instructions for name, conn in self.connections.items()
                if conn.status is Status.READY and conn.instructions}

    async def probe(self, name_or_config: str | ServerConfig, *, keep_log: bool = True) -> ProbeResult:
        """Connect, list the tools, disconnect ("Test connection"). Never raises for a server's fault."""
        try:
            config = self.config(name_or_config) if isinstance(name_or_config, str) else name_or_config
        except ConfigError as exc:
            return ProbeResult(ok=False, reason=str(exc))
        conn = McpConnection(config, log=self.server_log(config.name), registry=None, secrets=self.secrets,
                             target=self.targets.get(config.name), startup_timeout=self.startup_timeout,
                             login_path=self.login_path, hooks=self.hooks)
        try:
            ok = await conn.start()
            result = ProbeResult(ok=ok, reason=conn.reason, tools=list(conn.tools), skipped=list(conn.skipped),
                                 protocol_version=conn.protocol_version,
                                 server_name=conn.server_info.name if conn.server_info else "",
                                 status=conn.status.value)
        finally:
            await conn.stop()
        result.stderr = conn.log.server_tail(20)
        result.garbage_lines = conn.garbage_lines
        return result

    async def aclose(self) -> None:
        """Stop everything, concurrently. Safe to call twice."""
        self._closed = True
        pending = [t for t in self._restart_tasks.values() if not t.done()]
        for name in list(self._restart_tasks):
            self._cancel_restart(name)
        if pending:
            await asyncio.wait(pending)
        await asyncio.gather(*(conn.stop() for conn in self.connections.values()), return_exceptions=True)

    # -- automatic restarts --------------------------------------------------------
    def _cancel_restart(self, name: str) -> None:
        task = self._restart_tasks.pop(name, None)
        if task is not None and not task.done():
            task.cancel()

    def _schedule_restart(self, name: str, reason: str) -> None:
        if name in self._restart_tasks and not self._restart_tasks[name].done():
            return
        ready_at = self._ready_at.get(name)
        if ready_at is not None and time.monotonic() - ready_at >= self.stable_after:
            self._restarts[name] = 0
        self._restart_tasks[name] = asyncio.get_running_loop().create_task(
            self._auto_restart(name, reason), name=f"mcp:restart:{name}")

    async def _auto_restart(self, name: str, reason: str) -> None:
        conn = self.connections.get(name)
        if conn is None:
            return
        limit = len(self.restart_delays)
        while True:
            count = self._restarts.get(name, 0)
            if count >= limit:
                conn.set_status(Status.FAILED, f"{reason} It was restarted {limit} times and kept failing; "
                                               "restart it by hand once the problem is fixed.")
                return
            self._restarts[name] = count + 1
            delay = self.restart_delays[count]
            conn.mark_restarting(f"Restarting in {delay:g} s (attempt {count + 1} of {limit}). {reason}")
            await asyncio.sleep(delay)
            if await conn.start():
                return
            reason = conn.reason
