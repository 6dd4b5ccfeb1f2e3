"""The graph view at a glance: a Fit that fills the canvas, labels that never overlap and are drawn
once, and the empty graph as a card of working actions. Real store, real registry, real view."""

from __future__ import annotations

import asyncio
import itertools

import pytest
from PySide6.QtCore import QRectF

from cks_desktop.ui.graph.view import GraphView
from tests.ui.graph.conftest import until
from tests.ui.graph.test_view import _dialog, open_view


def small_graph(store, n: int = 6) -> str:
    """A hub with spokes (the screenshot's shape: labels crowd at the hub), 2 relations per spoke pair."""
    sid = store.create_session("small").id
    ops = [{"op": "add_object", "type": ("Person", "Place", "Paper")[i % 3], "name": f"Object number {i}",
            "label": f"$n{i}"} for i in range(n)]
    ops += [{"op": "add_relation", "source": "$n0", "target": f"$n{i}",
             "type": ("worked_in", "discovered", "wrote")[i % 3]} for i in range(1, n)]
    store.apply(sid, ops, "model")
    return sid


def frame_now(view: GraphView) -> None:
    """Draw the base frame and the overlay now (what a paint event does), synchronously."""
    view.canvas.repaint()


def overlaps(rects: list[QRectF], slack: float = 2.0) -> list[tuple[QRectF, QRectF]]:
    """Pairs that overlap by more than ``slack`` px in both directions (halos may touch)."""
    out = []
    for a, b in itertools.combinations(rects, 2):
        r = a.intersected(b)
        if r.width() > slack and r.height() > slack:
            out.append((a, b))
    return out


@pytest.mark.asyncio
@pytest.mark.parametrize("n", [3, 6, 10])
async def test_fit_fills_the_free_canvas_for_a_small_graph(store, registry, n: int) -> None:
    sid = small_graph(store, n)
    async with open_view(store, registry, sid) as view:
        canvas = view.canvas
        for covered in (0, 300):  # the inspector sheet over the right part, then not
            canvas.covered_right = covered
            canvas.fit()
            vp = canvas.viewport
            free_w, free_h = vp.width - covered, vp.height
            x0, y0, x1, y1 = view.model.bounds()
            fill = max((x1 - x0) * vp.scale / free_w, (y1 - y0) * vp.scale / free_h)
            assert fill >= 0.7, (n, covered, fill)
            for i in view.model.nodes():  # and all of it inside the free part
                sx, sy = vp.to_screen(view.model.xs[i], view.model.ys[i])
                assert 0 <= sx <= free_w and 0 <= sy <= free_h


@pytest.mark.asyncio
async def test_labels_at_fit_do_not_overlap_and_each_edge_label_is_drawn_once(store, registry) -> None:
    sid = small_graph(store, 8)
    async with open_view(store, registry, sid) as view:
        canvas = view.canvas
        canvas.fit()
        frame_now(view)
        r = canvas.renderer
        assert r.last_detail.labels and r.last_detail.edge_labels
        assert len(r.placed_labels) == 8  # a small graph at fit: every name readable
        rects = r.placed_labels + list(r.placed_edge_labels.values())
        assert not overlaps(rects)
        # hovering the hub: the overlay labels only what the frame did not, and nothing twice
        hub = view.model.index[view.model.node_id(0)]
        canvas._hover = hub
        frame_now(view)
        drawn_base = set(r.placed_edge_labels)
        drawn_overlay = set(canvas.overlay.placed_edge_labels)
        assert not drawn_base & drawn_overlay
        assert not overlaps(list(canvas.overlay.placed_edge_labels.values()))


@pytest.mark.asyncio
async def test_many_labels_in_a_crowded_view_never_overlap(store, registry, session) -> None:
    async with open_view(store, registry, session) as view:  # the 40-object sample graph
        canvas = view.canvas
        canvas.fit()
        frame_now(view)
        r = canvas.renderer
        if not r.last_detail.labels:  # zoom until labels are granted
            canvas.viewport.scale = 1.2
            frame_now(view)
        assert r.placed_labels
        assert not overlaps(r.placed_labels + list(r.placed_edge_labels.values()))


@pytest.mark.asyncio
async def test_the_empty_state_offers_actions_that_work(store, registry) -> None:
    sid = store.create_session("empty").id
    async with open_view(store, registry, sid) as view:
        empty = view.empty_state
        assert empty.isVisible()
        texts = [b.text() for b in (empty.add_button, empty.import_button, empty.ask_button)]
        assert texts == ["Add an object (A)", "Import a graph…", "Ask the assistant"]
        asked, imported = [], []
        view.assistantRequested.connect(lambda: asked.append(1))
        view.importRequested.connect(lambda: imported.append(1))
        empty.ask_button.click()
        empty.import_button.click()
        assert asked == [1] and imported == [1]
        # the card sits in the free part of the canvas
        g = empty.geometry()
        assert 0 <= g.left() and g.right() <= view.canvas.width()
        # Add: the same dialog as the toolbar's Add; the object it adds hides the card
        empty.add_button.click()
        dialog = await _dialog(view, "newObjectDialog")
        dialog.type_edit.setCurrentText("Person")
        dialog.name_edit.setText("Ada")
        dialog.accept()
        await until(view.changed, lambda: view.model.node_count == 1, 20)
        assert not empty.isVisible()
        assert "Ada" in view.object_names()


def test_many_types_stay_distinguishable_by_colour_and_shape() -> None:
    from cks_desktop.ui.graph.palette import TYPE_COLOURS, assign_colours, assign_marks

    names = [f"Type {i}" for i in range(2 * len(TYPE_COLOURS))]
    marks = assign_marks(names)
    assert len(set(marks.values())) == len(names)  # no two types share colour AND shape
    assert {shape for _, shape in marks.values()} == {"disc", "square"}
    few = ["Person", "Company", "Place"]  # a session's first colours are what they always were
    assert assign_colours(few) == {n: c for n, (c, _) in assign_marks(few).items()}
    assert all(shape == "disc" for _, shape in assign_marks(names[:len(TYPE_COLOURS)]).values())


@pytest.mark.asyncio
async def test_types_past_the_palette_are_drawn_as_squares(store, registry) -> None:
    from cks_desktop.ui.graph.palette import TYPE_COLOURS

    sid = store.create_session("many types").id
    n = len(TYPE_COLOURS) + 3
    store.apply(sid, [{"op": "add_object", "type": f"Kind {i:02d}", "name": f"K{i}"} for i in range(n)], "model")
    async with open_view(store, registry, sid) as view:
        style = view.canvas.style_
        assert len(style.square_types) == 3
        assert view.legend.list.count() == n
