"""Graph import and export, the use case both front ends call: preview, import with the
conflict choice, export any format. Each import is one graph change.

The one rule of formats lives here: a ``json`` (cks-graph) export carries the session's documents
and an import of one brings them back (``documents/exchange.py``: the documents first, taken out
again when the graph is refused); every other format goes through the store's graph formats alone.
All calls block (reading and writing files, one transaction): the window runs them on a worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cks_desktop.graph.formats import EXPORT_FORMATS, IMPORT_FORMATS, preview_import
from cks_desktop.graph.formats.common import ImportRefused
from cks_desktop.graph.formats.conflicts import Conflict, ImportPreview

if TYPE_CHECKING:
    from cks_desktop.graph.store import ApplyResult, GraphStore

CARRIES_DOCUMENTS = "json"  # the one format whose files hold the session's documents too


@dataclass
class Imported:
    """One import: the graph change's result and how many documents were new."""

    result: "ApplyResult"
    documents_added: int = 0


# What a front end shows of a preview or a refusal, named here so it needs nothing below runtime.
__all__ = ["CARRIES_DOCUMENTS", "Conflict", "EXPORT_FORMATS", "GraphIOUseCase", "IMPORT_FORMATS", "ImportPreview",
           "ImportRefused", "Imported"]


class GraphIOUseCase:
    def __init__(self, store: "GraphStore") -> None:
        self.store = store

    def export_text(self, session_id: str, fmt: str) -> str:
        """The session's graph as ``fmt`` (json carries its documents). Raises ``StoreError``."""
        if fmt == CARRIES_DOCUMENTS:
            from cks_desktop.documents.exchange import export_json

            return export_json(self.store, session_id)
        return self.store.export(session_id, fmt)

    def export_file(self, session_id: str, fmt: str, path: Path) -> str:
        """Write the export to ``path`` atomically (nothing half-written); returns the text written.
        Raises ``OSError`` (the file) or ``StoreError`` (the session)."""
        from cks_desktop.settings.file import atomic_write_text

        data = self.export_text(session_id, fmt)
        atomic_write_text(path, data)
        return data

    def preview(self, session_id: str, fmt: str, text: str) -> ImportPreview:
        """An ``ImportPreview`` (counts, types, a sample, every conflict); writes nothing. Raises
        ``ImportRefused`` naming every problem."""
        return preview_import(self.store, session_id, fmt, text)

    def import_text(self, session_id: str, fmt: str, text: str, origin: str,
                    on_conflict: str | None = None) -> Imported:
        """Import ``text`` as one change with the conflict choice (``graph/formats/conflicts.py``:
        skip, merge, rename, error; None: the store's default). Raises ``StoreError``/``ImportRefused``;
        then nothing was written (a json import's documents are taken out again)."""
        self.store.get_session(session_id)
        if fmt == CARRIES_DOCUMENTS:
            from cks_desktop.documents.exchange import import_json

            result, added = import_json(self.store, session_id, text, origin, on_conflict=on_conflict)
            return Imported(result, added)
        return Imported(self.store.import_data(session_id, fmt, text, origin, on_conflict=on_conflict))
