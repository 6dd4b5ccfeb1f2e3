"""The one-line summary of a tool call: its most telling argument first (Qt-free).

A collapsed row has room for about one phrase. The first characters of the arguments' JSON
(``session_id="8f3c…", operations=[…``) say nothing; the object a call is about does. So each
built-in tool's spec names the arguments that tell what it does (``summary_args``), and any other tool —
an MCP server's — gets the first argument whose name usually carries the point
(``GENERIC_KEYS``: name, ref, query, path, url, text…), then its first text argument; only a
tool with none of those falls back to every argument in order. ``session_id`` is never shown
(the model does not even see it). A batch of operations is counted by kind
("3 operations: 2 add_object, 1 add_relation").
"""

from __future__ import annotations

import functools
import json
from collections import Counter
from typing import Any

from cks_desktop.plural import counted
from cks_desktop.ui.text import one_line, summarize_arguments

@functools.cache
def telling() -> dict[str, tuple[str, ...]]:
    """Built-in tool name → the arguments that tell what its call is about, in the order shown
    (each spec's ``summary_args``)."""
    from cks_desktop.tools.builtin import builtin_specs

    return {spec.name: spec.summary_args for spec in builtin_specs() if spec.summary_args}


GENERIC_KEYS = ("name", "ref", "query", "q", "search", "path", "file", "filename", "url", "uri", "title",
                "text", "message", "prompt", "command", "pattern", "id", "key", "content")
HIDDEN = frozenset({"session_id"})
VALUE_LIMIT = 60


def _value(value: Any) -> str:
    if isinstance(value, str):
        return json.dumps(one_line(value, VALUE_LIMIT), ensure_ascii=False)
    if isinstance(value, list):
        kinds = Counter(v.get("op") for v in value if isinstance(v, dict) and isinstance(v.get("op"), str))
        if kinds and sum(kinds.values()) == len(value):
            parts = ", ".join(f"{n} {op}" for op, n in kinds.most_common(3))
            more = "…" if len(kinds) > 3 else ""
            return f"{counted(len(value), 'operation')}: {parts}{more}"
        return f"[{counted(len(value), 'item')}]"
    if isinstance(value, dict):
        return "{…}" if value else "{}"
    return json.dumps(value, default=str)


def telling_keys(name: str, arguments: dict[str, Any]) -> list[str]:
    """The arguments a summary shows, most telling first ([] when nothing stands out)."""
    present = [k for k in arguments if k not in HIDDEN]
    builtin = telling() if ":" not in name else {}  # "mcp:notes:search" is a server's tool
    if name in builtin:
        return [k for k in builtin[name] if k in arguments]
    lowered = {k.lower(): k for k in present}
    for key in GENERIC_KEYS:
        if key in lowered and isinstance(arguments[lowered[key]], (str, int, float)):
            return [lowered[key]]
    return [k for k in present if isinstance(arguments[k], str)][:1]


def tool_summary(name: str, arguments: Any, limit: int = 160) -> str:
    """``ref="Irène Joliot-Curie"`` — what the call is about, in one line."""
    if not isinstance(arguments, dict):
        return one_line(str(arguments), limit)
    keys = telling_keys(name, arguments)
    if not keys:
        return summarize_arguments({k: v for k, v in arguments.items() if k not in HIDDEN}, limit)
    if keys == ["operations"] or (len(keys) == 1 and isinstance(arguments[keys[0]], list)):
        return one_line(_value(arguments[keys[0]]), limit)
    return one_line(", ".join(f"{k}={_value(arguments[k])}" for k in keys), limit)


def full_summary(arguments: Any) -> str:
    """Every argument but the hidden ones, for the tooltip."""
    if not isinstance(arguments, dict):
        return str(arguments)
    return summarize_arguments({k: v for k, v in arguments.items() if k not in HIDDEN}, 2000)
