"""Writing a big plan (~27 s for 70,000 ops in bench/documents.py) runs off the event loop
and says how far it is: ``apply_plan(on_write=)`` streams a big batch through ``GraphStore.apply_stream``
(still ONE change, one revert) and reports (written, total) as it goes; the window shows
"Writing … 12,000 of 70,000" in the status area. A lag probe checks the loop stays responsive."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.extraction.plan import Plan, PlanItem
from cks_desktop.extraction.runner import WRITE_STREAM_OVER, apply_plan, load_context
from cks_desktop.graph.store import GraphStore
from tests.reliability.lag import LagProbe

PEOPLE = 3000


def _big(tmp_path: Path) -> tuple[GraphStore, str, Plan]:
    lines = [f"Person {i} lives in Town {i % 50}." for i in range(PEOPLE)]
    text = "\n".join(lines)
    (tmp_path / "register.txt").write_text(text, encoding="utf-8")
    store = GraphStore.open(tmp_path / "cks.sqlite3")
    sid = store.create_session("big").id
    DocumentStore(store).add(sid, [read_path(tmp_path / "register.txt", 10**8)])
    doc = DocumentStore(store).get(sid, "register.txt")
    assert doc.text == text
    objects, relations, at = [], [], 0
    for i, line in enumerate(lines):
        name = f"Person {i}"
        ev = {"document_id": doc.id, "chunk_index": i // 100, "start": at, "end": at + len(name), "page": None,
              "quote": name, "alignment": "exact", "model_quote": ""}
        objects.append(PlanItem(f"e{i + 1}", "object", "add", name, "Person", evidence=[ev]))
        if i:
            relations.append(PlanItem(f"r{i}", "relation", "add", "knows", "knows", source=f"e{i}",
                                      target=f"e{i + 1}", evidence=[ev]))
        at += len(line) + 1
    return store, sid, Plan(sid, doc.id, doc.name, objects, relations)


@pytest.mark.asyncio
async def test_a_big_plan_is_written_off_the_loop_with_progress_as_one_change(tmp_path: Path) -> None:
    store, sid, plan = _big(tmp_path)
    try:
        context = await asyncio.to_thread(load_context, store, sid)
        seen: list[tuple[int, int]] = []
        loop = asyncio.get_running_loop()

        def on_write(done: int, total: int) -> None:  # from the worker thread
            loop.call_soon_threadsafe(seen.append, (done, total))

        async with LagProbe("writing a big plan"):
            results = await asyncio.to_thread(apply_plan, store, plan, context, "extraction", on_write=on_write)
        await asyncio.sleep(0)  # the last call_soon_threadsafe callbacks
        (result,) = results
        assert result.change is not None
        total = seen[-1][1]
        assert total > WRITE_STREAM_OVER and seen[-1] == (total, total)
        assert len(seen) >= 4 and [d for d, _ in seen] == sorted(d for d, _ in seen)  # several steps, in order
        counts = store.counts(sid)
        assert counts["objects"] == PEOPLE and counts["relations"] == PEOPLE - 1
        store.revert(sid, result.change.id, "test")  # one change: one revert takes it all back
        assert store.counts(sid)["objects"] == 0
    finally:
        store.close()


def test_the_status_area_says_how_far_the_write_is(qtbot) -> None:
    from cks_desktop.ui.extraction.progress import ExtractionProgress

    bar = ExtractionProgress()
    qtbot.addWidget(bar)
    bar.show_writing("register.pdf", 12_000, 70_000)
    assert not bar.isHidden() and bar.bar.maximum() == 70_000 and bar.bar.value() == 12_000
    assert "12,000 of 70,000" in bar.label.text() and "register.pdf" in bar.label.text()
    assert bar.pause_button.isHidden() and bar.cancel_button.isHidden()  # a write is not paused half-way
    bar.finish()
    assert bar.isHidden()
