"""Boilerplate of a document, marked before extraction: what no object and no source may come from.

Two kinds, found in the document's stored text (so the spans are its own offsets):

- running lines of a paged document: a line among the first or last ``EDGE_LINES`` of a page that
  recurs (digits aside: "Page 3" is "Page 4") on at least ``REPEAT_SHARE`` of the pages, and never
  fewer than two — running headers, footers, printer's lines — and a line that is only a page number;
- site chrome: a line of navigation ("Home | Collections | About | Contact": three or more
  separators between short items) or a copyright, privacy or cookie line.

``inside`` says whether a span lies in boilerplate; ``collect_chunk`` drops an object or relation
whose source is there (and an object named only there), so a printer in a footer never becomes a
firm of the graph and a page header never becomes a source.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Sequence

EDGE_LINES = 2
REPEAT_SHARE = 0.5
_LINE = re.compile(r"[^\n]+")
_DIGITS = re.compile(r"\d+")
_PAGE_NUMBER = re.compile(r"^\W*(?:page|p\.|seite|pag\.?)?\s*\d+(?:\s*(?:of|/|von)\s*\d+)?\W*$", re.IGNORECASE)
_SEPARATORS = re.compile(r"\s[|·•»]\s")
_CHROME = re.compile(r"©|\ball rights reserved\b|\bprivacy( policy)?\b.*\b(cookies?|terms)\b|\bcookies?\b.*\b(privacy|"
                     r"terms)\b|\bskip to (main )?content\b", re.IGNORECASE)
MAX_CHROME_ITEM_WORDS = 4


def _lines(text: str) -> list[tuple[int, int, str]]:
    return [(m.start(), m.end(), m.group()) for m in _LINE.finditer(text) if m.group().strip()]


def _key(line: str) -> str:
    return _DIGITS.sub("#", " ".join(line.split()).casefold())


def _is_chrome(line: str) -> bool:
    stripped = line.strip()
    if _CHROME.search(stripped) and len(stripped) <= 200:
        return True
    items = _SEPARATORS.split(stripped)
    return len(items) >= 4 and all(0 < len(i.split()) <= MAX_CHROME_ITEM_WORDS for i in items)


def boilerplate_spans(text: str, page_starts: Sequence[int] = ()) -> list[tuple[int, int]]:
    """The ``[start, end)`` spans of boilerplate lines in ``text``, in order."""
    lines = _lines(text)
    marked: set[int] = {i for i, (_, _, line) in enumerate(lines) if _is_chrome(line)}
    if len(page_starts) >= 2:
        starts = [s for s, _, _ in lines]
        bounds = list(page_starts) + [len(text) + 1]
        edges: list[list[int]] = []
        for p in range(len(page_starts)):
            lo, hi = bisect.bisect_left(starts, bounds[p]), bisect.bisect_left(starts, bounds[p + 1])
            page = list(range(lo, hi))
            edges.append(sorted(set(page[:EDGE_LINES] + page[-EDGE_LINES:])))
        counts = Counter(k for page in edges for k in {_key(lines[i][2]) for i in page})
        need = max(2, int(REPEAT_SHARE * len(page_starts) + 0.999))
        for page in edges:
            for i in page:
                if counts[_key(lines[i][2])] >= need or _PAGE_NUMBER.match(lines[i][2]):
                    marked.add(i)
    return [(lines[i][0], lines[i][1]) for i in sorted(marked)]


def inside(spans: Sequence[tuple[int, int]], start: int, end: int) -> bool:
    """``[start, end)`` overlaps a boilerplate span."""
    j = max(0, bisect.bisect_right(spans, (start, 10**18)) - 1)
    while j < len(spans) and spans[j][0] < end:
        if start < spans[j][1]:
            return True
        j += 1
    return False
