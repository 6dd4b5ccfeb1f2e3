"""The graph view coloured by community: the canvas's colours, the legend's communities, a summary
shown on click, and Summarise asking a real fake provider (OpenAI's wire) only for what is missing."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QColor

from cks_desktop.agent.providers import ProviderHolder
from cks_desktop.graph.store import GraphStore
from cks_desktop.settings import Settings
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.ui.graph.community_mode import colour_of
from tests.fakes.providers import make_fake, provider_for
from tests.fakes.summariser import Summariser
from tests.retrieval.test_themes import _world
from tests.ui.graph.test_view import open_view, screen_pos


async def _until(check: Any, seconds: float = 10.0) -> None:
    """Wait (bounded) for ``check()``: the reload runs after the edits pause, then on a worker."""
    loop = asyncio.get_running_loop()
    end = loop.time() + seconds
    while not check():
        assert loop.time() < end, "the legend did not follow the edit"
        await asyncio.sleep(0.05)


def _pixel(view: Any, oid: str) -> QColor:
    image = view.canvas.grab().toImage()
    p = screen_pos(view, oid)
    ratio = image.devicePixelRatio()
    return image.pixelColor(int(p.x() * ratio), int(p.y() * ratio))


def _close(a: QColor, b: QColor) -> bool:
    return max(abs(a.red() - b.red()), abs(a.green() - b.green()), abs(a.blue() - b.blue())) <= 24


@pytest.mark.slow
@pytest.mark.asyncio
async def test_colour_by_community_lists_them_and_summarise_asks_only_the_missing(
        store: GraphStore, registry: ToolRegistry, tmp_path: Path) -> None:
    sid = _world(store)
    ids = {o.name: o.id for o in store.all_objects(sid)}
    model = Summariser()
    with make_fake("openai") as fake:
        fake.side_turn = model
        holder = ProviderHolder(Settings.load(tmp_path / "settings.json"), None,
                                lambda *_: provider_for(fake), pinned="openai")
        try:
            async with open_view(store, registry, sid) as view:
                view.communities.providers = holder
                view.canvas.fit()
                by_type = _pixel(view, ids["Aurora"])
                view.communities_action.trigger()
                await view.communities.task
                legend = view.legend
                assert legend.title.text() == "Communities" and legend.list.count() == 2
                rows = [legend.list.item(i).text() for i in range(2)]
                assert rows == ["Community 1  (4)", "Community 2  (4)"]
                assert "Not summarised yet" in legend.summary.text() and legend.summarise.text() == "Summarise 2"
                one, two = (_pixel(view, ids[n]) for n in ("Aurora", "Ilse Berg"))
                first_aurora = any(o.name == "Aurora" for o in view.communities._estimate.communities[0].members)
                aurora_colour, ilse_colour = (colour_of(1), colour_of(2)) if first_aurora else (colour_of(2), colour_of(1))
                assert _close(one, QColor(aurora_colour)) and _close(two, QColor(ilse_colour)) and not _close(one, two)
                assert _close(_pixel(view, ids["Nobody Related"]), view.canvas.style_.untyped)

                model.fail_summary = 1  # the provider fails: one line, nothing lost, the button back
                legend.summarise.click()
                await view.communities.task
                assert "The summaries written so far are kept." in view.status.text()
                assert legend.summarise.text() == "Summarise 2" and legend.summarise.isEnabled()
                model.fail_summary = None
                legend.summarise.click()
                await view.communities.task
                assert len(model.summaries) == 3 and legend.summarise.isHidden()
                titles = [legend.list.item(i).text() for i in range(2)]
                assert all("circle" in t for t in titles)  # the titles the model wrote from what it was sent
                legend.list.setCurrentRow(1)
                assert legend.summary.text() and "Not summarised" not in legend.summary.text()

                store.apply(sid, [{"op": "add_relation", "source": ids["Nobody Related"], "target": ids["Aurora"],
                                   "type": "sailed_on"}], "test")  # the communities follow the edit
                await _until(lambda: any(legend.list.item(i).text().endswith("(5)") for i in range(2)))
                assert len(model.summaries) == 3  # the changed community is not summarised behind the person's back
                assert "Summarise 1" == legend.summarise.text()

                view.communities_action.trigger()  # back to types: the first colour again
                assert legend.title.text() == "Types" and legend.list.count() == 5
                assert _close(_pixel(view, ids["Aurora"]), by_type)
        finally:
            await holder.aclose()
