"""HTML: the readable text only, parsed with the standard library's ``html.parser``.

Never a browser engine: nothing is rendered, no script runs, no resource is fetched (an
``<img src=http://…>`` is a tag we skip, not a request). Dropped with everything inside them:
``script``, ``style``, ``template``, ``noscript``, ``head`` (its ``title`` is kept as the first
line), ``svg``, ``math``, ``iframe``, ``object``, ``canvas``. Block elements end a line; runs of
whitespace collapse outside ``pre``. ``html.parser`` is a tokenizer, not a tree builder, so a
document nested a million levels deep costs time proportional to its size and no recursion.

The parser is fed a piece at a time (``PIECE`` characters), and what it holds back unparsed — a
tag, attribute, comment or script that has not ended yet — is bounded (``MAX_PENDING``): an
attribute that never ends (a 200 MB one was read whole, as 200 million characters of "text", at
1.5 GB peak) is refused in one sentence as soon as it passes the bound. 16 million characters
leave room for the big inline images (``data:`` URLs) and scripts of saved web pages.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from cks_desktop.documents.errors import UnreadableDocument
from cks_desktop.documents.model import Extracted
from cks_desktop.documents.readers.registry import DocumentFormat
from cks_desktop.documents.readers.text import decode, normalise_newlines

_SKIP = frozenset({"script", "style", "template", "noscript", "head", "svg", "math", "iframe", "object",
                   "canvas", "embed", "audio", "video", "select", "button"})
_BLOCK = frozenset({"p", "div", "br", "hr", "li", "ul", "ol", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "h5",
                    "h6", "tr", "table", "section", "article", "header", "footer", "nav", "aside", "main",
                    "blockquote", "pre", "figure", "figcaption", "form", "fieldset", "address", "details",
                    "summary", "body", "html", "caption", "thead", "tbody", "tfoot"})
_CELL = frozenset({"td", "th"})
_VOID = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
                   "track", "wbr", "param"})
PIECE = 1 << 20  # characters fed to the parser at a time
MAX_PENDING = 16_000_000  # characters the parser may hold back unparsed (an open tag, comment or script)
_SPACES = re.compile(r"[ \t\n\r\f\v]+")
_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?([A-Za-z0-9_\-]+)""", re.IGNORECASE)


class _TextOnly(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.title: list[str] = []
        self._skip: list[str] = []  # open elements whose content is dropped
        self._in_title = False
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title" and not self._skip_inside_head():
            self._in_title = True
            return
        if tag in _SKIP:
            if tag not in _VOID:
                self._skip.append(tag)
            return
        if self._skip:
            return
        if tag == "pre":
            self._pre += 1
        if tag in _BLOCK:
            self.out.append("\n")
        elif tag in _CELL:
            self.out.append("\t")

    def _skip_inside_head(self) -> bool:
        """True when a skipped element other than ``head`` is open (``<head><title>`` is kept)."""
        return any(t != "head" for t in self._skip)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if not self._skip and tag in _BLOCK:
            self.out.append("\n")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
            return
        if self._skip:
            if tag in self._skip:
                while self._skip and self._skip.pop() != tag:
                    pass
            return
        if tag == "pre" and self._pre:
            self._pre -= 1
        if tag in _BLOCK:
            self.out.append("\n")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title.append(data)
        elif not self._skip:
            self.out.append(data if self._pre else _SPACES.sub(" ", data))


def _tidy(text: str) -> str:
    lines = [line.strip(" ") for line in text.split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _decode_html(data: bytes, name: str) -> str:
    match = _CHARSET.search(data[:4096])
    if match:
        try:
            return data.decode(match.group(1).decode("ascii"))
        except (LookupError, UnicodeDecodeError):
            pass
    return decode(data, name)


def html_text(markup: str, name: str = "The HTML file") -> str:
    """The readable text of ``markup``; UnreadableDocument when a tag, attribute, comment or
    script does not end within ``MAX_PENDING`` characters."""
    parser = _TextOnly()
    for start in range(0, len(markup), PIECE):
        parser.feed(markup[start:start + PIECE])
        if len(parser.rawdata) > MAX_PENDING:  # held back, waiting for an end that has not come
            raise UnreadableDocument(
                f"{name} has a tag, attribute, comment or script that does not end within "
                f"{MAX_PENDING // 1_000_000} million characters; it is refused as unsafe "
                "(save the page as text or PDF to add it).")
    parser.close()
    title = _SPACES.sub(" ", "".join(parser.title)).strip()
    body = _tidy("".join(parser.out))
    return f"{title}\n\n{body}".strip() if title and not body.startswith(title) else body


def read(data: bytes, name: str) -> Extracted:
    return Extracted(html_text(normalise_newlines(_decode_html(data, name)), name))


def _reader_name() -> str:
    return "html.parser (stdlib)"


FORMATS = (DocumentFormat("text/html", "HTML", (".html", ".htm", ".xhtml"), read, _reader_name, order=30),)
