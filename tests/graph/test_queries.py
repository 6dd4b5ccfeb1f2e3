"""Reads: search, paging cursors, neighbourhoods, paths, stats."""

from __future__ import annotations

import pytest

from cks_desktop.graph.errors import NotFound, StoreError
from cks_desktop.graph.model import Session
from cks_desktop.graph.store import GraphStore


def _obj(name: str, type: str = "Thing", **props: object) -> dict[str, object]:
    return {"op": "add_object", "type": type, "name": name, "properties": props}


def test_search_finds_objects_by_property_text(store: GraphStore, session: Session) -> None:
    store.apply(session.id, [
        _obj("Alice", "Person", bio="Plays the violin in an orchestra", nested={"deep": ["harpsichord"]}),
        _obj("Bob", "Person", bio="Builds boats"),
        _obj("Violin", "Instrument"),
        _obj("Café Crème", "Place", note="naïve"),
    ], "t")
    names = [o.name for o, _ in store.search_objects(session.id, "violin")]
    assert names[0] == "Violin" and set(names) == {"Violin", "Alice"}  # the name counts more
    assert [o.name for o, _ in store.search_objects(session.id, "harpsichord")] == ["Alice"]
    assert [o.name for o, _ in store.search_objects(session.id, "orch")] == ["Alice"]  # prefix of the last word
    assert [o.name for o, _ in store.search_objects(session.id, "cafe creme")] == ["Café Crème"]  # diacritics
    assert [o.name for o, _ in store.search_objects(session.id, "naive")] == ["Café Crème"]
    assert [o.name for o, _ in store.search_objects(session.id, "violin", type="instrument")] == ["Violin"]
    ranks = [rank for _, rank in store.search_objects(session.id, "violin")]
    assert ranks == sorted(ranks)
    # Words that are not all present: fall back to any of them.
    assert {o.name for o, _ in store.search_objects(session.id, "boats violin kazoo")} == {"Alice", "Bob", "Violin"}


@pytest.mark.parametrize("query", ['"', "*", "-", ":", "a:b", "NEAR(", "violin OR", 'x" OR "y', "AND", "^",
                                   "(((", "col:violin", "-violin", "", "   ", "🎻", "name:*"])
def test_search_never_raises_on_user_text(store: GraphStore, session: Session, query: str) -> None:
    store.apply(session.id, [_obj("Violin")], "t")
    store.search_objects(session.id, query)


def test_list_objects_pages_with_opaque_cursors(store: GraphStore, session: Session) -> None:
    store.apply(session.id, [_obj(f"o{i}", "Even" if i % 2 == 0 else "Odd") for i in range(25)], "t")
    seen, cursor = [], None
    while True:
        page, cursor = store.list_objects(session.id, limit=10, cursor=cursor)
        seen += [o.name for o in page]
        if cursor is None:
            break
    assert seen == [f"o{i}" for i in range(25)]
    evens, cursor = store.list_objects(session.id, type="even", limit=100)
    assert len(evens) == 13 and cursor is None
    first, cursor = store.list_objects(session.id, type="Odd", limit=5)
    second, _ = store.list_objects(session.id, type="Odd", limit=5, cursor=cursor)
    assert [o.name for o in first + second] == [f"o{i}" for i in range(1, 20, 2)]
    with pytest.raises(StoreError, match="cursor is not valid"):
        store.list_objects(session.id, cursor="garbage!")
    with pytest.raises(StoreError, match="limit"):
        store.list_objects(session.id, limit=0)


