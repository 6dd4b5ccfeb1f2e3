"""Syntax highlighting with Pygments, into a QTextDocument — never through HTML.

Pygments' own formatters write HTML; feeding that to Qt would make text that came from a model
or a tool *markup* (DESIGN.md "Rendering untrusted text"). Here Pygments only cuts the code
into (token type, text) pairs and the document receives each piece with ``insertText`` and a
QTextCharFormat — the characters stay characters, whatever they are.

Colours: ``SYNTAX`` below, per scheme, each checked for 4.5:1 on the ``code_background``
token (tests/ui/test_chat_look.py). They are the only colours of the chat that are not design
tokens, because the tokens have no syntax roles; the rest (text, muted for comments) come from
the theme. Formats are cached per scheme and rebuilt after a theme switch.

Cost: lexers are looked up once per language (a miss too: an unknown name would otherwise scan
the plug-in entry points every time); texts over ``HIGHLIGHT_MAX`` characters are shown plain.
"""

from __future__ import annotations

import logging
from functools import lru_cache
from typing import Any

from PySide6.QtGui import QColor, QFont, QTextCharFormat, QTextCursor, QTextDocument

from cks_desktop.ui import theme

log = logging.getLogger(__name__)
HIGHLIGHT_MAX = 20_000

# role → colour, per scheme (see the module docstring for why these are not tokens)
SYNTAX: dict[str, dict[str, str]] = {
    "light": {"keyword": "#7C3AED", "string": "#15803D", "number": "#B45309", "function": "#1D4ED8",
              "class": "#A21CAF", "builtin": "#0E7490", "key": "#1D4ED8", "constant": "#B45309",
              "error": "#B91C1C"},
    "dark": {"keyword": "#C4B5FD", "string": "#86EFAC", "number": "#FBBF24", "function": "#93C5FD",
             "class": "#F0ABFC", "builtin": "#67E8F9", "key": "#93C5FD", "constant": "#FBBF24",
             "error": "#F87171"},
}
ALIASES = {"py": "python", "js": "javascript", "ts": "typescript", "sh": "bash", "shell": "bash",
           "console": "bash", "yml": "yaml", "jsonl": "json", "md": "markdown", "c++": "cpp"}


def _role_of(token: Any) -> str | None:
    """The colour role of a Pygments token type (walking up to its parents)."""
    from pygments import token as t  # type: ignore[import-untyped]

    while token is not None:
        if token in t.Comment:
            return "comment"
        if token in t.Name.Tag or token in t.Name.Attribute:
            return "key"
        if token in t.Keyword.Constant or token in t.Name.Constant:
            return "constant"
        if token in t.Keyword:
            return "keyword"
        if token in t.String:
            return "string"
        if token in t.Number:
            return "number"
        if token in t.Name.Function:
            return "function"
        if token in t.Name.Class or token in t.Name.Namespace:
            return "class"
        if token in t.Name.Builtin or token in t.Name.Decorator:
            return "builtin"
        if token in t.Error:
            return "error"
        return None
    return None


@lru_cache(maxsize=64)
def lexer_for(language: str) -> Any | None:
    """A Pygments lexer for a fence's language word, or None (unknown, or none given)."""
    name = ALIASES.get(language.lower(), language.lower())
    if not name:
        return None
    try:
        from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]
        from pygments.util import ClassNotFound  # type: ignore[import-untyped]
    except ImportError:  # highlighting is a nicety: without Pygments code is shown plain
        return None
    try:
        return get_lexer_by_name(name, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return None


_formats: dict[str, dict[str, QTextCharFormat]] = {}


def formats(scheme: str | None = None) -> dict[str, QTextCharFormat]:
    """Role → char format for ``scheme`` (the current one by default)."""
    scheme = scheme or theme.current_scheme()
    if scheme not in _formats:
        out: dict[str, QTextCharFormat] = {}
        for role, colour in SYNTAX[scheme].items():
            fmt = QTextCharFormat()
            fmt.setForeground(QColor(colour))
            if role == "keyword":
                fmt.setFontWeight(QFont.Weight.DemiBold)
            out[role] = fmt
        comment = QTextCharFormat()
        comment.setForeground(theme.color("muted"))
        comment.setFontItalic(True)
        out["comment"] = comment
        _formats[scheme] = out
    return _formats[scheme]


def tokens(code: str, language: str) -> list[tuple[str | None, str]]:
    """(role, text) pieces of ``code``; one plain piece when it cannot or should not be lexed."""
    lexer = lexer_for(language) if len(code) <= HIGHLIGHT_MAX else None
    if lexer is None:
        return [(None, code)]
    try:
        pieces = [(_role_of(kind), text) for kind, text in lexer.get_tokens(code)]
    except Exception:  # a lexer bug must not lose the text
        log.exception("highlighting %s failed", language)
        return [(None, code)]
    if "".join(text for _, text in pieces) != code:  # never show other characters than the code's
        return [(None, code)]
    return pieces


def fill(document: QTextDocument, code: str, language: str, base: QTextCharFormat | None = None) -> bool:
    """Replace ``document``'s text with ``code``, highlighted; True if any colour was applied."""
    document.clear()
    cursor = QTextCursor(document)
    plain = base or QTextCharFormat()
    pieces = tokens(code, language)
    roles = formats()
    cursor.beginEditBlock()
    coloured = False
    for role, text in pieces:
        fmt = roles.get(role) if role else None
        if fmt is None:
            cursor.insertText(text, plain)
        else:
            merged = QTextCharFormat(plain)
            merged.merge(fmt)
            cursor.insertText(text, merged)
            coloured = True
    cursor.endEditBlock()
    return coloured


def reset_formats() -> None:
    """Forget the cached formats (after a theme switch)."""
    _formats.clear()
