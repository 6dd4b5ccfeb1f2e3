"""The two ways a document operation fails, each carrying one sentence for the person."""

from __future__ import annotations


class DocumentError(Exception):
    """A request about documents that cannot be done (unknown document, ambiguous reference)."""


class UnreadableDocument(DocumentError):
    """A file that cannot be read as a document; the message names the file and says why."""
