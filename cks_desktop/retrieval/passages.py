"""Cut a document's stored text into passages that keep their exact span and page.

The extraction chunker (``extraction/chunking.py``) already cuts by structure (headings,
paragraphs, sentences) with exact offsets; retrieval reuses it at a smaller size, because a
question's answer is a sentence or two and a short passage ranks (and costs) better than a
1,000-token chunk. ``text == document_text[start:end]`` always: never a re-joined copy.

``CUT`` names the cutting parameters; an index cut with other parameters is re-cut (vectors of
passages whose text did not change are kept, by text hash).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

from cks_desktop.extraction.chunking import chunk_text

TARGET_TOKENS = 100
MAX_TOKENS = 150
OVERLAP = 0.0
CUT = f"structure:{TARGET_TOKENS}/{MAX_TOKENS}/{OVERLAP}:headings"


@dataclass(frozen=True)
class Passage:
    """One passage: ``text == document_text[start:end]``; ``page`` None without pages."""

    index: int
    start: int
    end: int
    page: int | None
    text: str
    headings: tuple[str, ...] = ()  # the heading path in force at ``start``

    @property
    def indexed(self) -> str:
        """What is searched and embedded: the heading path, then the passage's own text.

        A fact often names its subject only in the heading above it ("Ada Varga" over "Ada joined
        Northwind Labs…"); searching the headings too finds it. What is returned is the span alone.
        """
        if not self.headings:
            return self.text
        return " › ".join(self.headings) + "\n" + self.text

    @property
    def text_hash(self) -> str:
        return text_hash(self.indexed)


def text_hash(text: str) -> str:
    """The hash that decides whether a passage must be embedded again."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def cut(text: str, page_starts: Sequence[int] = ()) -> list[Passage]:
    """The passages of ``text``, in order; blank text gives none."""
    chunks = chunk_text(text, page_starts, target_tokens=TARGET_TOKENS, max_tokens=MAX_TOKENS, overlap=OVERLAP)
    out: list[Passage] = []
    for chunk in chunks:
        if not chunk.text.strip():
            continue
        out.append(Passage(index=len(out), start=chunk.start, end=chunk.end, page=chunk.page, text=chunk.text,
                           headings=chunk.heading_path))
    return out
