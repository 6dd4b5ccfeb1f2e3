"""Export what can still be read from a (possibly damaged) database.

The way out of a damaged file that needs no backup: every session is exported
on its own (JSON, the format ``sessions import`` reads back), so one session
whose pages are broken does not stop the others. Blocking: the GUI runs it on a
worker. Used by ``cks-desktop storage export`` and the GUI's start-up dialog.

Each file carries the session's documents (``documents/exchange.py``: their text, what the
sources point at), so a salvaged session imports elsewhere with every source. When the
documents cannot be read but the graph can, the graph alone is written and the row says
so (``"note"``): the way out must not fail on the part that is not the graph.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cks_desktop.diskfull import disk_full_sentence, is_disk_full
from cks_desktop.graph.errors import StoreError

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore


@dataclass
class Salvage:
    written: list[dict[str, str]] = field(default_factory=list)  # session_id, title, file
    failed: list[dict[str, str]] = field(default_factory=list)  # session_id, title, error


def export_readable(store: "GraphStore", folder: Path) -> Salvage:
    """Write ``<session id>.json`` for every session that can be read into ``folder``.

    StoreError when the folder cannot be written at all (a full disk says so) or
    the list of sessions cannot be read; per-session failures are in ``failed``."""
    from cks_desktop.documents.exchange import export_json
    from cks_desktop.settings import atomic_write_text

    result = Salvage()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(_cannot_write(exc, folder)) from None
    for session in store.list_sessions():
        target = folder / f"{session.id}.json"
        note = ""
        try:
            try:
                data = export_json(store, session.id)
            except (StoreError, sqlite3.Error) as exc:  # the documents unreadable: the graph alone
                data = store.export(session.id, "json")
                note = f"written without its documents, which could not be read: {exc}"
            atomic_write_text(target, data)
        except StoreError as exc:
            result.failed.append({"session_id": session.id, "title": session.title, "error": str(exc)})
            continue
        except OSError as exc:
            raise StoreError(_cannot_write(exc, target)) from None
        row = {"session_id": session.id, "title": session.title, "file": str(target)}
        result.written.append({**row, "note": note} if note else row)
    return result


def _cannot_write(exc: OSError, target: Path) -> str:
    if is_disk_full(exc, target):
        return disk_full_sentence(target)
    return f"Cannot write {target}: {exc.strerror or exc}."
