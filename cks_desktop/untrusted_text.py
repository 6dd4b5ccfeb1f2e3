"""Showing untrusted text without letting it act: invisible and control characters made visible.

Model answers, tool results, MCP server names and descriptions, graph names:
any of them can carry characters that are not there to be read but to act on
whoever reads them — terminal escape sequences (colours, cursor moves, OSC 52
writing the clipboard, OSC 8 links), bidirectional controls that reorder what
a person sees (U+202E makes ``exe.txt`` read ``txt.exe``), zero-width and other
format characters that hide words. This module (Qt-free; the approval dialog
and the CLI both use it) replaces each such character by a visible escape.

What is revealed, and why:

- every C0/C1 control (``Cc``) except ``\\n`` and ``\\t``; a ``\\r`` is kept only
  directly before ``\\n`` (Windows line ends are harmless), a lone one could
  overwrite the line already shown;
- every format character (``Cf``): bidi embeddings, overrides and isolates
  (U+202A–202E, U+2066–2069), the marks U+200E/U+200F/U+061C, zero-width
  space/non-joiner/joiner, word joiner, BOM, soft hyphen, tag characters …
  One exception: a zero-width joiner between two emoji is kept, because that is
  how family and profession emoji are spelled and it hides nothing;
- line and paragraph separators (U+2028/2029: line breaks that look like none
  to some renderers and like one to others) and lone surrogates (they cannot be
  encoded, and writing one to a terminal would raise);
- the Hangul fillers, letters that render as blank space.

The escape is JSON's own: ``\\u202e`` (astral characters as a surrogate pair,
``\\udb40\\udc01``). So a JSON document stays valid and means exactly the same
after this runs over it — the only raw control characters ``json.dumps`` can
leave are inside strings, where ``\\uXXXX`` is the escape for that very
character — and one function serves human and ``--json`` output alike. The
cost: literal text ``\\u202e`` typed by someone reads the same as a revealed
character, which is acceptable, since the goal is that nothing acts unseen.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator
from typing import Any, TextIO

ZWJ = "\u200d"
_BLANK_LETTERS = frozenset("\u115f\u1160\u3164\uffa0")
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_EMOJI_BEFORE_ZWJ = frozenset({"So", "Sk"})  # Sk: the skin-tone modifiers U+1F3FB–1F3FF

BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")


def is_hidden(char: str) -> bool:
    """True for a character that acts or hides rather than shows (see the module docstring)."""
    if char in "\n\t":
        return False
    return unicodedata.category(char) in _HIDDEN_CATEGORIES or char in _BLANK_LETTERS


def escape_char(char: str) -> str:
    """``\\u202e`` for one character; a surrogate pair of escapes above U+FFFF (as JSON writes it)."""
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def _emoji_like(char: str) -> bool:
    return char == "\ufe0f" or unicodedata.category(char) in _EMOJI_BEFORE_ZWJ


def _kept_in_context(text: str, i: int, before: str) -> bool:
    """The two exceptions that look at neighbours: ``\\r\\n`` and an emoji ZWJ sequence."""
    char = text[i]
    after = text[i + 1] if i + 1 < len(text) else ""
    if char == "\r":
        return after == "\n"
    if char == ZWJ:
        return bool(before) and _emoji_like(before) and (not after or unicodedata.category(after) == "So")
    return False


def reveal(text: str, *, before: str = "") -> str:
    """``text`` with every hidden character replaced by its visible escape.

    ``before`` is the character that preceded ``text`` (for a stream written
    in pieces): it decides whether a leading zero-width joiner is an emoji's.
    """
    if not any(is_hidden(c) for c in text):
        return text  # the common case: no copy
    out: list[str] = []
    previous = before
    for i, char in enumerate(text):
        if is_hidden(char) and not _kept_in_context(text, i, previous):
            out.append(escape_char(char))
        else:
            out.append(char)
        previous = char
    return "".join(out)


def hidden_characters(text: str) -> list[str]:
    """The hidden characters ``reveal`` would escape, in order (for "this text contains …" notes)."""
    found: list[str] = []
    previous = ""
    for i, char in enumerate(text):
        if is_hidden(char) and not _kept_in_context(text, i, previous):
            found.append(char)
        previous = char
    return found


def describe_hidden(text: str) -> str:
    """One sentence naming what ``reveal`` made visible in ``text``, or "" when nothing was hidden."""
    found = hidden_characters(text)
    if not found:
        return ""
    names: list[str] = []
    for char in dict.fromkeys(found):
        name = unicodedata.name(char, "") or ("control character" if unicodedata.category(char) == "Cc"
                                              else "unnamed character")
        names.append(f"{escape_char(char)} {name.lower()}")
        if len(names) == 5:
            break
    more = len(dict.fromkeys(found)) - len(names)
    kind = ("direction-changing or invisible" if any(c in BIDI_CONTROLS for c in found)
            else "invisible or control")
    return (f"This text contains {len(found)} {kind} character{'s' if len(found) != 1 else ''}, "
            f"shown as escapes: {', '.join(names)}{f' and {more} more' if more > 0 else ''}.")


class RevealingStream:
    """A text stream that reveals hidden characters in everything written to it.

    Installed over ``sys.stdout``/``sys.stderr`` for the headless commands, so
    no command can write a raw escape sequence to the terminal, whichever way
    it prints (``print``, ``write``, logging, argparse). Everything else —
    ``buffer`` for binary protocols, ``fileno``, ``isatty``, ``encoding`` — is
    the wrapped stream's own.
    """

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self._last = ""

    @property
    def wrapped(self) -> TextIO:
        return self._stream

    def write(self, text: str) -> int:
        if not text:
            return 0
        self._stream.write(reveal(text, before=self._last))
        self._last = text[-1]
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        self._stream.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def __iter__(self) -> Iterator[str]:
        return iter(self._stream)
