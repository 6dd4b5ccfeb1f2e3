"""The ask use case runs indexing and retrieval off the event loop."""

from __future__ import annotations

import asyncio
import threading

import pytest

from cks_desktop.graph.store import GraphStore
from cks_desktop.runtime.cases import UseCases
from cks_desktop.settings import Settings
from tests.retrieval.conftest import DISTRACTORS, add_text


@pytest.mark.asyncio
async def test_indexing_and_retrieval_run_on_a_worker_thread_while_the_loop_runs(store: GraphStore,
                                                                                  tmp_path) -> None:
    sid = store.create_session("s").id
    for i, text in enumerate(DISTRACTORS * 3):
        add_text(store, sid, f"d{i}.txt", f"{text} (copy {i})")
    loop_thread = threading.get_ident()
    seen: list[tuple[int, int, int]] = []
    ticks = 0
    stop = asyncio.Event()

    async def ticker() -> None:  # proves the loop keeps turning while the index is built
        nonlocal ticks
        while not stop.is_set():
            ticks += 1
            await asyncio.sleep(0)

    cases = UseCases(store, Settings.load(tmp_path / "settings.json"))
    task = asyncio.create_task(ticker())
    found = await cases.ask.retrieve(sid, "Which country exports bananas?",
                                     progress=lambda done, total, name: seen.append((threading.get_ident(), done, total)))
    stop.set()
    await task
    assert seen and all(thread != loop_thread for thread, _, _ in seen)
    assert seen[-1][1] == seen[-1][2] == len(DISTRACTORS) * 3
    assert ticks > 1 and "bananas" in found.passages[0].text
    report = await cases.ask.index(sid)
    assert report.documents == 0 and report.embedded == 0
