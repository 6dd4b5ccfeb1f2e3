"""Import/export formats. Exports: json, graphml, markdown, mermaid, memory-jsonl.
Imports: json, graphml, memory-jsonl — each as ONE change, all or nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.model import Object, Relation, Session

if TYPE_CHECKING:
    from cks_desktop.graph.formats.common import CarriedDocuments, ParsedGraph
    from cks_desktop.graph.formats.conflicts import ImportPreview
    from cks_desktop.graph.store import ApplyResult, GraphStore

EXPORT_FORMATS = ("json", "graphml", "markdown", "mermaid", "memory-jsonl")
IMPORT_FORMATS = ("json", "graphml", "memory-jsonl")


def export_graph(format: str, session: Session, objects: list[Object], relations: list[Relation],
                 evidence: list[dict[str, Any]] | None = None) -> str:
    """``evidence`` (the session's sources, ``graph.evidence.export_rows``) only goes into json."""
    if format == "json":
        from cks_desktop.graph.formats.json_format import export_json
        return export_json(session, objects, relations, evidence)
    if format == "graphml":
        from cks_desktop.graph.formats.graphml import export_graphml
        return export_graphml(session, objects, relations)
    if format == "markdown":
        from cks_desktop.graph.formats.markdown import export_markdown
        return export_markdown(session, objects, relations)
    if format == "mermaid":
        from cks_desktop.graph.formats.mermaid import export_mermaid
        return export_mermaid(session, objects, relations)
    if format == "memory-jsonl":
        from cks_desktop.graph.formats.memory_jsonl import export_memory_jsonl
        return export_memory_jsonl(objects, relations)
    raise StoreError(f"Unknown export format {format!r}; use one of: {', '.join(EXPORT_FORMATS)}.")


def parse_graph(format: str, data: str) -> "ParsedGraph":
    """The graph in ``data`` (nothing is written); bad input → StoreError naming every problem."""
    if not isinstance(data, str):
        raise StoreError("Nothing was imported: the data must be text.")
    if format == "json":
        from cks_desktop.graph.formats.json_format import parse_json
        return parse_json(data)
    if format == "graphml":
        from cks_desktop.graph.formats.graphml import parse_graphml
        return parse_graphml(data)
    if format == "memory-jsonl":
        from cks_desktop.graph.formats.memory_jsonl import parse_memory_jsonl
        return parse_memory_jsonl(data)
    raise StoreError(f"Unknown import format {format!r}; use one of: {', '.join(IMPORT_FORMATS)}.")


def _check_choice(on_conflict: str | None) -> None:
    from cks_desktop.graph.formats.conflicts import ON_CONFLICT

    if on_conflict is not None and on_conflict not in ON_CONFLICT:
        raise StoreError(f"Unknown conflict choice {on_conflict!r}; use one of: {', '.join(ON_CONFLICT)}.")


def import_graph(store: "GraphStore", session_id: str, format: str, data: str, origin: str,
                 on_conflict: str | None = None, documents: "CarriedDocuments | None" = None) -> "ApplyResult":
    from cks_desktop.graph.formats.common import apply_import

    _check_choice(on_conflict)
    if not isinstance(data, str):
        raise StoreError("Nothing was imported: the data must be text.")
    store.get_session(session_id)  # NotFound before any parsing work
    parsed = parse_graph(format, data)
    if format == "memory-jsonl" and on_conflict is None:
        from cks_desktop.graph.formats.memory_jsonl import merge_existing_observations
        merge_existing_observations(store, session_id, parsed)
    return apply_import(store, session_id, parsed, origin, on_conflict, documents)


def preview_import(store: "GraphStore", session_id: str, format: str, data: str) -> "ImportPreview":
    """What importing ``data`` would add to the session, and its conflicts; writes nothing."""
    from cks_desktop.graph.formats.conflicts import existing_objects, preview

    store.get_session(session_id)
    parsed = parse_graph(format, data)
    types = {d.name for d in store.type_defs(session_id) if d.kind == "object"}
    with store.connection_lock() as conn:
        types |= {t for (t,) in conn.execute("SELECT DISTINCT type FROM objects WHERE session_id = ?",
                                             (session_id,))}
    return preview(parsed, existing_objects(store, session_id, parsed), types)
