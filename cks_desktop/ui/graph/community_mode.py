"""Colouring the graph view by community, and the legend's list of communities with their summaries.

The communities and the cached summaries come from the themes use case (``runtime/themes.py``)
on a worker thread; "Summarise" asks the chosen provider for the missing ones (one call each),
never on the event loop. A community's colour is the palette's colour of its number, so the
largest community is always the first colour; objects in no community are drawn untyped. An edit
to the graph recomputes them once the edits pause.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import QTimer
from PySide6.QtGui import QColor

from cks_desktop.graph.errors import StoreError
from cks_desktop.plural import counted
from cks_desktop.runtime.themes import ThemesUseCase
from cks_desktop.ui.graph.legend import CommunityRow, Legend
from cks_desktop.ui.graph.palette import TYPE_COLOURS

if TYPE_CHECKING:
    from cks_desktop.agent.providers import ProviderHolder
    from cks_desktop.runtime.themes import Estimate
    from cks_desktop.ui.graph.canvas import GraphCanvas


RELOAD_AFTER_MS = 400  # after the last change to the graph


def colour_of(number: int) -> str:
    return TYPE_COLOURS[(number - 1) % len(TYPE_COLOURS)]


class CommunityColouring:
    """The view's community mode: on, off, reload, summarise."""

    def __init__(self, store: Any, canvas: "GraphCanvas", legend: Legend,
                 spawn: Callable[[Coroutine[Any, Any, Any]], Any], say: Callable[[str], None]) -> None:
        self.themes = ThemesUseCase(store)
        self.canvas = canvas
        self.legend = legend
        self.spawn = spawn
        self.say = say
        self.providers: "ProviderHolder | None" = None  # set by the window: Summarise needs a model
        self.on = False
        self.session_id: str | None = None
        self._estimate: "Estimate | None" = None
        self.task: Any = None  # the last reload or summary run (a test awaits it)
        self._later = QTimer()
        self._later.setSingleShot(True)
        self._later.setInterval(RELOAD_AFTER_MS)
        self._later.timeout.connect(lambda: self._run(self.reload()))
        legend.summariseRequested.connect(lambda: self._run(self.summarise()))

    def _run(self, coro: Coroutine[Any, Any, Any]) -> None:
        self.task = self.spawn(coro)

    def set_on(self, on: bool, session_id: str | None) -> None:
        self.on = on
        self.session_id = session_id
        if on:
            self._run(self.reload())
        else:
            self._estimate = None
            self.canvas.set_communities(None)
            self.legend.show_types()

    def graph_changed(self) -> None:
        """The graph on screen changed: the communities follow, once the edits pause."""
        if self.on:
            self._later.start()

    def session_changed(self, session_id: str | None) -> None:
        self.session_id = session_id
        if self.on:
            self._run(self.reload())

    async def reload(self) -> None:
        session = self.session_id
        if not self.on or session is None:
            return
        try:
            estimate = await self.themes.estimate(session)
        except (ThemesUseCase.Error, StoreError) as exc:  # an unknown session, a team database
            self.say(str(exc))
            return
        if not self.on or session != self.session_id:
            return  # switched meanwhile
        self._estimate = estimate
        colours = {o.id: QColor(colour_of(c.number)) for c in estimate.communities for o in c.members}
        self.canvas.set_communities(colours)
        rows = []
        for c in estimate.communities:
            s = estimate.cached.get(c.content_hash)
            rows.append(CommunityRow(c.number, s.title if s else f"Community {c.number}", len(c.members),
                                     colour_of(c.number), s.summary if s else None))
        self.legend.set_communities(rows, can_summarise=self.providers is not None and self.providers.configured)

    async def summarise(self) -> None:
        session, estimate, holder = self.session_id, self._estimate, self.providers
        if session is None or estimate is None or holder is None:
            return
        from cks_desktop.llm.provider import ProviderError

        self.legend.summarise.setEnabled(False)
        self.say(f"Summarising {counted(estimate.summary_calls, 'community', 'communities')}…")
        try:
            provider = await holder.prepare()
            await self.themes.summaries(session, provider, estimate=estimate)
        except ProviderError as exc:
            self.say(f"{exc.message} The summaries written so far are kept.")
        except (ThemesUseCase.Error, ValueError) as exc:
            self.say(str(exc))
        else:
            self.say("Communities summarised.")
        await self.reload()
