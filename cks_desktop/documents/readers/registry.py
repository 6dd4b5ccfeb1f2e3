"""The document formats this app reads: one ``DocumentFormat`` record per format.

Each reader module in this package declares ``FORMATS`` (a tuple of records: its suffixes, the first
bytes that identify it, its media type, a short name for people and its read function). The registry
finds them by walking the package. The reading (``readers.read_bytes``: detection and the reader)
goes through it, and so do the window's file dialog (``file_filter``), the CLI's help
(``format_names``) and the documents list (``short_name``), through the documents use case: a new
format is one new module here.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from cks_desktop.documents.model import Extracted
from cks_desktop.documents.progress import ReadProgress


@dataclass(frozen=True)
class DocumentFormat:
    """One readable format.

    ``magic``: first bytes that identify the format whatever the file's name, unless
    ``magic_needs_suffix``: then they count only for a file with no extension or one of ``suffixes``
    (a ZIP is a DOCX only when it is not named as something else). ``fallback``: the format a file
    of unknown extension is tried as (plain text: it refuses what does not decode as text).
    """

    media_type: str
    name: str  # what a person calls it: "PDF", "Word"
    suffixes: tuple[str, ...]
    read: Callable[[bytes, str], Extracted]
    reader_name: Callable[[], str]  # the reader and its version, kept with each document
    magic: tuple[bytes, ...] = ()
    magic_needs_suffix: bool = False
    fallback: bool = False
    order: int = 50  # where it is named in lists (the filter, the help): lower first
    # a read that reports progress and can be stopped (``documents/progress.py``), for long formats
    read_with_progress: Callable[[bytes, str, ReadProgress], Extracted] | None = None

    def matches_magic(self, suffix: str, head: bytes) -> bool:
        if not any(head.startswith(m) for m in self.magic):
            return False
        return not self.magic_needs_suffix or suffix in ("", *self.suffixes)


@cache
def formats() -> tuple[DocumentFormat, ...]:
    """Every registered format (from each module of this package that declares ``FORMATS``)."""
    import cks_desktop.documents.readers as package

    found: list[DocumentFormat] = []
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if info.name == "registry":
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        found.extend(getattr(module, "FORMATS", ()))
    media_types = [f.media_type for f in found]
    suffixes = [s for f in found for s in f.suffixes]
    if len(set(media_types)) != len(media_types) or len(set(suffixes)) != len(suffixes):
        raise RuntimeError("two document readers claim the same media type or suffix")
    if sum(f.fallback for f in found) != 1:
        raise RuntimeError("exactly one document reader must be the fallback")
    return tuple(sorted(found, key=lambda f: (f.order, f.media_type)))


def by_media_type(media_type: str) -> DocumentFormat:
    for fmt in formats():
        if fmt.media_type == media_type:
            return fmt
    return fallback()


def fallback() -> DocumentFormat:
    return next(f for f in formats() if f.fallback)


def detect(name: str, head: bytes) -> DocumentFormat:
    """The format to read ``name`` as: its first bytes where they identify one, else its extension,
    else the fallback (plain text)."""
    suffix = Path(name).suffix.lower()
    for fmt in formats():
        if fmt.matches_magic(suffix, head):
            return fmt
    for fmt in formats():
        if suffix in fmt.suffixes:
            return fmt
    return fallback()


def suffixes() -> tuple[str, ...]:
    """Every extension a reader claims, sorted."""
    return tuple(sorted(s for f in formats() for s in f.suffixes))


def file_filter() -> str:
    """The window's file-dialog filter for documents: every claimed extension."""
    return "Documents (" + " ".join(f"*{s}" for f in formats() for s in f.suffixes) + ")"


def format_names() -> str:
    """The formats named for people, in order: "text, Markdown, HTML, PDF, Word"."""
    return ", ".join(f.name for f in formats())


def short_name(media_type: str) -> str:
    """A stored document's type as the documents list shows it ("PDF"), else its media type."""
    return next((f.name for f in formats() if f.media_type == media_type), media_type)
