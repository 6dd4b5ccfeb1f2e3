r"""Search ranking computed from ONE session's rows only.

Why not FTS5's ``bm25()``: the full-text index is shared by every session, and
bm25 reads the index's global statistics (how many rows there are, their
average length, how many rows hold each word). A session's scores — and even
its order — then moved when ANOTHER session gained or lost a word, so a host
of ``mcp serve`` (which must only ever see its own session) could probe other
sessions for a word by watching its own results. FTS5 still finds the
matching rows (that part is exact and per row); this module ranks them with
BM25 whose every statistic comes from the session itself:

- ``N`` is the session's object count and ``n(t)`` the number of the session's
  objects that match the term (one count query per term, filtered by session);
- the average field length is taken over the candidate rows (the session's
  own matches), term frequencies and lengths come from each row's own text.

Tokens are counted with a Python approximation of FTS5's ``unicode61
remove_diacritics 2`` tokenizer (``\w+`` words, diacritics removed, case
folded). A difference between the two only nudges a score; which rows
match is still decided by FTS5.

Decisions: names weigh 5, property text 1 (as before); k1 = 1.2, b = 0.75; the
score is the negated BM25 sum, so lower is better, as the tools always said;
ties go by id, so equal scores come out in a stable order. At most
``MAX_CANDIDATES`` matching rows (the session's first, by row order) are ranked.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

K1 = 1.2
B = 0.75
NAME_WEIGHT = 5.0
BODY_WEIGHT = 1.0
MAX_CANDIDATES = 10_000
_WORD = re.compile(r"\w+", re.UNICODE)  # the same words queries.fts_query quotes


def normalise(token: str) -> str:
    """Case-folded, diacritics removed (what the FTS5 tokenizer indexes)."""
    decomposed = unicodedata.normalize("NFKD", token.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def tokens(text: str) -> list[str]:
    return [normalise(t) for t in _WORD.findall(text or "")]


@dataclass(frozen=True)
class Term:
    text: str  # normalised
    prefix: bool  # the last word of a query still being typed matches as a prefix

    def count(self, words: Sequence[str]) -> int:
        if self.prefix:
            return sum(1 for w in words if w.startswith(self.text))
        return sum(1 for w in words if w == self.text)


def query_terms(query: str) -> list[Term]:
    """The words of a query, like ``queries.fts_query`` builds them (the last one a prefix)."""
    words = _WORD.findall(query or "")
    prefix_last = bool(query) and not query[-1].isspace()
    return [Term(normalise(w), prefix_last and i == len(words) - 1) for i, w in enumerate(words)]


@dataclass(frozen=True)
class Candidate:
    key: str  # the object id
    name: str
    body: str


def rank(candidates: Sequence[Candidate], terms: Sequence[Term], total: int,
         doc_freq: Sequence[int]) -> list[tuple[str, float]]:
    """``(object id, score)`` best first (lower score = better).

    ``total`` is the session's object count, ``doc_freq[i]`` how many of the
    session's objects match ``terms[i]``: nothing here comes from another session.
    """
    if not candidates:
        return []
    fields = [(tokens(c.name), tokens(c.body)) for c in candidates]
    avg_name = max(sum(len(n) for n, _ in fields) / len(fields), 1.0)
    avg_body = max(sum(len(b) for _, b in fields) / len(fields), 1.0)
    idf = [math.log(1.0 + (total - n + 0.5) / (n + 0.5)) for n in doc_freq]
    scored: list[tuple[float, str]] = []
    for cand, (name_words, body_words) in zip(candidates, fields):
        score = 0.0
        for term, weight in zip(terms, idf):
            part = 0.0
            for words, avg, field_weight in ((name_words, avg_name, NAME_WEIGHT), (body_words, avg_body, BODY_WEIGHT)):
                tf = term.count(words)
                if tf:
                    part += field_weight * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * len(words) / avg))
            score += weight * part
        scored.append((-score + 0.0, cand.key))
    scored.sort()
    return [(key, score) for score, key in scored]
