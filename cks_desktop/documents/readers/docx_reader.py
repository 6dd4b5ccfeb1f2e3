"""DOCX: paragraphs and tables in document order (python-docx).

Library: python-docx (MIT, the standard reader/writer of .docx in Python, kept up to date;
its only dependency is lxml). Named ``docx_reader`` so it never shadows the ``docx`` package.

Paragraphs become lines; a table becomes one line per row, cells separated by tabs; empty
paragraphs are dropped. Word has no fixed pages (they depend on the renderer), so DOCX
documents carry no page offsets. A .docx is a ZIP: before parsing, the members' declared
uncompressed size is checked (a "ZIP bomb" of a few KB that inflates to gigabytes is refused).
"""

from __future__ import annotations

import io
import zipfile

from cks_desktop.documents.errors import UnreadableDocument
from cks_desktop.documents.model import Extracted
from cks_desktop.documents.readers.registry import DocumentFormat
from cks_desktop.documents.readers.text import normalise_newlines

MAX_INFLATED = 1024 * 1024 * 1024  # 1 GB of XML is far past any real document


def reader_name() -> str:
    from importlib.metadata import version

    return f"python-docx {version('python-docx')}"


def _check_zip(data: bytes, name: str) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            if "word/document.xml" not in {m.filename for m in members}:
                raise UnreadableDocument(f"{name} is a ZIP file but not a Word document (.docx).")
            if sum(m.file_size for m in members) > MAX_INFLATED:
                raise UnreadableDocument(f"{name} inflates to more than 1 GB; it is refused as unsafe.")
    except zipfile.BadZipFile:
        raise UnreadableDocument(f"{name} is not a Word document that can be read (not a valid .docx file; "
                                 "old .doc files are not supported — save it as .docx).") from None


def read(data: bytes, name: str) -> Extracted:
    _check_zip(data, name)
    import docx
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    try:
        document = docx.Document(io.BytesIO(data))
        lines: list[str] = []
        for block in document.iter_inner_content():
            if isinstance(block, Paragraph):
                text = block.text.strip()
                if text:
                    lines.append(text)
            elif isinstance(block, Table):
                for row in block.rows:
                    cells = [cell.text.strip() for cell in row.cells]
                    if any(cells):
                        lines.append("\t".join(cells))
    except UnreadableDocument:
        raise
    except Exception as exc:  # python-docx/lxml raise many kinds (KeyError, XMLSyntaxError, ValueError …)
        raise UnreadableDocument(f"{name} is not a Word document that can be read (it may be damaged: "
                                 f"{type(exc).__name__}).") from None
    return Extracted(normalise_newlines("\n".join(lines)))


FORMATS = (DocumentFormat("application/vnd.openxmlformats-officedocument.wordprocessingml.document", "Word",
                          (".docx",), read, reader_name, magic=(b"PK\x03\x04",), magic_needs_suffix=True, order=50),)
