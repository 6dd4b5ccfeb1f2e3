"""PDF: the text layer, page by page, with where each page starts kept (``page_starts``).

Library: pypdf (BSD-3-Clause, pure Python, no native code to bundle, actively released; its
``extract_text`` reads the text layer of ordinary PDFs well). Alternatives were weighed:
pdfminer.six (slower, more code), PyMuPDF (AGPL and a native wheel), pdfplumber (built on
pdfminer). No OCR: a PDF whose pages carry no text layer (a scan) is refused with a sentence
saying so, instead of adding an empty document.

Pages are joined with a blank line ("\\n\\n"); ``page_starts[i]`` is the offset of page i+1's
first character. An encrypted PDF is opened only if it has no user password (many PDFs are
"encrypted" with an empty one to restrict printing); otherwise it is refused.
"""

from __future__ import annotations

import io
import logging
import warnings

from cks_desktop.documents.errors import UnreadableDocument
from cks_desktop.documents.model import Extracted
from cks_desktop.documents.readers.registry import DocumentFormat
from cks_desktop.documents.readers.text import normalise_newlines

PAGE_SEPARATOR = "\n\n"


def reader_name() -> str:
    import pypdf

    return f"pypdf {pypdf.__version__}"


def read(data: bytes, name: str) -> Extracted:
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
            pages = [normalise_newlines(page.extract_text() or "").strip() for page in pdf.pages]
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


FORMATS = (DocumentFormat("application/pdf", "PDF", (".pdf",), read, reader_name, magic=(b"%PDF-",), order=40),)