def test_list_relations_by_object_type_and_direction(store: GraphStore, session: Session) -> None:
    store.apply(session.id, [_obj("hub"), *[_obj(f"n{i}") for i in range(6)]], "t")
    store.apply(session.id, [{"op": "add_relation", "source": "hub" if i % 2 else f"n{i}",
                              "target": f"n{i}" if i % 2 else "hub", "type": "out" if i % 2 else "in"}
                             for i in range(6)] +
                [{"op": "add_relation", "source": "n0", "target": "n1", "type": "other"}], "t")
    both, _ = store.list_relations(session.id, ref="hub")
    assert len(both) == 6
    out, _ = store.list_relations(session.id, ref="hub", direction="out")
    incoming, _ = store.list_relations(session.id, ref="hub", direction="in")
    assert {r.type for r in out} == {"out"} and {r.type for r in incoming} == {"in"}
    page, cursor = store.list_relations(session.id, ref="hub", limit=4)
    rest, end = store.list_relations(session.id, ref="hub", limit=4, cursor=cursor)
    assert [r.id for r in page + rest] == [r.id for r in both] and end is None
    typed, _ = store.list_relations(session.id, type="OTHER")
    assert len(typed) == 1
    everything, _ = store.list_relations(session.id, limit=1000)
    assert len(everything) == 7
    with pytest.raises(StoreError, match="direction"):
        store.list_relations(session.id, ref="hub", direction="sideways")


def _chain(store: GraphStore, session: Session, n: int) -> list[str]:
    r = store.apply(session.id, [{**_obj(f"c{i}"), "label": f"$c{i}"} for i in range(n)] +
                    [{"op": "add_relation", "source": f"$c{i}", "target": f"$c{i + 1}", "type": "next"}
                     for i in range(n - 1)], "t")
    return [r.created[f"$c{i}"] for i in range(n)]


def test_neighbors_by_depth_and_limit(store: GraphStore, session: Session) -> None:
    ids = _chain(store, session, 8)
    objects, relations = store.neighbors(session.id, "c3", depth=1)
    assert [o.name for o in objects][0] == "c3" and {o.name for o in objects} == {"c2", "c3", "c4"}
    assert len(relations) == 2
    objects, relations = store.neighbors(session.id, "c3", depth=3)
    assert {o.name for o in objects} == {f"c{i}" for i in range(0, 7)} and len(relations) == 6
    objects, relations = store.neighbors(session.id, ids[0], depth=3, limit=2)
    assert [o.name for o in objects] == ["c0", "c1", "c2"]
    assert all(r.source_id in {o.id for o in objects} and r.target_id in {o.id for o in objects}
               for r in relations)
    with pytest.raises(StoreError, match="depth"):
        store.neighbors(session.id, "c3", depth=4)


def test_find_path_shortest_and_undirected(store: GraphStore, session: Session) -> None:
    _chain(store, session, 10)
    store.apply(session.id, [{"op": "add_relation", "source": "c8", "target": "c1", "type": "shortcut"},
                             _obj("island")], "t")
    path = store.find_path(session.id, "c0", "c9")
    assert path is not None
    objects, relations = path
    assert [o.name for o in objects] == ["c0", "c1", "c8", "c9"]
    assert [r.type for r in relations] == ["next", "shortcut", "next"]
    back = store.find_path(session.id, "c9", "c0")
    assert back is not None and [o.name for o in back[0]] == ["c9", "c8", "c1", "c0"]
    assert store.find_path(session.id, "c0", "island") is None
    assert store.find_path(session.id, "c0", "c5", max_depth=4) is None  # 5 hops either way round
    found = store.find_path(session.id, "c0", "c5", max_depth=5)
    assert found is not None and len(found[1]) == 5
    same = store.find_path(session.id, "c4", "c4")
    assert same is not None and [o.name for o in same[0]] == ["c4"] and same[1] == []
    with pytest.raises(NotFound):
        store.find_path(session.id, "c0", "nowhere")


