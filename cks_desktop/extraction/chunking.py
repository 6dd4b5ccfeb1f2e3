"""Cut a document's stored text into chunks for extraction, by its structure.

Why structure first: a chunk that ends mid-sentence or mixes two sections gives the model half a
fact and the wrong context. So the text is first cut into *units* — sentences, each knowing how
strong the break before it is (a heading, a blank line, a line end, a sentence end) — and units are
packed into chunks of ``TARGET_TOKENS`` (at most ``MAX_TOKENS``): a chunk closes early at a heading
once it is half full, at a paragraph end once it reaches the target, and only at a sentence end
(or, for one sentence longer than a whole chunk, at a space) when it reaches the maximum.

Exact offsets: a chunk is ``text[start:end]`` of the document's stored text, never a re-joined
copy, so a quote aligned inside a chunk is a span of the document itself.

Overlap: the next chunk starts with the last sentences of the previous one, about
``OVERLAP`` of the target (not across a heading), so a fact on the boundary is seen whole once.
The overlap is part of both chunks (the resolver merges what both find). Context only: the
heading path and the previous chunk's tail (the text just before the chunk, ``CONTEXT_CHARS``)
are shown to the model as context, not as text to extract from.

Size in tokens: a FIXED ``CHARS_PER_TOKEN`` (4, English prose; the same figure the context
manager starts its calibrated estimate from is deliberately NOT used here, because a calibrated
estimate moves, and moving chunk boundaries would turn every cached chunk into a miss — re-adding a
document would no longer be free). Cost estimates use the calibrated estimate (``runner``).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace

CHARS_PER_TOKEN = 4.0
TARGET_TOKENS = 1100
MIN_TOKENS = 1000
MAX_TOKENS = 1200
OVERLAP = 0.10
CONTEXT_CHARS = 300

HEADING = 3
PARAGRAPH = 2
LINE = 1
SENTENCE = 0

_ATX = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_SENTENCE_END = re.compile(r"(?<=[.!?…])[\"'”’)\]]*\s+(?=\S)")
_TERMINAL = ".!?,;:…"


@dataclass(frozen=True)
class Chunk:
    """One piece of a document: ``text == document_text[start:end]``."""

    index: int
    start: int
    end: int
    text: str
    heading_path: tuple[str, ...] = ()
    context_tail: str = ""  # the text just before ``start``: context for the model only
    page: int | None = None  # the page of ``start`` (1-based), None without pages
    last_page: int | None = None
    overlap_chars: int = 0  # how much of the start repeats the previous chunk
    cut: tuple[tuple[int, int], ...] = ()  # boilerplate lines here (document offsets): never sent to the model

    @property
    def sent_text(self) -> str:
        """The passage as the model is sent it: ``text`` without its boilerplate lines."""
        return drop_spans(self.text, self.start, self.cut)

    @property
    def chars(self) -> int:
        return self.end - self.start


@dataclass(frozen=True)
class _Unit:
    start: int
    end: int
    strength: int  # the break BEFORE this unit
    headings: tuple[str, ...]  # heading path in force at this unit
    heading: bool = False


def page_of(page_starts: Sequence[int], offset: int) -> int | None:
    """The 1-based page holding ``offset``; None when the document has no pages."""
    if not page_starts:
        return None
    return max(1, bisect.bisect_right(list(page_starts), offset))


def _heading_of(line: str, prev_blank: bool, prev_line: str) -> tuple[int, str] | None:
    """(level, title) for a heading line: Markdown's ``#``, or a short title-like line."""
    match = _ATX.match(line)
    if match:
        return len(match.group(1)), match.group(2).strip()
    stripped = line.strip()
    if not stripped or "\t" in stripped or len(stripped) > 60 or stripped[-1] in _TERMINAL:
        return None
    if len(stripped.split()) > 8 or not (stripped[0].isupper() or stripped[0].isdigit()):
        return None
    if not (prev_blank or not prev_line or prev_line.rstrip()[-1:] in ".!?:"):
        return None
    return 7, stripped  # below every Markdown level: a title line nests under real headings


