"""Sortable unique ids (ULID-shaped: 26 Crockford base32 characters).

Ids sort by creation time, which gives stable cursors for paging and lets a
change history be read in order without a separate sequence column. Ids
created within the same millisecond stay strictly increasing in this process.
"""

from __future__ import annotations

import os
import threading
import time

_ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_lock = threading.Lock()
_last_ms = -1
_last_rand = 0


def _encode(value: int, length: int) -> str:
    chars = []
    for _ in range(length):
        chars.append(_ALPHABET[value & 31])
        value >>= 5
    return "".join(reversed(chars))


def new_id(prefix: str = "") -> str:
    """Return a new id; ``prefix`` (e.g. ``"o_"``) only helps a human reading it."""
    global _last_ms, _last_rand
    with _lock:
        ms = time.time_ns() // 1_000_000
        if ms <= _last_ms:
            ms = _last_ms
            _last_rand += 1
        else:
            _last_rand = int.from_bytes(os.urandom(10), "big") >> 1  # leave headroom for increments
        _last_ms = ms
        rand = _last_rand
    return prefix + _encode(ms, 10) + _encode(rand, 16)
