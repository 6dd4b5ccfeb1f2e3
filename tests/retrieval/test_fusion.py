"""The two fusions of ranked lists: reciprocal rank, and relative score."""

from __future__ import annotations

from cks_desktop.retrieval import fusion


def test_relative_fusion_keeps_a_passage_that_stands_out_in_one_list() -> None:
    words = [(1, 6.0), (2, 1.4), (3, 1.3)]  # passage 1 matches the words far better than the rest
    meaning = [(2, 0.50), (3, 0.49), (4, 0.48)]
    by_rank = fusion.fuse([(1.0, words), (0.5, meaning)], "rrf")
    by_score = fusion.fuse([(1.0, words), (0.5, meaning)], "relative")
    assert max(by_rank, key=by_rank.__getitem__) == 2  # rank alone: middling in two lists wins
    assert max(by_score, key=by_score.__getitem__) == 1


def test_the_last_of_a_short_list_still_counts() -> None:
    fused = fusion.fuse([(1.0, [(7, 2.0), (8, 1.0)])], "relative")
    assert fused == {7: 1.0, 8: 0.5}


def test_negative_scores_are_scaled_from_the_lowest() -> None:
    fused = fusion.fuse([(2.0, [(1, 0.5), (2, -0.5)])], "relative")
    assert fused == {1: 2.0, 2: 0.0}


def test_an_empty_list_adds_nothing() -> None:
    assert fusion.fuse([(1.0, [])], "relative") == {}
    assert fusion.fuse([(1.0, [(3, 0.2)])], "rrf") == {3: 1.0 / (fusion.K + 1)}
