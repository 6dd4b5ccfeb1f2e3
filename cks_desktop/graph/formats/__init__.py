"""Import/export formats. Exports: json, graphml, markdown, mermaid, memory-jsonl.
Imports: json, graphml, memory-jsonl — each as ONE change, all or nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.model import Object, Relation, Session

if TYPE_CHECKING:
    from cks_desktop.graph.store import ApplyResult, GraphStore

EXPORT_FORMATS = ("json", "graphml", "markdown", "mermaid", "memory-jsonl")
IMPORT_FORMATS = ("json", "graphml", "memory-jsonl")


def export_graph(format: str, session: Session, objects: list[Object], relations: list[Relation]) -> str:
    if format == "json":
        from cks_desktop.graph.formats.json_format import export_json
        return export_json(session, objects, relations)
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


def import_graph(store: "GraphStore", session_id: str, format: str, data: str, origin: str) -> "ApplyResult":
    from cks_desktop.graph.formats.common import apply_import

    if not isinstance(data, str):
        raise StoreError("Nothing was imported: the data must be text.")
    store.get_session(session_id)  # NotFound before any parsing work
    if format == "json":
        from cks_desktop.graph.formats.json_format import parse_json
        parsed = parse_json(data)
    elif format == "graphml":
        from cks_desktop.graph.formats.graphml import parse_graphml
        parsed = parse_graphml(data)
    elif format == "memory-jsonl":
        from cks_desktop.graph.formats.memory_jsonl import merge_existing_observations, parse_memory_jsonl
        parsed = parse_memory_jsonl(data)
        merge_existing_observations(store, session_id, parsed)
    else:
        raise StoreError(f"Unknown import format {format!r}; use one of: {', '.join(IMPORT_FORMATS)}.")
    return apply_import(store, session_id, parsed, origin)