def test_find_path_length_matches_bfs(store: GraphStore, session: Session) -> None:
    """A small random graph: the path length equals a plain BFS distance."""
    import random
    from collections import deque

    rng = random.Random(3)
    n = 60
    r = store.apply(session.id, [{**_obj(f"v{i}"), "label": f"$v{i}"} for i in range(n)], "t")
    ids = [r.created[f"$v{i}"] for i in range(n)]
    edges = {(rng.randrange(n), rng.randrange(n)) for _ in range(70)}
    store.apply(session.id, [{"op": "add_relation", "source": ids[a], "target": ids[b], "type": "e"}
                             for a, b in edges], "t")
    adj: dict[int, set[int]] = {i: set() for i in range(n)}
    for a, b in edges:
        adj[a].add(b)
        adj[b].add(a)
    for _ in range(40):
        a, b = rng.randrange(n), rng.randrange(n)
        dist = {a: 0}
        queue = deque([a])
        while queue:
            x = queue.popleft()
            for y in adj[x]:
                if y not in dist:
                    dist[y] = dist[x] + 1
                    queue.append(y)
        path = store.find_path(session.id, ids[a], ids[b], max_depth=20)
        if b not in dist:
            assert path is None
        else:
            assert path is not None and len(path[1]) == dist[b] and len(path[0]) == dist[b] + 1
            objs, rels = path
            for i, rel in enumerate(rels):  # consecutive, undirected
                assert {rel.source_id, rel.target_id} == {objs[i].id, objs[i + 1].id}


def test_type_stats_counts_and_definitions(store: GraphStore, session: Session) -> None:
    store.apply(session.id, [_obj("a", "Person"), _obj("b", "Person"), _obj("c", "City"),
                             {"op": "add_relation", "source": "a", "target": "c", "type": "lives_in"},
                             {"op": "define_type", "kind": "object", "name": "person", "description": "People",
                              "properties_schema": {"type": "object"}},
                             {"op": "define_type", "kind": "relation", "name": "founded", "description": "x"}], "t")
    stats = store.type_stats(session.id)
    assert stats["object_types"] == [
        {"name": "Person", "count": 2, "description": "People", "properties_schema": {"type": "object"}},
        {"name": "City", "count": 1, "description": "", "properties_schema": None}]
    assert stats["relation_types"] == [
        {"name": "lives_in", "count": 1, "description": "", "properties_schema": None},
        {"name": "founded", "count": 0, "description": "x", "properties_schema": None}]
    assert store.counts(session.id) == {"objects": 3, "relations": 1}
    assert {(t.kind, t.name) for t in store.type_defs(session.id)} == {("object", "person"), ("relation", "founded")}


def test_reads_of_a_missing_session_or_object(store: GraphStore, session: Session) -> None:
    with pytest.raises(NotFound, match="No session"):
        store.list_objects("s_missing")
    with pytest.raises(NotFound, match="No object"):
        store.get_object(session.id, "o_missing")
    with pytest.raises(NotFound, match="No relation"):
        store.get_relation(session.id, "r_missing")
    with pytest.raises(NotFound):
        store.resolve(session.id, "   ")


def test_reads_with_text_that_is_not_unicode(store: GraphStore, session: Session) -> None:
    with pytest.raises(StoreError, match="not valid Unicode"):
        store.resolve(session.id, "x\ud800")
    with pytest.raises(StoreError, match="not valid Unicode"):
        store.list_objects(session.id, type="\udfff")
    assert store.search_objects(session.id, "\ud800") == []


def test_neighbors_include_relations_among_the_outer_ring(store: GraphStore, session: Session) -> None:
    store.apply(session.id, [_obj("A"), _obj("B"), _obj("C"), _obj("D"),
                             {"op": "add_relation", "source": "A", "target": "B", "type": "t"},
                             {"op": "add_relation", "source": "A", "target": "C", "type": "t"},
                             {"op": "add_relation", "source": "C", "target": "B", "type": "ring"},
                             {"op": "add_relation", "source": "B", "target": "D", "type": "beyond"}], "t")
    objects, relations = store.neighbors(session.id, "A", depth=1)
    assert {o.name for o in objects} == {"A", "B", "C"}
    assert sorted(r.type for r in relations) == ["ring", "t", "t"]
