"""Internal tool names ↔ the names providers accept (``[A-Za-z0-9_-]{1,64}``).

Internal MCP names look like ``mcp:<server>:<tool>``. The plain mapping
(``mcp__<server>__<tool>``) is used when it is lossless; otherwise (characters
providers refuse, a ``__`` inside a part, or too long) the name is shortened and
given a hash suffix of the internal name, so it stays stable and unique.
Reversal goes through a table (``WireNames``), since hashing cannot be undone.

Why plain and hashed names can never collide: a part is used as is only when it
has no ``__`` and does not start or end with ``_``, so a plain name never
contains ``___``; a hashed name always does (``<stem>___<10 hex>``). Without the
edge rule ``a_:b`` and ``a:_b`` would both become ``a___b``, and an MCP server
could pick a tool name equal to another tool's hashed name.
"""

from __future__ import annotations

import hashlib
import re

MAX_LEN = 64
_VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}\Z")
_INVALID_CHARS = re.compile(r"[^A-Za-z0-9_-]")


def is_wire_safe(name: str) -> bool:
    return bool(_VALID.match(name))


_HASH_SEP = "___"


def _plain_part(part: str) -> bool:
    return bool(part) and is_wire_safe(part) and "__" not in part \
        and not part.startswith("_") and not part.endswith("_")


def to_wire(internal: str) -> str:
    parts = internal.split(":")
    plain = "__".join(parts)
    if all(_plain_part(p) for p in parts) and len(plain) <= MAX_LEN:
        return plain
    digest = hashlib.sha256(internal.encode()).hexdigest()[:10]
    stem = _INVALID_CHARS.sub("_", plain)
    return f"{stem[: MAX_LEN - len(digest) - len(_HASH_SEP)]}{_HASH_SEP}{digest}"


class WireNames:
    """A reversible table for the tools offered in one request.

    The hash suffix is short (40 bits, to fit 64 characters), so a hostile MCP server
    can pick two tool names with the same wire name in under a second. The table
    therefore never raises: the first name keeps the wire name and a later one that
    collides is refused (``add`` returns None) so the caller leaves that tool out.
    Connections already leave such tools out when they register them
    (``mcp/convert.py``), with the reason in the server's status; this is the last
    line of defence for anything that reaches a request anyway.
    """

    def __init__(self, internal_names: list[str] | None = None) -> None:
        self._to_internal: dict[str, str] = {}
        self._to_wire: dict[str, str] = {}
        for name in internal_names or []:
            self.add(name)

    def add(self, internal: str) -> str | None:
        """The wire name of ``internal``, or None when another tool already holds it."""
        known = self._to_wire.get(internal)
        if known is not None:
            return known
        wire = to_wire(internal)
        if wire in self._to_internal:
            return None
        self._to_internal[wire] = internal
        self._to_wire[internal] = wire
        return wire

    def wire(self, internal: str) -> str | None:
        """The wire name given to ``internal``, or None if it was refused (or never added)."""
        return self._to_wire.get(internal)

    def internal(self, wire: str) -> str | None:
        return self._to_internal.get(wire)
