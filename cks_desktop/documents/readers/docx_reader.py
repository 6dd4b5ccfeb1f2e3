"""DOCX: paragraphs and tables in document order (python-docx).

Library: python-docx (MIT, the standard reader/writer of .docx in Python, kept up to date;
its only dependency is lxml). Named ``docx_reader`` so it never shadows the ``docx`` package.

Paragraphs become lines; a table becomes one line per row, cells separated by tabs; empty
paragraphs are dropped. Word has no fixed pages (they depend on the renderer), so DOCX
documents carry no page offsets. A .docx is a ZIP: before python-docx sees it, every member
is inflated once, a piece at a time, counting what it really gives (never trusting the sizes the
archive declares), and the file is refused when its markup passes ``MAX_MARKUP`` or all of it
``MAX_INFLATED``: a "ZIP bomb" of a few hundred KB whose document.xml inflates to 100 MB cost
python-docx 210 s and 1.8 GB of memory, so the markup it may parse is bounded (a 300-page report
holds about 5-15 MB). Pictures and other non-markup members count only toward the total.
"""

from __future__ import annotations

import io
import zipfile
import zlib

from cks_desktop.documents.errors import UnreadableDocument
from cks_desktop.documents.model import Extracted
from cks_desktop.documents.readers.registry import DocumentFormat
from cks_desktop.documents.readers.text import normalise_newlines

MAX_MARKUP = 40 * 1024 * 1024  # XML parts, inflated: python-docx/lxml take about 18x this in memory
MAX_INFLATED = 512 * 1024 * 1024  # every member, pictures included
_PIECE = 1024 * 1024


def reader_name() -> str:
    from importlib.metadata import version

    return f"python-docx {version('python-docx')}"


def _check_zip(data: bytes, name: str) -> None:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            if "word/document.xml" not in {m.filename for m in members}:
                raise UnreadableDocument(f"{name} is a ZIP file but not a Word document (.docx).")
            markup = total = 0
            for member in members:
                with archive.open(member) as stream:  # inflated piece by piece: memory stays one piece
                    while piece := stream.read(_PIECE):
                        total += len(piece)
                        if _is_markup(member.filename):
                            markup += len(piece)
                        if markup > MAX_MARKUP:
                            raise UnreadableDocument(
                                f"{name} unpacks to more than {MAX_MARKUP // 2**20} MB of Word markup; it is refused "
                                "as unsafe (save it as PDF, or split it, to add it).")
                        if total > MAX_INFLATED:
                            raise UnreadableDocument(
                                f"{name} unpacks to more than {MAX_INFLATED // 2**20} MB; it is refused as unsafe.")
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError):
        raise UnreadableDocument(f"{name} is not a Word document that can be read (not a valid .docx file; "
                                 "old .doc files are not supported — save it as .docx).") from None


def _is_markup(filename: str) -> bool:
    return filename.lower().endswith((".xml", ".rels"))


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
