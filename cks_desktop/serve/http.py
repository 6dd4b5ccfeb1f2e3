"""Streamable HTTP for ``mcp serve --http [HOST:]PORT`` and the window's "Share with other apps".

Built from the SDK's pieces: ``StreamableHTTPSessionManager`` (both protocol eras, one
session per 2025-era client, SSE resumption through our ``MemoryEventStore``, an idle timeout
and a session cap, with our ``admission.SessionLimits`` in front: a share per client, a reserve
for new ones, idle sessions closed sooner near the cap), ``TransportSecuritySettings`` behind
our own strict parse of Host and Origin (``hostcheck.StrictHostOrigin``, against DNS rebinding:
only loopback names, or the bound host and ``--allow-host`` names, with any port),
and ``BearerAuthBackend`` with a one-token ``TokenVerifier``. A request without the right
token gets 401 with ``WWW-Authenticate: Bearer`` and a JSON-RPC error saying where the
token is; a foreign or malformed Host 421, Origin 403 (ours, then the SDK's), a body over 4 MB 413.

The server runs as a task on the caller's asyncio loop (uvicorn's ``Server``, with its signal
handling left to the caller: the window has its own quit flow, the CLI sets ``should_exit``).
It binds its socket itself before starting, so port 0 picks a free port and ``url`` is known
at once; a port in use is one sentence (``HttpStartError``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import socket
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server

    from cks_desktop.serve.server import Serving

log = logging.getLogger(__name__)

PATH = "/mcp"
SESSION_IDLE_TIMEOUT = 30 * 60.0
SSE_RETRY_MS = 3000  # the retry field of SSE streams (and their priming event): how soon a dropped host reconnects
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
TOKEN_HINT = ("send the token as 'Authorization: Bearer TOKEN'; `cks-desktop mcp token` shows it "
              "(Settings → Share with other apps in the window)")
# What an OAuth client (a bridge such as mcp-remote, which tries OAuth discovery and registration on any
# 401) reads at the OAuth addresses it tries: this server issues no tokens, its one token is given out of band.
NO_OAUTH = ("This server does not sign in with OAuth: it takes one bearer token, given out of band. Pass it as a "
            "header (mcp-remote: --header \"Authorization: Bearer TOKEN\"); `cks-desktop mcp token` shows it.")


class HttpStartError(Exception):
    """The server could not start (bad address, port in use): one sentence."""


def parse_bind(text: str) -> tuple[str, int]:
    """``PORT``, ``HOST:PORT`` or ``[V6]:PORT`` → (host, port); 127.0.0.1 by default."""
    value = text.strip()
    host = "127.0.0.1"
    port_text = value
    if value.startswith("["):
        end = value.find("]")
        if end < 0 or value[end + 1:end + 2] != ":":
            raise ValueError(f"{text!r} is not [HOST]:PORT")
        host, port_text = value[1:end], value[end + 2:]
    elif ":" in value:
        host, port_text = value.rsplit(":", 1)
        host = host or "127.0.0.1"
    try:
        port = int(port_text)
    except ValueError:
        raise ValueError(f"{text!r} does not end in a port number (e.g. 8765 or 127.0.0.1:8765)") from None
    if not 0 <= port <= 65535:
        raise ValueError(f"port {port} is outside 0–65535")
    return host, port


def is_loopback(host: str) -> bool:
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def allowed_names(host: str, extra_hosts: tuple[str, ...] = ()) -> list[str]:
    """The host names Host and Origin may carry: loopback names, the bound host, ``--allow-host``."""
    names = list(LOOPBACK_NAMES)
    if not is_loopback(host) and host not in ("0.0.0.0", "::"):
        names.append(_url_host(host))
    return names + [_url_host(h) for h in extra_hosts]


def security_settings(host: str, extra_hosts: tuple[str, ...] = ()) -> Any:
    """The SDK's own check (kept behind ``StrictHostOrigin``, which parses the headers first)."""
    from mcp.server.transport_security import TransportSecuritySettings

    names = allowed_names(host, extra_hosts)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"{n}:*" for n in names] + names,
        allowed_origins=[f"{scheme}://{n}:*" for n in names for scheme in ("http", "https")]
        + [f"{scheme}://{n}" for n in names for scheme in ("http", "https")])


