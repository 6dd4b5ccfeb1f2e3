"""The review panel's "Merge these" (the review's "untick, edit, merge or split"): two or more
selected object rows of one type fold into one — names become aliases, sources and relations move —
and the plan then writes one object through the real store."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QItemSelectionModel

from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.extraction.plan import Plan, PlanItem
from cks_desktop.extraction.runner import apply_plan, load_context
from cks_desktop.graph.store import GraphStore
from cks_desktop.ui.extraction.review import ROLE_KEY as Qt_ROLE
from cks_desktop.ui.extraction.review import ReviewDialog

TEXT = "Ada Lovelace wrote the notes. A. Lovelace lived in London. Countess Lovelace, that is."


DOC = ""  # the stored document's id, set by the test


def _ev(quote: str) -> dict[str, object]:
    start = TEXT.index(quote)
    return {"document_id": DOC, "chunk_index": 0, "start": start, "end": start + len(quote), "page": None,
            "quote": quote, "alignment": "exact", "model_quote": ""}


def _plan(sid: str) -> Plan:
    objects = [PlanItem("e1", "object", "add", "Ada Lovelace", "Person", evidence=[_ev("Ada Lovelace wrote")]),
               PlanItem("e2", "object", "add", "A. Lovelace", "Person", properties={"born": "1815"},
                        evidence=[_ev("A. Lovelace lived")]),
               PlanItem("e3", "object", "add", "Countess Lovelace", "Person", evidence=[_ev("Countess Lovelace")]),
               PlanItem("e4", "object", "add", "London", "Place", evidence=[_ev("London")])]
    relations = [PlanItem("r1", "relation", "add", "lived_in", "lived_in", source="e2", target="e4",
                          evidence=[_ev("A. Lovelace lived in London")])]
    return Plan(sid, DOC, "notes.txt", objects, relations)


def _select(dialog: ReviewDialog, keys: list[str]) -> None:
    tree = dialog.tree
    tree.clearSelection()
    for i in range(tree.topLevelItemCount()):
        row = tree.topLevelItem(i)
        if row is not None and row.data(0, Qt_ROLE) in keys:
            tree.selectionModel().select(tree.indexFromItem(row), QItemSelectionModel.SelectionFlag.Select |
                                         QItemSelectionModel.SelectionFlag.Rows)




def test_merge_these_folds_selected_rows_of_one_type_and_writes_one_object(qtbot, tmp_path: Path) -> None:
    store = GraphStore.open(tmp_path / "cks.sqlite3")
    try:
        global DOC
        sid = store.create_session("review").id
        (tmp_path / "notes.txt").write_text(TEXT, encoding="utf-8")
        DocumentStore(store).add(sid, [read_path(tmp_path / "notes.txt", 10**6)])
        doc = DocumentStore(store).get(sid, "notes.txt")
        assert doc.text == TEXT
        DOC = doc.id
        plan = _plan(sid)
        dialog = ReviewDialog(plan, TEXT)
        qtbot.addWidget(dialog)
        button = dialog.merge_button
        assert button.toolTip() and not button.isEnabled()
        _select(dialog, ["e1"])
        assert not button.isEnabled()  # one row: nothing to merge
        _select(dialog, ["e1", "e4"])
        assert not button.isEnabled()  # a person and a place: not one thing
        _select(dialog, ["e1", "r1"])
        assert not button.isEnabled()  # a relation is not an object
        _select(dialog, ["e1", "e2", "e3"])
        assert button.isEnabled()
        button.click()
        by_key = {o.key: o for o in plan.objects}
        kept = by_key["e1"]
        assert set(kept.aliases) == {"A. Lovelace", "Countess Lovelace"}
        assert kept.properties == {"born": "1815"} and len(kept.evidence) == 3
        assert not by_key["e2"].include and not by_key["e3"].include
        assert plan.relations[0].source == "e1"  # the relation moved to the kept object
        rows = {dialog.tree.topLevelItem(i).data(0, Qt_ROLE): dialog.tree.topLevelItem(i)
                for i in range(dialog.tree.topLevelItemCount())}
        assert rows["e2"].text(2) == "merged into Ada Lovelace"
        assert rows["r1"].text(3) == "Ada Lovelace → London"
        dialog.tree.setCurrentItem(rows["e1"])
        marked = dialog.marked_passages()  # every source passage, on the kept row, marked in the text
        assert len(marked) == 3 and all(marked) and "[[" not in dialog.sources.toPlainText()
        assert marked == [TEXT[e["start"]:e["end"]] for e in kept.evidence]
        dialog.findChild(type(button), "extractionReviewApply").click()
        (result,) = apply_plan(store, plan, load_context(store, sid), "extraction")
        objects = store.all_objects(sid)
        assert sorted(o.name for o in objects) == ["Ada Lovelace", "London"]
        ada = next(o for o in objects if o.name == "Ada Lovelace")
        assert set(ada.properties["aliases"]) == {"A. Lovelace", "Countess Lovelace"}
        (rel,) = store.all_relations(sid)
        assert rel.source_id == ada.id
    finally:
        store.close()


def test_what_was_left_out_of_the_answers_is_shown_in_the_review(qtbot) -> None:
    from PySide6.QtWidgets import QLabel

    plan = Plan("s", "d", "notes.txt", skipped=["the object 'London': its type is 300 characters long (at most "
                                                 "200); left out", "9,970 more objects than part 1 (100 "
                                                 "characters) can name; the first 30 were kept"])
    dialog = ReviewDialog(plan, TEXT)
    qtbot.addWidget(dialog)
    label = dialog.findChild(QLabel, "extractionReviewSkipped")
    assert label is not None and "Left out of the model's answers (2)" in label.text()
    assert dialog.left_out is not None  # every note, under why it cannot be ticked in
    assert "London" in dialog.left_out.toPlainText() and "9,970 more objects" in dialog.left_out.toPlainText()
