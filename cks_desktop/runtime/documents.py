"""Documents in a session, the use case both front ends call: add files, list, open, remove.

``add_files`` reads every file first (the size cap is the settings' ``documents.max_file_mb``,
checked before a byte is read), collects one refusal sentence per file that cannot be read, then
stores the readable ones in ONE transaction (``DocumentStore.add``): a file is added whole or not
at all. It blocks (PDFs of thousands of pages take seconds; more than ``pdf.MAX_PAGES`` are refused):
the window runs it on a worker thread with a progress dialog that can cancel, the CLI calls it
directly, printing progress, and stops on Ctrl+C (``documents/progress.py``). The formats, the window's file filter and the CLI's help come from the
reader registry (``documents/readers/registry.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cks_desktop.documents.readers import registry
from cks_desktop.provenance.documents import OrphanChoice, Removal, orphan_words
from cks_desktop.provenance.queries import Orphans
from cks_desktop.settings import Documents

if TYPE_CHECKING:
    from cks_desktop.documents.model import Document
    from cks_desktop.documents.progress import ReadProgress
    from cks_desktop.graph.store import GraphStore

__all__ = ["AddOutcome", "DocumentsUseCase", "OrphanChoice", "Orphans", "Refusal", "Removal", "orphan_words"]


@dataclass(frozen=True)
class Refusal:
    """A file that was not added: the name as it was given, and one sentence why."""

    file: str
    error: str

    def to_json(self) -> dict[str, str]:
        return {"file": self.file, "error": self.error}


@dataclass
class AddOutcome:
    """What one ``add_files`` did: documents newly stored, those the session already had, and the
    files refused (each with its sentence)."""

    added: list["Document"] = field(default_factory=list)
    already: list["Document"] = field(default_factory=list)
    refused: list[Refusal] = field(default_factory=list)

    @property
    def nothing_added(self) -> bool:
        """Every file was refused (none added, none already there)."""
        return not (self.added or self.already)


class DocumentsUseCase:
    """The documents of the sessions in one store. ``max_bytes`` gives the size cap when called
    (so a change in Settings holds for the next add); without it, the default cap (a reader of
    documents that never adds any, such as the document viewer)."""

    def __init__(self, store: "GraphStore", max_bytes: Callable[[], int] | None = None) -> None:
        self.store = store
        self._max_bytes = max_bytes or (lambda: Documents().max_file_bytes)

    # -- what can be read (from the reader registry) ----------------------------------------
    @staticmethod
    def file_filter() -> str:
        """The file dialog's filter: every extension a registered reader claims."""
        return registry.file_filter()

    @staticmethod
    def format_names() -> str:
        """"Text, Markdown, HTML, PDF, Word": the registered formats, for help texts."""
        return registry.format_names()

    @staticmethod
    def type_name(media_type: str) -> str:
        """A stored document's type as people read it ("PDF")."""
        return registry.short_name(media_type)

    # -- the flows ---------------------------------------------------------------------------
    def add_files(self, session_id: str, files: Sequence[Path | str],
                  progress: "ReadProgress | None" = None) -> AddOutcome:
        """Read ``files``, add the readable ones in one transaction, refuse the others by name.
        Raises ``StoreError`` for an unknown session (before any file is read) or a database fault
        (then nothing was added). ``progress`` hears how a long read goes; its ``cancel`` stops
        the request with ``ReadCancelled`` before anything is stored."""
        from cks_desktop.documents.errors import UnreadableDocument
        from cks_desktop.documents.readers import read_path
        from cks_desktop.documents.store import DocumentStore

        self.store.get_session(session_id)
        limit = self._max_bytes()
        read, refused = [], []
        for name in files:
            try:
                read.append(read_path(Path(name).expanduser(), limit, progress))
            except UnreadableDocument as exc:
                refused.append(Refusal(str(name), str(exc)))
        if progress is not None:  # a Cancel after the last page still adds nothing
            progress.stop_if_cancelled()
        result = DocumentStore(self.store).add(session_id, read)
        return AddOutcome(result.added, result.already, refused)

    def list(self, session_id: str) -> list["Document"]:
        from cks_desktop.documents.store import DocumentStore

        return DocumentStore(self.store).list_documents(session_id)

    def open(self, session_id: str, ref: str) -> "Document":
        """One document with its text; ``ref`` is its id, a 6+ digit prefix of it, or its file
        name. Raises ``DocumentError`` (one sentence) when ``ref`` names none or several."""
        from cks_desktop.documents.store import DocumentStore

        return DocumentStore(self.store).get(session_id, ref)

    def preview_removal(self, session_id: str, ref: str) -> tuple["Document", Orphans]:
        """The document and what removing it would leave without a source (writes nothing)."""
        from cks_desktop.provenance.documents import preview_removal

        return preview_removal(self.store, session_id, ref)

    def remove(self, session_id: str, ref: str, orphans: OrphanChoice, origin: str) -> Removal:
        """Remove the document, its sources and (``orphans="remove"``) what it alone supported,
        in one graph change (``provenance.documents.remove_document``)."""
        from cks_desktop.provenance.documents import remove_document

        return remove_document(self.store, session_id, ref, orphans, origin)

    def subscribe(self, listener: Callable[[str], None]) -> Callable[[], None]:
        """``listener(session_id)`` after documents of a session were added or removed."""
        from cks_desktop.documents.store import subscribe

        return subscribe(listener)
