"""How a careful reader compares names written in different ways: one job, no state.

``loose_key`` is the form two spellings of one name share: case and diacritics folded, the letters
the diacritics stand for in transliteration folded too (ø/ö/oe → o, å/aa → a, ü/ue → u, ä/ae → a,
ß → ss), Cyrillic written in Latin letters, titles dropped ("Herr", "Capt.", "the Director"), an
inverted register entry put in reading order ("Lind, Karin" → "karin lind"), the app's own
disambiguating suffix dropped ("Alex Morgan (senator)"). ``person_parts`` splits a person's name into
given names (an initial stays an initial) and surname, so "K. Lind" can fit "Karin Lind" and never
"Erik Lind"; ``given_names_differ`` is the guard that two people with different given names are two.
``plain_score`` ranks the forms of one name for the canonical one: the fullest plain form (no title,
no initials, not in capitals, not inverted, in the Latin script when there is one).
"""

from __future__ import annotations

import functools
import heapq
import re
import unicodedata
from array import array
from collections.abc import Hashable, Iterable
from typing import Generic, TypeVar

import numpy as np

K = TypeVar("K", bound=Hashable)

TITLES = frozenset({"mr", "mrs", "ms", "miss", "dr", "prof", "professor", "sir", "dame", "lord", "lady", "the",
                    "herr", "frau", "fraulein", "monsieur", "madame", "mme", "mlle", "signor", "signora", "don",
                    "dona", "captain", "capt", "cpt", "director", "rev", "reverend", "father", "sister", "judge",
                    "senator", "general", "gen", "colonel", "col", "major", "maj", "lieutenant", "lt", "count",
                    "countess", "baron", "baroness"})
_CYRILLIC = dict(zip("абвгдеёжзийклмнопрстуфхцчшщъыьэюя",
                     ["a", "b", "v", "g", "d", "e", "e", "zh", "z", "i", "i", "k", "l", "m", "n", "o", "p", "r", "s",
                      "t", "u", "f", "kh", "ts", "ch", "sh", "shch", "", "y", "", "e", "yu", "ya"], strict=True))
_LETTERS = {"ø": "o", "æ": "ae", "œ": "oe", "ß": "ss", "đ": "d", "ð": "d", "þ": "th", "ł": "l", "ı": "i"}
_DIGRAPHS = (("oe", "o"), ("ae", "a"), ("ue", "u"), ("aa", "a"))
_SUFFIX = re.compile(r"\s*\([^()]*\)\s*$")
_WORD = re.compile(r"\w+")


def fold(text: str) -> str:
    """Case folded, Cyrillic in Latin letters, diacritics and special letters folded (no digraphs)."""
    out = []
    for ch in text.casefold():
        if ch in _CYRILLIC:
            out.append(_CYRILLIC[ch])
        elif ch in _LETTERS:
            out.append(_LETTERS[ch])
        else:
            out.append(ch)
    decomposed = unicodedata.normalize("NFKD", "".join(out))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _digraphs(word: str) -> str:
    for a, b in _DIGRAPHS:
        word = word.replace(a, b)
    return word


def strip_suffix(name: str) -> str:
    """The name without a trailing "(…)" (the app's disambiguating suffix, or an added note)."""
    return _SUFFIX.sub("", name).strip() or name.strip()


def reading_order(name: str) -> str:
    """"Lind, Karin" → "Karin Lind" (one comma, a surname before it, given names after)."""
    if name.count(",") != 1:
        return name
    last, first = (p.strip() for p in name.split(","))
    if last and first and len(last.split()) <= 2 and len(first.split()) <= 3 and first[:1].isupper():
        return f"{first} {last}"
    return name


@functools.lru_cache(maxsize=65536)
def loose_words(name: str) -> tuple[str, ...]:
    """The words of ``loose_key`` (titles dropped, initials kept as one letter)."""
    words = [_digraphs(w) for w in _WORD.findall(fold(reading_order(strip_suffix(name)).replace("&", " and ")))]
    while len(words) > 1 and words[0] in TITLES:
        words.pop(0)
    return tuple(words)


