"""The design tokens (``resources/theme/tokens.json``) as typed, Qt-free values.

Why a JSON file: colours, spacing, radii and the type scale are data that a designer (or the
contrast test) reads without running the app; this module only parses and checks them. Colours
are ``#RRGGBB`` strings here; ``ui/theme`` turns them into a QPalette and the app's style sheet.

Every other module asks the theme for colours by token name (``theme.color("muted")``); nothing
in ``ui/`` spells a hex colour except the graph's colour-blind-safe type palette.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

TOKENS_FILE = Path(__file__).resolve().parent.parent.parent / "resources" / "theme" / "tokens.json"
SCHEMES = ("light", "dark")


@dataclass(frozen=True)
class Tokens:
    spacing: dict[str, int]
    radius: dict[str, int]
    size: dict[str, int]
    type_scale: dict[str, float]
    fonts: dict[str, str]
    palettes: dict[str, dict[str, str]]
    contrast: dict[str, Any]

    def palette(self, scheme: str) -> dict[str, str]:
        """The colours of ``scheme`` ("light" or "dark")."""
        return self.palettes[scheme]


@lru_cache(maxsize=1)
def load(path: Path = TOKENS_FILE) -> Tokens:
    """Read and check the tokens once per process (a broken file is a bug: it raises ValueError)."""
    data = json.loads(path.read_text(encoding="utf-8"))
    palettes = data["palettes"]
    keys = [set(palettes[s]) for s in SCHEMES]
    if keys[0] != keys[1]:
        raise ValueError(f"the light and dark palettes name different tokens: {sorted(keys[0] ^ keys[1])}")
    for scheme in SCHEMES:
        for name, value in palettes[scheme].items():
            parse_hex(value, f"{scheme}.{name}")
    return Tokens(spacing=dict(data["spacing"]), radius=dict(data["radius"]), size=dict(data["size"]),
                  type_scale=dict(data["type"]), fonts=dict(data["fonts"]), palettes=palettes,
                  contrast=dict(data["contrast"]))


def parse_hex(value: str, where: str = "") -> tuple[int, int, int]:
    text = value.lstrip("#")
    if not value.startswith("#") or len(text) != 6:
        raise ValueError(f"{where}: {value!r} is not a #RRGGBB colour")
    return int(text[0:2], 16), int(text[2:4], 16), int(text[4:6], 16)


def relative_luminance(value: str) -> float:
    """WCAG 2.x relative luminance of a ``#RRGGBB`` colour."""
    def channel(c: int) -> float:
        s = c / 255
        return s / 12.92 if s <= 0.04045 else ((s + 0.055) / 1.055) ** 2.4

    r, g, b = (channel(c) for c in parse_hex(value))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast_ratio(foreground: str, background: str) -> float:
    """WCAG contrast ratio, 1 … 21."""
    a, b = relative_luminance(foreground), relative_luminance(background)
    hi, lo = max(a, b), min(a, b)
    return (hi + 0.05) / (lo + 0.05)


def contrast_failures(tokens: Tokens) -> list[str]:
    """Every listed pair below its minimum, as readable sentences (empty: all pass)."""
    out = []
    for kind, minimum in (("text", tokens.contrast["min_text"]), ("placeholder", tokens.contrast["min_placeholder"])):
        for fg, bg in tokens.contrast[kind]:
            for scheme in SCHEMES:
                colours = tokens.palette(scheme)
                ratio = contrast_ratio(colours[fg], colours[bg])
                if ratio < minimum:
                    out.append(f"{scheme}: {fg} {colours[fg]} on {bg} {colours[bg]} is {ratio:.2f}:1 "
                               f"(needs {minimum}:1)")
    return out
