"""The citations of an ordinary chat answer, checked against the passages its turn retrieved.

In a chat the model may call ``retrieve_passages`` and then cite what it read as ``[n]`` or
``[n "exact words"]``. The tool numbers its passages itself (``n``, counted on across the calls of
one turn: ``tools/builtin/retrieve.py``), so a number names one passage of the whole turn. Once the
answer is complete, ``check_answer`` checks each citation with the Ask flow's own checker
(``retrieval/citations.py``): the number is one of the passages the turn's tool results gave the
model, and a quoted phrase is in that passage's text. A citation that fails is unsupported and never
a source.

The passages are read from what the model was sent: the tool results' text (the JSON the registry
wrote, as stored in the transcript), never the store, so a passage cut off by the result cap, or a
call that failed, gives nothing to cite. "The turn" is the exchange: the messages after the person's
last message, so a Continue after the iteration limit checks against the passages retrieved before
it too (the loop starts its numbering after those, ``given_in``).

A turn that called no ``retrieve_passages`` is not checked (its ``[1]`` may be a list mark or a
reference to an earlier answer): ``check_answer`` returns None, as it does for an answer with no
citation at all. The verdict (``AnswerCitations``) travels with the answer: on the loop's
``AssistantMessage`` event and in the transcript (extra JSON on the answer's text part, which
``Message.from_json`` ignores and no model is ever sent), so a reopened chat shows it the same.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cks_desktop.llm.messages import Message
from cks_desktop.retrieval.citations import MARKER, REASONS, Citation, Reason, check, marker_keys

if TYPE_CHECKING:
    from cks_desktop.retrieval.service import Hit

RETRIEVE_TOOL = "retrieve_passages"
STORE_KEY = "citations"  # on the answer's last text part in the transcript's stored JSON


@dataclass(frozen=True)
class Cited:
    """One distinct citation of the answer, ``[n]`` or ``[n "quote"]`` as the model wrote it, and what
    it came to: ``source`` the checked span (None: unsupported, ``reason`` says why)."""

    n: int
    quote: str | None
    source: Citation | None
    reason: Reason | None = None

    @property
    def checked(self) -> bool:
        return self.source is not None

    @property
    def why(self) -> str:
        """The reason of an unsupported citation, in words ("" for a checked one)."""
        return REASONS[self.reason] if self.reason is not None else ""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"n": self.n, "quote": self.quote}
        if self.source is not None:
            s = self.source
            out["source"] = {"document": s.document, "document_id": s.document_id, "page": s.page,
                             "start": s.start, "end": s.end, "quote": s.quote}
        if self.reason is not None:
            out["reason"] = self.reason
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> "Cited":
        n = int(data["n"])
        quote = data.get("quote")
        src = data.get("source")
        source = None
        if isinstance(src, dict):
            page = src.get("page")
            source = Citation(n, str(src.get("document") or ""), str(src.get("document_id") or ""),
                              int(page) if isinstance(page, int) else None, int(src.get("start") or 0),
                              int(src.get("end") or 0), src.get("quote") if isinstance(src.get("quote"), str) else None)
        reason = data.get("reason")
        return cls(n, quote if isinstance(quote, str) else None, source,
                   reason if reason in REASONS else (None if source is not None else "not_given"))


@dataclass(frozen=True)
class Mark:
    """Where one number of a citation marker stands in a text, and its verdict (None: not one the
    answer was checked for, e.g. a text edited since)."""

    start: int  # the marker's span in the text (a ``[2, 3]`` marker: the same span for both numbers)
    end: int
    n: int
    cited: Cited | None


@dataclass(frozen=True)
class AnswerCitations:
    """The verdict on an answer's citations: each distinct citation, in the order it was written."""

    cited: tuple[Cited, ...]
    passages: int  # how many passages the turn's tool results gave the model

    @property
    def sources(self) -> list[Citation]:
        return [c.source for c in self.cited if c.source is not None]

    @property
    def unsupported(self) -> list[Cited]:
        return [c for c in self.cited if c.source is None]

    def lookup(self, n: int, quote: str | None) -> Cited | None:
        return next((c for c in self.cited if c.n == n and c.quote == quote), None)

    def marks(self, text: str) -> Iterator[Mark]:
        """Each number of each citation marker in ``text`` (the answer, or a part of it), with its verdict."""
        for m in MARKER.finditer(text):
            for n, quote in marker_keys(m):
                yield Mark(m.start(), m.end(), n, self.lookup(n, quote))

    def unsupported_line(self) -> str:
        """One line naming the unsupported citations ("" when every one checked out)."""
        bad = self.unsupported
        if not bad:
            return ""
        each = [f"[{c.n}]{f' “{c.quote}”' if c.quote else ''} ({c.why})" for c in bad]
        return f"Not in the passages: {'; '.join(each)}"

    def to_json(self) -> dict[str, Any]:
        return {"passages": self.passages, "cited": [c.to_json() for c in self.cited]}

    @classmethod
    def from_json(cls, data: Any) -> "AnswerCitations | None":
        """The stored verdict, or None when ``data`` is not one (a file from another build)."""
        if not isinstance(data, dict) or not isinstance(data.get("cited"), list):
            return None
        try:
            cited = tuple(Cited.from_json(c) for c in data["cited"] if isinstance(c, dict))
        except (KeyError, TypeError, ValueError):
            return None
        passages = data.get("passages")
        return cls(cited, passages if isinstance(passages, int) else 0)


