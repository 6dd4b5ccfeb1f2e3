"""Removing a document with its provenance: its sources go in one graph change, and the facts
that had no other source are named (and, when asked, removed in that same change).

Order and failure: the graph change comes first (its sources, and the orphans when asked;
all or nothing through ``GraphStore.apply``), then the document row. Should removing the row
fail, the change is reverted, so the document never outlives its sources or the other way
round. The change can be reverted later once the document is back (re-adding the same file
gives it the same id); while it is gone the revert is refused with one sentence, since its
sources would point at nothing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from cks_desktop.plural import counted
from cks_desktop.provenance.queries import Orphans, orphans_of_document

if TYPE_CHECKING:
    from cks_desktop.documents.model import Document
    from cks_desktop.graph.model import Change
    from cks_desktop.graph.store import GraphStore

OrphanChoice = Literal["keep", "remove"]
SHOWN_NAMES = 10


@dataclass
class Removal:
    """What removing one document did."""

    document: "Document"
    orphans: Orphans  # the facts whose only sources cited the document
    orphans_removed: bool
    change: "Change | None"  # the graph change (None: the document supported nothing)

    def sentence(self) -> str:
        """What happened, for a person (one or two sentences)."""
        doc = self.document
        text = f"Removed {doc.name}"
        if self.orphans.evidence:
            text += f" and its {counted(len(self.orphans.evidence), 'source')}"
        text += "."
        if self.orphans.empty:
            return text
        what = orphan_words(self.orphans)
        if self.orphans_removed:
            return f"{text} Also removed {what}, which had no other source."
        return f"{text} {what[0].upper()}{what[1:]} no longer {'has' if _one(self.orphans) else 'have'} a source " \
               "(kept; remove them with --orphans remove)."

    def to_json(self) -> dict[str, Any]:
        return {"removed": self.document.to_json(), "sources_removed": len(self.orphans.evidence),
                "orphans": {"objects": [{"id": o.id, "type": o.type, "name": o.name} for o in self.orphans.objects],
                            "relations": [{"id": r.id, "type": r.type, "source_id": r.source_id,
                                           "target_id": r.target_id} for r in self.orphans.relations]},
                "orphans_removed": self.orphans_removed,
                "change_id": self.change.id if self.change is not None else None}


def _one(o: Orphans) -> bool:
    return len(o.objects) + len(o.relations) == 1


def orphan_words(o: Orphans) -> str:
    """"2 objects (Ada Lovelace, Charles Babbage) and 1 relation"."""
    parts = []
    if o.objects:
        names = ", ".join(x.name for x in o.objects[:SHOWN_NAMES])
        more = f" and {len(o.objects) - SHOWN_NAMES} more" if len(o.objects) > SHOWN_NAMES else ""
        parts.append(f"{counted(len(o.objects), 'object')} ({names}{more})")
    if o.relations:
        parts.append(counted(len(o.relations), "relation"))
    return " and ".join(parts)


def preview_removal(store: "GraphStore", session_id: str, ref: str) -> tuple["Document", Orphans]:
    """The document ``ref`` names and what removing it would leave without a source (writes nothing)."""
    from cks_desktop.documents.store import DocumentStore

    doc = DocumentStore(store).resolve(session_id, ref)
    return doc, orphans_of_document(store, session_id, doc.id)


def removal_ops(orphans: Orphans, remove_orphans: bool) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = [{"op": "remove_evidence", "evidence_id": e.id} for e in orphans.evidence]
    if remove_orphans:
        ops += [{"op": "remove_relation", "relation_id": r.id} for r in orphans.relations]
        ops += [{"op": "remove_object", "ref": o.id} for o in orphans.objects]
    return ops


def remove_document(store: "GraphStore", session_id: str, ref: str, orphans: OrphanChoice = "keep",
                    origin: str = "user") -> Removal:
    """Remove a document, its sources, and (``orphans="remove"``) the facts it alone supported."""
    from cks_desktop.documents.store import DocumentStore

    if orphans not in ("keep", "remove"):
        from cks_desktop.graph.errors import StoreError

        raise StoreError(f"Unknown choice {orphans!r} for what no longer has a source; use keep or remove.")
    doc, found = preview_removal(store, session_id, ref)
    ops = removal_ops(found, orphans == "remove")
    change = store.apply(session_id, ops, origin).change if ops else None
    try:
        DocumentStore(store).remove(session_id, doc.id)
    except BaseException:
        if change is not None:
            store.revert(session_id, change.id, origin)
        raise
    return Removal(doc, found, orphans == "remove", change)
