"""Citations in a model's answer, parsed and checked against the passages the model was given.

A model cites a passage as ``[n]`` or, better, ``[n "the exact words"]`` (``[n: "…"]``, curly quotes
and ``[2, 3]`` are read too). Each citation is checked before it is shown:

- the number is one of the passages the model was given (1..len(passages)); ``[99]`` of five is not;
- a quoted phrase occurs in that passage's text: exactly, after only whitespace runs are collapsed
  and curly quotes, dashes and the like are read as their plain forms (``normal``). Nothing else is
  forgiven: a paraphrase, another word or another passage's words fail.

A checked citation carries its exact span in the document: the quote's own characters where there is
a quote (``text[start:end]`` of ``documents show --text``), else the passage's. A failed one goes to
``unsupported`` with its reason and is never a source. The answer's text keeps ``[n]`` for a checked
citation and ``[n: unsupported]`` for a failed one, so a reader sees which is which.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # only named in annotations: the chat loop reads this module without numpy
    from cks_desktop.retrieval.service import Hit

Reason = Literal["not_given", "quote_not_found", "empty_quote"]

REASONS: dict[Reason, str] = {
    "not_given": "the model was given no passage with this number",
    "quote_not_found": "the quoted words are not in this passage",
    "empty_quote": "the quote is empty",
}

_OPEN = "\"“”„«‘’'"
_CLOSE = "\"“”»‘’'"
MARKER = re.compile(
    r"\[\s*(?P<nums>\d{1,6}(?:\s*,\s*\d{1,6})*)"
    rf"(?:\s*[:,\-–—]?\s*[{_OPEN}](?P<quote>[^\]\n]{{0,2000}}?)[{_CLOSE}])?\s*\]")
_PLAIN = str.maketrans({"“": '"', "”": '"', "„": '"', "«": '"', "»": '"', "‘": "'", "’": "'", "‚": "'",
                        "–": "-", "—": "-", "‐": "-", "‑": "-", "\u00a0": " ", "…": "..."})


@dataclass(frozen=True)
class Citation:
    """A checked citation: passage ``n`` as the model was given it, and where its words are."""

    n: int
    document: str
    document_id: str
    page: int | None
    start: int
    end: int
    quote: str | None

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "document": self.document, "page": self.page, "start": self.start,
                "end": self.end, "quote": self.quote}


@dataclass(frozen=True)
class Unsupported:
    """A citation that failed its check (never shown as a source)."""

    n: int
    quote: str | None
    reason: Reason

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, "quote": self.quote, "reason": REASONS[self.reason]}


@dataclass(frozen=True)
class Checked:
    """The answer's text with its markers rewritten, its checked citations and its failed ones.

    ``verdicts``: what each distinct marker of the answer, ``(n, quote as written)``, came to, in the
    order the answer first wrote it (a number of ``[2, 3]`` has no quote), so a front end can show
    each marker where it stands as checked or not."""

    text: str
    citations: list[Citation]
    unsupported: list[Unsupported]
    verdicts: dict[tuple[int, str | None], Citation | Unsupported] = field(default_factory=dict)


def normal(text: str) -> tuple[str, list[int]]:
    """``text`` with plain quotes and dashes and single spaces, and for each character of the result
    the index of the character of ``text`` it came from (to map a match back to the exact span)."""
    out: list[str] = []
    where: list[int] = []
    space = False
    for i, ch in enumerate(text):
        plain = unicodedata.normalize("NFKC", ch).translate(_PLAIN)
        if plain.isspace():
            if not space and out:
                out.append(" ")
                where.append(i)
            space = True
            continue
        space = False
        for c in plain:
            out.append(c)
            where.append(i)
    while out and out[-1] == " ":
        out.pop()
        where.pop()
    return "".join(out), where


def find_quote(passage: str, quote: str) -> tuple[int, int] | None:
    """The span of ``quote`` in ``passage`` (offsets in ``passage``), or None if it is not there."""
    needle, _ = normal(quote.strip(" .,;:"))
    if not needle:
        return None
    hay, where = normal(passage)
    at = hay.find(needle)
    if at < 0:
        return None
    return where[at], where[at + len(needle) - 1] + 1


def check(answer: str, passages: Sequence[Hit] | Mapping[int, Hit]) -> Checked:
    """Parse every citation of ``answer`` and check it against ``passages``: a list is numbered from
    1; a mapping gives each passage its own number (the chat's tool numbers them across its calls)."""
    given: Mapping[int, Hit] = passages if isinstance(passages, Mapping) else dict(enumerate(passages, 1))
    citations: list[Citation] = []
    unsupported: list[Unsupported] = []
    seen: dict[tuple[int, str | None], str] = {}
    verdicts: dict[tuple[int, str | None], Citation | Unsupported] = {}

    def failed(key: tuple[int, str | None], reason: Reason) -> str:
        bad = Unsupported(key[0], key[1], reason)
        unsupported.append(bad)
        verdicts[key] = bad
        seen[key] = f"[{key[0]}: unsupported]"
        return seen[key]

    def one(n: int, quote: str | None) -> str:
        key = (n, quote)
        if key in seen:
            return seen[key]
        hit = given.get(n)
        if hit is None:
            return failed(key, "not_given")
        if quote is None:
            cited = Citation(n, hit.document, hit.document_id, hit.page, hit.start, hit.end, None)
        elif not quote.strip():
            return failed(key, "empty_quote")
        else:
            span = find_quote(hit.text, quote)
            if span is None:
                return failed(key, "quote_not_found")
            a, b = span
            cited = Citation(n, hit.document, hit.document_id, hit.page, hit.start + a, hit.start + b, hit.text[a:b])
        citations.append(cited)
        verdicts[key] = cited
        seen[key] = f"[{n}]"
        return seen[key]

    def rewrite(m: re.Match[str]) -> str:
        return "".join(one(n, quote) for n, quote in marker_keys(m))

    text = MARKER.sub(rewrite, answer)
    return Checked(text, citations, unsupported, verdicts)


def marker_keys(match: re.Match[str]) -> list[tuple[int, str | None]]:
    """The ``(n, quote)`` of each number of one marker ``match`` of ``MARKER``, as ``check`` keys them."""
    quote = match.group("quote")
    nums = [int(x) for x in re.findall(r"\d+", match.group("nums"))]
    return [(n, quote if len(nums) == 1 else None) for n in nums]
