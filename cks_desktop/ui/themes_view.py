"""The main themes of the session's graph, shown in the Ask window (``ui/ask_view.py``).

*Main themes* (the Ask window's button, ``/themes`` in the chat input, Chat → *Main themes of the
graph…*) first counts the communities and says how many model calls a run takes
(``runtime/themes.py``'s estimate), asks to go on (Esc is Cancel), then runs the themes use case on
the window's tasks, a bar counting the calls made out of those stated, the button reading Stop
meanwhile (the summaries written before a Stop are kept). Each theme is shown with its
summary and its numbered citations: each number is a link, and a row under *Sources*, that opens the
document viewer at the passage, as an answer's citations do. A theme naming no community it was
given is listed under *Not supported*, never with sources.

This module holds what the window needs besides the Ask window itself: the door to the use case
(``ThemesDoor``, built by the main window on its services) and the themes' markup. Titles, summaries
and document names are untrusted (the model wrote them from the documents): every one is escaped.
"""

from __future__ import annotations

import html
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cks_desktop.plural import counted

if TYPE_CHECKING:
    from cks_desktop.runtime.themes import CallsDone, Estimate, Themes

THEMES_COMMAND = "/themes"
EMPTY_GRAPH = ("This session's graph has no related objects, so it has no themes yet: extract knowledge from a "
               "document first (File → Extract knowledge…).")
NO_PROVIDER = "No model provider is set up yet: choose one in Settings → Providers to find the main themes."


def is_themes_command(text: str) -> bool:
    """True for a chat message that is ``/themes`` alone."""
    return text.strip() == THEMES_COMMAND


@dataclass(frozen=True)
class ThemesDoor:
    """The themes use case for the window's current session, and whether a model is chosen."""

    session: Callable[[], str]
    estimate: Callable[[str], Awaitable["Estimate"]]
    run: Callable[[str, "Estimate", "CallsDone"], Awaitable["Themes"]]
    configured: Callable[[], bool]


def where(c: Any) -> str:
    """``document (page p, characters a–b)`` of a citation (an answer's or a theme's)."""
    page = f"page {c.page}, " if c.page is not None else ""
    return f"{c.document} ({page}characters {c.start:,}–{c.end:,})"


def numbered(themes: "Themes") -> list[Any]:
    """Every passage the themes cite, once, in the order they are first cited: source n is item n-1."""
    out: list[Any] = []
    for theme in themes.themes:
        out.extend(c for c in theme.citations if c not in out)
    return out


def themes_html(themes: "Themes", sources: list[Any]) -> str:
    """The themes as escaped markup: a title, the summary, the numbered citations as ``cite:n`` links."""
    head = (f"<p>{counted(len(themes.themes), 'main theme')} of {counted(len(themes.communities), 'community', 'communities')}"
            f" ({counted(themes.calls, 'model call')} made).</p>")
    out = [head]
    for i, theme in enumerate(themes.themes, 1):
        out.append(f"<h3>{i}. {html.escape(theme.title)}</h3>")
        out.append(f"<p>{html.escape(theme.summary)}</p>")
        links = [f'<a href="cite:{sources.index(c) + 1}">[{sources.index(c) + 1}]</a> {html.escape(c.document)}'
                 for c in theme.citations]
        if links:
            out.append("<p>" + " · ".join(links) + "</p>")
        else:
            out.append("<p><i>No passage is recorded for its communities.</i></p>")
    if not themes.themes:
        out.append("<p>The model found no theme it could tie to the graph's communities.</p>")
    return "".join(out)
