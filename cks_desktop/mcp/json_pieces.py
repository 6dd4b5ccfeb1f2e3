"""JSON decoded a piece at a time, so a worker thread parsing 50 MB lets the event loop run.

``json.loads`` is one C call: on a worker thread it still holds the GIL for the whole parse
(about 0.2 s for 50 MB of small objects, more on a loaded machine), and the event loop — the
window's — waits for it. Here objects and arrays are walked in Python and only their scalars
(strings, numbers, literals) go to the C scanner, so the GIL is given up between items: the
longest hold is one scalar (a 50 MB string is a ~30 ms copy). Slower in total than
``json.loads`` (about 5×), which is why only long lines come here. The result is the same value
``json.loads`` gives; a malformed document raises ``ValueError`` (``json.JSONDecodeError``).
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_DEPTH = 200  # deeper than this is refused like the C parser's recursion limit

_WS = re.compile(r"[ \t\n\r]*")
_DECODER = json.JSONDecoder()


def loads(text: str) -> Any:
    """``json.loads(text)``, parsed a piece at a time."""
    value, end = _value(text, _WS.match(text, 0).end(), 0)  # type: ignore[union-attr]
    end = _WS.match(text, end).end()  # type: ignore[union-attr]
    if end != len(text):
        raise json.JSONDecodeError("Extra data", text, end)
    return value


def _value(text: str, i: int, depth: int) -> tuple[Any, int]:
    if i >= len(text):
        raise json.JSONDecodeError("Expecting value", text, i)
    c = text[i]
    if c not in "{[":
        return _DECODER.raw_decode(text, i)
    if depth >= MAX_DEPTH:
        raise RecursionError("the JSON document is nested too deeply")
    if c == "{":
        return _object(text, i + 1, depth + 1)
    return _array(text, i + 1, depth + 1)


def _object(text: str, i: int, depth: int) -> tuple[dict[str, Any], int]:
    out: dict[str, Any] = {}
    i = _WS.match(text, i).end()  # type: ignore[union-attr]
    if text.startswith("}", i):
        return out, i + 1
    while True:
        if not text.startswith('"', i):
            raise json.JSONDecodeError("Expecting property name enclosed in double quotes", text, i)
        key, i = _DECODER.raw_decode(text, i)
        i = _WS.match(text, i).end()  # type: ignore[union-attr]
        if not text.startswith(":", i):
            raise json.JSONDecodeError("Expecting ':' delimiter", text, i)
        i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
        out[key], i = _value(text, i, depth)
        i = _WS.match(text, i).end()  # type: ignore[union-attr]
        if text.startswith("}", i):
            return out, i + 1
        if not text.startswith(",", i):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, i)
        i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]


def _array(text: str, i: int, depth: int) -> tuple[list[Any], int]:
    out: list[Any] = []
    i = _WS.match(text, i).end()  # type: ignore[union-attr]
    if text.startswith("]", i):
        return out, i + 1
    while True:
        item, i = _value(text, i, depth)
        out.append(item)
        i = _WS.match(text, i).end()  # type: ignore[union-attr]
        if text.startswith("]", i):
            return out, i + 1
        if not text.startswith(",", i):
            raise json.JSONDecodeError("Expecting ',' delimiter", text, i)
        i = _WS.match(text, i + 1).end()  # type: ignore[union-attr]