def exchange(messages: Sequence[Message]) -> Sequence[Message]:
    """The messages after the person's last message (the turn an answer belongs to)."""
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].role == "user":
            return messages[i + 1:]
    return messages


def passages_in(messages: Sequence[Message]) -> "dict[int, Hit] | None":
    """The passages ``retrieve_passages`` results in ``messages`` gave the model, by their number;
    None when no call of it succeeded there."""
    found: "dict[int, Hit] | None" = None
    for message in messages:
        for result in message.tool_results:
            if result.name != RETRIEVE_TOOL or result.is_error:
                continue
            found = {} if found is None else found
            found.update(_numbered(result.content))
    return found


def given_in(messages: Sequence[Message]) -> int:
    """The highest passage number the exchange's tool results gave (0: none), so a turn that goes on
    (Continue) numbers its next passages after them."""
    return max(passages_in(exchange(messages)) or [0])


def check_answer(text: str, turn: Sequence[Message]) -> AnswerCitations | None:
    """The verdict on ``text``'s citations against the passages of ``turn`` (the exchange's messages
    before the answer); None when the turn retrieved nothing or the answer cites nothing."""
    if not MARKER.search(text):  # the common answer: no marker, nothing to read
        return None
    passages = passages_in(turn)
    if passages is None:
        return None
    verdicts = check(text, passages).verdicts
    cited = tuple(Cited(n, quote, v, None) if isinstance(v, Citation) else Cited(n, quote, None, v.reason)
                  for (n, quote), v in verdicts.items())
    return AnswerCitations(cited, len(passages))


def _numbered(content: str) -> "Iterator[tuple[int, Hit]]":
    """The numbered passages of one tool result's text; a result cut short by the cap (no longer
    JSON) or one of an older build (passages without ``n``) gives none."""
    from cks_desktop.retrieval.service import Hit  # loaded already: the tool that wrote it imported it

    try:
        data = json.loads(content)
    except ValueError:
        return
    passages = data.get("passages") if isinstance(data, dict) else None
    for p in passages if isinstance(passages, list) else []:
        if not isinstance(p, dict) or not isinstance(p.get("n"), int) or not isinstance(p.get("text"), str):
            continue
        page = p.get("page")
        try:
            hit = Hit(str(p.get("document") or ""), str(p.get("document_id") or ""),
                      page if isinstance(page, int) else None, int(p["start"]), int(p["end"]), p["text"],
                      float(p.get("score") or 0.0))
        except (KeyError, TypeError, ValueError):
            continue
        yield p["n"], hit
