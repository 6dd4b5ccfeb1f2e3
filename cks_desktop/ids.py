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


# Consecutive ids share their millisecond and the high 14 characters of their random
# part, so those texts are cached and only the last two characters are looked up
# (same output as encoding everything; bulk imports create ids by the hundred thousand).
_PAIRS = [a + b for a in _ALPHABET for b in _ALPHABET]
_cached_ms = -1
_cached_ms_text = ""
_cached_hi = -1
_cached_hi_text = ""


def _encode_pairs(value: int, pairs: int) -> str:
    """``value`` in ``2 * pairs`` base-32 digits, most significant first, ten bits (two digits) per step."""
    return "".join([_PAIRS[(value >> shift) & 1023] for shift in range(10 * pairs - 10, -1, -10)])


def new_id(prefix: str = "") -> str:
    """Return a new id; ``prefix`` (e.g. ``"o_"``) only helps a human reading it."""
    global _last_ms, _last_rand, _cached_ms, _cached_ms_text, _cached_hi, _cached_hi_text
    with _lock:
        ms = time.time_ns() // 1_000_000
        if ms <= _last_ms:
            ms = _last_ms
            _last_rand += 1
        else:
            _last_rand = int.from_bytes(os.urandom(10), "big") >> 1  # leave headroom for increments
        _last_ms = ms
        rand = _last_rand
        if ms != _cached_ms:
            _cached_ms, _cached_ms_text = ms, _encode_pairs(ms, 5)
        hi = rand >> 10
        if hi != _cached_hi:
            _cached_hi, _cached_hi_text = hi, _encode_pairs(hi, 7)
        text = _cached_ms_text + _cached_hi_text + _PAIRS[rand & 1023]
    return prefix + text


def id_floor(ms: int, prefix: str = "") -> str:
    """The smallest id that ``new_id(prefix)`` can return at millisecond ``ms``: every id
    created at ``ms`` or later sorts at or above it (the change feed reads "changes since")."""
    return prefix + _encode_pairs(max(ms, 0), 5) + "0" * 16


def id_ms(ident: str, prefix: str = "") -> int | None:
    """The millisecond an id was created at, or None when ``ident`` is not such an id."""
    text = ident[len(prefix):] if prefix and ident.startswith(prefix) else ident
    if len(text) != 26:
        return None
    value = 0
    for ch in text[:10]:
        digit = _ALPHABET.find(ch)
        if digit < 0:
            return None
        value = value * 32 + digit
    return value
