"""Documents in a session: files a person adds so their knowledge can be
extracted, with the text kept exactly so later provenance can point at character spans and pages.

- ``readers``: one module per format (plain text, Markdown, HTML, PDF, DOCX), each turning the
  file's bytes into text plus page offsets, or refusing with one sentence (``UnreadableDocument``).
- ``store``: the ``documents`` table (schema migration 5), content-addressed by the sha256 of the
  file's bytes and deduplicated per session; every add is one transaction.
- ``exchange``: the documents section of a cks-graph JSON export, and reading it back.

Qt-free: the window (ui/documents.py) and the CLI (commands/documents_cmd.py) sit on top of it.
"""

from __future__ import annotations

from cks_desktop.documents.errors import DocumentError, UnreadableDocument
from cks_desktop.documents.model import Document, ReadDocument

__all__ = ["Document", "DocumentError", "ReadDocument", "UnreadableDocument"]
