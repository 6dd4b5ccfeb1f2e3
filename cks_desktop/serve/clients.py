"""The hosts talking to the server now: for the window's "connected clients" list and for the
notifications sent outside a request (list_changed, resource updates on 2025-era connections).

A record is made or refreshed by every request (``ClientTracker.middleware``). Connections are
told apart by their streamable-HTTP session id, "stdio" for the one stdio peer, and for the
session-less 2026-07-28 era by client name, version and peer address. Records not seen for
``IDLE`` seconds are dropped (the transport's own idle timeout is the same 30 minutes), and
at most ``LIMIT`` are kept, oldest first out, so a client that opens thousands of sessions
costs a bounded amount of memory.

An HTTP session also leaves the list when it ends: its DELETE was answered (``ended``), or
its standalone GET stream closed and no stream or request came back within ``STREAM_GRACE``
seconds (``stream_opened`` / ``stream_closed``; a host that lost its stream reconnects within
the SSE retry interval, one that quit never does). Both are observed at the ASGI level
(``serve/http.py``): the SDK's session manager has no close hook.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from mcp_types.version import MODERN_PROTOCOL_VERSIONS

IDLE = 30 * 60.0
LIMIT = 1000
STREAM_GRACE = 10.0  # a few SSE retry intervals (http.SSE_RETRY_MS): time for a dropped stream to come back


@dataclass
class ClientRecord:
    key: str
    name: str
    version: str
    protocol: str
    transport: str  # "stdio" or "http"
    first_seen: float
    last_seen: float
    requests: int = 0
    session: Any = field(default=None, repr=False)  # the latest ServerSession: its standalone channel
    process: str = ""  # "" for this process; "mcp serve (process 123)" for another's (serve/presence.py)

    @property
    def modern(self) -> bool:
        return self.protocol in MODERN_PROTOCOL_VERSIONS

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "version": self.version, "protocol": self.protocol, "transport": self.transport,
                "first_seen": self.first_seen, "last_seen": self.last_seen, "requests": self.requests}


def client_name(ctx: Any) -> tuple[str, str]:
    params = getattr(ctx.session, "client_params", None)
    info = getattr(params, "client_info", None)
    return (getattr(info, "name", "") or "unknown client"), (getattr(info, "version", "") or "")


def key_of(ctx: Any) -> str:
    """Which connection a request came on (see the module docstring)."""
    request = ctx.request
    if request is None:
        return "stdio"
    headers = getattr(request, "headers", {}) or {}
    session_id = headers.get("mcp-session-id")
    if session_id:
        return f"http:{session_id}"
    name, version = client_name(ctx)
    client = getattr(request, "client", None)
    peer = f"{client.host}:{client.port}" if client else "?"
    return f"http:{name}/{version}@{peer}"


class ClientTracker:
    def __init__(self, transport: str, clock: Callable[[], float] = time.time) -> None:
        self.transport = transport
        self._clock = clock
        self._records: dict[str, ClientRecord] = {}
        self.stream_grace = STREAM_GRACE
        self._streams: Counter[str] = Counter()  # open standalone GET streams per HTTP session
        self._closed_at: dict[str, float] = {}  # when the last one closed, while none is open
        # Told the records after each request (``mcp serve`` writes them for the window's Share page).
        self.on_seen: Callable[[list[ClientRecord]], None] | None = None

    def seen(self, ctx: Any) -> ClientRecord:
        """Note one request (``ServerRequestContext``); returns its connection's record."""
        now = self._clock()
        name, version = client_name(ctx)
        key = key_of(ctx)
        request = ctx.request
        record = self._records.get(key)
        if record is None:
            record = ClientRecord(key, name, version, ctx.protocol_version, self.transport if request is None
                                  else "http", now, now)
            self._records[key] = record
            self._trim(now)
        elif name != "unknown client":
            record.name, record.version = name, version
        record.protocol = ctx.protocol_version
        record.last_seen = now
        record.requests += 1
        record.session = ctx.session
        if self.on_seen is not None:
            self.on_seen(self.records())
        return record

    def forget(self, key: str) -> None:
        self._records.pop(key, None)

    def ended(self, key: str) -> bool:
        """The connection ended for good (an HTTP session's DELETE was answered); True if listed."""
        self._closed_at.pop(key, None)
        return self._records.pop(key, None) is not None

    def stream_opened(self, key: str) -> None:
        self._streams[key] += 1
        self._closed_at.pop(key, None)

    def stream_closed(self, key: str) -> None:
        self._streams[key] -= 1
        if self._streams[key] <= 0:
            del self._streams[key]
            self._closed_at[key] = self._clock()

    def gone(self) -> list[str]:
        """Drop the records whose stream closed ``stream_grace`` ago with nothing since; their keys."""
        now = self._clock()
        keys = [k for k, at in self._closed_at.items()
                if now - max(at, self._records[k].last_seen if k in self._records else at) > self.stream_grace]
        for key in keys:
            del self._closed_at[key]
            self._records.pop(key, None)
        return keys

    def _trim(self, now: float) -> None:
        for key in [k for k, r in self._records.items() if now - r.last_seen > IDLE]:
            del self._records[key]
        while len(self._records) > LIMIT:
            oldest = min(self._records.values(), key=lambda r: r.last_seen)
            del self._records[oldest.key]

    def records(self) -> list[ClientRecord]:
        self._trim(self._clock())
        return sorted(self._records.values(), key=lambda r: r.first_seen)

    def middleware(self) -> Any:
        """A ``ServerMiddleware`` that records every request before it is handled."""
        tracker = self

        async def track(ctx: Any, call_next: Any) -> Any:
            if ctx.request_id is not None and ctx.method != "initialize":
                tracker.seen(ctx)
            return await call_next(ctx)

        return track
