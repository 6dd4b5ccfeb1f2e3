"""Reciprocal-rank fusion of ranked lists, overlap merging, and the character budget.

RRF (Cormack et al. 2009): a passage scores ``sum(weight / (K + rank))`` over the lists it is in,
so a passage near the top of two lists beats one at the top of one; scores of different scales
(BM25, cosine, PageRank) never have to be compared. ``K = 60`` as in the paper.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

K = 60


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
