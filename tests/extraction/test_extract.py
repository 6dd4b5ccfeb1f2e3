"""Whole extractions against a real fake provider (OpenAI's wire protocol over a socket) whose model
reads only the parts it is sent (tests/fakes/extraction_reader.py): one revertible change with sources, resolution across
documents, re-extraction free and idempotent, progress, pause/cancel, caps, broken JSON and a 429."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from cks_desktop.documents.store import DocumentStore
from cks_desktop.extraction.runner import Extraction, ExtractionStopped, Progress, apply_plan
from cks_desktop.graph.store import GraphStore
from tests.fakes.extraction_reader import Noise, ReaderModel
from tests.extraction.harness import Setup, make_setup
from tests.fakes.providers import make_fake, provider_for


@pytest_asyncio.fixture
async def world(tmp_path: Path, open_graph: Callable[[], GraphStore]) -> AsyncIterator[tuple[Setup, ReaderModel, Any, Any]]:
    setup = make_setup(tmp_path, extras_per_doc=50, store=open_graph())  # the extraction's SQL on both backends
    model = ReaderModel(Noise(level=0.0))
    with make_fake("openai") as fake:
        fake.side_turn = model
        provider = provider_for(fake, max_retries=2)  # the app's default: a 429 is retried by the adapter
        try:
            yield setup, model, fake, provider
        finally:
            await provider.aclose()
            setup.store.close()


async def _extract(setup: Setup, provider: Any, name: str, **kwargs: Any) -> tuple[Extraction, Any]:
    doc = DocumentStore(setup.store).get(setup.session_id, name)
    ex = Extraction(setup.store, setup.session_id, doc, provider, **kwargs)
    return ex, await ex.run()


def _evidence(setup: Setup) -> list[tuple[Any, ...]]:
    with setup.store.connection_lock() as conn:
        return conn.execute("SELECT target_kind, target_id, document_id, span_start, span_end, page, quote, alignment "
                            "FROM evidence WHERE session_id = ?", (setup.session_id,)).fetchall()


@pytest.mark.asyncio
async def test_documents_become_one_graph_with_sources_and_reextracting_adds_nothing(world: Any) -> None:
    setup, model, fake, provider = world
    store, sid = setup.store, setup.session_id
    changes = []
    for rendered in setup.docs:
        ex, plan = await _extract(setup, provider, rendered.name)
        # one call a part, and at most ONE duplicate question (none when every pair's verdict is remembered)
        asked = 1 if ex.resolver and ex.resolver.pairs else 0
        assert len(ex.chunks) <= ex.progress.calls <= len(ex.chunks) + asked
        results = apply_plan(store, plan, ex.context, "extraction")  # type: ignore[arg-type]
        assert len(results) == 1 and results[0].change is not None  # ONE change per document
        changes.append(results[0].change.id)
    assert not fake.problems
    objects = {o.id: o for o in store.all_objects(sid)}
    names = [o.name for o in objects.values()]
    assert names.count("Marguerite Okonkwo") == 1 and names.count("Tomas Reyes") == 1  # merged across documents
    assert "Reyes" in objects[next(i for i, o in objects.items() if o.name == "Tomas Reyes")].properties["aliases"]
    morgans = [o for o in objects.values() if o.name.startswith("Alex Morgan")]
    assert len(morgans) == 2  # two people with one name stay two
    assert sum(1 for o in objects.values() if o.name == "Northern Rail Company") == 1 and "NRC" not in names
    texts = {d.id: d.text for d in DocumentStore(store).all_with_text(sid)}
    rows = _evidence(setup)
    supported = {r[1] for r in rows}
    assert all(o.id in supported for o in objects.values())  # every object shows its sources
    assert all(texts[r[2]][r[3]:r[4]] == r[6] for r in rows if r[3] is not None)  # spans exact
    pdf = next(d for d in setup.docs if d.name.endswith(".pdf"))
    pdf_rows = [r for r in rows if r[5] is not None]
    assert pdf_rows and all(r[5] == (2 if r[3] >= pdf.page_starts[1] else 1) for r in pdf_rows)
    # re-extracting every document: no model call, nothing written
    before = (store.counts(sid), len(rows), model.calls)
    for rendered in setup.docs:
        ex, plan = await _extract(setup, provider, rendered.name)
        assert ex.progress.calls == 0 and ex.progress.cached == len(ex.chunks)
        assert all(r.change is None for r in apply_plan(store, plan, ex.context, "extraction"))  # type: ignore[arg-type]
    assert (store.counts(sid), len(_evidence(setup)), model.calls) == before
    # reverting the last document's change takes its objects and their sources away
    store.revert(sid, changes[-1], "test")
    assert len(_evidence(setup)) < len(rows)


@pytest.mark.asyncio
async def test_progress_pause_resume_and_cancel_between_chunks(world: Any) -> None:
    setup, model, fake, provider = world
    seen: list[Progress] = []
    paused = asyncio.Event()
    doc = DocumentStore(setup.store).get(setup.session_id, "founding.md")
    ex = Extraction(setup.store, setup.session_id, doc, provider)

    def on_progress(p: Progress) -> None:
        seen.append(Progress(**p.to_json()))
        if p.chunks_done == 1 and p.state == "running":
            ex.pause()
            paused.set()

    ex.on_progress = on_progress
    task = asyncio.create_task(ex.run())
    await asyncio.wait_for(paused.wait(), 30)
    calls_when_paused = model.chunk_calls
    await asyncio.sleep(0)  # the loop keeps running while the run waits
    assert not task.done() and model.chunk_calls == calls_when_paused
    ex.cancel()
    with pytest.raises(ExtractionStopped) as stopped:
        await asyncio.wait_for(task, 30)
    assert stopped.value.state == "cancelled" and model.chunk_calls == 1
    assert seen[0].chunks_total == len(ex.chunks) and seen[0].objects_found > 0
    runs = setup.store.connection_lock
    with runs() as conn:
        assert conn.execute("SELECT state, chunks_done FROM extraction_runs").fetchall() == [("cancelled", 1)]
    again = Extraction(setup.store, setup.session_id, doc, provider)  # resumes: the first chunk is cached
    await again.run()
    assert again.progress.cached == 1 and model.chunk_calls == len(again.chunks)


@pytest.mark.asyncio
async def test_a_run_over_its_cap_is_refused_before_any_call(world: Any) -> None:
    setup, model, fake, provider = world
    doc = DocumentStore(setup.store).get(setup.session_id, "founding.md")
    ex = Extraction(setup.store, setup.session_id, doc, provider, max_calls=1)
    estimate = await asyncio.to_thread(ex.estimate)
    assert estimate.calls == len(ex.chunks) + 1 and estimate.cached == 0
    with pytest.raises(ExtractionStopped, match="over the cap of 1"):
        await ex.run()
    assert model.calls == 0


@pytest.mark.asyncio
async def test_broken_json_a_429_and_unaligned_quotes_go_where_they_belong(world: Any) -> None:
    setup, model, fake, provider = world
    model.noise = Noise(level=0.3, broken_json=1.0, rate_limit_once=True, seed=4)
    ex, plan = await _extract(setup, provider, "strike.docx")
    assert not ex.progress.failed_chunks  # the 429 was retried, the broken JSON repaired
    assert model.chunk_calls == len(ex.chunks)
    held = [i for i in plan.items() if not i.include]
    assert held and all(i.risk == 3 for i in held)  # unaligned quotes: held for review, riskiest first
    assert plan.items()[0].risk == 3
    results = apply_plan(setup.store, plan, ex.context, "extraction")  # type: ignore[arg-type]
    written = {o.name for o in setup.store.all_objects(setup.session_id)}
    assert results and not any(i.name in written for i in held if i.kind == "object" and i.action == "add")


@pytest.mark.asyncio
async def test_chunk_by_chunk_writes_one_change_per_chunk(world: Any) -> None:
    setup, model, fake, provider = world
    ex, plan = await _extract(setup, provider, "founding.md")
    results = apply_plan(setup.store, plan, ex.context, "extraction", per_chunk=True)  # type: ignore[arg-type]
    assert len(results) == len(ex.chunks) >= 2
    names = [o.name for o in setup.store.all_objects(setup.session_id)]
    assert len(names) == len(set(names))
    included = {o.key for o in plan.objects if o.include}
    wanted = [r for r in plan.relations if r.include and r.action == "add" and {r.source, r.target} <= included]
    assert len(setup.store.all_relations(setup.session_id)) == len(wanted)  # the same graph as one change
    with setup.store.connection_lock() as conn:
        sources = conn.execute("SELECT count(*) FROM evidence").fetchone()[0]
    expected = {(i.key, e["start"], e["end"], e["quote"]) for i in [*plan.objects, *wanted] if i.include
                for e in i.evidence if e["alignment"] != "unaligned"}  # the overlap repeats a source: kept once
    assert sources == len(expected)


@pytest.mark.asyncio
async def test_review_edits_hand_merge_and_split_are_kept(world: Any) -> None:
    from cks_desktop.extraction.cache import ExtractionCache
    from cks_desktop.extraction.plan import Plan, split_identities

    setup, model, fake, provider = world
    store, sid = setup.store, setup.session_id
    ex, plan = await _extract(setup, provider, "founding.md")
    plan = Plan.from_json(plan.to_json())  # what a review file round-trips
    adds = [o for o in plan.objects if o.action == "add" and o.include]
    keep, fold = adds[0], adds[1]
    fold.merge_into = keep.key
    folded_sources = len(fold.evidence)
    apply_plan(store, plan, ex.context, "extraction")  # type: ignore[arg-type]
    objects = {o.name: o for o in store.all_objects(sid)}
    assert fold.name not in objects and fold.name in objects[keep.name].properties["aliases"]
    with store.connection_lock() as conn:
        count = conn.execute("SELECT count(*) FROM evidence WHERE target_id = ?", (objects[keep.name].id,)).fetchone()[0]
    assert count >= folded_sources + 1  # the folded object's sources moved with it
    # "Reyes" in the next document is merged into Tomas Reyes by the model; the person splits it
    ex2, plan2 = await _extract(setup, provider, "viaduct.html")
    reyes = next(o for o in plan2.objects if o.name == "Tomas Reyes")
    assert any(m["name"] == "Reyes" for m in reyes.merges)
    cache = ExtractionCache(store, sid)
    for a, b in split_identities(reyes):
        cache.mark_distinct(a, b)
    calls = model.chunk_calls
    ex3, plan3 = await _extract(setup, provider, "viaduct.html")  # planned again: from the cache
    assert model.chunk_calls == calls
    assert any(o.name == "Reyes" and o.action == "add" for o in plan3.objects)
    assert not any(m["name"] == "Reyes" for o in plan3.objects if o.name == "Tomas Reyes" for m in o.merges)


@pytest.mark.asyncio
async def test_a_session_too_big_to_load_is_searched_through_the_full_text_index(world: Any) -> None:
    setup, model, fake, provider = world
    store, sid = setup.store, setup.session_id
    for name in ("founding.md", "viaduct.html"):
        ex, plan = await _extract(setup, provider, name)
        apply_plan(store, plan, ex.context, "extraction")  # type: ignore[arg-type]
    before = (store.counts(sid), len(_evidence(setup)))
    for name in ("founding.md", "viaduct.html"):  # again, the session searched per name instead of loaded
        ex, plan = await _extract(setup, provider, name, preload_limit=0)
        assert ex.context is not None and ex.context.lookup is not None and ex.context.existing == []
        assert all(o.action == "merge" for o in plan.objects if o.include)
        results = apply_plan(store, plan, ex.context, "extraction")  # type: ignore[arg-type]
        assert all(r.change is None for r in results)
    assert (store.counts(sid), len(_evidence(setup))) == before
