"""Serving the graph to other MCP hosts from a terminal (`mcp serve`), the use case the command calls.

``open_serve`` composes one run: what is served (the sharing use case's ``ServePlan``: one pinned
session or the shared ones), the same services as the window and ``chat`` with the host's toolset
(no agent tools: a host brings its own model), the bearer token for HTTP (kept in the keychain, or
made for this start), and the presence file through which the window's Share page lists this
process's clients (``serve/presence.py``). The command parses its options, calls ``open_serve``,
prints what ``ServeRun`` says (``announce`` lines) and waits; every refusal is one
``SharingRefused`` sentence, raised before anything listens.

The window does not use this: its "Share with other apps" runs the HTTP server on the window's own
loop (``serve/service.py``'s ``ShareService``, built by ``AppServices.share_service``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cks_desktop.runtime.sharing import SharingRefused

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.paths import AppPaths
    from cks_desktop.runtime.services import AppServices
    from cks_desktop.secrets import SecretStore
    from cks_desktop.serve.http import HttpServer
    from cks_desktop.serve.presence import Presence
    from cks_desktop.serve.server import Serving
    from cks_desktop.serve.token import Token
    from cks_desktop.settings import Settings

__all__ = ["ServeFailed", "ServeRun", "http_bind", "open_serve"]


class ServeFailed(SharingRefused):
    """The request was sound but the machine refused it: the keychain failed, the address is in use."""


def http_bind(address: str, *, token: bool) -> tuple[str, int]:
    """``HOST:PORT`` (or a port) as the address to listen on; without a token only loopback is
    allowed, since anyone who can reach the address could read and change the graph."""
    from cks_desktop.serve.http import is_loopback, parse_bind

    try:
        bind = parse_bind(address)
    except ValueError as exc:
        raise SharingRefused(f"{exc}.") from None
    if not token and not is_loopback(bind[0]):
        raise SharingRefused(f"serving without a token is allowed only on a loopback address (127.0.0.1 or ::1), "
                             f"not {bind[0]}: anyone who can reach that address could read and change the graph.")
    return bind


@dataclass
class ServeRun:
    """One `mcp serve` run, composed and not yet listening. ``what`` names what is served;
    ``token`` is the bearer token HTTP asks for (None: stdio, or no token on loopback)."""

    services: "AppServices"
    serving: "Serving"
    presence: "Presence"
    what: str
    bind: tuple[str, int] | None
    token: "Token | None"
    allow_hosts: tuple[str, ...] = ()
    _http: "HttpServer | None" = field(default=None, repr=False)

    async def serve_stdio(self) -> None:
        """Answer the host on stdin/stdout until it closes stdin."""
        from cks_desktop.serve.server import serve_stdio

        await serve_stdio(self.services.registry, serving=self.serving)

    async def start_http(self) -> str:
        """Listen on ``bind``; returns the address hosts connect to. A port in use, or an address
        that cannot be bound, is one ``ServeFailed`` sentence."""
        from cks_desktop.serve.http import HttpServer, HttpStartError
        from cks_desktop.serve.server import build_server

        assert self.bind is not None, "start_http needs an address (open_serve with bind)"
        self._http = HttpServer(build_server(self.services.registry, serving=self.serving), self.serving,
                                host=self.bind[0], port=self.bind[1],
                                token=self.token.value if self.token is not None else None,
                                extra_hosts=self.allow_hosts)
        try:
            await self._http.start()
        except HttpStartError as exc:
            self._http = None
            raise ServeFailed(str(exc)) from None
        return self._http.url

    def request_stop(self) -> None:
        """Ask the HTTP server to stop (safe from a signal handler on the loop)."""
        if self._http is not None:
            self._http.request_stop()

    async def serve_http_until_stopped(self) -> None:
        """After ``start_http``: answer hosts until ``request_stop``, then close every connection."""
        assert self._http is not None, "start_http first"
        try:
            await self._http.wait()
        finally:
            await self._http.stop()

    def close(self) -> None:
        """The window stops listing this process's clients (the presence file goes)."""
        self.presence.clear()


def open_serve(paths: "AppPaths", settings: "Settings", store: "GraphStore", secrets: "SecretStore | None",
               session: str | None, *, bind: tuple[str, int] | None, token: bool = True, yes: bool = False,
               allow_hosts: Sequence[str] = ()) -> ServeRun:
    """Compose a run serving ``session`` (None: the shared sessions) on stdio (``bind`` None) or
    HTTP. ``SharingRefused`` (one sentence) when nothing can be served, ``ServeFailed`` when no
    token can be had;
    the caller closes ``store`` and the run (``close``)."""
    from cks_desktop.runtime.cases import UseCases
    from cks_desktop.runtime.services import AppServices
    from cks_desktop.serve.presence import Presence

    cases = UseCases(store, settings, secrets)
    plan = cases.sharing.plan(session)
    try:
        made = cases.sharing.token() if bind is not None and token else None
    except SharingRefused as exc:
        raise ServeFailed(str(exc)) from None
    # The same composition as the window and `chat`, with the host's toolset (no agent tools).
    services = AppServices.build(paths, settings, store, secrets=secrets, toolset="host")
    serving = services.host_serving(plan.pinned, yes=yes, transport="http" if bind else "stdio")
    presence = Presence(paths.data_dir / "serving")
    serving.clients.on_seen = presence.publish
    return ServeRun(services, serving, presence, plan.what, bind, made, tuple(allow_hosts))
