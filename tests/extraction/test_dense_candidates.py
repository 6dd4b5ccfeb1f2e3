"""A session too big to load whole is searched per name: by its full-text index, and by the embeddings
of its search index where that exists, so a typo or a short form that shares no whole word with an
object's name still finds it as a candidate (resolution's rules still decide)."""

from __future__ import annotations

from pathlib import Path

from cks_desktop.extraction.runner import load_context
from cks_desktop.graph.store import GraphStore
from cks_desktop.retrieval import items


def session_with(tmp_path: Path) -> tuple[GraphStore, str]:
    store = GraphStore.open(tmp_path / "cks.sqlite3")
    sid = store.create_session("letters").id
    store.apply(sid, [{"op": "add_object", "type": "Person", "name": name} for name in (
        "Marguerite Okonkwo", "Johann Schmidt", "Karin Lind")] + [
        {"op": "add_object", "type": "Organization", "name": "Smith Mechanical Works"}], "test")
    return store, sid


def names(found: list) -> list[str]:
    return [e.name for e in found]


def test_a_typo_finds_its_object_through_the_embeddings(tmp_path: Path) -> None:
    store, sid = session_with(tmp_path)
    try:
        before = load_context(store, sid, preload_limit=1)  # searched per name; no search index yet
        assert before.lookup is not None and "Marguerite Okonkwo" not in names(before.lookup("Margeurite Okonkow"))
        items.sync(store, sid)  # what Ask or the search field does first
        lookup = load_context(store, sid, preload_limit=1).lookup
        assert lookup is not None
        assert names(lookup("Margeurite Okonkow"))[:1] == ["Marguerite Okonkwo"]
        assert "Smith Mechanical Works" in names(lookup("Smith Mech. Works"))
        assert names(lookup("Johann Schmidt"))[:1] == ["Johann Schmidt"]  # the words first, once
        assert names(lookup("Johann Schmidt")).count("Johann Schmidt") == 1
    finally:
        store.close()


def test_an_object_deleted_since_the_index_was_kept_is_no_candidate(tmp_path: Path) -> None:
    store, sid = session_with(tmp_path)
    try:
        items.sync(store, sid)
        gone = store.resolve(sid, "Marguerite Okonkwo")
        store.apply(sid, [{"op": "remove_object", "ref": gone.id}], "test")
        lookup = load_context(store, sid, preload_limit=1).lookup
        assert lookup is not None and "Marguerite Okonkwo" not in names(lookup("Margeurite Okonkow"))
    finally:
        store.close()
