"""``set_evidence_review`` (after a person's check): a source's review state is
recorded through the batch path — validated, one revertible change, seen by other processes'
feeds as a change of sources — and reverting restores the previous state exactly."""

from __future__ import annotations

import pytest

from cks_desktop.graph.errors import ValidationFailed
from cks_desktop.graph.feed import net_effect

from .conftest import World, passage, rows


def _one_source(w: World) -> tuple[str, str]:
    result = w.store.apply(w.sid, [
        {"op": "add_object", "type": "Person", "name": "Ada Lovelace", "label": "$ada"},
        {"op": "add_evidence", "object": "$ada", **passage(w.txt, "Ada Lovelace"), "review": "pending"},
    ], "extraction")
    (row,) = rows(w.store, w.sid)
    return result.created["$ada"], row[0]


def test_set_evidence_review_is_one_revertible_change(world: World) -> None:
    w = world
    _ada, eid = _one_source(w)
    before = rows(w.store, w.sid)
    result = w.store.apply(w.sid, [{"op": "set_evidence_review", "evidence_id": eid, "review": "accepted"}], "user")
    assert result.change is not None and result.summary == "marks 1 source as reviewed"
    assert rows(w.store, w.sid)[0][10] == "accepted"
    assert rows(w.store, w.sid)[0][12] == before[0][12]  # still the change that wrote the source
    effect = net_effect(w.store.get_change(w.sid, result.change.id).ops)
    assert effect.evidence_changed  # a window following this session through the feed reads again
    w.store.revert(w.sid, result.change.id, "user")
    assert rows(w.store, w.sid) == before  # back to "pending"
    # the same state again changes nothing (no empty change recorded)
    count = len(w.store.list_changes(w.sid))
    same = w.store.apply(w.sid, [{"op": "set_evidence_review", "evidence_id": eid, "review": "pending"}], "user")
    assert same.change is None and len(w.store.list_changes(w.sid)) == count


def test_bad_review_ops_are_named_and_nothing_is_written(world: World) -> None:
    w = world
    _ada, eid = _one_source(w)
    before = rows(w.store, w.sid)
    with pytest.raises(ValidationFailed) as info:
        w.store.apply(w.sid, [
            {"op": "set_evidence_review", "evidence_id": eid, "review": "maybe"},
            {"op": "set_evidence_review", "evidence_id": "e_" + "0" * 26, "review": "accepted"},
            {"op": "set_evidence_review", "evidence_id": eid},
            {"op": "set_evidence_review", "evidence_id": eid, "review": "edited", "quote": "x"},
            {"op": "remove_evidence", "evidence_id": eid},
            {"op": "set_evidence_review", "evidence_id": eid, "review": "accepted"},
        ], "user")
    messages = {e["index"]: e["message"] for e in info.value.errors}
    assert sorted(messages) == [0, 1, 2, 3, 5], messages
    assert "review" in messages[0] and "maybe" in messages[0]
    assert "No evidence" in messages[1]
    assert "review" in messages[2]
    assert "quote" in messages[3]
    assert "removed by operation 4" in messages[5]
    assert rows(w.store, w.sid) == before


def test_review_then_remove_in_one_batch_reverts_to_the_original(world: World) -> None:
    w = world
    ada, eid = _one_source(w)
    before = rows(w.store, w.sid)
    change = w.store.apply(w.sid, [{"op": "set_evidence_review", "evidence_id": eid, "review": "edited"},
                                   {"op": "remove_object", "ref": ada}], "user").change
    assert change is not None and rows(w.store, w.sid) == []
    w.store.revert(w.sid, change.id, "user")
    assert rows(w.store, w.sid) == before
