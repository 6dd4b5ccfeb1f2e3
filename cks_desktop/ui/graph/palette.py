"""Type colours: stable per type name, distinct within a session. Qt-free.

A colour comes from a hash of the type name, so "Person" is the same colour
in every session and after every restart; when two types of one session land
on the same colour, the later one (by name) takes the next free colour. The
twelve colours are mid-tone and saturated enough to read on both a light and
a dark window background, and distinguishable for the common forms of colour
blindness for the first eight (Okabe–Ito order first).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

TYPE_COLOURS: tuple[str, ...] = (
    "#0072B2",  # blue
    "#E69F00",  # orange
    "#009E73",  # bluish green
    "#CC79A7",  # reddish purple
    "#56B4E9",  # sky blue
    "#D55E00",  # vermillion
    "#8C6BB1",  # violet
    "#7F7F00",  # olive
    "#E0457B",  # raspberry
    "#1B9E9E",  # teal
    "#A0522D",  # sienna
    "#6B8E23",  # moss
)


def _slot(name: str) -> int:
    digest = hashlib.blake2s(name.casefold().encode("utf-8"), digest_size=4).digest()
    return int.from_bytes(digest, "big") % len(TYPE_COLOURS)


SHAPES: tuple[str, ...] = ("disc", "square")  # the shape of each round of the palette


def assign_marks(type_names: Iterable[str]) -> dict[str, tuple[str, str]]:
    """A (colour, shape) per type name: hashed, then de-duplicated in name order.

    The first twelve types get twelve different colours as discs; from the thirteenth on the
    palette starts again as squares, again de-duplicated, so two types of a session never share
    both colour and shape (up to 24 types; past that, pairs repeat and the legend tells them apart).
    """
    names = sorted(set(type_names), key=lambda n: (n.casefold(), n))
    rounds: list[set[int]] = [set()]
    out: dict[str, tuple[str, str]] = {}
    for name in names:
        slot = _slot(name)
        k = next((k for k, taken in enumerate(rounds) if len(taken) < len(TYPE_COLOURS)), None)
        if k is None:
            rounds.append(set())
            k = len(rounds) - 1
        taken = rounds[k]
        while slot in taken:
            slot = (slot + 1) % len(TYPE_COLOURS)
        taken.add(slot)
        out[name] = (TYPE_COLOURS[slot], SHAPES[min(k, len(SHAPES) - 1)])
    return out


def assign_colours(type_names: Iterable[str]) -> dict[str, str]:
    """A colour per type name (see ``assign_marks``: the first twelve are all different)."""
    return {name: colour for name, (colour, _shape) in assign_marks(type_names).items()}
