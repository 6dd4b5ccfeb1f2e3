"""Extracting the archive again adds nothing: at every noise level of the reading fake model (real
OpenAI adapter, real socket), every document extracted a second time leaves the graph exactly as it
was — no "Name (3)", no second relation or source, no suffix as an alias — and asks the model nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from bench.extraction_archive import snapshot
from cks_desktop.documents.readers import read_path
from cks_desktop.documents.store import DocumentStore
from cks_desktop.extraction.runner import Extraction, apply_plan
from cks_desktop.graph.store import GraphStore
from tests.extraction.archive_world import make_archive, render_archive
from tests.fakes.extraction_reader import Noise, ReaderModel
from tests.fakes.providers import make_fake, provider_for


async def _extract_all(store: GraphStore, sid: str, names: list[str], provider: Any) -> None:
    for name in names:
        doc = DocumentStore(store).get(sid, name)
        ex = Extraction(store, sid, doc, provider)
        plan = await ex.run()
        assert ex.context is not None
        apply_plan(store, plan, ex.context, "extraction")


@pytest.mark.asyncio
@pytest.mark.parametrize("percent", [0, 8, 20])
async def test_extracting_every_document_again_changes_nothing(tmp_path: Path, percent: int) -> None:
    world = make_archive(extras_per_doc=4)
    docs = render_archive(world, tmp_path / "docs")
    store = GraphStore.open(tmp_path / "cks.sqlite3")
    sid = store.create_session("archive").id
    DocumentStore(store).add(sid, [read_path(r.path, 10 * 1024 * 1024) for r in docs])
    model = ReaderModel(Noise.named(percent, seed=3))
    names = [r.name for r in docs]
    with make_fake("openai") as fake:
        fake.side_turn = model
        provider = provider_for(fake, max_retries=3)
        try:
            await _extract_all(store, sid, names, provider)
            first = snapshot(store, sid)
            calls = model.calls
            await _extract_all(store, sid, names, provider)
            assert model.calls == calls  # nothing asked again
            second = snapshot(store, sid)
        finally:
            await provider.aclose()
    objects = [name for _, name, _ in second[0]]
    assert not [n for n in objects if n.endswith(")") and "(" in n and n.rsplit("(", 1)[1].rstrip(")").isdigit()]
    assert second[0] == first[0], set(second[0]) ^ set(first[0])
    assert second[1] == first[1], set(second[1]) ^ set(first[1])
    assert second[2] == first[2]
    for obj in store.all_objects(sid):  # the app's disambiguating suffixes never become aliases
        aliases = obj.properties.get("aliases") or []
        assert not [a for a in aliases if isinstance(a, str) and a.endswith(")") and obj.name.startswith(a[:-1])]
    if percent == 0:  # the same fact in three documents: one relation, a source from each
        names = {o.id: o.name for o in store.all_objects(sid)}
        founded = [r for r in store.all_relations(sid) if r.type == "founded"
                   and names[r.source_id] == "Marguerite Okonkwo" and names[r.target_id] == "Northern Rail Company"]
        assert len(founded) == 1
        with store.connection_lock() as conn:
            docs_citing = conn.execute("SELECT count(DISTINCT document_id) FROM evidence WHERE target_kind = "
                                       "'relation' AND target_id = ?", (founded[0].id,)).fetchone()[0]
        assert docs_citing == 3
    store.close()


@pytest.mark.slow
@pytest.mark.asyncio
async def test_the_full_archive_at_twenty_percent_extracted_again_is_the_same_graph(tmp_path: Path) -> None:
    """The bench's own archive (60 extra people a document): a mention the model typed wrongly had been
    merged by a "same" answer; asked again about a pair whose other side is now in the graph, the model
    said "distinct" and a second object appeared. Now the mention lands on the object its own source is on."""
    world = make_archive(extras_per_doc=60)
    docs = render_archive(world, tmp_path / "docs")
    store = GraphStore.open(tmp_path / "cks.sqlite3")
    sid = store.create_session("archive").id
    DocumentStore(store).add(sid, [read_path(r.path, 10 * 1024 * 1024) for r in docs])
    model = ReaderModel(Noise.named(20, seed=1))
    names = [r.name for r in docs]
    with make_fake("openai") as fake:
        fake.side_turn = model
        provider = provider_for(fake, max_retries=3)
        try:
            await _extract_all(store, sid, names, provider)
            first, calls = snapshot(store, sid), model.calls
            await _extract_all(store, sid, names, provider)
            assert model.calls == calls
            assert snapshot(store, sid) == first
        finally:
            await provider.aclose()
    store.close()


def test_a_mention_lands_on_the_object_its_own_source_is_on() -> None:
    """Whatever type the model says this time, a name already sourced at this very quote of the
    document is that object (no pair, no question)."""
    from cks_desktop.extraction.plan import Evidence
    from cks_desktop.extraction.resolution import Existing, Mention, Resolver

    works = Existing("o_1", "Smith Mechanical Works", "Organization", ("Smith Mechanical Wokrs",))
    ev = Evidence("d1", 0, 10, 60, None, "The Smith Mechanical Wokrs built the Aurora.", "exact")
    resolver = Resolver([works], sourced={(10, 60): ["o_1"]})
    ent = resolver.add(Mention(0, "o1", "Smith Mechanical Wokrs", "Place", evidence=[ev]))
    assert ent.existing_id == "o_1" and not resolver.pairs
    elsewhere = Evidence("d1", 0, 70, 90, None, "Smith Mechanical Wokrs.", "exact")
    other = resolver.add(Mention(0, "o2", "Smith Mechanical Wokrs", "Place", evidence=[elsewhere]))
    assert other.existing_id is None  # not at a source of it: resolved by name and type as before
