"""Plain values of provenance: an evidence row, a source as shown to a person or a model, and
who wrote a fact (derived from the change log).

Why authorship is derived, not stored: every write already records its origin in its
``Change`` (``user`` for the window's hand edits, ``model`` for the chat, ``cli``,
``mcp_client``) and the chat's tool calls record the change they wrote, so an extra evidence
row per hand edit would only repeat the history (and could disagree with it after a revert).
Document evidence is stored, because nothing else knows the passage.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from cks_desktop.graph.evidence import (ALIGNMENTS, ORIGINS, REVIEWS, Alignment, EvidenceOrigin, Review,
                                        TargetKind)

__all__ = ["ALIGNMENTS", "ORIGINS", "REVIEWS", "Alignment", "Authorship", "Evidence", "EvidenceOrigin", "Review",
           "Source", "TargetKind", "author_of"]


@dataclass(frozen=True)
class Evidence:
    """One row of the ``evidence`` table: one source of one object or relation."""

    id: str
    session_id: str
    target_kind: str  # "object" | "relation"
    target_id: str
    document_id: str | None
    chunk_index: int | None
    start: int | None
    end: int | None
    page: int | None
    quote: str
    alignment: str
    review: str
    origin: str
    change_id: str | None
    created_at: str

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, self.target_kind: self.target_id, "document_id": self.document_id,
                "chunk_index": self.chunk_index, "start": self.start, "end": self.end, "page": self.page,
                "quote": self.quote, "alignment": self.alignment, "review": self.review, "origin": self.origin,
                "change_id": self.change_id, "created_at": self.created_at}

    def op(self, target: str | None = None) -> dict[str, Any]:
        """An ``add_evidence`` op re-creating this source on ``target`` (default: its own)."""
        return {"op": "add_evidence", self.target_kind: target or self.target_id, "document_id": self.document_id,
                "chunk_index": self.chunk_index, "start": self.start, "end": self.end, "page": self.page,
                "quote": self.quote, "alignment": self.alignment, "review": self.review, "origin": self.origin}


@dataclass(frozen=True)
class Source:
    """A source as a person or a model reads it: the evidence with its document's name."""

    evidence: Evidence
    document_name: str | None  # None: the document is not in the session (or none was cited)

    def to_json(self) -> dict[str, Any]:
        e = self.evidence
        out: dict[str, Any] = {"evidence_id": e.id, "quote": e.quote, "document": self.document_name,
                               "document_id": e.document_id, "page": e.page, "start": e.start, "end": e.end,
                               "alignment": e.alignment, "review": e.review, "origin": e.origin}
        return out


@dataclass(frozen=True)
class Authorship:
    """One change that wrote an object or one of its relations, and who made it."""

    change_id: str
    at: str
    author: str  # "person", "chat", "another app", "import"...
    origin: str  # the change's raw origin
    summary: str
    chat_message_id: int | None = None  # the chat message whose tool call wrote it, when known

    def to_json(self) -> dict[str, Any]:
        return {"change_id": self.change_id, "at": self.at, "author": self.author, "summary": self.summary,
                "chat_message_id": self.chat_message_id}


_AUTHORS = {"user": "person", "cli": "person", "model": "chat", "mcp_client": "another app"}


def author_of(origin: str) -> str:
    """Who a change's origin stands for, in the words of ``EvidenceOrigin`` where one fits."""
    return _AUTHORS.get(origin, origin)
