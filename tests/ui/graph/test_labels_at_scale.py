"""Graph labels never overlap at 5,000 objects: at fit (labels withheld or placed apart) and at
each zoom step in, every drawn name and relation label has its own rectangle."""

from __future__ import annotations

import pytest

from tests.ui.graph.conftest import sample_ops
from tests.ui.graph.test_fit_labels_and_empty_graph import overlaps
from tests.ui.graph.test_view import CountingRunner


@pytest.mark.slow
@pytest.mark.asyncio
async def test_labels_of_five_thousand_objects_never_overlap_at_any_zoom(store, registry) -> None:
    sid = store.create_session("five thousand").id
    store.apply(sid, sample_ops(5000), "model")
    import asyncio

    from cks_desktop.ui.graph.view import GraphView

    view = GraphView(store, registry, runner=CountingRunner())
    view.resize(1100, 700)
    view.show()
    try:
        await asyncio.wait_for(view.set_session(sid), 100)
        await asyncio.wait_for(view.sync.laid_out.wait(), 100)  # 5,000 objects: slow on a loaded machine
        canvas = view.canvas
        canvas.fit()
        labelled = 0
        for _step in range(12):
            canvas._render_frame()  # the whole base frame now (a big graph's is drawn over several turns)
            r = canvas.renderer
            rects = r.placed_labels + list(r.placed_edge_labels.values())
            labelled = max(labelled, len(r.placed_labels))
            assert not overlaps(rects), (canvas.viewport.scale, len(rects))
            canvas.zoom_by(1.8)  # zoom in about the centre
        assert labelled > 20  # zoomed in, names show
    finally:
        await view.aclose()
        view.close()
        view.deleteLater()