class _RequireToken:
    """401 unless ``BearerAuthBackend`` accepted the request's token (``scope["user"]``)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

        if scope["type"] != "http" or isinstance(scope.get("user"), AuthenticatedUser):
            await self.app(scope, receive, send)
            return
        given = any(k.lower() == b"authorization" for k, _ in scope.get("headers", []))
        why = "The bearer token is wrong" if given else "This server needs a bearer token (not OAuth: pass it " \
                                                         "with --header in mcp-remote)"
        body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
            "code": -32001, "message": f"{why}: {TOKEN_HINT}."}}).encode()
        await send({"type": "http.response.start", "status": 401, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            (b"www-authenticate", b'Bearer error="invalid_token", error_description="' + why.encode() + b'"')]})
        await send({"type": "http.response.body", "body": body})


async def _no_oauth(scope: Any, receive: Any, send: Any) -> None:
    """404 at every address but the endpoint, as an OAuth error (RFC 6749 section 5.2) an OAuth client prints."""
    body = json.dumps({"error": "invalid_request", "error_description": NO_OAUTH}).encode()
    await send({"type": "http.response.start", "status": 404, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


class _ObserveSessions:
    """Tells the client list when an HTTP session ends, seen from outside the SDK's manager
    (it has no close hook): a DELETE of the session answered 2xx ends it at once; its standalone
    GET stream closing starts ``ClientTracker``'s grace time, after which a host that did not
    come back (it quit without a DELETE) leaves the list, its subscriptions and log level too."""

    def __init__(self, app: Any, serving: "Serving") -> None:
        self.app = app
        self.serving = serving

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        method = scope.get("method") if scope["type"] == "http" else None
        session_id = next((v.decode("latin-1") for k, v in scope.get("headers", [])
                           if k.lower() == b"mcp-session-id"), None) if method in ("GET", "DELETE") else None
        if session_id is None:
            await self.app(scope, receive, send)
            return
        key = f"http:{session_id}"
        status = 0
        opened = False
        clients = self.serving.clients

        async def watch(message: Any) -> None:
            nonlocal status, opened
            if message["type"] == "http.response.start":
                status = int(message["status"])
                if method == "GET" and status == 200:
                    opened = True
                    clients.stream_opened(key)
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            if method == "DELETE" and 200 <= status < 300:
                self._forget([key])
                clients.ended(key)
            elif opened:
                clients.stream_closed(key)
                with contextlib.suppress(RuntimeError):  # no loop: the server is stopping
                    asyncio.get_running_loop().call_later(clients.stream_grace + 0.1, self._sweep)

    def _sweep(self) -> None:
        self._forget(self.serving.clients.gone())

    def _forget(self, keys: list[str]) -> None:
        for key in keys:
            self.serving.live.forget(key)
            self.serving.logbook.forget(key)


def build_app(server: "Server[Any]", *, host: str, token: str | None,
              extra_hosts: tuple[str, ...] = (), serving: "Serving | None" = None) -> tuple[Any, Any]:
    """The Starlette app and its session manager (the manager runs in the app's lifespan)."""
    from mcp.server.auth.middleware.bearer_auth import BearerAuthBackend
    from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.authentication import AuthenticationMiddleware
    from starlette.routing import Route

    from cks_desktop.serve.admission import MAX_SESSIONS, SessionLimits
    from cks_desktop.serve.events import MemoryEventStore
    from cks_desktop.serve.hostcheck import StrictHostOrigin
    from cks_desktop.serve.token import StaticTokenVerifier

    manager = StreamableHTTPSessionManager(
        app=server, event_store=MemoryEventStore(), security_settings=security_settings(host, extra_hosts),
        session_idle_timeout=SESSION_IDLE_TIMEOUT, max_sessions=MAX_SESSIONS, retry_interval=SSE_RETRY_MS)
    endpoint: Any = StreamableHTTPASGIApp(manager)
    if serving is not None:
        endpoint = _ObserveSessions(endpoint, serving)
    endpoint = SessionLimits(endpoint, path=PATH)
    middleware = [Middleware(StrictHostOrigin, names=allowed_names(host, extra_hosts))]
    if token is not None:
        middleware += [Middleware(AuthenticationMiddleware, backend=BearerAuthBackend(StaticTokenVerifier(token)))]
        endpoint = _RequireToken(endpoint)

    @contextlib.asynccontextmanager
    async def lifespan(app: Any) -> Any:
        async with manager.run():
            yield

    from starlette.routing import Mount

    routes: list[Any] = [Route(PATH, endpoint=endpoint, methods=["GET", "POST", "DELETE"])]
    if token is not None:  # OAuth discovery and registration find a sentence, not a bare "Not Found"
        routes.append(Mount("/", app=_no_oauth))
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    return app, manager


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host.strip("[]"), port))
        sock.listen(128)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        if exc.errno in (98, 48, 10048):  # EADDRINUSE on Linux, macOS, Windows
            raise HttpStartError(f"Port {port} on {host} is already in use; pick another (or 0 for any free one).") \
                from None
        raise HttpStartError(f"Cannot listen on {host}:{port}: {exc.strerror or exc}.") from None
    return sock


@dataclass
class HttpServer:
    """One running streamable-HTTP endpoint (start → url → stop)."""

    server: "Server[Any]"
    serving: "Serving"
    host: str = "127.0.0.1"
    port: int = 0
    token: str | None = None
    extra_hosts: tuple[str, ...] = ()
    _uvicorn: Any = field(default=None, repr=False)
    _task: "asyncio.Task[None] | None" = field(default=None, repr=False)
    _sock: socket.socket | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"http://{_url_host(self.host)}:{self.port}{PATH}"

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def start(self) -> None:
        import uvicorn

        if self.token is None and not is_loopback(self.host):
            raise HttpStartError("Serving without a token is allowed only on a loopback address (127.0.0.1, ::1).")
        app, _ = build_app(self.server, host=self.host, token=self.token, extra_hosts=self.extra_hosts,
                           serving=self.serving)
        sock = _bind(self.host, self.port)
        self._sock = sock
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                                timeout_graceful_shutdown=3, ws="none", log_config=None)

        class _Server(uvicorn.Server):
            @contextlib.contextmanager
            def capture_signals(self) -> Iterator[None]:  # the caller owns signals (the window, the CLI)
                yield

        self._uvicorn = _Server(config)
        await self.serving.live.start()
        self._task = asyncio.create_task(self._uvicorn.serve(sockets=[sock]), name="mcp-http")
        while not self._uvicorn.started:
            if self._task.done():
                await self.serving.live.stop()
                exc = self._task.exception()
                raise HttpStartError(f"The HTTP server did not start: {exc or 'it stopped at once'}.")
            await asyncio.sleep(0.01)

    async def wait(self) -> None:
        if self._task is not None:
            await self._task

    def request_stop(self) -> None:
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True

    async def stop(self) -> None:
        """Close every connection and the socket; returns when the server is down."""
        self.request_stop()
        task = self._task
        if task is not None:
            try:
                await asyncio.wait_for(asyncio.shield(task), 5)
            except (asyncio.TimeoutError, Exception):
                if self._uvicorn is not None:
                    self._uvicorn.force_exit = True
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        await self.serving.live.stop()
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        self._task = None
