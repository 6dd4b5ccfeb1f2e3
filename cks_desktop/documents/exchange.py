"""Documents in a cks-graph JSON export: a top-level ``"documents"`` list beside the graph.

Why a section, not format version 2: cks-graph version 1 readers (this app's, and every
earlier release's) ignore unknown top-level keys, so an export with documents still imports
everywhere, as the graph alone; and a file without the key is exactly today's version 1. The
provenance work will need version 2 for evidence on objects; this section reads
the same under it.

Each entry: ``{"id" (sha256 of the original bytes), "name", "size", "media_type", "source",
"added_at", "reader", "text", "page_starts"}``. The original bytes are not kept (the store keeps
the extracted text, which is what provenance points at), so the id cannot be checked against the
file. An imported id is trusted only when it is the sha256 of the entry's text (a plain-text file);
any other entry gets an id derived from its text under an "imported" prefix (``imported_id``) and
its source is marked imported, and the graph's evidence (its ``document_id`` fields, nothing
else in the file) is pointed at that id. A planted entry whose
id is some real file's hash therefore never takes that hash: adding the real file later stores the
real text under its own id instead of deduplicating into the planted one.

Import: the section is checked first (every bad entry named, nothing written), then the
documents (deduplicated: re-importing adds nothing) and the graph with its sources are written
in ONE transaction, documents first: a refused graph, an error or a kill -9 leaves neither.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import sqlite3
from typing import TYPE_CHECKING, Any

from cks_desktop.documents.model import ReadDocument
from cks_desktop.graph.errors import StoreError

if TYPE_CHECKING:
    from cks_desktop.graph.store import ApplyResult, GraphStore

KEY = "documents"
_SHA256 = re.compile(r"[0-9a-f]{64}")


def export_json(store: "GraphStore", session_id: str) -> str:
    """The session's cks-graph JSON export, with its documents (no key when it has none)."""
    from cks_desktop.documents.store import DocumentStore

    data = store.export(session_id, "json")
    docs = DocumentStore(store).all_with_text(session_id)
    if not docs:
        return data
    entries = [{k: v for k, v in d.to_json(with_text=True).items() if k not in ("characters", "pages")}
               for d in docs]
    return with_section(data, KEY, entries)


def with_section(data: str, key: str, entries: list[dict[str, Any]]) -> str:
    """``data`` (a cks-graph JSON export, one top-level object) with ``"key": entries`` added
    last, without decoding the (possibly huge) graph again."""
    head = data.rstrip()
    if not head.endswith("}"):
        raise StoreError(f"The graph export has an unexpected shape; {key} cannot be added to it.")
    section = json.dumps(entries, ensure_ascii=False, indent=2).replace("\n", "\n  ")
    return f'{head[:-1].rstrip()},\n  "{key}": {section}\n}}\n'


def _fail(where: str, why: str) -> StoreError:
    return StoreError(f"Nothing was imported: {where} {why}.")


def _entry(i: int, item: Any) -> ReadDocument:
    where = f"document {i}"
    if not isinstance(item, dict):
        raise _fail(where, "is not a JSON object")
    doc_id = item.get("id")
    if not isinstance(doc_id, str) or not _SHA256.fullmatch(doc_id):
        raise _fail(where, "has no valid id (the sha256 of the file, 64 hex digits)")
    strings = {k: item.get(k, "") for k in ("name", "media_type", "source", "added_at", "reader", "text")}
    for key, value in strings.items():
        if not isinstance(value, str):
            raise _fail(where, f"has a {key} that is not text")
    if not strings["name"].strip() or not strings["text"]:
        raise _fail(where, "needs a name and a text")
    size = item.get("size", 0)
    if not isinstance(size, int) or isinstance(size, bool) or size < 0:
        raise _fail(where, "has a size that is not a whole number of bytes")
    starts = item.get("page_starts", [])
    if (not isinstance(starts, list) or any(not isinstance(s, int) or isinstance(s, bool) for s in starts)
            or starts != sorted(starts) or any(s < 0 or s > len(strings["text"]) for s in starts)):
        raise _fail(where, "has page_starts that are not ascending offsets into its text")
    return ReadDocument(sha256=doc_id, name=strings["name"], size=size, media_type=strings["media_type"] or
                        "text/plain", source=strings["source"], reader=strings["reader"], text=strings["text"],
                        page_starts=tuple(starts))


_IMPORTED = b"cks-desktop imported document\0"


def imported_id(text: str) -> str:
    """The id of an imported document whose carried id is not the hash of its text: derived from
    the text under a prefix, so it is stable (re-importing dedupes) and no real file's hash."""
    return hashlib.sha256(_IMPORTED + text.encode("utf-8")).hexdigest()


def _trusted(doc: ReadDocument) -> ReadDocument:
    """``doc`` as it may be stored: its carried id kept only when it is the hash of its text."""
    if hashlib.sha256(doc.text.encode("utf-8")).hexdigest() == doc.sha256:
        return doc
    source = doc.source if doc.source.startswith("imported") else f"imported{': ' + doc.source if doc.source else ''}"
    return dataclasses.replace(doc, sha256=imported_id(doc.text), source=source)


def parse_documents(data: str) -> list[ReadDocument]:
    """The documents section of a cks-graph JSON text (empty when there is none); bad → StoreError."""
    if f'"{KEY}"' not in data:
        return []
    try:
        doc = json.loads(data)
    except (ValueError, RecursionError):
        return []  # the graph import gives the sentence for JSON that does not parse
    section = doc.get(KEY) if isinstance(doc, dict) else None
    if section is None:
        return []
    if not isinstance(section, list):
        raise StoreError(f'Nothing was imported: "{KEY}" must be a list.')
    return [_entry(i, item) for i, item in enumerate(section)]


def import_json(store: "GraphStore", session_id: str, data: str, origin: str,
                on_conflict: str | None = None) -> tuple["ApplyResult", int]:
    """Import the graph and its documents in ONE transaction (both or nothing, a kill -9
    included); returns the graph's result and how many documents were new."""
    from cks_desktop.documents.store import AddResult, DocumentStore
    from cks_desktop.graph.formats.common import CarriedDocuments

    carried = parse_documents(data)
    docs = [_trusted(d) for d in carried]
    store.get_session(session_id)
    if not docs:
        return store.import_data(session_id, "json", data, origin, on_conflict=on_conflict), 0
    documents = DocumentStore(store)
    done: list[AddResult] = []

    def write(conn: sqlite3.Connection) -> bool:
        # The documents go first: the graph's sources cite them.
        done.append(documents.add_in(conn, session_id, docs))
        return bool(done[-1].added)

    renamed = {c.sha256: d.sha256 for c, d in zip(carried, docs) if c.sha256 != d.sha256}
    result = store.import_data(session_id, "json", data, origin, on_conflict=on_conflict,
                               documents=CarriedDocuments(write, frozenset(d.sha256 for d in docs), renamed))
    added = done[-1].added if done else []
    if added:
        documents.notify(session_id)
    return result, len(added)
