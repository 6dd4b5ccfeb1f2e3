"""An assistant's Markdown cut into prose and fenced code blocks (Qt-free).

Why cut: a fenced block becomes its own widget (``code_block.CodeBlock``) with a language
label, Pygments highlighting and a Copy button that copies exactly the code; QTextDocument's
Markdown renders a fence only as monospace lines without any of that. The prose between
fences still goes through ``markdown_view.set_safe_markdown`` (HTML off, nothing loaded).

The rules are CommonMark's for fences that start a line (at most three spaces of indent):
three or more backticks or tildes open; the same character, at least as many, and nothing
else on the line close. An unclosed fence runs to the end of the text — which is also what a
streaming answer looks like half-way through its code, so the block grows as tokens arrive.
Fences inside list items (indented four or more) stay in the prose.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")


@dataclass(frozen=True)
class Segment:
    kind: Literal["markdown", "code"]
    text: str
    language: str = ""  # the fence's info word ("python"), lower-case; "" if none


def _opening(line: str) -> tuple[str, int, str] | None:
    """(fence character, fence length, language) if ``line`` opens a fence."""
    match = _OPEN.match(line)
    if match is None:
        return None
    fence, info = match.group(1), match.group(2)
    if fence[0] == "`" and "`" in info:  # ```inline``` code, not a fence
        return None
    words = info.split()
    return fence[0], len(fence), (words[0].lower() if words else "")


def _closes(line: str, char: str, length: int) -> bool:
    stripped = line.strip()
    return (len(line) - len(line.lstrip(" ")) <= 3 and len(stripped) >= length
            and stripped == char * len(stripped))


def split_markdown(text: str) -> list[Segment]:
    """Prose and code segments in order; empty prose between blocks is left out."""
    if "```" not in text and "~~~" not in text:
        return [Segment("markdown", text)]
    out: list[Segment] = []
    prose: list[str] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        opened = _opening(lines[i])
        if opened is None:
            prose.append(lines[i])
            i += 1
            continue
        char, length, language = opened
        body: list[str] = []
        i += 1
        while i < len(lines) and not _closes(lines[i], char, length):
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence (or past the end)
        if "".join(prose).strip():
            out.append(Segment("markdown", "\n".join(prose)))
        prose = []
        out.append(Segment("code", "\n".join(body), language))
    if "".join(prose).strip() or not out:
        out.append(Segment("markdown", "\n".join(prose)))
    return out
