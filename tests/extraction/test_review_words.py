"""The review says why things were joined in plain words, for every kind of merge the resolver makes."""

from __future__ import annotations

from cks_desktop.extraction.resolution import MERGE_TIERS
from cks_desktop.ui.extraction.review import MERGE_WORDS


def test_every_merge_kind_has_plain_words_in_the_review() -> None:
    assert set(MERGE_WORDS) == set(MERGE_TIERS)
    assert {"spelling", "short form", "source"} <= set(MERGE_WORDS)
    for tier, words in MERGE_WORDS.items():
        assert words and words != tier and words[0].islower(), (tier, words)