def loose_key(name: str) -> str:
    return " ".join(loose_words(name))


@functools.lru_cache(maxsize=65536)
def person_parts(name: str) -> tuple[tuple[str, ...], str]:
    """(given names or initials, surname) of a person's name, in loose form."""
    words = loose_words(name)
    if not words:
        return (), ""
    return words[:-1], words[-1]


def _given_fit(a: str, b: str) -> bool:
    return a == b or (len(a) == 1 and b.startswith(a)) or (len(b) == 1 and a.startswith(b))


def given_names_differ(a: str, b: str) -> bool:
    """Both names give a given name and they are not the same (an initial fits its name): two people."""
    ga, _ = person_parts(a)
    gb, _ = person_parts(b)
    if not ga or not gb:
        return False
    return not _given_fit(ga[0], gb[0])


def initials_fit(short: str, full: str) -> bool:
    """``short``'s given names (initials or names) fit ``full``'s, and ``short`` has no more of them."""
    gs, _ = person_parts(short)
    gf, _ = person_parts(full)
    return len(gs) <= len(gf) and all(_given_fit(x, y) for x, y in zip(gs, gf, strict=False))


@functools.lru_cache(maxsize=65536)
def is_short_form(name: str) -> bool:
    """A surname alone, or initials/a title and a surname: a form that names a person partly."""
    words = [w for w in re.findall(r"[\w.]+", reading_order(strip_suffix(name)))]
    if not words:
        return False
    if len(words) == 1:
        return True
    given, _ = person_parts(name)
    titled = fold(words[0]).rstrip(".") in TITLES
    return titled and not given or all(len(g) == 1 for g in given)


@functools.lru_cache(maxsize=65536)
def plain_score(name: str) -> tuple[int, ...]:
    """Higher is a better canonical form: no suffix, not inverted, no title, no initials, not capitals,
    Latin script, more words, longer."""
    bare = strip_suffix(name)
    words = re.findall(r"[\w.]+", bare)
    titled = bool(words) and fold(words[0]).rstrip(".") in TITLES and len(words) > 1
    given, _ = person_parts(bare)
    initials = any(len(g) == 1 for g in given) or bool(re.search(r"\b\w\.", bare))
    letters = [c for c in bare if c.isalpha()]
    caps = len(letters) > 3 and all(c.isupper() for c in letters)
    latin = all(ord(c) < 0x0400 for c in letters)
    return (int(bare == name.strip()), int("," not in bare), int(not titled), int(not initials), int(not caps),
            int(latin), len(loose_words(bare)), len(bare))


def name_similarity(a: str, b: str) -> float:
    """How alike two names are as a careful reader sees them, 0–1: the character similarity of their
    loose forms, in the order written, with the words sorted (a given name and surname swapped) and
    with the spaces removed (a name split or joined), whichever is highest. The name matcher as
    calibrated on the FEBRL record-linkage data (``bench/name_matcher_febrl.py``)."""
    import difflib

    ka, kb = loose_words(a), loose_words(b)
    if not ka or not kb:
        return 0.0
    forms = ((" ".join(ka), " ".join(kb)), (" ".join(sorted(ka)), " ".join(sorted(kb))), ("".join(ka), "".join(kb)))
    best = 0.0
    for x, y in forms:
        if x == y:
            return 1.0
        if 2 * min(len(x), len(y)) / (len(x) + len(y)) < best:
            continue
        best = max(best, difflib.SequenceMatcher(None, x, y, autojunk=False).ratio())
    return best


GRAM_CANDIDATES = 48  # the most alike names a mention is compared with (chosen on FEBRL dataset1: its recall ceiling)
GRAM_FLOOR = 0.1  # shared pieces (Dice) below which two names are not candidates at all
COMMON_GRAM = 2000  # a piece in more names than this (a very large session) is skipped as a key
SMALL_POSTINGS = 128  # slots to count up to which Python counts faster than numpy's calls (measured)


