"""Strict Host and Origin checks for ``mcp serve --http``: the DNS-rebinding guard.

The MCP spec asks a local streamable-HTTP server to validate Origin (and we also check Host) so
that a web page whose name was re-pointed at 127.0.0.1 cannot talk to it. The SDK's allow-list
matches ``"127.0.0.1:*"`` as a prefix, so ``Host: 127.0.0.1:evil.example`` passed. This ASGI
middleware runs before anything else sees the request and parses both headers by the grammar:

- Host is ``name[:port]`` or ``[IPv6][:port]``: a name of letters, digits, dots and hyphens (DNS
  labels), a port of 1–5 digits in 1–65535, nothing else (no ``@``, no second colon, no path).
  The name must be one of the allowed ones (loopback names, the bound host, ``--allow-host``),
  compared without case; any port. Anything else: 421 Misdirected Request.
- Origin, when sent, is ``http(s)://`` + an authority of the same grammar and nothing after it;
  its name must be allowed too. ``null``, another scheme, a path, user info: 403 Forbidden.

A request with no Host, or more than one Host or Origin header, is refused the same way. Each
refusal is a JSON-RPC error with one sentence.
"""

from __future__ import annotations

import functools
import ipaddress
import json
import re
from collections.abc import Iterable
from typing import Any

_LABEL = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_NAME = re.compile(rf"{_LABEL}(?:\.{_LABEL})*\Z")
_PORT = re.compile(r"[0-9]{1,5}\Z")
_ORIGIN = re.compile(r"(https?)://([^/?#]*)\Z")


def parse_authority(text: str) -> tuple[str, int | None] | None:
    """``name[:port]`` / ``[v6][:port]`` → (lower-case name, port or None); None if malformed."""
    if text.startswith("["):
        end = text.find("]")
        if end < 0:
            return None
        try:
            ipaddress.IPv6Address(text[1:end])  # a zone id ("%eth0") is refused here too
        except ValueError:
            return None
        name, rest = text[:end + 1].lower(), text[end + 1:]
    else:
        name, sep, port_text = text.partition(":")
        name = name.lower()
        if not _NAME.match(name):
            return None
        rest = sep + port_text
    if not rest:
        return name, None
    if rest[0] != ":" or not _PORT.match(rest[1:]) or not 1 <= int(rest[1:]) <= 65535:
        return None
    return name, int(rest[1:])


@functools.lru_cache(maxsize=256)  # a pure function of its arguments; a host sends the same Host every time
def host_allowed(value: str, names: frozenset[str]) -> bool:
    parsed = parse_authority(value)
    return parsed is not None and parsed[0] in names


@functools.lru_cache(maxsize=256)
def origin_allowed(value: str, names: frozenset[str]) -> bool:
    match = _ORIGIN.match(value.lower())
    return match is not None and host_allowed(match.group(2), names)


def _refusal(status: int, message: str) -> tuple[dict[str, Any], dict[str, Any]]:
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": message}}).encode()
    return ({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]},
            {"type": "http.response.body", "body": body})


class StrictHostOrigin:
    """ASGI middleware: 421 for a Host, 403 for an Origin that is malformed or not allowed."""

    def __init__(self, app: Any, names: Iterable[str]) -> None:
        self.app = app
        self.names = frozenset(n.lower() for n in names)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        hosts: list[str] = []
        origins: list[str] = []
        for key, value in scope.get("headers", []):  # one pass over the headers for both
            name = key.lower()
            if name == b"host":
                hosts.append(value.decode("latin-1"))
            elif name == b"origin":
                origins.append(value.decode("latin-1"))
        refusal = None
        if len(hosts) != 1 or not host_allowed(hosts[0], self.names):
            shown = hosts[0][:100] if len(hosts) == 1 else f"{len(hosts)} Host headers"
            refusal = _refusal(421, f"This server answers only to the host names {', '.join(sorted(self.names))} "
                                    f"(with any port), not to {shown!r}.")
        elif len(origins) > 1 or (origins and not origin_allowed(origins[0], self.names)):
            shown = origins[0][:100] if len(origins) == 1 else f"{len(origins)} Origin headers"
            refusal = _refusal(403, f"Requests from the web page origin {shown!r} are refused: only "
                                    "http(s):// pages on an allowed host name may call this server.")
        if refusal is None:
            await self.app(scope, receive, send)
            return
        for message in refusal:
            await send(message)
