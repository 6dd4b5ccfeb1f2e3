"""Communities and the main themes against a real fake provider (OpenAI's wire protocol over a
socket) whose model summarises only what it is sent (tests/fakes/summariser.py)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio

from cks_desktop.graph.store import GraphStore
from cks_desktop.retrieval.communities import communities_of
from cks_desktop.runtime.themes import EMPTY_GRAPH, ThemesError, ThemesUseCase
from tests.fakes.providers import make_fake, provider_for
from tests.fakes.summariser import Summariser
from tests.retrieval.conftest import add_text

SHIPPING = ("The Aurora sailed from Riga under Captain Mara Lind. Mara Lind was captain of the Aurora. "
            "The Aurora carried timber to the port of Hull. Hull traded with Riga every spring.")
MUSIC = ("The composer Ilse Berg wrote the Winter Cantata. The Winter Cantata was first sung at the Dom "
         "of Lübeck. Ilse Berg directed the choir of the Dom. The choir sang the Winter Cantata each year.")


def _world(store: GraphStore) -> str:
    sid = store.create_session("themes").id
    docs = {SHIPPING: add_text(store, sid, "ships.txt", SHIPPING), MUSIC: add_text(store, sid, "music.txt", MUSIC)}

    def ev(text: str, quote: str) -> dict[str, Any]:
        start = text.index(quote)
        return {"document_id": docs[text], "start": start, "end": start + len(quote), "quote": quote,
                "alignment": "exact", "origin": "extraction"}

    def obj(label: str, type_: str, name: str, desc: str) -> dict[str, Any]:
        return {"op": "add_object", "type": type_, "name": name, "label": label, "properties": {"description": desc}}

    def rel(label: str, a: str, b: str, type_: str) -> dict[str, Any]:
        return {"op": "add_relation", "source": a, "target": b, "type": type_, "label": label}

    store.apply(sid, [
        obj("$ship", "Ship", "Aurora", "a timber ship"), obj("$mara", "Person", "Mara Lind", "a captain"),
        obj("$riga", "Place", "Riga", "a port"), obj("$hull", "Place", "Hull", "an English port"),
        obj("$ilse", "Person", "Ilse Berg", "a composer"), obj("$cant", "Work", "Winter Cantata", "a cantata"),
        obj("$dom", "Place", "Dom of Lübeck", "a cathedral"), obj("$choir", "Organization", "the choir", "a choir"),
        obj("$lone", "Person", "Nobody Related", "mentioned once"),
        rel("$r1", "$mara", "$ship", "captain_of"), rel("$r2", "$ship", "$riga", "sailed_from"),
        rel("$r3", "$ship", "$hull", "sailed_to"), rel("$r4", "$hull", "$riga", "traded_with"),
        rel("$r5", "$ilse", "$cant", "wrote"), rel("$r6", "$cant", "$dom", "first_sung_at"),
        rel("$r7", "$ilse", "$choir", "directed"), rel("$r8", "$choir", "$cant", "sang"),
        rel("$r9", "$choir", "$dom", "part_of"),
        {"op": "add_evidence", "relation": "$r1", **ev(SHIPPING, "Mara Lind was captain of the Aurora.")},
        {"op": "add_evidence", "relation": "$r3", **ev(SHIPPING, "The Aurora carried timber to the port of Hull.")},
        {"op": "add_evidence", "relation": "$r5", **ev(MUSIC, "The composer Ilse Berg wrote the Winter Cantata.")},
        {"op": "add_evidence", "object": "$choir", **ev(MUSIC, "The choir sang the Winter Cantata each year.")},
    ], "test")
    return sid


@pytest_asyncio.fixture
async def fake() -> AsyncIterator[tuple[Any, Any, Summariser]]:
    model = Summariser()
    with make_fake("openai") as server:
        server.side_turn = model
        provider = provider_for(server)
        try:
            yield server, provider, model
        finally:
            await provider.aclose()


def test_communities_are_the_graphs_groups_and_the_same_every_time(store: GraphStore) -> None:
    sid = _world(store)
    first = communities_of(store, sid)
    assert [sorted(o.name for o in c.members) for c in first] == [
        ["Aurora", "Hull", "Mara Lind", "Riga"], ["Dom of Lübeck", "Ilse Berg", "Winter Cantata", "the choir"]] or \
        [sorted(o.name for o in c.members) for c in first] == [
        ["Dom of Lübeck", "Ilse Berg", "Winter Cantata", "the choir"], ["Aurora", "Hull", "Mara Lind", "Riga"]]
    again = communities_of(store, sid)
    assert [(c.number, c.content_hash) for c in again] == [(c.number, c.content_hash) for c in first]
    texts = {d.name: d.text for d in _documents(store, sid)}
    for c in first:  # the evidence is exact text of its document
        assert c.evidence and all(texts[e.document][e.start:e.end] == e.quote for e in c.evidence)


def _documents(store: GraphStore, sid: str) -> list[Any]:
    from cks_desktop.documents.store import DocumentStore

    docs = DocumentStore(store)
    return [docs.get(sid, name) for name in ("ships.txt", "music.txt")]


@pytest.mark.asyncio
async def test_themes_cite_passages_within_the_stated_calls_and_a_second_run_asks_no_summary(
        store: GraphStore, fake: Any) -> None:
    server, provider, model = fake
    sid = _world(store)
    themes = ThemesUseCase(store)
    estimate = await themes.estimate(sid)
    assert (estimate.summary_calls, estimate.reduce_calls) == (2, 1)
    heard: list[tuple[int, int]] = []
    found = await themes.run(sid, provider, max_calls=estimate.calls, progress=lambda *a: heard.append(a))
    assert found.calls == len(server.generation_requests) == estimate.calls == 3
    assert heard == [(1, 3), (2, 3), (3, 3)]  # after each call, out of the calls stated
    assert sorted(map(sorted, model.summaries)) == [["Aurora", "Hull", "Mara Lind", "Riga"],
                                                    ["Dom of Lübeck", "Ilse Berg", "Winter Cantata", "the choir"]]
    assert len(found.themes) == 2 and not found.unsupported
    texts = {d.name: d.text for d in _documents(store, sid)}
    ship_theme = next(t for t in found.themes if "Aurora" in t.summary)
    assert {c.document for c in ship_theme.citations} == {"ships.txt"}
    for theme in found.themes:
        assert theme.citations and all(texts[c.document][c.start:c.end] == c.quote for c in theme.citations)

    before = len(server.generation_requests)
    again = await ThemesUseCase(store).estimate(sid)
    assert (again.summary_calls, again.calls) == (0, 1)  # cached: no summary call
    await ThemesUseCase(store).run(sid, provider)
    assert len(server.generation_requests) - before == 1 and len(model.summaries) == 2


@pytest.mark.asyncio
async def test_changing_one_member_resummarises_only_its_community(store: GraphStore, fake: Any) -> None:
    server, provider, model = fake
    sid = _world(store)
    await ThemesUseCase(store).summaries(sid, provider)
    assert len(model.summaries) == 2
    hull = next(o for o in store.all_objects(sid) if o.name == "Hull")
    store.apply(sid, [{"op": "update_object", "ref": hull.id, "set_properties": {"description": "a Yorkshire port"}}],
                "test")
    summaries = await ThemesUseCase(store).summaries(sid, provider)
    assert len(model.summaries) == 3 and "Hull" in model.summaries[-1]
    assert any("a Yorkshire port" in s.summary for _c, s in summaries)  # written from what it was sent


@pytest.mark.asyncio
async def test_a_run_over_its_limit_is_refused_before_any_call(store: GraphStore, fake: Any) -> None:
    server, provider, _model = fake
    sid = _world(store)
    with pytest.raises(ThemesError, match=r"takes 3 model calls \(2 to summarise, 1 to combine\), over the limit of 2"):
        await ThemesUseCase(store).run(sid, provider, max_calls=2)
    assert server.generation_requests == []


@pytest.mark.asyncio
async def test_an_empty_graph_is_one_sentence_and_no_call(store: GraphStore, fake: Any) -> None:
    server, provider, _model = fake
    sid = store.create_session("empty").id
    estimate = await ThemesUseCase(store).estimate(sid)
    assert estimate.calls == 0
    with pytest.raises(ThemesError) as err:
        await ThemesUseCase(store).run(sid, provider)
    assert str(err.value) == EMPTY_GRAPH and server.generation_requests == []


@pytest.mark.asyncio
async def test_a_theme_citing_a_community_it_was_not_given_is_unsupported(store: GraphStore) -> None:
    model = Summariser(invent=True)
    with make_fake("openai") as server:
        server.side_turn = model
        provider = provider_for(server)
        try:
            found = await ThemesUseCase(store).run(_world(store), provider)
        finally:
            await provider.aclose()
    assert [t["title"] for t in found.unsupported] == ["Something no community says"]
    assert all(99 not in t.communities for t in found.themes)


@pytest.mark.asyncio
async def test_a_provider_failure_keeps_the_summaries_written_and_the_next_run_asks_only_the_rest(
        store: GraphStore) -> None:
    from cks_desktop.llm.provider import ProviderError

    model = Summariser(fail_summary=2)
    with make_fake("openai") as server:
        server.side_turn = model
        provider = provider_for(server)
        try:
            sid = _world(store)
            with pytest.raises(ProviderError):
                await ThemesUseCase(store).run(sid, provider)
            estimate = await ThemesUseCase(store).estimate(sid)
            assert (estimate.summary_calls, estimate.reduce_calls) == (1, 1)  # the first summary was kept
            found = await ThemesUseCase(store).run(sid, provider, max_calls=2)
        finally:
            await provider.aclose()
    assert found.calls == 2 and len(found.themes) == 2 and len(model.summaries) == 3


@pytest.mark.asyncio
async def test_many_communities_are_combined_level_by_level_within_the_stated_calls(
        store: GraphStore, fake: Any) -> None:
    server, provider, model = fake
    sid = store.create_session("many").id
    ops: list[dict[str, Any]] = []
    for i in range(20):  # twenty communities of two: more than one combining call holds
        ops += [{"op": "add_object", "type": "Person", "name": f"Keeper {i}", "label": f"$a{i}"},
                {"op": "add_object", "type": "Place", "name": f"Lighthouse {i}", "label": f"$b{i}"},
                {"op": "add_relation", "source": f"$a{i}", "target": f"$b{i}", "type": "keeps"}]
    store.apply(sid, ops, "test")
    estimate = await ThemesUseCase(store).estimate(sid)
    assert (estimate.summary_calls, estimate.reduce_calls) == (20, 3)  # 15 + 5, then one to merge
    found = await ThemesUseCase(store).run(sid, provider, max_calls=estimate.calls)
    assert found.calls == len(server.generation_requests) <= estimate.calls
    assert model.combines == 3 and 0 < len(found.themes) <= 7 and not found.unsupported
