"""The change history's storage: compact op lists, light history reads, compaction.

Why: a 100k-object import recorded ~170 MB of history and its revert another
~340 MB (the revert's inverse holds a full copy of everything it removed), and
every click in the inspector parsed all 400k ops of the import just to show
one line of it.

- ``encode_ops``: op lists larger than ``COMPRESS_OVER`` bytes of JSON are
  stored zlib-compressed, as a BLOB starting with ``ZLIB_MAGIC`` (the columns
  are TEXT; SQLite keeps a BLOB as it is). Op lists repeat the same keys and id
  prefixes, so they shrink about tenfold. Small lists stay readable JSON
  text; old rows (always text) read as before, so no data migration is needed.
- ``HEAD_COLS``/``change_head``: history lists (the inspector, ``list_changes``)
  never read the op columns at all.
- ``compact``: drops the OLDEST changes of a session (older than N days, or
  all but the last N). What is dropped can no longer be reverted; the graph
  itself is unchanged. Only a prefix of the history is ever dropped, so a kept
  change's revert (``reverts`` = an older change) stays valid, and a kept change
  is never "un-reverted" by losing the change that reverted it (a revert is
  always newer than what it reverts).
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.model import Change

COMPRESS_OVER = 4096  # bytes of JSON; below this the text is kept as is
ZLIB_MAGIC = b"CKZ1"
HEAD_COLS = "id, session_id, at, origin, summary, reverts"


def encode_parts(parts: Iterable[str]) -> str | bytes:
    """JSON text assembled from ``parts``; compressed when it is large.

    The parts are fed to the compressor one by one, so a big op list is never
    held twice (as parts and as one joined string) before compression.
    """
    sink = PartSink()
    for part in parts:
        sink.push(part)
    return sink.finish()


class PartSink:
    """``encode_parts`` for a writer that PUSHES its pieces (a streamed import writes its op
    list chunk by chunk): text until it passes ``COMPRESS_OVER``, then a zlib stream."""

    def __init__(self) -> None:
        self._head: list[str] = []
        self._size = 0
        self._comp: Any = None  # zlib compressobj once the text is large
        self._chunks: list[bytes] = []
        self._pending: list[str] = []
        self._pending_size = 0

    def push(self, part: str) -> None:
        if self._comp is None:
            self._head.append(part)
            self._size += len(part)
            if self._size > COMPRESS_OVER:
                self._comp = zlib.compressobj(6)
                self._chunks = [ZLIB_MAGIC, self._comp.compress("".join(self._head).encode("utf-8"))]
                self._head = []
            return
        self._pending.append(part)
        self._pending_size += len(part)
        if self._pending_size > 1 << 16:
            self._flush_pending()

    def _flush_pending(self) -> None:
        if self._pending:
            self._chunks.append(self._comp.compress("".join(self._pending).encode("utf-8")))
            self._pending, self._pending_size = [], 0

    def finish(self) -> str | bytes:
        if self._comp is None:
            return "".join(self._head)
        self._flush_pending()
        self._chunks.append(self._comp.flush())
        out = b"".join(self._chunks)
        self._chunks = []
        return out


def decode_ops(value: str | bytes) -> list[dict[str, Any]]:
    """The op list stored by ``encode_parts`` (or by a version before it: plain JSON text)."""
    if isinstance(value, bytes) and value.startswith(ZLIB_MAGIC):
        value = zlib.decompress(value[len(ZLIB_MAGIC):])
    ops: list[dict[str, Any]] = json.loads(value)
    return ops


def change_head(row: Sequence[Any]) -> Change:
    """A ``Change`` without its ops (read with ``HEAD_COLS``)."""
    return Change(id=row[0], session_id=row[1], at=row[2], origin=row[3], ops=[], inverse_ops=[],
                  summary=row[4], reverts=row[5])


@dataclass(frozen=True)
class CompactResult:
    """What ``compact`` dropped and kept."""

    dropped: int
    kept: int
    oldest_kept: str | None  # the ``at`` of the oldest change still revertible

    def sentence(self) -> str:
        if not self.dropped:
            return f"Nothing to drop: all {self.kept} changes are kept."
        since = f" (the oldest kept is from {self.oldest_kept})" if self.oldest_kept else ""
        return (f"Dropped {self.dropped} change{'s' if self.dropped != 1 else ''} from the history; "
                f"{self.kept} kept{since}. The dropped changes can no longer be reverted; the graph is unchanged.")


def _cutoff(conn: sqlite3.Connection, session_id: str, keep_days: int | None,
            keep_last: int | None) -> str | None:
    """The id of the oldest change to KEEP (None: drop nothing… or everything, see ``compact``)."""
    if (keep_days is None) == (keep_last is None):
        raise StoreError("Say what to keep: either a number of days or a number of changes, not both.")
    if keep_last is not None:
        if not isinstance(keep_last, int) or isinstance(keep_last, bool) or keep_last < 0:
            raise StoreError("The number of changes to keep must be a whole number, 0 or more.")
        row = conn.execute("SELECT id FROM changes WHERE session_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?",
                           (session_id, keep_last - 1)).fetchone() if keep_last else None
        return row[0] if row else ("" if keep_last else None)
    assert keep_days is not None
    if not isinstance(keep_days, int) or isinstance(keep_days, bool) or keep_days < 0:
        raise StoreError("The number of days to keep must be a whole number, 0 or more.")
    if keep_days == 0:  # "keep nothing" (a cut at this very moment would keep this millisecond's changes)
        return None
    since = (datetime.now(timezone.utc) - timedelta(days=keep_days)).isoformat(timespec="milliseconds")
    since = since.replace("+00:00", "Z")
    row = conn.execute("SELECT id FROM changes WHERE session_id = ? AND at >= ? ORDER BY id LIMIT 1",
                       (session_id, since)).fetchone()
    return row[0] if row else None


def plan_compaction(conn: sqlite3.Connection, session_id: str, keep_days: int | None = None,
                    keep_last: int | None = None) -> tuple[int, int]:
    """``(would drop, would keep)`` — for asking before ``compact`` runs."""
    keep_from = _cutoff(conn, session_id, keep_days, keep_last)
    total = conn.execute("SELECT count(*) FROM changes WHERE session_id = ?", (session_id,)).fetchone()[0]
    if keep_from is None:  # nothing recent enough / keep 0: everything goes
        return total, 0
    if keep_from == "":  # fewer changes than asked to keep
        return 0, total
    drop = conn.execute("SELECT count(*) FROM changes WHERE session_id = ? AND id < ?",
                        (session_id, keep_from)).fetchone()[0]
    return drop, total - drop


def compact(conn: sqlite3.Connection, session_id: str, keep_days: int | None = None,
            keep_last: int | None = None) -> CompactResult:
    """Drop the session's oldest changes; the caller owns the (write) transaction."""
    keep_from = _cutoff(conn, session_id, keep_days, keep_last)
    if keep_from == "":
        dropped_ids: list[str] = []
    else:
        where, params = ("session_id = ?", (session_id,)) if keep_from is None else (
            "session_id = ? AND id < ?", (session_id, keep_from))
        dropped_ids = [r[0] for r in conn.execute(f"SELECT id FROM changes WHERE {where}", params)]
    if dropped_ids:
        ids = json.dumps(dropped_ids)
        conn.execute("DELETE FROM change_objects WHERE change_id IN (SELECT value FROM json_each(?))", (ids,))
        conn.execute("DELETE FROM changes WHERE id IN (SELECT value FROM json_each(?))", (ids,))
    kept, oldest = conn.execute("SELECT count(*), min(at) FROM changes WHERE session_id = ?",
                                (session_id,)).fetchone()
    return CompactResult(dropped=len(dropped_ids), kept=kept, oldest_kept=oldest)
