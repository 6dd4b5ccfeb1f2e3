"""The batched draw buffers: bulk building through QDataStream, and incremental updates."""

from __future__ import annotations

from cks_desktop.graph.events import GraphChanged
from cks_desktop.ui.graph.buffers import PARKED, SceneBuffers, points_polygon, segments_path
from cks_desktop.ui.graph.model import GraphModel

from tests.ui.graph.test_model import S, chain, obj, rel


def test_stream_built_geometry_matches_the_input() -> None:
    poly = points_polygon([1.0, 2.5, -3.0], [4.0, 5.0, 6.25])
    assert [(p.x(), p.y()) for p in poly] == [(1.0, 4.0), (2.5, 5.0), (-3.0, 6.25)]
    n = 2500  # more than one packing chunk
    ax = [float(k) for k in range(n)]
    path = segments_path(ax, [0.0] * n, [k + 0.5 for k in ax], [1.0] * n)
    assert path.elementCount() == 2 * n
    last = path.elementAt(2 * n - 1)
    assert path.elementAt(2 * n - 2).isMoveTo() and last.isLineTo() and (last.x, last.y) == (n - 0.5, 1.0)
    assert segments_path([], [], [], []).elementCount() == 0
    assert len(points_polygon([], [])) == 0


def _placed(n: int) -> GraphModel:
    m = chain(n)
    for i in range(n):
        m.set_position(i, float(i * 10), 0.0)
    return m


def test_edges_spread_over_several_paths() -> None:
    from cks_desktop.ui.graph.buffers import EDGES_PER_PATH

    n = EDGES_PER_PATH + 10
    m = _placed(n + 1)
    b = SceneBuffers()
    b.rebuild(m, None)
    assert len(b.edge_paths) == 2 and b.drawn_edges == n
    assert b.edge_element(n - 1, 1) == (float(n * 10), 0.0)


def test_rebuild_add_move_remove() -> None:
    m = _placed(4)
    b = SceneBuffers()
    b.rebuild(m, None)
    assert (b.drawn_nodes, b.drawn_edges) == (4, 3)
    version = b.version
    m.apply_event(GraphChanged(S, "c", "model", added_objects=(obj(9, "Company"),), added_relations=(rel(9, 3, 9),)))
    k = m.index["o_9"]
    m.set_position(k, 100.0, 50.0)
    b.add(m, None, [k], [m.rel_index["r_9"]])
    assert (b.drawn_nodes, b.drawn_edges) == (5, 4) and b.version > version
    r9 = m.rel_index["r_9"]
    assert b.edge_element(r9, 1) == (100.0, 50.0)

    m.xs[3], m.ys[3] = 33.0, 44.0
    b.move(m, [3])
    assert b.edge_element(r9, 0) == (33.0, 44.0)
    poly = b.polys[m.ntype[3]]
    assert (poly[b.node_slot[3]].x(), poly[b.node_slot[3]].y()) == (33.0, 44.0)

    slot = b.edge_slot[r9]
    delta = m.apply_event(GraphChanged(S, "c", "user", removed_objects=("o_3",)))
    b.remove(m, delta.removed_nodes, delta.removed_edges)
    assert (b.drawn_nodes, b.drawn_edges) == (4, 2) and b.holes == 3
    assert b.edge_paths[0].elementAt(2 * slot).x == PARKED

    mask = bytearray(m.alive)
    mask[0] = 0
    b.rebuild(m, mask)
    assert (b.drawn_nodes, b.drawn_edges, b.holes) == (3, 1, 0)
