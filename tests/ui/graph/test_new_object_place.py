"""A new object a tool or another process writes appears where the person can see it: inside the
canvas's free part (not under the inspector sheet, not at or past the edge) and never under the legend."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRectF

from tests.ui.graph.conftest import until
from tests.ui.graph.test_fit_labels_and_empty_graph import small_graph
from tests.ui.graph.test_view import open_view, screen_pos

MARGIN = 12.0  # a node's radius and its ring: the centre must be this far inside the edge


def _legend_rect(view) -> QRectF:
    legend = view.legend  # a sibling of the canvas on the stage, whose origin is the canvas's
    return QRectF(legend.geometry()) if legend.isVisible() else QRectF()


@pytest.mark.asyncio
@pytest.mark.parametrize("covered", [0, 300])
async def test_new_objects_appear_in_the_free_canvas_and_never_under_the_legend(store, registry, covered: int) -> None:
    sid = small_graph(store, 10)
    async with open_view(store, registry, sid) as view:
        canvas = view.canvas
        canvas.covered_right = covered
        canvas.fit()
        existing = list(view.model.index)
        ops: list[dict[str, object]] = [{"op": "add_object", "type": "Place", "name": f"Lonely place {i}"}
                                        for i in range(4)]
        for k, oid in enumerate(existing):  # one new neighbour for every object, the edge ones too
            ops += [{"op": "add_object", "type": "Paper", "name": f"New paper {k}", "label": f"$p{k}"},
                    {"op": "add_relation", "source": oid, "target": f"$p{k}", "type": "wrote"}]
        created = store.apply(sid, ops, "model").created
        names = {f"Lonely place {i}" for i in range(4)} | {f"New paper {k}" for k in range(len(existing))}
        await until(view.changed, lambda: names <= set(view.object_names()))
        vp = canvas.viewport
        free = QRectF(MARGIN, MARGIN, vp.width - covered - 2 * MARGIN, vp.height - 2 * MARGIN)
        legend = _legend_rect(view)
        assert not legend.isEmpty()  # the legend card is there to be kept clear of
        new_ids = [oid for oid in view.model.index if oid not in existing]
        assert len(new_ids) == len(names) and created
        for oid in new_ids:
            p = screen_pos(view, oid)
            assert free.contains(p), (oid, p, free)
            assert not legend.contains(p), (oid, p, legend)
