"""PDF: the text layer, page by page, with where each page starts kept (``page_starts``).

Library: pypdf (BSD-3-Clause, pure Python, no native code to bundle, actively released; its
``extract_text`` reads the text layer of ordinary PDFs well). Alternatives were weighed:
pdfminer.six (slower, more code), PyMuPDF (AGPL and a native wheel), pdfplumber (built on
pdfminer). No OCR: a PDF whose pages carry no text layer (a scan) is refused with a sentence
saying so, instead of adding an empty document.

Pages are joined with a blank line ("\\n\\n"); ``page_starts[i]`` is the offset of page i+1's
first character. An encrypted PDF is opened only if it has no user password (many PDFs are
"encrypted" with an empty one to restrict printing); otherwise it is refused.

A bound: a PDF of more than ``MAX_PAGES`` pages is refused in one sentence before its pages are
read (a 100,000-page file took ~2 minutes of CPU, silently: pypdf's page-tree flattening alone is
~20 s). The page tree is counted by walking it ourselves, at most ``MAX_PAGES`` + 1 leaves deep
and never twice through a node, so a file whose ``/Count`` lies is caught as cheaply. Within the
bound the read reports each page and can be stopped (``documents/progress.py``).
"""

from __future__ import annotations

import io
import logging
import warnings
from typing import Any

from cks_desktop.documents.errors import UnreadableDocument
from cks_desktop.documents.model import Extracted
from cks_desktop.documents.progress import ReadProgress
from cks_desktop.documents.readers.registry import DocumentFormat
from cks_desktop.documents.readers.text import normalise_newlines

PAGE_SEPARATOR = "\n\n"
MAX_PAGES = 10_000  # ~15 s of reading here, with progress; a bigger PDF is refused at once


def reader_name() -> str:
    import pypdf

    return f"pypdf {pypdf.__version__}"


def _too_many_pages(pdf: Any, limit: int) -> bool:
    """Whether the page tree has more than ``limit`` pages: the declared ``/Count`` first, then
    the leaves counted by walking the tree, stopping past ``limit`` (a ``/Count`` may lie)."""
    pages = pdf.trailer["/Root"]["/Pages"]
    declared = pages.get("/Count", 0)
    if isinstance(declared, int) and declared > limit:
        return True
    leaves, seen, stack = 0, set(), [pages]
    while stack:
        node = stack.pop()
        kids = node.get("/Kids")
        if kids is None:
            leaves += 1
            if leaves > limit:
                return True
            continue
        for kid in kids:
            key = getattr(kid, "idnum", None)
            if key is not None:
                if key in seen:
                    continue
                seen.add(key)
            stack.append(kid.get_object())
    return False


def read(data: bytes, name: str) -> Extracted:
    return read_with_progress(data, name, ReadProgress())


def read_with_progress(data: bytes, name: str, progress: ReadProgress) -> Extracted:
    import pypdf
    from pypdf.errors import FileNotDecryptedError, PyPdfError

    logging.getLogger("pypdf").setLevel(logging.ERROR)  # its repair notes are not the person's business
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pdf = pypdf.PdfReader(io.BytesIO(data))
            if pdf.is_encrypted:
                try:
                    if not pdf.decrypt(""):
                        raise FileNotDecryptedError("password")
                except (FileNotDecryptedError, NotImplementedError):
                    raise UnreadableDocument(f"{name} is an encrypted PDF protected by a password; "
                                             "remove the password and add it again.") from None
            if _too_many_pages(pdf, MAX_PAGES):
                raise UnreadableDocument(f"{name} has more than {MAX_PAGES:,} pages, more than this app reads "
                                         "from one file; split it into parts (a PDF tool can) and add those.")
            progress.step(name, 0, 0)  # opening: the page tree is read (seconds for thousands of pages)
            total = len(pdf.pages)
            pages: list[str] = []
            for i, leaf in enumerate(pdf.pages):
                progress.step(name, i, total)
                pages.append(normalise_newlines(leaf.extract_text() or "").strip())
            progress.step(name, total, total)
    except UnreadableDocument:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError, RecursionError,
            ZeroDivisionError, AssertionError) as exc:
        raise UnreadableDocument(f"{name} is not a PDF that can be read (it may be damaged: "
                                 f"{type(exc).__name__}).") from None
    if not pages:
        raise UnreadableDocument(f"{name} is a PDF with no pages.")
    if not any(pages):
        raise UnreadableDocument(f"{name} has no text layer (a scanned PDF?); run it through OCR first, "
                                 "then add the result.")
    starts: list[int] = []
    parts: list[str] = []
    offset = 0
    for i, page in enumerate(pages):
        if i:
            parts.append(PAGE_SEPARATOR)
            offset += len(PAGE_SEPARATOR)
        starts.append(offset)
        parts.append(page)
        offset += len(page)
    return Extracted("".join(parts), tuple(starts))


FORMATS = (DocumentFormat("application/pdf", "PDF", (".pdf",), read, reader_name, magic=(b"%PDF-",), order=40,
                          read_with_progress=read_with_progress),)
