"""Plain-text helpers shared by the chat rows and the approval dialog (Qt-free).

Arguments and results are shown exactly: pretty JSON, never truncated. Only
the one-line summaries in collapsed rows are shortened.

``plain_tooltip`` and ``no_mnemonic`` are the string half of the rule that
untrusted text is never interpreted; the widget half is
``ui/labels.py``.
"""

from __future__ import annotations

import html
import json
from typing import Any

from cks_desktop.plural import counted

SCOPE_WORDS = {
    "graph.read": "read this session's graph",
    "graph.mutate": "change this session's graph",
    "fs.read": "read files in the folders you allowed",
    "code.execute": "run code on this computer",
    "net.fetch": "use the network",
    "provider.call": "send text to the AI model",
}


def pretty_json(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=False, default=str)


def one_line(text: str, limit: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def summarize_arguments(arguments: Any, limit: int = 100) -> str:
    """``name="Alice", type="Person", properties={…}`` — a glance, not the full story."""
    if not isinstance(arguments, dict):
        return one_line(str(arguments), limit)
    parts: list[str] = []
    for key, value in arguments.items():
        if isinstance(value, str):
            shown = json.dumps(one_line(value, 40), ensure_ascii=False)
        elif isinstance(value, dict):
            shown = "{…}" if value else "{}"
        elif isinstance(value, list):
            shown = f"[{counted(len(value), 'item')}]"
        else:
            shown = json.dumps(value, default=str)
        parts.append(f"{key}={shown}")
    return one_line(", ".join(parts), limit)


def format_duration(ms: float | None) -> str:
    if ms is None:
        return ""
    if ms < 1000:
        return f"{ms:.0f} ms"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest} s"


def describe_scopes(scopes: Any) -> list[str]:
    out = []
    for scope in sorted(str(s) for s in scopes):
        out.append(f"{scope} — {SCOPE_WORDS.get(scope, scope)}")
    return out


def plain_tooltip(text: str) -> str:
    """A tooltip that shows ``text`` literally, whatever it contains.

    Qt renders a tooltip as rich text whenever it *looks* like HTML
    (``Qt.mightBeRichText``), so a name such as ``<img src=file:///…>`` would
    load a local image. Escaped and wrapped in a paragraph it is always rich
    text whose only content is the literal characters; ``pre-wrap`` keeps line
    breaks and runs of spaces as they were. Empty stays empty (no tooltip).
    """
    if not text:
        return ""
    return f"<p style='white-space:pre-wrap'>{html.escape(text, quote=False)}</p>"


def no_mnemonic(text: str) -> str:
    """Button and action text where ``&`` is a character, not a keyboard-shortcut marker."""
    return text.replace("&", "&&")


def open_in_browser(url: str) -> None:
    """Open a sign-in page in the system browser (the OAuth flow's opener; the person asked for it)."""
    from PySide6.QtCore import QUrl
    from PySide6.QtGui import QDesktopServices

    QDesktopServices.openUrl(QUrl(url))
