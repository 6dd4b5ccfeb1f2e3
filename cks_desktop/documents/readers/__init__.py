"""Reading a file into a document: size checks first, then one reader per format.

The format is told by the file's first bytes where they are unambiguous (``%PDF-``; a ZIP
holding ``word/document.xml``), else by its extension; an unknown extension is read as plain
text only if it decodes as text. Every failure is an ``UnreadableDocument`` whose message is
one sentence naming the file: nothing the person sees is a traceback.

The size cap (Settings key ``documents.max_file_mb``, default 100) is checked on the file's
size BEFORE any byte is read, and again on what was read (a file growing while read).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cks_desktop.documents.errors import UnreadableDocument
from cks_desktop.documents.model import Extracted, ReadDocument

DEFAULT_MAX_FILE_MB = 100

TEXT, MARKDOWN, HTML = "text/plain", "text/markdown", "text/html"
PDF = "application/pdf"
DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

_BY_SUFFIX = {".txt": TEXT, ".text": TEXT, ".log": TEXT, ".csv": TEXT, ".md": MARKDOWN, ".markdown": MARKDOWN,
              ".html": HTML, ".htm": HTML, ".xhtml": HTML, ".pdf": PDF, ".docx": DOCX}
SUPPORTED_SUFFIXES = tuple(sorted(_BY_SUFFIX))


def max_file_bytes(settings_data: dict[str, Any] | None) -> int:
    """The size cap from the settings' ``documents.max_file_mb`` (a positive number), else 100 MB."""
    section = (settings_data or {}).get("documents")
    value = section.get("max_file_mb") if isinstance(section, dict) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
        return int(value * 1024 * 1024)
    return DEFAULT_MAX_FILE_MB * 1024 * 1024


def _megabytes(n: int) -> str:
    return f"{n / (1024 * 1024):,.1f} MB" if n >= 1024 * 1024 else f"{n:,} bytes"


def media_type_of(name: str, head: bytes) -> str:
    """The format to read ``name`` as, from its first bytes, else its extension."""
    if head.startswith(b"%PDF-"):
        return PDF
    suffix = Path(name).suffix.lower()
    if head.startswith(b"PK\x03\x04") and suffix in ("", ".docx"):
        return DOCX
    return _BY_SUFFIX.get(suffix, TEXT)


def _reader(media_type: str) -> tuple[Callable[[bytes, str], Extracted], str]:
    """The reader function for a media type and its name-and-version (kept with the document)."""
    if media_type == PDF:
        from cks_desktop.documents.readers import pdf
        return pdf.read, pdf.reader_name()
    if media_type == DOCX:
        from cks_desktop.documents.readers import docx_reader
        return docx_reader.read, docx_reader.reader_name()
    if media_type == HTML:
        from cks_desktop.documents.readers import html
        return html.read, "html.parser (stdlib)"
    from cks_desktop.documents.readers import text
    return text.read, "text"


def read_bytes(data: bytes, name: str, source: str = "", media_type: str | None = None) -> ReadDocument:
    """Read a document from bytes already in memory (``name`` is what the person sees)."""
    if not data:
        raise UnreadableDocument(f"{name} is empty (0 bytes); there is nothing to add.")
    kind = media_type or media_type_of(name, data[:8])
    read, reader = _reader(kind)
    extracted = read(data, name)
    if not extracted.text.strip():
        raise UnreadableDocument(f"{name} contains no readable text.")
    return ReadDocument(sha256=hashlib.sha256(data).hexdigest(), name=name, size=len(data), media_type=kind,
                        source=source, reader=reader, text=extracted.text, page_starts=extracted.page_starts)


def read_path(path: Path, max_bytes: int) -> ReadDocument:
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
    return read_bytes(data, name, source=os.path.abspath(path))
