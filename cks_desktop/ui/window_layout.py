"""How wide the sessions list and the chat dock are, so the graph keeps the middle of the window.

The graph is what the app is for: at 1280×800 it gets at least half the window's width, and at
1024×700 the sessions list, the graph and the chat are all still usable. ``dock_widths`` is the
split for a window of a given width; ``sanitised`` checks a layout restored from the settings
(saved by an older version, on another screen, or dragged to an extreme) and gives the split
again when the docks would squeeze the graph below its share or below its minimum. Qt-free
arithmetic; the window applies it with ``resizeDocks``.
"""

from __future__ import annotations

from dataclasses import dataclass

GRAPH_SHARE = 0.5  # of the window's width, at least, when the window is wide enough for it
GRAPH_MIN = 420  # px: below this the graph toolbar folds most of its actions away
SESSIONS = (160, 0.16, 240)  # min px, share of the window, max px
CHAT = (320, 0.32, 480)
SESSIONS_MIN, CHAT_MIN = 150, 300  # the docks' minimum widths (a narrower chat wraps every word)


@dataclass(frozen=True)
class Split:
    sessions: int
    chat: int


def _share(width: int, bounds: tuple[int, float, int]) -> int:
    low, share, high = bounds
    return max(low, min(high, int(width * share)))


def dock_widths(window_width: int, *, sessions_folded_width: int | None = None) -> Split:
    """The sessions and chat widths for a window ``window_width`` wide (the rail's width when folded)."""
    sessions = sessions_folded_width if sessions_folded_width is not None else _share(window_width, SESSIONS)
    chat = _share(window_width, CHAT)
    graph = window_width - sessions - chat
    wanted = max(GRAPH_MIN, int(window_width * GRAPH_SHARE)) if window_width >= 2 * GRAPH_MIN else GRAPH_MIN
    short = wanted - graph
    if short > 0:  # take it from the chat first (down to its minimum), then from the sessions list
        give = min(short, chat - CHAT_MIN)
        chat -= max(0, give)
        short -= max(0, give)
        if short > 0 and sessions_folded_width is None:
            sessions -= max(0, min(short, sessions - SESSIONS_MIN))
    return Split(sessions, chat)


def sanitised(window_width: int, sessions: int, chat: int, *, sessions_folded_width: int | None = None) -> Split | None:
    """None when a restored split leaves the graph its share; else the split to use instead."""
    graph = window_width - sessions - chat
    wanted = dock_widths(window_width, sessions_folded_width=sessions_folded_width)
    floor = window_width - wanted.sessions - wanted.chat
    if graph >= min(floor, max(GRAPH_MIN, int(window_width * GRAPH_SHARE))) and chat >= min(CHAT_MIN, wanted.chat):
        return None
    return wanted