def _sentences(text: str, start: int, end: int, max_chars: int) -> Iterator[tuple[int, int]]:
    """Sentence spans of ``text[start:end]``; a sentence over ``max_chars`` cut at spaces."""
    pos = start
    piece = text[start:end]
    cuts = [start + m.end() for m in _SENTENCE_END.finditer(piece)]
    for cut in [*cuts, end]:
        while cut - pos > max_chars:
            space = text.rfind(" ", pos + max_chars // 2, pos + max_chars)
            hard = space + 1 if space > pos else pos + max_chars
            yield pos, hard
            pos = hard
        if cut > pos:
            yield pos, cut
            pos = cut


def units(text: str, max_chars: int) -> list[_Unit]:
    """Every sentence of the text with the strength of the break before it and its heading path."""
    out: list[_Unit] = []
    stack: list[tuple[int, str]] = []
    pos = 0
    prev_blank = True
    prev_line = ""
    pending = PARAGRAPH
    for raw in text.splitlines(keepends=True):
        line_start, pos = pos, pos + len(raw)
        line = raw.rstrip("\r\n")
        if not line.strip():
            prev_blank = True
            pending = max(pending, PARAGRAPH)
            continue
        heading = _heading_of(line, prev_blank, prev_line)
        lead = len(line) - len(line.lstrip())
        content_start, content_end = line_start + lead, line_start + len(line.rstrip())
        if heading is not None:
            level, title = heading
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            out.append(_Unit(content_start, content_end, HEADING, tuple(t for _, t in stack), heading=True))
            pending = PARAGRAPH
        else:
            first = True
            for s, e in _sentences(text, content_start, content_end, max_chars):
                strength = (pending if pending > LINE else LINE) if first else SENTENCE
                out.append(_Unit(s, e, strength, tuple(t for _, t in stack)))
                first = False
            pending = LINE
        prev_blank, prev_line = False, line
    return out


def chunk_text(text: str, page_starts: Sequence[int] = (), *, target_tokens: int = TARGET_TOKENS,
               max_tokens: int = MAX_TOKENS, overlap: float = OVERLAP,
               chars_per_token: float = CHARS_PER_TOKEN) -> list[Chunk]:
    """The chunks of ``text`` (see the module docstring); deterministic for the same arguments."""
    target = max(200, int(target_tokens * chars_per_token))
    limit = max(target, int(max_tokens * chars_per_token))
    overlap_chars = int(target * overlap)
    all_units = units(text, limit)
    groups: list[tuple[list[_Unit], int]] = []  # (units, how many leading units repeat the previous group)
    current: list[_Unit] = []
    repeated = 0

    def size(group: list[_Unit], extra: _Unit | None = None) -> int:
        if not group:
            return 0 if extra is None else extra.end - extra.start
        end = extra.end if extra is not None else group[-1].end
        return end - group[0].start

    for unit in all_units:
        fresh = len(current) - repeated  # units of this group not carried over
        if current and fresh > 0:
            grown = size(current, unit)
            now = size(current)
            close_heading = unit.heading and now >= target // 2
            close = grown > limit or close_heading or (now >= target and unit.strength >= PARAGRAPH)
            if close:
                groups.append((current, repeated))
                carry: list[_Unit] = []
                if not close_heading:
                    for prev in reversed(current[repeated:]):
                        if prev.heading or size([prev, *carry]) > overlap_chars:
                            break
                        carry.insert(0, prev)
                    if len(carry) == len(current):
                        carry = []
                    while carry and size(carry, unit) > limit:
                        carry.pop(0)
                current, repeated = list(carry), len(carry)
        current.append(unit)
    if current and len(current) > repeated:
        groups.append((current, repeated))
    chunks: list[Chunk] = []
    for index, (group, rep) in enumerate(groups):
        start, end = group[0].start, group[-1].end
        chunks.append(Chunk(index=index, start=start, end=end, text=text[start:end],
                            heading_path=group[0].headings, context_tail=_tail_before(text, start),
                            page=page_of(page_starts, start), last_page=page_of(page_starts, max(start, end - 1)),
                            overlap_chars=(group[rep - 1].end - start) if rep else 0))
    return chunks


MIN_SPLIT_CHARS = 200  # a piece smaller than this is not halved again


def drop_spans(text: str, at: int, spans: Sequence[tuple[int, int]]) -> str:
    """``text`` (which starts at document offset ``at``) without the parts of ``spans`` inside it,
    each with the line break after it: a running header or footer taken out leaves no gap."""
    end = at + len(text)
    out: list[str] = []
    pos = 0
    for s, e in spans:
        s, e = max(s, at) - at, min(e, end) - at
        if e <= pos or s >= len(text):
            continue
        s = max(s, pos)
        out.append(text[pos:s])
        pos = e + 1 if text[e:e + 1] == "\n" else e
    out.append(text[pos:])
    return "".join(out)


def _tail_before(text: str, start: int, cut: Sequence[tuple[int, int]] = ()) -> str:
    """The context tail before ``start``: up to ``CONTEXT_CHARS``, from a word start, without ``cut``."""
    tail_from = max(0, start - CONTEXT_CHARS)
    tail = drop_spans(text[tail_from:start], tail_from, cut)
    if tail_from > 0 and " " in tail:
        tail = tail[tail.index(" ") + 1:]
    return tail.strip()


def without_boilerplate(chunk: Chunk, spans: Sequence[tuple[int, int]], text: str) -> Chunk:
    """``chunk`` knowing the boilerplate lines of its passage and context tail (``boilerplate_spans``
    of ``text``, the document's stored text): the model is sent neither; offsets stay the document's."""
    lo = max(0, chunk.start - CONTEXT_CHARS)
    cut = tuple((s, e) for s, e in spans if s < chunk.end and e > lo)
    if not cut:
        return chunk
    running = {" ".join(text[s:e].split()) for s, e in cut}  # a running header is no heading either
    headings = tuple(h for h in chunk.heading_path if " ".join(h.split()) not in running)
    return replace(chunk, cut=cut, context_tail=_tail_before(text, chunk.start, cut), heading_path=headings)


def split_chunk(chunk: Chunk, text: str, page_starts: Sequence[int] = ()) -> tuple[Chunk, Chunk] | None:
    """``chunk`` in two near its middle — at a paragraph break if one is near, else a sentence end,
    else a space — as exact slices of ``text`` (the document's stored text); None when it is too
    small to halve. Why: an answer cut at the model's answer limit means the part asks for more
    answer than the model may give; half the passage asks for about half the answer.

    The halves keep the part's ``index`` (their sources belong to that part) and heading path; the
    second half's context tail is the text just before it, as for any part."""
    if chunk.chars < 2 * MIN_SPLIT_CHARS:
        return None
    body = chunk.text
    mid = len(body) // 2
    window = len(body) // 4  # a break within the middle half
    candidates: list[int] = []
    for pattern in (re.compile(r"\n\s*\n"), _SENTENCE_END, re.compile(r"\s+")):
        candidates = [m.end() for m in pattern.finditer(body) if abs(m.end() - mid) <= window]
        if candidates:
            break
    if not candidates:
        return None
    cut = min(candidates, key=lambda at: abs(at - mid))
    first_end = chunk.start + len(body[:cut].rstrip())
    second_start = chunk.start + cut
    first = Chunk(index=chunk.index, start=chunk.start, end=first_end, text=text[chunk.start:first_end],
                  heading_path=chunk.heading_path, context_tail=chunk.context_tail, page=chunk.page,
                  last_page=page_of(page_starts, max(chunk.start, first_end - 1)),
                  overlap_chars=min(chunk.overlap_chars, first_end - chunk.start), cut=chunk.cut)
    second = Chunk(index=chunk.index, start=second_start, end=chunk.end, text=text[second_start:chunk.end],
                   heading_path=chunk.heading_path, context_tail=_tail_before(text, second_start, chunk.cut),
                   page=page_of(page_starts, second_start), last_page=chunk.last_page, cut=chunk.cut)
    return first, second
