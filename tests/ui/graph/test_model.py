"""The Qt-free graph model: loading, store events, adjacency, paths, compaction."""

from __future__ import annotations

from cks_desktop.graph.events import GraphChanged
from cks_desktop.graph.model import Object, Relation
from cks_desktop.ui.graph.model import GraphModel

S = "s_1"


def obj(n: int, type_: str = "Person", name: str | None = None) -> Object:
    return Object(f"o_{n}", S, type_, name or f"N{n}")


def rel(k: int, a: int, b: int, type_: str = "knows") -> Relation:
    return Relation(f"r_{k}", S, type_, f"o_{a}", f"o_{b}")


def chain(n: int) -> GraphModel:
    m = GraphModel()
    m.load(S, [obj(i) for i in range(n)], [rel(i, i, i + 1) for i in range(n - 1)])
    return m


def test_load_with_saved_positions_marks_them_placed_and_pinned() -> None:
    m = GraphModel()
    m.load(S, [obj(0), obj(1), obj(2, "Company")], [rel(0, 0, 1)],
           {"o_0": (1.0, 2.0, False), "o_2": (5.0, 6.0, True)})
    assert m.node_count == 3 and m.edge_count == 1
    assert (m.xs[0], m.ys[0]) == (1.0, 2.0) and m.placed[0] and not m.placed[1]
    assert m.pinned == {2}
    assert m.unplaced() == [1]
    assert m.live_types() == [("Person", 2), ("Company", 1)]
    assert m.positions_snapshot() == [("o_0", 1.0, 2.0, False), ("o_2", 5.0, 6.0, True)]


def test_events_add_update_remove_with_exact_delta() -> None:
    m = chain(3)
    struct = m.structure_version
    d = m.apply_event(GraphChanged(S, "c1", "model", added_objects=(obj(3),), added_relations=(rel(9, 2, 3),)))
    assert d.added_nodes == [3] and d.added_edges == [2] and d.structural
    assert set(d.touched_ids) == {"o_2", "o_3"}
    assert m.structure_version > struct
    assert sorted(m.neighbors(3)) == [2]

    d = m.apply_event(GraphChanged(S, "c2", "user", updated_objects=(obj(1, "Company", "Acme"),)))
    assert d.updated_nodes == [1] and d.retyped
    assert m.names[1] == "Acme" and m.type_of(1) == "Company"

    m.set_position(1, 10.0, 20.0)
    d = m.apply_event(GraphChanged(S, "c3", "user", removed_objects=("o_1",)))
    assert d.removed_nodes == [1]
    assert set(d.removed_edges) == {0, 1}  # both relations of o_1 died with it
    assert d.removed_positions == {"o_1": (10.0, 20.0, False)}
    assert m.node_count == 3 and m.edge_count == 1 and "o_1" not in m.index
    assert m.neighbors(0) == []


def test_events_for_other_sessions_and_replays_are_harmless() -> None:
    m = chain(2)
    assert m.apply_event(GraphChanged("s_other", "c", "model", added_objects=(obj(7),))).empty
    d = m.apply_event(GraphChanged(S, "c", "model", added_objects=(obj(0),), added_relations=(rel(0, 0, 1),)))
    assert d.empty and m.node_count == 2 and m.edge_count == 1  # already known: nothing new
    d = m.apply_event(GraphChanged(S, "c", "model", removed_objects=("o_unknown",), removed_relations=("r_x",)))
    assert d.empty


def test_relation_to_unknown_object_is_ignored() -> None:
    m = chain(2)
    d = m.apply_event(GraphChanged(S, "c", "model", added_relations=(rel(5, 0, 42),)))
    assert d.added_edges == [] and m.edge_count == 1


def test_k_hop_and_shortest_path_ignore_direction() -> None:
    m = chain(6)
    assert m.k_hop([m.index["o_2"]], 1) == {1, 2, 3}
    assert m.k_hop([m.index["o_2"]], 2) == {0, 1, 2, 3, 4}
    nodes, edges = m.shortest_path(5, 0)  # type: ignore[misc]
    assert nodes == [5, 4, 3, 2, 1, 0] and len(edges) == 5
    m.apply_event(GraphChanged(S, "c", "model", added_objects=(obj(9),)))
    assert m.shortest_path(0, m.index["o_9"]) is None


def test_adjacency_follows_edges_added_after_it_was_built() -> None:
    m = chain(3)
    assert m.neighbors(1) == [0, 2] or sorted(m.neighbors(1)) == [0, 2]
    m.apply_event(GraphChanged(S, "c", "model", added_relations=(rel(7, 0, 2, "cites"),)))
    assert sorted(m.neighbors(0)) == [1, 2]
    assert m.live_rel_types() == ["knows", "cites"]


def test_compaction_renumbers_but_keeps_everything_by_id() -> None:
    m = chain(1000)
    for i in range(1, 1000, 2):
        m.set_position(i, float(i), 0.0)
    m.pinned.add(m.index["o_3"])
    m.apply_event(GraphChanged(S, "c", "user", removed_objects=tuple(f"o_{i}" for i in range(0, 1000, 2))))
    assert m.needs_compaction()
    m.compact()
    assert m.slot_count == 500 and m.node_count == 500 and not m.needs_compaction()
    i3 = m.index["o_3"]
    assert m.xs[i3] == 3.0 and m.placed[i3] and m.pinned == {i3}
    assert m.edge_count == 0


def test_bounds_and_memory_layout() -> None:
    m = chain(3)
    assert m.bounds() is None
    m.set_position(0, -1.0, 2.0)
    m.set_position(2, 3.0, -4.0)
    assert m.bounds() == (-1.0, -4.0, 3.0, 2.0)
    assert m.bounds([0]) == (-1.0, 2.0, -1.0, 2.0)


def test_load_heads_matches_load() -> None:
    objects = [obj(0), obj(1, "Company"), obj(2)]
    relations = [rel(0, 0, 1), rel(1, 1, 2, "owns"), Relation("r_x", S, "knows", "o_0", "o_missing")]
    saved = {"o_1": (3.0, 4.0, True)}
    a, b = GraphModel(), GraphModel()
    a.load(S, objects, relations, saved)
    b.load_heads(S, [(o.id, o.type, o.name) for o in objects],
                 [(r.id, r.type, r.source_id, r.target_id) for r in relations], saved)
    for attr in ("ids", "names", "ntype", "xs", "ys", "alive", "placed", "pinned", "index", "type_names",
                 "type_counts", "rel_ids", "src", "dst", "etype", "ealive", "rel_index", "rel_type_names"):
        assert getattr(a, attr) == getattr(b, attr), attr
    assert (a.node_count, a.edge_count) == (b.node_count, b.edge_count) == (3, 2)
    assert sorted(b.neighbors(1)) == [0, 2]


def test_the_view_model_imports_no_qt() -> None:
    """The model, state, geometry, layout, positions and editor are testable (and usable) without Qt."""
    import subprocess
    import sys

    modules = ("model", "adjacency", "viewstate", "viewport", "spatial", "placement", "layout", "editor",
               "palette")
    code = ("import sys\nimport cks_desktop.graph.positions\n"  # the positions store moved to the core
            + "".join(f"import cks_desktop.ui.graph.{m}\n" for m in modules)
            + "print(sorted(k for k in sys.modules if k.split('.')[0] in ('PySide6', 'qasync', 'shiboken6')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "[]"
