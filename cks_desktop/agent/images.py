"""The chat's images, stored once per session (table ``chat_images``, step 9).

An image enters the chat from a tool (an MCP image block, validated in ``mcp/convert.py``)
or from the person (paste, drop, ``chat --image FILE``). Either way it is stored here, keyed
by the sha256 of its bytes, so the same screenshot returned ten times is one row, and the
transcript keeps only ``ImagePart`` references (id, type, size), never bytes. Before a
request is built, ``hydrate`` fills the parts' bytes from this table; an image whose row is
gone (the session was cleaned) stays a reference and goes to the model as its note.

Nothing here reads a URL: bytes come from a tool result, the clipboard or a file the person
chose. Writes run on the graph store's connection (``transaction()``), so they never
interleave with graph or transcript writes; a large image is written off the event loop
(``store_async``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from cks_desktop.llm.messages import ImagePart, Message, Part, ToolResultPart
from cks_desktop.tools.images import MAX_IMAGE_BYTES, ImageBlob, ImageRefused, sniff

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore

log = logging.getLogger(__name__)
OFF_LOOP_BYTES = 256 * 1024  # larger images are written from a worker thread


def part_of(blob: ImageBlob, image_id: str | None = None) -> ImagePart:
    """The message part for ``blob`` (bytes included)."""
    return ImagePart(image_id or blob.digest, blob.media_type, blob.width, blob.height, blob.size, blob.data)


def read_image_file(path: str | os.PathLike[str]) -> ImageBlob:
    """A file the person chose, validated; ``ImageRefused`` (one sentence) for anything else.
    The size is checked before the file is read, so a 4 GB file costs one ``stat``."""
    target = Path(path)
    try:
        size = target.stat().st_size
        if size > MAX_IMAGE_BYTES:
            raise ImageRefused(f"{target.name} is {size / 1024 / 1024:.1f} MB; the chat takes images up to "
                               f"{MAX_IMAGE_BYTES // 1024 // 1024} MB.")
        data = target.read_bytes()
    except FileNotFoundError:
        raise ImageRefused(f"There is no file {target}.") from None
    except IsADirectoryError:
        raise ImageRefused(f"{target} is a folder, not an image.") from None
    except OSError as exc:
        raise ImageRefused(f"{target.name} could not be read ({exc.strerror or exc}).") from None
    try:
        return sniff(data)
    except ImageRefused as exc:
        raise ImageRefused(f"{target.name}: {exc}") from None


class ImageStore:
    """The ``chat_images`` table of one graph store."""

    def __init__(self, store: "GraphStore") -> None:
        self.store = store

    def put(self, session_id: str, blob: ImageBlob) -> ImagePart:
        """Store ``blob`` in the session (once: the same bytes again are the same row)."""
        at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
        image_id = blob.digest
        with self.store.transaction() as conn:
            conn.execute(
                "INSERT OR IGNORE INTO chat_images (session_id, id, media_type, data, width, height, created_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                (session_id, image_id, blob.media_type, sqlite3.Binary(blob.data), blob.width, blob.height, at))
        return part_of(blob, image_id)

    async def store_async(self, session_id: str, blob: ImageBlob) -> ImagePart:
        """``put``, from a worker thread for a large image (the loop never waits on a 20 MB write)."""
        if blob.size > OFF_LOOP_BYTES:
            return await asyncio.to_thread(self.put, session_id, blob)
        return self.put(session_id, blob)

    def get(self, session_id: str, image_id: str) -> ImagePart | None:
        """The stored image with its bytes, or None."""
        with self.store.connection_lock() as conn:
            row = conn.execute("SELECT media_type, data, width, height FROM chat_images "
                               "WHERE session_id = ? AND id = ?", (session_id, image_id)).fetchone()
        if row is None:
            return None
        data = bytes(row[1])
        return ImagePart(image_id, str(row[0]), int(row[2] or 0), int(row[3] or 0), len(data), data)

    def ids(self, session_id: str) -> list[str]:
        with self.store.connection_lock() as conn:
            rows = conn.execute("SELECT id FROM chat_images WHERE session_id = ? ORDER BY created_at",
                                (session_id,)).fetchall()
        return [str(r[0]) for r in rows]

    async def hydrate_async(self, session_id: str, messages: Sequence[Message]) -> list[Message]:
        """The bytes a request can still send, read from a worker thread: only the newest exchange's
        images (from the last person's message on). A request sends an earlier exchange's images as
        placeholders (``agent/context.budget_images``), so a long chat's forty screenshots are not
        forty megabytes read again for every turn; their references (type, size) are enough."""
        messages = list(messages)
        start = next((i for i in range(len(messages) - 1, -1, -1) if messages[i].role == "user"), len(messages))
        if not _has_refs(p for m in messages[start:] for p in m.parts):
            return messages
        recent = await asyncio.to_thread(self.hydrate, session_id, messages[start:])
        return messages[:start] + recent

    def hydrate(self, session_id: str, messages: Sequence[Message]) -> list[Message]:
        """``messages`` with every image reference's bytes filled in (the same objects when none is
        missing, so a chat without images pays one scan)."""
        cache: dict[str, ImagePart | None] = {}

        def filled(part: ImagePart) -> ImagePart:
            if part.data or not part.image_id:
                return part
            if part.image_id not in cache:
                try:
                    cache[part.image_id] = self.get(session_id, part.image_id)
                except Exception:  # a locked or damaged file: the model gets the note, the chat goes on
                    log.warning("could not read image %s of session %s", part.image_id, session_id, exc_info=True)
                    cache[part.image_id] = None
            found = cache[part.image_id]
            return replace(part, data=found.data) if found is not None else part

        out: list[Message] = []
        for message in messages:
            if not _has_refs(message.parts):
                out.append(message)
                continue
            parts: list[Part] = []
            for part in message.parts:
                if isinstance(part, ImagePart):
                    parts.append(filled(part))
                elif isinstance(part, ToolResultPart) and part.images:
                    parts.append(replace(part, images=tuple(filled(i) for i in part.images)))
                else:
                    parts.append(part)
            out.append(Message(message.role, parts))
        return out


def _has_refs(parts: Iterable[Part]) -> bool:
    for part in parts:
        if isinstance(part, ImagePart) and not part.data:
            return True
        if isinstance(part, ToolResultPart) and any(not i.data for i in part.images):
            return True
    return False
