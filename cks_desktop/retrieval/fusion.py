"""Fusion of ranked lists, overlap merging, and the character budget.

Two fusions, each voice of the retriever choosing one (``service.VOICES``, measured in
``bench/retrieval.py``):
- ``"rrf"``, reciprocal-rank fusion (Cormack et al. 2009): a passage scores
  ``sum(weight / (K + rank))`` over the lists it is in; ``K = 60`` as in the paper. It ignores how
  far ahead a list's best is, so a passage of middling rank in two lists beats one that stands out
  in one (a table row the words match far better than anything else).
- ``"relative"``, relative-score fusion: each list's scores are scaled to [0, 1] as their share of
  the list's best (from zero, or from the lowest score when some are negative) and summed with the
  weights; a standout stays a standout, and the last of a short list still counts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

K = 60
Method = Literal["rrf", "relative"]


def fuse(lists: Sequence[tuple[float, Sequence[tuple[int, float]]]], method: Method) -> dict[int, float]:
    """Passage n → fused score, from (weight, [(passage id, score: higher is better)], best first) lists."""
    match method:
        case "rrf":
            return rrf([(w, [n for n, _ in ranked]) for w, ranked in lists])
        case "relative":
            return relative(lists)


def relative(lists: Sequence[tuple[float, Sequence[tuple[int, float]]]]) -> dict[int, float]:
    """Relative-score fusion: each list scaled from min(0, its lowest) to its best, weighted, summed."""
    fused: dict[int, float] = {}
    for weight, ranked in lists:
        if not ranked:
            continue
        scores = [s for _, s in ranked]
        low, high = min(0.0, *scores), max(scores)
        for n, s in ranked:
            scaled = (s - low) / (high - low) if high > low else 1.0
            fused[n] = fused.get(n, 0.0) + weight * scaled
    return fused


def rrf(lists: Sequence[tuple[float, Sequence[int]]]) -> dict[int, float]:
    """Passage n → fused score, from (weight, ranked passage ids) lists."""
    fused: dict[int, float] = {}
    for weight, ranked in lists:
        for rank, n in enumerate(ranked):
            fused[n] = fused.get(n, 0.0) + weight / (K + rank + 1)
    return fused


@dataclass
class Span:
    """A candidate span of one document, with its score."""

    document_id: str
    start: int
    end: int
    page: int | None
    score: float


def merge_overlaps(spans: list[Span]) -> list[Span]:
    """Spans of one document that overlap become one (the best score, the first page)."""
    by_doc: dict[str, list[Span]] = {}
    for s in spans:
        by_doc.setdefault(s.document_id, []).append(s)
    merged: list[Span] = []
    for doc_spans in by_doc.values():
        doc_spans.sort(key=lambda s: s.start)
        current = doc_spans[0]
        for s in doc_spans[1:]:
            if s.start < current.end:
                current = Span(current.document_id, current.start, max(current.end, s.end),
                               current.page, max(current.score, s.score))
            else:
                merged.append(current)
                current = s
        merged.append(current)
    merged.sort(key=lambda s: -s.score)
    return merged


def within_budget(spans: list[Span], k: int, budget_chars: int) -> list[Span]:
    """The best spans, at most ``k`` of them and at most ``budget_chars`` characters (the first always)."""
    out: list[Span] = []
    used = 0
    for s in spans:
        if len(out) >= k:
            break
        size = s.end - s.start
        if out and used + size > budget_chars:
            continue
        out.append(s)
        used += size
    return out
