"""Plain values: a file just read (``ReadDocument``) and a document stored in a session."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Extracted:
    """What a reader returns: the readable text and where each page starts in it.

    ``page_starts[i]`` is the character offset in ``text`` where page ``i + 1`` begins; empty
    for formats without pages (text, Markdown, HTML, DOCX: Word's pages depend on the renderer).
    """

    text: str
    page_starts: tuple[int, ...] = ()


@dataclass(frozen=True)
class ReadDocument:
    """A file read from disk, not yet stored: identity (sha256 of its bytes) and its text."""

    sha256: str
    name: str
    size: int
    media_type: str
    source: str
    reader: str
    text: str
    page_starts: tuple[int, ...] = ()


@dataclass(frozen=True)
class Document:
    """A document stored in a session (``text`` is empty when listed without it)."""

    id: str
    session_id: str
    name: str
    size: int
    media_type: str
    source: str
    added_at: str
    reader: str
    characters: int
    page_starts: tuple[int, ...] = field(default=())
    text: str = ""

    @property
    def pages(self) -> int:
        return len(self.page_starts)

    def page_of(self, offset: int) -> int | None:
        """The 1-based page holding character ``offset``; None when the format has no pages."""
        if not self.page_starts:
            return None
        page = 0
        for i, start in enumerate(self.page_starts):
            if start <= offset:
                page = i
            else:
                break
        return page + 1

    def to_json(self, with_text: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {"id": self.id, "name": self.name, "size": self.size, "media_type": self.media_type,
                               "source": self.source, "added_at": self.added_at, "reader": self.reader,
                               "characters": self.characters, "pages": self.pages,
                               "page_starts": list(self.page_starts)}
        if with_text:
            out["text"] = self.text
        return out
