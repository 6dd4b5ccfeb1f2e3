"""The Qt-free API behind the window's Settings → "Share with other apps" page.

    service = services.share_service(app_approver=window_approver)   # runtime.AppServices
    await service.start(port=0)           # HTTP on the app's own asyncio loop (127.0.0.1)
    service.url, service.token            # what to show and copy
    service.clients()                     # the hosts connected now (name, version, protocol, last seen)
    service.snippets(session_id=None)     # Claude Desktop / VS Code / Cursor, stdio and URL forms
    await service.stop()

Start binds before it returns (a port in use raises ``HttpStartError``, one sentence). The
server runs as a task on the running loop, never blocking it; ``stop`` closes every
connection. Which sessions are shared, the approval choice and the token are the sharing use case's
(``runtime/sharing.py``). ``app_approver`` is how "this app asks too" reaches the window's approval dialog.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cks_desktop.serve.snippets import all_snippets

if TYPE_CHECKING:
    from pathlib import Path
    from cks_desktop.serve.server import Serving
    from cks_desktop.serve.clients import ClientRecord
    from cks_desktop.serve.http import HttpServer
    from cks_desktop.secrets import SecretStore
    from cks_desktop.settings import Settings
    from cks_desktop.tools.registry import ToolRegistry


class ShareService:
    def __init__(self, registry: "ToolRegistry", make_serving: Callable[[], "Serving"], secrets: "SecretStore",
                 settings: "Settings", *, command: Callable[[str | None], list[str]] | None = None,
                 presence_dir: "Path | None" = None) -> None:
        self.registry = registry
        self.presence_dir = presence_dir  # where ``mcp serve`` processes list their clients
        self._make_serving = make_serving
        self.secrets = secrets
        self.settings = settings
        self._command = command
        self._http: "HttpServer | None" = None
        self.token_is_new = False  # the token was made by the last start: show it now (it is shown once)

    @property
    def running(self) -> bool:
        return self._http is not None and self._http.running

    @property
    def url(self) -> str | None:
        return self._http.url if self._http is not None else None

    @property
    def token(self) -> str | None:
        return self._http.token if self._http is not None else None

    async def start(self, host: str = "127.0.0.1", port: int = 0, *, auth: bool = True) -> str:
        """Start serving the shared sessions over HTTP; returns the URL."""
        from cks_desktop.serve.server import build_server
        from cks_desktop.serve.http import HttpServer
        from cks_desktop.serve.token import ensure_token

        if self.running:
            return self.url or ""
        token = None
        if auth:
            made = ensure_token(self.secrets)
            token, self.token_is_new = made.value, made.new
        serving = self._make_serving()
        http = HttpServer(build_server(self.registry, serving=serving), serving, host=host, port=port, token=token)
        await http.start()
        self._http = http
        return http.url

    async def stop(self) -> None:
        http, self._http = self._http, None
        if http is not None:
            await http.stop()

    def clients(self) -> list["ClientRecord"]:
        """The clients of the window's own server, then those of ``mcp serve`` processes on
        the same data folder (``presence.py``)."""
        own = self._http.serving.clients.records() if self._http is not None else []
        if self.presence_dir is None:
            return own
        from cks_desktop.serve.presence import others

        return own + others(self.presence_dir)

    def snippets(self, session_id: str | None = None) -> dict[str, dict[str, Any]]:
        """Configuration for each host: the stdio form (``mcp serve``; one session or the shared
        ones) and, while the server runs, the URL form with the token."""
        from cks_desktop.serve.server import serve_command

        command = (self._command or (lambda sid: serve_command(sid)))(session_id)
        return all_snippets(command, self.url, self.token)
