"""Grounding in code: find each quote the model gave inside its chunk, and derive span and page.

A model's quote is a claim, not a location: it may be verbatim, differ in spacing, case or
typographic quotes, be lightly paraphrased, or be invented. So the app, never the model, decides
where a fact came from, in three tiers:

1. ``exact``: the quote occurs verbatim (``str.find``; among several occurrences the one nearest
   the hint, e.g. where the object's name occurs).
2. ``normalised``: equal after collapsing whitespace, case folding and mapping typographic quotes
   and dashes to ASCII; found in a normalised copy of the chunk that keeps, per character, its
   offset in the original, so the span maps back exactly. Stored as alignment ``"exact"`` (the
   same words), with the document's own text as the quote.
3. ``fuzzy``: the best window of the normalised chunk by ``difflib.SequenceMatcher``, looked for
   only around *anchor words* of the quote (words of 4+ letters found in the chunk), so a chunk of
   5,000 characters costs a handful of small comparisons, not a sliding window. Accepted when at
   least ``FUZZY_THRESHOLD`` of the quote's characters match; the span runs from the first to the
   last matched character.

Anything else is unaligned: it goes to review and is never written silently. The stored quote
is always ``text[start:end]`` of the document (so ``text[start:end] == quote`` holds by
construction); the model's own wording is kept beside it when it differs.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

from cks_desktop.extraction.chunking import page_of

FUZZY_THRESHOLD = 0.82
MIN_QUOTE_CHARS = 3
MAX_ANCHORS = 6
MAX_WINDOWS = 6

_TYPO = str.maketrans({"‘": "'", "’": "'", "‚": "'", "‛": "'", "“": '"', "”": '"', "„": '"',
                       "–": "-", "—": "-", "‐": "-", "‑": "-", "−": "-", "\u00a0": " "})
_WORD = re.compile(r"\w{4,}")
_RUN = re.compile(r"\s+|\S+")


@dataclass(frozen=True)
class Alignment:
    """Where a quote sits in its chunk: ``[start, end)`` in chunk coordinates."""

    start: int
    end: int
    kind: str  # "exact" | "normalised" | "fuzzy"
    score: float = 1.0

    @property
    def evidence_kind(self) -> str:
        """The alignment as evidence records it (``normalised`` is the same words: ``exact``)."""
        return "fuzzy" if self.kind == "fuzzy" else "exact"


@dataclass(frozen=True)
class Grounded:
    """A quote placed in the document: span, page and the document's own text at the span."""

    start: int
    end: int
    page: int | None
    quote: str
    alignment: str  # evidence alignment: "exact" | "fuzzy"
    score: float
    model_quote: str


class Normalised:
    """A normalised copy of a text with the original offset of each of its characters.

    Built on first use (most quotes match exactly and never need it) and a run of characters at a
    time: the character-by-character loop was a large part of the app's time per chunk."""

    def __init__(self, text: str) -> None:
        self._source = text
        self._text: str | None = None
        self._where: list[int] = []
        self._words: dict[str, list[int]] | None = None

    @property
    def text(self) -> str:
        if self._text is None:
            self._build()
        assert self._text is not None
        return self._text

    @property
    def where(self) -> list[int]:
        if self._text is None:
            self._build()
        return self._where

    def _build(self) -> None:
        out: list[str] = []
        where: list[int] = []
        for m in _RUN.finditer(self._source.translate(_TYPO)):
            run, at = m.group(), m.start()
            if run[0].isspace():
                if out:  # leading whitespace is dropped, a run becomes one space
                    out.append(" ")
                    where.append(at)
                continue
            folded = run.casefold()
            if len(folded) == len(run):
                out.append(folded)
                where.extend(range(at, at + len(run)))
                continue
            for i, ch in enumerate(run):  # a character that folds into several (ß → ss)
                for piece in ch.casefold():
                    out.append(piece)
                    where.append(at + i)
        if out and out[-1] == " ":
            out.pop()
            where.pop()
        self._text = "".join(out)
        self._where = where

    def span(self, start: int, end: int) -> tuple[int, int]:
        """Original ``[start, end)`` of normalised ``[start, end)`` (end exclusive, non-empty)."""
        return self.where[start], self.where[end - 1] + 1

    def words(self) -> dict[str, list[int]]:
        if self._words is None:
            index: dict[str, list[int]] = {}
            for m in _WORD.finditer(self.text):
                index.setdefault(m.group(), []).append(m.start())
            self._words = index
        return self._words


