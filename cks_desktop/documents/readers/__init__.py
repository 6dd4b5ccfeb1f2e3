"""Reading a file into a document: size checks first, then the registered reader of its format.

The formats are records in ``registry`` (one per format: suffixes, magic bytes, media type, read
function), declared by the reader modules of this package. The format is told by the file's first
bytes where they are unambiguous (``%PDF-``; a ZIP named ``.docx`` or nothing), else by its
extension; an unknown extension is read as plain text only if it decodes as text. Every failure is
an ``UnreadableDocument`` whose message is one sentence naming the file: nothing the person sees is
a traceback.

The size cap (``settings.Documents.max_file_bytes``, the caller passes it) is checked on the file's
size BEFORE any byte is read, and again on what was read (a file growing while read).
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from cks_desktop.documents.errors import UnreadableDocument
from cks_desktop.documents.model import ReadDocument
from cks_desktop.documents.progress import ReadProgress
from cks_desktop.documents.readers import registry

TEXT, MARKDOWN, HTML = "text/plain", "text/markdown", "text/html"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def _megabytes(n: int) -> str:
    return f"{n / (1024 * 1024):,.1f} MB" if n >= 1024 * 1024 else f"{n:,} bytes"


# a character a person can read: not white space, not a control character (C0, DEL, C1), not the
# replacement character a decoder puts where bytes were not text
_READABLE = re.compile("[^\\s\x00-\x1f\x7f-\x9f\ufffd]")


def read_bytes(data: bytes, name: str, source: str = "", media_type: str | None = None,
               progress: ReadProgress | None = None) -> ReadDocument:
    """Read a document from bytes already in memory (``name`` is what the person sees);
    ``progress``: told as a long read goes, and stops it (``ReadCancelled``)."""
    if not data:
        raise UnreadableDocument(f"{name} is empty (0 bytes); there is nothing to add.")
    fmt = registry.by_media_type(media_type) if media_type else registry.detect(name, data[:8])
    kind = media_type or fmt.media_type
    if progress is not None and fmt.read_with_progress is not None:
        extracted = fmt.read_with_progress(data, name, progress)
    else:
        extracted = fmt.read(data, name)
    reader = fmt.reader_name()
    if _READABLE.search(extracted.text) is None:  # NUL bytes and control characters are not text
        raise UnreadableDocument(f"{name} contains no readable text.")
    return ReadDocument(sha256=hashlib.sha256(data).hexdigest(), name=name, size=len(data), media_type=kind,
                        source=source, reader=reader, text=extracted.text, page_starts=extracted.page_starts)


def read_path(path: Path, max_bytes: int, progress: ReadProgress | None = None) -> ReadDocument:
    """Read the file at ``path``: its size is checked against ``max_bytes`` before reading."""
    name = path.name or str(path)
    try:
        info = path.stat()
    except FileNotFoundError:
        raise UnreadableDocument(f"{path} does not exist.") from None
    except OSError as exc:
        raise UnreadableDocument(f"{path} cannot be read: {exc.strerror or exc}.") from None
    import stat

    if stat.S_ISDIR(info.st_mode):
        raise UnreadableDocument(f"{path} is a folder; add the files in it instead.")
    if not stat.S_ISREG(info.st_mode):
        raise UnreadableDocument(f"{path} is not a regular file.")
    if info.st_size == 0:
        raise UnreadableDocument(f"{name} is empty (0 bytes); there is nothing to add.")
    if info.st_size > max_bytes:
        raise UnreadableDocument(f"{name} is {_megabytes(info.st_size)}, larger than the {_megabytes(max_bytes)} "
                                 "a document may be (Settings key documents.max_file_mb).")
    try:
        with path.open("rb") as handle:
            data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise UnreadableDocument(f"{path} cannot be read: {exc.strerror or exc}.") from None
    if len(data) > max_bytes:
        raise UnreadableDocument(f"{name} grew past the {_megabytes(max_bytes)} limit while it was read.")
    return read_bytes(data, name, source=os.path.abspath(path), progress=progress)
