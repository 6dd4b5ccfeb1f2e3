"""Plain text and Markdown: kept exactly as written (offsets point into what the person wrote).

Decoding: a BOM decides (UTF-8, UTF-16, UTF-32); else UTF-8; else, for bytes without NULs,
Windows-1252 (the usual other encoding of text files); anything else is not text. Line endings
become ``\\n`` so character offsets do not depend on the platform that wrote the file.
"""

from __future__ import annotations

import codecs

from cks_desktop.documents.errors import UnreadableDocument
from cks_desktop.documents.model import Extracted
from cks_desktop.documents.readers.registry import DocumentFormat

_BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
         (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def decode(data: bytes, name: str) -> str:
    """The text in ``data``, or UnreadableDocument when it is not text in a known encoding."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            try:
                return data.decode(encoding)
            except UnicodeDecodeError:
                raise UnreadableDocument(f"{name} starts like {encoding} text but is not valid {encoding}.") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    if b"\x00" not in data:
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError:
            pass
    raise UnreadableDocument(f"{name} is not a text file (nor a PDF, DOCX or HTML file this app can read).")


def normalise_newlines(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read(data: bytes, name: str) -> Extracted:
    return Extracted(normalise_newlines(decode(data, name)))


def _reader_name() -> str:
    return "text"


FORMATS = (
    DocumentFormat("text/plain", "Text", (".txt", ".text", ".log", ".csv"), read, _reader_name, fallback=True,
                   order=10),
    DocumentFormat("text/markdown", "Markdown", (".md", ".markdown"), read, _reader_name, order=20),
)
