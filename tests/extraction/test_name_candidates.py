"""Candidates for a name among many: shared three-letter pieces find a typo'd, split, joined or
swapped name that shares no whole word, and a record of a common surname among hundreds."""

from __future__ import annotations

from cks_desktop.extraction.names import GramIndex, name_grams
from cks_desktop.extraction.resolution import Existing, Mention, Resolver


def test_pieces_find_typos_swaps_and_splits_without_a_shared_word() -> None:
    index: GramIndex[str] = GramIndex()
    for key, name in [("a", "Holly White"), ("b", "Emily Green"), ("c", "Jasmine Whitacre"), ("d", "Kody Brannigan")]:
        index.add(key, name)
    assert index.candidates("Hollh Whitep")[0] == "a"  # a typo in each word: no word shared
    assert index.candidates("White, Holly")[0] == "a"  # inverted
    assert index.candidates("Gre N Emily")[0] == "b"  # a name split
    assert index.candidates("Zyx") == []  # nothing alike: no candidate
    assert name_grams("Lind, Karin") == name_grams("Karin Lind")


def test_a_record_among_many_of_one_surname_is_found() -> None:
    index: GramIndex[int] = GramIndex()
    firsts = ["Anneli", "Bruno", "Cecilia", "Dario", "Elif", "Farid", "Greta", "Hollis", "Ines", "Jarek"]
    for n in range(300):  # three hundred Campbells
        index.add(n, f"{firsts[n % 10]}{n} Campbell")
    index.add(999, "Campbell")
    assert index.candidates("Campbell")[0] == 999  # the whole-name match ranks first however common its pieces


def test_a_name_typed_wrong_in_every_word_joins_its_object() -> None:
    resolver = Resolver([Existing("o_1", "Thorvaldsen Shipping Company", "Organization", (), "shipowner")])
    got = resolver.add(Mention(chunk=0, ref="o1", name="Thorvaldsn Shiping Compnay", type="Organization"))
    assert got.existing_id == "o_1"
