"""Import conflicts (skip / merge / rename / error) on real files of each format, and refusals
that name every problem. The store is a real SQLite file; the files are written to disk
by the store's own exports (and by hand for the foreign shapes) and read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cks_desktop.commands.sessions_cmd import ON_CONFLICT as CLI_CHOICES
from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.formats.common import ImportRefused
from cks_desktop.graph.formats.conflicts import ON_CONFLICT, merged_properties
from cks_desktop.graph.model import Session
from cks_desktop.graph.store import GraphStore

from .conftest import dump

FORMATS = ("json", "graphml", "memory-jsonl")


def _source(store: GraphStore) -> Session:
    """A session to export: Ada (already in the target too), Bob (new), Ada knows Bob, Ada likes tea."""
    src = store.create_session("source")
    store.apply(src.id, [
        {"op": "add_object", "type": "Person", "name": "Ada", "label": "$a",
         "properties": {"observations": ["likes tea", "writes notes"], "born": 1815}},
        {"op": "add_object", "type": "Person", "name": "Bob", "label": "$b", "properties": {"observations": []}},
        {"op": "add_relation", "source": "$a", "target": "$b", "type": "knows"},
        {"op": "add_relation", "source": "$b", "target": "$a", "type": "knows"},
    ], "setup")
    return src


def _target(store: GraphStore) -> tuple[Session, str, str]:
    dst = store.create_session("target")
    created = store.apply(dst.id, [
        {"op": "add_object", "type": "person", "name": " ada ", "label": "$a",
         "properties": {"observations": ["likes tea"], "city": "London"}},
        {"op": "add_object", "type": "Person", "name": "Carl", "label": "$c"},
        {"op": "add_relation", "source": "$a", "target": "$c", "type": "knows"},
    ], "setup").created
    return dst, created["$a"], created["$c"]


def _file(store: GraphStore, session: Session, fmt: str, tmp_path: Path) -> str:
    path = tmp_path / f"graph.{fmt}"
    path.write_text(store.export(session.id, fmt), encoding="utf-8")
    return path.read_text(encoding="utf-8")


def _objects(store: GraphStore, sid: str) -> dict[str, dict]:
    doc = json.loads(store.export(sid, "json"))
    return {o["name"]: o for o in doc["objects"]}


def _relations(store: GraphStore, sid: str) -> set[tuple[str, str, str]]:
    doc = json.loads(store.export(sid, "json"))
    names = {o["id"]: o["name"] for o in doc["objects"]}
    return {(names[r["source_id"]], r["type"], names[r["target_id"]]) for r in doc["relations"]}


def test_the_cli_offers_the_same_choices_as_the_core() -> None:
    assert CLI_CHOICES == ON_CONFLICT


@pytest.mark.parametrize("fmt", FORMATS)
def test_error_refuses_and_names_the_conflict(store: GraphStore, tmp_path: Path, fmt: str) -> None:
    text = _file(store, _source(store), fmt, tmp_path)
    dst, ada, _ = _target(store)
    before = dump(store)
    with pytest.raises(ImportRefused) as caught:
        store.import_data(dst.id, fmt, text, "import", on_conflict="error")
    assert len(caught.value.problems) == 1
    assert f"is already in the session ({ada})" in str(caught.value)
    assert "skip, merge or rename" in str(caught.value)
    assert dump(store) == before


@pytest.mark.parametrize("fmt", FORMATS)
def test_skip_keeps_the_existing_object_and_repoints_relations(store: GraphStore, tmp_path: Path,
                                                                 fmt: str) -> None:
    text = _file(store, _source(store), fmt, tmp_path)
    dst, ada, _ = _target(store)
    result = store.import_data(dst.id, fmt, text, "import", on_conflict="skip")
    objs = _objects(store, dst.id)
    assert set(objs) == {"ada", "Carl", "Bob"}
    assert objs["ada"]["id"] == ada
    assert objs["ada"]["properties"] == {"observations": ["likes tea"], "city": "London"}  # untouched
    assert _relations(store, dst.id) == {("ada", "knows", "Carl"), ("ada", "knows", "Bob"),
                                         ("Bob", "knows", "ada")}
    assert result.counts["duplicates_skipped"] == 1 and "skips 1 duplicate" in result.summary
    store.revert(dst.id, result.change.id, "user")
    assert set(_objects(store, dst.id)) == {"ada", "Carl"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_merge_joins_properties_and_repoints_relations(store: GraphStore, tmp_path: Path, fmt: str) -> None:
    text = _file(store, _source(store), fmt, tmp_path)
    dst, ada, _ = _target(store)
    result = store.import_data(dst.id, fmt, text, "import", on_conflict="merge")
    objs = _objects(store, dst.id)
    assert set(objs) == {"ada", "Carl", "Bob"} and objs["ada"]["id"] == ada
    props = objs["ada"]["properties"]
    assert props["observations"] == ["likes tea", "writes notes"]  # joined, no repeat
    assert props["city"] == "London"  # kept
    if fmt != "memory-jsonl":  # that format carries only observations
        assert props["born"] == 1815
    assert _relations(store, dst.id) == {("ada", "knows", "Carl"), ("ada", "knows", "Bob"),
                                         ("Bob", "knows", "ada")}
    assert result.counts["objects_merged"] == 1
    # importing the same file again changes nothing and repeats no relation
    again = store.import_data(dst.id, fmt, text, "import", on_conflict="merge")
    assert again.counts["relations_skipped"] == 2 and again.counts["objects_merged"] == 2
    assert len(_relations(store, dst.id)) == 3 and len(json.loads(store.export(dst.id, "json"))["relations"]) == 3


@pytest.mark.parametrize("fmt", FORMATS)
def test_rename_keeps_both_under_a_suffixed_name(store: GraphStore, tmp_path: Path, fmt: str) -> None:
    text = _file(store, _source(store), fmt, tmp_path)
    dst, ada, _ = _target(store)
    store.apply(dst.id, [{"op": "add_object", "type": "Person", "name": "Ada (2)"}], "setup")
    result = store.import_data(dst.id, fmt, text, "import", on_conflict="rename")
    objs = _objects(store, dst.id)
    assert set(objs) == {"ada", "Ada (2)", "Ada (3)", "Carl", "Bob"}
    assert objs["ada"]["properties"] == {"observations": ["likes tea"], "city": "London"}
    assert _relations(store, dst.id) == {("ada", "knows", "Carl"), ("Ada (3)", "knows", "Bob"),
                                         ("Bob", "knows", "Ada (3)")}
    assert result.counts["objects_suffixed"] == 1


def test_repeats_inside_one_file_follow_the_choice(store: GraphStore, session: Session) -> None:
    doc = {"format": "cks-graph", "version": 1, "session": {"id": "s", "title": "t"},
           "objects": [{"id": "a", "type": "T", "name": "X", "properties": {"tags": ["1"]}},
                       {"id": "b", "type": "t", "name": "x", "properties": {"tags": ["2"], "k": 1}},
                       {"id": "c", "type": "T", "name": "Y"}],
           "relations": [{"type": "r", "source_id": "b", "target_id": "c"}]}
    text = json.dumps(doc)
    with pytest.raises(ImportRefused) as caught:
        store.import_data(session.id, "json", text, "import", on_conflict="error")
    assert "object 1 (b): t 'x' repeats object 0 (a)" in str(caught.value)
    store.import_data(session.id, "json", text, "import", on_conflict="merge")
    objs = _objects(store, session.id)
    assert set(objs) == {"X", "Y"} and objs["X"]["properties"] == {"tags": ["1", "2"], "k": 1}
    assert _relations(store, session.id) == {("X", "r", "Y")}


def test_merged_properties() -> None:
    assert merged_properties({"a": [1, 2], "b": 1, "c": "x"}, {"a": [2, 3], "b": 2, "d": None}) == \
        {"a": [1, 2, 3], "b": 2, "c": "x", "d": None}


def test_preview_counts_types_sample_and_conflicts(store: GraphStore, tmp_path: Path) -> None:
    text = _file(store, _source(store), "json", tmp_path)
    dst, ada, _ = _target(store)
    before = dump(store)
    preview = store.preview_import(dst.id, "json", text)
    assert (preview.objects, preview.relations) == (2, 2)
    assert preview.object_types == {"Person": 2} and preview.relation_types == {"knows": 2}
    assert preview.new_types == []  # "person" is there already (types compare case-insensitively)
    assert preview.sample == [("Person", "Ada"), ("Person", "Bob")]
    [conflict] = preview.conflicts
    assert conflict.existing_id == ada and conflict.changes == ("born", "observations")
    assert dump(store) == before


def test_an_unknown_choice_is_one_sentence(store: GraphStore, session: Session) -> None:
    with pytest.raises(StoreError, match="Unknown conflict choice 'merge-all'; use one of: skip, merge"):
        store.import_data(session.id, "json", "{}", "import", on_conflict="merge-all")


def _thirty_bad(fmt: str) -> str:
    if fmt == "json":
        objs = [{"id": f"o{i}", "type": "T", "name": ""} for i in range(30)]
        return json.dumps({"format": "cks-graph", "version": 1, "objects": objs, "relations": []})
    if fmt == "memory-jsonl":
        return "\n".join(json.dumps({"type": "entity", "name": f"n{i}", "entityType": ""}) for i in range(30))
    nodes = "".join(f'<node id="n{i}"><data key="p">[1]</data></node>' for i in range(30))
    return ('<graphml xmlns="http://graphml.graphdrawing.org/xmlns"><key id="p" for="node" '
            f'attr.name="properties"/><graph>{nodes}</graph></graphml>')


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_refused_file_names_all_thirty_problems(store: GraphStore, session: Session, fmt: str) -> None:
    with pytest.raises(ImportRefused) as caught:
        store.import_data(session.id, fmt, _thirty_bad(fmt), "import")
    assert len(caught.value.problems) == 30
    assert str(caught.value).startswith("Nothing was imported: 30 problems: ")
    assert "more" not in str(caught.value)


def test_thirty_op_problems_are_all_named(store: GraphStore, session: Session) -> None:
    """Problems the planner finds (relations to nobody), across stream chunks."""
    rels = [{"type": "r", "source_id": f"ghost {i}", "target_id": f"nobody {i}"} for i in range(30)]
    text = json.dumps({"format": "cks-graph", "version": 1, "objects": [], "relations": rels})
    with pytest.raises(ImportRefused) as caught:
        store.import_data(session.id, "json", text, "import", on_conflict="error")
    assert len(caught.value.problems) == 30
    assert all(f"'ghost {i}'" in str(caught.value) for i in range(30))
