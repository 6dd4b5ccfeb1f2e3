"""Types as a controlled vocabulary: the session's own types first, synonyms mapped onto them.

Extraction tools' trackers are full of exploding type lists (``Person``, ``person``, ``People``,
``Individual``, ``Human``). So the model is offered the session's types first, then a small base list, and its answer is mapped here: case and plural forms onto the same type, and
a fixed table of synonyms onto a type that is in the vocabulary. Unmapped types stay as the model
said them (PascalCase), and are counted: one document that would add more than
``NEW_TYPES_WARNING`` new types gets a warning before anything is written. The model's own wording
is kept on the object as the property ``extracted_type`` whenever it was mapped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

BASE_TYPES = ("Person", "Organization", "Place", "Event", "Work", "Concept", "Product")
NEW_TYPES_WARNING = 5
EXTRACTED_TYPE = "extracted_type"

SYNONYMS: dict[str, tuple[str, ...]] = {
    "person": ("people", "individual", "human", "character", "persona"),
    "organization": ("organisation", "company", "corporation", "firm", "agency", "institution", "business",
                     "enterprise", "org", "association", "society"),
    "place": ("location", "locale", "site", "area", "region", "geographic location", "gpe"),
    "city": ("town", "municipality"),
    "event": ("occurrence", "incident", "happening"),
    "work": ("creative work", "book", "publication", "artwork"),
    "concept": ("idea", "notion", "topic"),
    "product": ("item", "goods"),
}


def pascal(name: str) -> str:
    """``"creative work"`` → ``"CreativeWork"``; already-Pascal names stay as they are."""
    words: list[str] = re.findall(r"[A-Za-z0-9]+|[^\W_]+", name.strip())
    if not words:
        return name.strip()
    if len(words) == 1 and words[0][:1].isupper():
        return words[0]
    return "".join(w[:1].upper() + w[1:] for w in words)


def _key(name: str) -> str:
    key = re.sub(r"[\s_\-]+", " ", name.strip().casefold())
    key = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", key)
    if key.endswith("ies") and len(key) > 4:
        key = key[:-3] + "y"
    elif key.endswith("s") and not key.endswith("ss") and len(key) > 3:
        key = key[:-1]
    return key


def _camel_key(name: str) -> str:
    return _key(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", name.strip()))


@dataclass
class Vocabulary:
    """The object types the model is offered and how its answers map onto them."""

    types: list[str]
    session_types: set[str] = field(default_factory=set)
    _by_key: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, session_types: Iterable[str]) -> "Vocabulary":
        own = [t for t in session_types if t.strip()]
        folded = {t.casefold() for t in own}
        offered = own + [t for t in BASE_TYPES if t.casefold() not in folded]  # the session's own first
        vocab = cls(types=offered, session_types={t.casefold() for t in own})
        for name in offered:
            vocab._by_key.setdefault(_camel_key(name), name)
        for canon, words in SYNONYMS.items():
            target = vocab._by_key.get(canon)
            if target is None:
                continue
            for word in words:
                vocab._by_key.setdefault(_key(word), target)
        return vocab

    def map(self, said: str) -> tuple[str, bool]:
        """(the type to write, whether it was mapped from the model's different wording)."""
        said = said.strip()
        if not said:
            return "Thing", True
        found = self._by_key.get(_camel_key(said)) or self._by_key.get(_key(said))
        if found is not None:
            return found, found != said
        return pascal(said), pascal(said) != said

    def is_new(self, type_name: str) -> bool:
        return type_name.casefold() not in self.session_types
