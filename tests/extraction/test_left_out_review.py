"""What the extraction bounds leave out is shown in the review, every note, grouped, each group
with why it cannot be ticked back in: over a count bound (never checked against the graph) or
malformed (the store would refuse it). The notes come from a real hostile answer through
``collect_chunk``; the review is the real dialog."""

from __future__ import annotations

from typing import Any

from cks_desktop.extraction.chunking import Chunk
from cks_desktop.extraction.left_out import WHY, kind
from cks_desktop.extraction.plan import Plan, collect_chunk
from cks_desktop.extraction.vocabulary import Vocabulary
from cks_desktop.ui.extraction.review import ReviewDialog

TEXT = "Ada Lovelace worked with Charles Babbage on the Analytical Engine in London."


def _hostile() -> dict[str, Any]:
    objects: list[dict[str, Any]] = [
        {"ref": "ada", "name": "Ada Lovelace", "type": "Person", "quote": "Ada Lovelace"},
        {"ref": "cb", "name": "Charles Babbage", "type": "Person",
         "properties": [{"key": "notes", "value": "x" * 20_000}]},
        {"ref": "ae", "name": "Analytical Engine", "type": "Machine",
         "properties": [{"key": f"p{i}", "value": "v"} for i in range(150)]},
        {"ref": "bad", "name": "London", "type": "T" * 300},
        {"ref": "ada", "name": "Ada again", "type": "Person"},  # a repeated ref
        {"ref": "", "name": "", "type": "Person"},  # no name
    ]
    objects += [{"ref": f"n{i}", "name": f"Thing {i}", "type": "Thing"} for i in range(60)]
    relations = [{"source": "ada", "target": "cb", "type": "worked with"},
                 {"source": "ada", "target": "nobody", "type": "knows"},
                 {"source": "ada", "target": "cb", "type": "x" * 300}]
    relations += [{"source": "ada", "target": "cb", "type": "knows"} for _ in range(100)]
    return {"objects": objects, "relations": relations}


def test_every_left_out_note_is_shown_with_why_it_cannot_be_ticked_in(qtbot) -> None:
    chunk = Chunk(index=0, start=0, end=len(TEXT), text=TEXT)
    notes = collect_chunk(_hostile(), chunk, "d" * 64, (), Vocabulary.of(["Person", "Machine", "Thing"])).skipped
    kinds = [kind(n) for n in notes]
    assert "unknown" not in kinds, [n for n in notes if kind(n) == "unknown"]
    assert kinds.count("over_bound") == 3 and kinds.count("malformed") >= 5, notes  # objects, relations, properties
    dialog = ReviewDialog(Plan("s", "d", "notes.txt", skipped=notes), TEXT)
    qtbot.addWidget(dialog)
    shown = dialog.left_out.toPlainText() if getattr(dialog, "left_out", None) is not None else ""
    for note in notes:  # every one, not the first three and "(and N more)"
        assert note in shown, note
    assert WHY["over_bound"] in shown and WHY["malformed"] in shown
    assert shown.index(WHY["over_bound"]) < shown.index(notes[kinds.index("over_bound")])
    assert dialog.tree.topLevelItemCount() == 0  # nothing left out became a row to tick
