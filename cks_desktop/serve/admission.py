"""Fair shares of ``mcp serve --http``'s streamable-HTTP sessions, so one client cannot lock others out.

The SDK's session manager has one cap for everyone (``MAX_SESSIONS``) and closes a session only
after 30 idle minutes: one holder of the token that opened 256 sessions and left them idle locked
every new host out for half an hour. This ASGI middleware sits in front of the manager (after
the token check) and decides first:

- **Who is a client.** The peer address (host, not port) together with the credential's client
  id. The server has one token, so the token alone would make every host one client; the
  address tells hosts on other machines, or on other loopback addresses, apart. Hosts on one
  machine share a share.
- **A share per client: ``PER_CLIENT`` (32) open sessions.** Opening one more closes that
  client's own longest-idle session (a host that reconnects without a DELETE keeps working);
  only if all 32 are in use (a request or a GET stream in flight) is the new one refused, 429.
- **A reserve for new clients: the last ``RESERVE`` (32) of the 256.** A client that already
  holds a session may not take the total past 224 (it gets its own idle session closed, or a 503);
  a client holding none may use the reserve.
- **Sooner near the limit.** From ``NEAR`` (192) open sessions on, each new session first closes
  the sessions idle for ``SHORT_IDLE`` (60 s) or more; at the cap itself a new client gets the
  longest-idle session of the biggest holder closed.

A session is idle when no request of it is in flight (an open GET stream counts as in flight),
since its last request ended. Closing is an ordinary ``DELETE`` sent through the manager on the
session owner's behalf (its credential and Host), so the SDK ends it the normal way and the
client list (``_ObserveSessions``) sees it go. A session the SDK ended by itself (its 30 minutes)
answers 404 and leaves our table then, or when our own count of its idle time runs out.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

log = logging.getLogger(__name__)

MAX_SESSIONS = 256
PER_CLIENT = 32
RESERVE = 32
NEAR = 192
SHORT_IDLE = 60.0
IDLE = 30 * 60.0  # the SDK's own idle timeout (http.SESSION_IDLE_TIMEOUT)


@dataclass
class _Session:
    client: str
    user: Any  # the opening request's scope["user"]: the SDK lets only that credential end the session
    host: bytes  # its (already checked) Host header
    in_flight: int
    idle_since: float


def _header(scope: Any, name: bytes) -> bytes | None:
    return next((v for k, v in scope.get("headers", []) if k.lower() == name), None)


def client_of(scope: Any) -> str:
    """Which client a request is from: the credential's client id at the peer's address."""
    user = scope.get("user")
    who = getattr(user, "username", "") or "-"
    peer = scope.get("client")
    return f"{who}@{peer[0] if peer else '?'}"


class SessionLimits:
    """ASGI middleware in front of the SDK's ``StreamableHTTPASGIApp`` (see the module docstring)."""

    def __init__(self, app: Any, *, path: str, clock: Callable[[], float] = time.monotonic,
                 max_sessions: int = MAX_SESSIONS, per_client: int = PER_CLIENT, reserve: int = RESERVE,
                 near: int = NEAR, short_idle: float = SHORT_IDLE, idle: float = IDLE) -> None:
        self.app = app
        self.path = path
        self.clock = clock
        self.max_sessions, self.per_client, self.reserve = max_sessions, per_client, reserve
        self.near, self.short_idle, self.idle = near, short_idle, idle
        self.sessions: dict[str, _Session] = {}
        self.opening: dict[str, int] = {}  # requests without a session id being answered, per client

    def held(self, client: str) -> list[str]:
        return [sid for sid, s in self.sessions.items() if s.client == client]

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        raw = _header(scope, b"mcp-session-id")
        if raw is not None:
            await self._existing(raw.decode("latin-1"), scope, receive, send)
            return
        version = _header(scope, b"mcp-protocol-version")
        if version is not None and version.decode("latin-1") not in HANDSHAKE_PROTOCOL_VERSIONS:
            await self.app(scope, receive, send)  # the session-less 2026-07-28 era opens nothing
            return
        await self._opening(scope, receive, send)

    async def _existing(self, sid: str, scope: Any, receive: Any, send: Any) -> None:
        record = self.sessions.get(sid)
        if record is None:
            await self.app(scope, receive, send)
            return
        record.in_flight += 1
        status = 0

        async def watch(message: Any) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            record.in_flight -= 1
            record.idle_since = self.clock()
            if status == 404 or (scope.get("method") == "DELETE" and 200 <= status < 300):
                self.sessions.pop(sid, None)

    async def _opening(self, scope: Any, receive: Any, send: Any) -> None:
        client = client_of(scope)
        refusal = await self._make_room(client)
        if refusal is not None:
            status, message = refusal
            log.warning("Refused a new HTTP session for %s: %s", client, message)
            await _refuse(send, status, message)
            return
        self.opening[client] = self.opening.get(client, 0) + 1
        opened: str | None = None

        async def watch(message: Any) -> None:
            nonlocal opened
            if message["type"] == "http.response.start" and int(message["status"]) < 400:
                sid = next((v.decode("latin-1") for k, v in message.get("headers", [])
                            if k.lower() == b"mcp-session-id"), None)
                if sid is not None:
                    opened = sid
                    self.sessions[sid] = _Session(client, scope.get("user"), _header(scope, b"host") or b"",
                                                  1, self.clock())
            await send(message)

        try:
            await self.app(scope, receive, watch)
        finally:
            self.opening[client] -= 1
            if not self.opening[client]:
                del self.opening[client]
            record = self.sessions.get(opened) if opened else None
            if record is not None:
                record.in_flight -= 1
                record.idle_since = self.clock()
        if opened is not None:  # a burst of openings may have run past the share: trim it back
            held = self.held(client)
            while len(held) > self.per_client and (victim := self._idlest(held, exclude=opened)) is not None:
                await self.close(victim)
                held.remove(victim)

    async def _make_room(self, client: str) -> tuple[int, str] | None:
        """Close what the rules say to close for one more session of ``client``; a refusal or None."""
        now = self.clock()
        for sid in [s for s, r in self.sessions.items() if r.in_flight == 0 and now - r.idle_since > self.idle]:
            del self.sessions[sid]  # the SDK has ended it already
        if self._total() >= self.near:
            for sid in sorted((s for s, r in self.sessions.items()
                               if r.in_flight == 0 and now - r.idle_since >= self.short_idle),
                              key=lambda s: self.sessions[s].idle_since):
                await self.close(sid)
        held = self.held(client)
        if len(held) >= self.per_client:
            victim = self._idlest(held)
            if victim is None:
                return 429, (f"This client already has {len(held)} sessions open, all of them in use; end one "
                             "(DELETE) before opening another.")
            await self.close(victim)
            held.remove(victim)
        if held and self._total() >= self.max_sessions - self.reserve:
            victim = self._idlest(held)
            if victim is None:
                return 503, (f"The server is near its limit of {self.max_sessions} sessions and keeps the last "
                             f"{self.reserve} for hosts that have none; end a session you no longer use.")
            await self.close(victim)
        if self._total() >= self.max_sessions:
            biggest = max({r.client for r in self.sessions.values()}, key=lambda c: len(self.held(c)), default=None)
            victim = self._idlest(self.held(biggest)) if biggest is not None else None
            if victim is None:
                return 503, f"The server has {self.max_sessions} sessions open, all of them in use; try again later."
            await self.close(victim)
        return None

    def _total(self) -> int:
        return len(self.sessions) + sum(self.opening.values())

    def _idlest(self, sids: list[str], exclude: str | None = None) -> str | None:
        idle = [s for s in sids if s != exclude and s in self.sessions and self.sessions[s].in_flight == 0]
        return min(idle, key=lambda s: self.sessions[s].idle_since, default=None)

    async def close(self, sid: str) -> None:
        """End one idle session through the manager, as its owner would (a DELETE)."""
        record = self.sessions.pop(sid, None)
        if record is None:
            return
        log.info("Closing idle HTTP session %s of %s to make room", sid[:12], record.client)
        scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "DELETE",
                 "scheme": "http", "path": self.path, "raw_path": self.path.encode(), "query_string": b"",
                 "root_path": "", "client": None, "server": None, "user": record.user,
                 "headers": [(b"host", record.host), (b"mcp-session-id", sid.encode("latin-1"))]}

        async def receive() -> Any:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(message: Any) -> None:
            pass

        await self.app(scope, receive, discard)


async def _refuse(send: Any, status: int, message: str) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32603, "message": message}}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if status == 503:
        headers.append((b"retry-after", b"60"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
