"""Property: a random batch either applies fully or leaves the database exactly as it was.

"Fully" is checked three ways: every op is recorded in the change, the
database invariants hold (foreign keys, full-text rows, unique type+name),
and reverting the change gives back the exact rows from before.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cks_desktop.graph.errors import ValidationFailed
from cks_desktop.graph.sqlite_util import search_text
from cks_desktop.graph.store import GraphStore

from .conftest import dump, fts_rows, graph_rows

NAMES = ["a", "b", "c", "A", "d", "e"]
TYPES = ["T", "U", "t"]
LABELS = ["$x", "$y", "$z"]

names = st.sampled_from(NAMES)
refs = st.sampled_from(NAMES + LABELS + ["ghost", "$ghost", "obj:0", "obj:1"])
props = st.dictionaries(st.sampled_from(["k", "n", "w"]),
                        st.one_of(st.integers(-5, 5), st.text(max_size=5), st.booleans(),
                                  st.lists(st.integers(0, 3), max_size=2)), max_size=2)

op_specs = st.one_of(
    st.fixed_dictionaries({"op": st.just("add_object"), "type": st.sampled_from(TYPES), "name": names,
                           "properties": props},
                          optional={"label": st.sampled_from(LABELS),
                                    "on_conflict": st.sampled_from(["error", "reuse", "update"])}),
    st.fixed_dictionaries({"op": st.just("update_object"), "ref": refs},
                          optional={"name": names, "type": st.sampled_from(TYPES), "set_properties": props,
                                    "remove_properties": st.lists(st.sampled_from(["k", "n"]), max_size=1)}),
    st.fixed_dictionaries({"op": st.just("remove_object"), "ref": refs}),
    st.fixed_dictionaries({"op": st.just("add_relation"), "source": refs, "target": refs,
                           "type": st.sampled_from(["r", "s"])},
                          optional={"properties": props, "label": st.sampled_from(["$r1", "$r2"])}),
    st.fixed_dictionaries({"op": st.just("remove_relation"), "relation_id": st.sampled_from(["rel:0", "rel:1",
                                                                                             "r_ghost"])}),
    st.fixed_dictionaries({"op": st.just("update_relation"), "relation_id": st.sampled_from(["rel:0", "rel:1"])},
                          optional={"target": refs, "type": st.sampled_from(["r", "q"]), "properties": props}),
    st.fixed_dictionaries({"op": st.just("define_type"), "kind": st.just("object"), "name": st.sampled_from(TYPES),
                           "properties_schema": st.sampled_from([
                               None, {"type": "object", "properties": {"k": {"type": "integer"}}},
                               {"type": "object", "required": ["w"]}])}),
)


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GraphStore]:
    path: Path = tmp_path_factory.mktemp("property") / "cks.sqlite3"
    store = GraphStore.open(path)
    yield store
    store.close()


def _concrete(spec: dict[str, Any], objs: list[str], rels: list[str]) -> dict[str, Any]:
    """Replace placeholders ("obj:0", "rel:1") by the ids of the seeded graph."""
    out = {}
    for key, value in spec.items():
        if isinstance(value, str) and value.startswith("obj:"):
            value = objs[int(value[4:])]
        elif isinstance(value, str) and value.startswith("rel:"):
            value = rels[int(value[4:])]
        out[key] = value
    return out


def _check_invariants(store: GraphStore, session_id: str) -> None:
    with store.connection_lock() as conn:
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    objects = store.all_objects(session_id)
    assert fts_rows(store, session_id) == sorted((o.id, o.name, search_text(o.properties)) for o in objects)
    keys = [(o.type.casefold(), o.name.casefold()) for o in objects]
    assert len(keys) == len(set(keys))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(specs=st.lists(op_specs, min_size=1, max_size=8))
def test_random_batches_apply_fully_or_not_at_all(shared_store: GraphStore, specs: list[dict[str, Any]]) -> None:
    store = shared_store
    session = store.create_session("prop")
    seed = store.apply(session.id, [
        {"op": "add_object", "type": "T", "name": "a", "label": "$a", "properties": {"k": 1}},
        {"op": "add_object", "type": "U", "name": "b", "label": "$b"},
        {"op": "add_object", "type": "T", "name": "c", "label": "$c", "properties": {"w": "word"}},
        {"op": "add_relation", "source": "$a", "target": "$b", "type": "r", "label": "$r0"},
        {"op": "add_relation", "source": "$c", "target": "$a", "type": "s", "label": "$r1",
         "properties": {"n": 2}},
    ], "seed")
    objs = [seed.created[k] for k in ("$a", "$b")]
    rels = [seed.created[k] for k in ("$r0", "$r1")]
    ops = [_concrete(s, objs, rels) for s in specs]
    before_dump = dump(store)
    before_rows = graph_rows(store, session.id), store.type_defs(session.id)
    try:
        result = store.apply(session.id, ops, "hypothesis")
    except ValidationFailed as exc:
        assert exc.errors and all(0 <= e["index"] < len(ops) for e in exc.errors)
        assert dump(store) == before_dump
        return
    _check_invariants(store, session.id)
    if result.change is None:  # nothing but reuses
        assert dump(store) == before_dump
        return
    assert len(result.change.ops) == len(ops)
    stored = store.get_change(session.id, result.change.id)  # the JSON written equals what was returned
    assert (stored.ops, stored.inverse_ops) == (result.change.ops, result.change.inverse_ops)
    store.revert(session.id, result.change.id, "undo")
    assert (graph_rows(store, session.id), store.type_defs(session.id)) == before_rows
    _check_invariants(store, session.id)