def normalise(text: str) -> str:
    return Normalised(text).text


def _nearest(text: str, needle: str, hint: int | None) -> int:
    first = text.find(needle)
    if first < 0 or hint is None:
        return first
    best, pos = first, first
    while pos >= 0:
        if abs(pos - hint) < abs(best - hint):
            best = pos
        pos = text.find(needle, pos + 1)
    return best


def align(quote: str, chunk: str, *, hint: int | None = None, norm: Normalised | None = None) -> Alignment | None:
    """The quote's place in ``chunk`` (chunk coordinates), or None when it is not there."""
    quote = quote.strip()
    if len(quote) < MIN_QUOTE_CHARS:
        return None
    at = _nearest(chunk, quote, hint)
    if at >= 0:
        return Alignment(at, at + len(quote), "exact")
    norm = norm or Normalised(chunk)
    q = normalise(quote)
    if not q:
        return None
    at = norm.text.find(q)
    if at >= 0:
        start, end = norm.span(at, at + len(q))
        return Alignment(start, end, "normalised")
    return _fuzzy(q, norm)


def _fuzzy(q: str, norm: Normalised) -> Alignment | None:
    words = norm.words()
    anchors = sorted({m.group(): m.start() for m in _WORD.finditer(q)}.items(),
                     key=lambda item: (len(words.get(item[0], ())) or 10**9, -len(item[0])))
    starts: dict[int, int] = {}
    for word, offset in anchors[:MAX_ANCHORS]:
        for pos in words.get(word, ())[:20]:
            bucket = max(0, pos - offset) // max(1, len(q) // 4)
            starts[bucket] = starts.get(bucket, 0) + 1
    if not starts:
        return None
    best: Alignment | None = None
    step = max(1, len(q) // 4)
    margin = max(8, len(q) // 4)
    looked: set[int] = set()
    for bucket, _ in sorted(starts.items(), key=lambda kv: -kv[1])[:MAX_WINDOWS]:
        if bucket in looked:
            continue  # a neighbour's window (its margin is one step) already held this one
        looked.update((bucket - 1, bucket, bucket + 1))
        lo = max(0, bucket * step - margin)
        hi = min(len(norm.text), bucket * step + len(q) + 2 * margin)
        window = norm.text[lo:hi]
        matcher = difflib.SequenceMatcher(None, q, window, autojunk=False)
        blocks = [b for b in matcher.get_matching_blocks() if b.size >= 2]
        if not blocks:
            continue
        matched = sum(b.size for b in blocks)
        score = matched / len(q)
        if score < FUZZY_THRESHOLD:
            continue
        first, last = blocks[0], blocks[-1]
        a, b = lo + first.b, lo + last.b + last.size
        if b - a > 1.5 * len(q):  # scattered matches, not a passage
            continue
        if best is None or score > best.score:
            start, end = norm.span(a, b)
            best = Alignment(start, end, "fuzzy", round(score, 3))
    return best


def ground(quote: str, chunk_text: str, chunk_start: int, page_starts: Sequence[int], *,
           hint: int | None = None, norm: Normalised | None = None) -> Grounded | None:
    """The quote placed in the document (document coordinates), or None (→ review)."""
    found = align(quote, chunk_text, hint=hint, norm=norm)
    if found is None:
        return None
    start, end = chunk_start + found.start, chunk_start + found.end
    return Grounded(start=start, end=end, page=page_of(page_starts, start), quote=chunk_text[found.start:found.end],
                    alignment=found.evidence_kind, score=found.score, model_quote=quote)