@functools.lru_cache(maxsize=65536)
def name_grams(name: str) -> frozenset[str]:
    """The three-letter pieces of a name's loose form, each word padded at both ends: a typo costs
    a few pieces, given name and surname swapped cost none, a name split or joined costs two."""
    out: set[str] = set()
    for word in loose_words(name):
        padded = f"^{word}$"
        out.update(padded[i:i + 3] for i in range(len(padded) - 2))
    return frozenset(out)


class GramIndex(Generic[K]):
    """Candidates for a name among many: the names sharing the most three-letter pieces with it
    (Dice of ``name_grams``), every piece counted — also the ones of a common surname, so two
    records of "Campbell" are found however many Campbells there are.

    The postings are arrays of slots, so counting the pieces a name shares with every other name
    is one concatenation and one ``bincount`` in C: a session whose names share many pieces (one
    surname in a thousand records) costs milliseconds a name, not a Python loop over each posting."""

    def __init__(self, common: int = COMMON_GRAM) -> None:
        self._postings: dict[str, array[int]] = {}
        self._keys: list[K] = []
        self._sizes: array[int] = array("i")
        self._seen: set[tuple[K, frozenset[str]]] = set()
        self._common = common

    def add(self, key: K, name: str) -> None:
        grams = name_grams(name)
        if not grams or (key, grams) in self._seen:
            return
        self._seen.add((key, grams))
        slot = len(self._keys)
        self._keys.append(key)
        self._sizes.append(len(grams))
        for g in grams:
            posting = self._postings.get(g)
            if posting is None:
                posting = self._postings[g] = array("i")
            posting.append(slot)

    def _few(self, postings: list["array[int]"], size: int, least: float, limit: int, floor: float) -> list[K]:
        """``candidates`` for a name whose pieces are held by few names: counted in Python, which
        costs less than numpy's calls there (the same order: Dice, then the later slot)."""
        shared: dict[int, int] = {}
        for posting in postings:
            for slot in posting:
                shared[slot] = shared.get(slot, 0) + 1
        scored = heapq.nlargest(4 * limit, ((2 * n / (size + self._sizes[slot]), slot) for slot, n in shared.items()
                                            if n >= least))
        return self._first_keys(scored, limit, floor)

    def _first_keys(self, ranked: Iterable[tuple[float, int]], limit: int, floor: float) -> list[K]:
        """Up to ``limit`` keys of the ranked (Dice, slot) pairs, a key once, none below ``floor``."""
        out: list[K] = []
        taken: set[K] = set()
        for dice, slot in ranked:
            if dice < floor or len(out) >= limit:
                break
            key = self._keys[slot]
            if key not in taken:
                taken.add(key)
                out.append(key)
        return out

    def candidates(self, name: str, limit: int = GRAM_CANDIDATES, floor: float = GRAM_FLOOR) -> list[K]:
        """Up to ``limit`` keys, most alike first (a key once, by its most alike name; of two
        names as alike, the one added later first)."""
        grams = name_grams(name)
        if not grams:
            return []
        postings = [p for g in grams if (p := self._postings.get(g)) is not None and len(p) <= self._common]
        if not postings:
            return []
        size = len(grams)
        least = floor * size / 2  # shared pieces below which the Dice cannot reach the floor
        if sum(len(p) for p in postings) <= SMALL_POSTINGS:
            return self._few(postings, size, least, limit, floor)
        shared = np.bincount(np.concatenate([np.frombuffer(p, dtype=np.int32) for p in postings]))
        slots = np.flatnonzero(shared >= max(least, 1))
        if slots.size == 0:
            return []
        sizes = np.frombuffer(self._sizes, dtype=np.int32)[:shared.size][slots]
        dice = 2 * shared[slots] / (size + sizes)
        # Dice first, then the later slot: two different Dice values of names this short differ by
        # more than 1e-5, far more than any slot * 1e-12, so the rank is exact and has no ties
        rank = dice + slots * 1e-12
        keep = min(4 * limit, slots.size)
        if keep < slots.size:
            top = np.argpartition(-rank, keep - 1)[:keep]
            slots, dice, rank = slots[top], dice[top], rank[top]
        order = np.argsort(-rank)
        return self._first_keys(zip(dice[order].tolist(), slots[order].tolist()), limit, floor)
