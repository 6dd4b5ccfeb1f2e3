"""Where the main window goes on the screen: all of it, frame included, inside the screen's
available area (without the panels and docks of the desktop).

A first start asks for 1280×800 and takes what the screen has (at 1024×700 the composer, the model
picker and Send are then on the screen without maximising); a window restored from the last run
keeps its size and place while they still fit, and otherwise shrinks and moves until they do (a
laptop that was on a larger monitor yesterday). Qt-free arithmetic on (x, y, width, height); the
window measures its frame and applies the result.
"""

from __future__ import annotations

from typing import NamedTuple

WANTED = (1280, 800)  # a first start's size, when the screen has room for it
# The window manager's frame before the window is shown, when Qt cannot know it yet: a title bar
# and thin borders; corrected once the window is shown and its real frame is known.
FRAME_GUESS = (8, 40)


class Rect(NamedTuple):
    x: int
    y: int
    width: int
    height: int


def fitted(available: Rect, window: Rect, frame: tuple[int, int]) -> Rect:
    """``window`` (its inside) moved and shrunk so that it and its ``frame`` (extra width, extra
    height) lie inside ``available``; unchanged when they already do. A window that must move is
    centred."""
    extra_w, extra_h = frame
    width = max(1, min(window.width, available.width - extra_w))
    height = max(1, min(window.height, available.height - extra_h))
    x, y = window.x, window.y
    inside = (available.x <= x and x + width + extra_w <= available.x + available.width
              and available.y <= y and y + height + extra_h <= available.y + available.height)
    if not inside or (width, height) != (window.width, window.height):
        x = available.x + (available.width - width - extra_w) // 2
        y = available.y + (available.height - height - extra_h) // 2
    return Rect(x, y, width, height)


def centred_on(owner: Rect, available: Rect, size: tuple[int, int], frame: tuple[int, int]) -> Rect:
    """A secondary window of ``size`` (its inside) shrunk to ``available`` and centred on
    ``owner`` (the window it belongs to, frame included), then moved only as far as it must to
    stay, frame included, inside ``available``."""
    extra_w, extra_h = frame
    width = max(1, min(size[0], available.width - extra_w))
    height = max(1, min(size[1], available.height - extra_h))
    x = owner.x + (owner.width - width - extra_w) // 2
    y = owner.y + (owner.height - height - extra_h) // 2
    x = max(available.x, min(x, available.x + available.width - width - extra_w))
    y = max(available.y, min(y, available.y + available.height - height - extra_h))
    return Rect(x, y, width, height)
