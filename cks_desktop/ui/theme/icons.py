"""Icons: glyphs of the Phosphor set (MIT) that ships inside the ``qtawesome`` package.

Why not ``qtawesome.icon()`` itself: importing qtawesome imports QtPy, whose ``from PySide6.QtX
import *`` builds every lazy enum of PySide6 (about 140 ms), and its first icon loads all eleven
icon fonts (about 40 ms) — together a fifth of the 1 s start-up budget, before the window shows.
The same font file and charmap, read directly, cost about 4 ms; the glyph is painted by a small
``QIconEngine`` the way qtawesome's ``CharIconPainter`` does. The icon *set* is qtawesome's.

Colours are always explicit (LOOK.md pitfall 7): ``icon(name, color)`` takes a token name or a
``#RRGGBB``, with its own disabled and active shades. ``bind(target, name, role)`` sets the icon on
a QAction or button and remembers it, so a theme switch re-makes every bound icon in its new
colours (``rebind_all``, called by the theme manager).
"""

from __future__ import annotations

import importlib.util
import json
import logging
import sys
import weakref
from pathlib import Path
from typing import Any, Callable

from PySide6.QtCore import QPoint, QRect, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontDatabase, QIcon, QIconEngine, QPainter, QPixmap

log = logging.getLogger(__name__)
PHOSPHOR_TTF = "phosphor-1.3.0.ttf"
PHOSPHOR_CHARMAP = "phosphor-charmap-1.3.0.json"
_font_family: str | None = None
_charmap: dict[str, str] = {}
_bound: "weakref.WeakKeyDictionary[Any, tuple[str, str]]" = weakref.WeakKeyDictionary()


def phosphor_dir() -> Path | None:
    """qtawesome's fonts folder, found without importing qtawesome (see the module docstring)."""
    candidates = []
    spec = importlib.util.find_spec("qtawesome")
    if spec is not None and spec.submodule_search_locations:
        candidates.append(Path(list(spec.submodule_search_locations)[0]) / "fonts")
    bundle = getattr(sys, "_MEIPASS", None)  # the PyInstaller bundle copies only these two files
    if bundle:
        candidates.append(Path(bundle) / "qtawesome" / "fonts")
    return next((folder for folder in candidates if (folder / PHOSPHOR_TTF).is_file()), None)


def _ensure_font() -> str | None:
    global _font_family
    if _font_family is not None or _charmap:
        return _font_family
    folder = phosphor_dir()
    if folder is None:
        log.warning("qtawesome's Phosphor font was not found; icons are left out")
        _charmap["?"] = "?"  # remember the miss
        return None
    font_id = QFontDatabase.addApplicationFont(str(folder / PHOSPHOR_TTF))
    found = QFontDatabase.applicationFontFamilies(font_id) if font_id >= 0 else []
    raw = json.loads((folder / PHOSPHOR_CHARMAP).read_text(encoding="utf-8"))
    _charmap.update({name: chr(int(code, 16)) for name, code in raw.items()})
    _font_family = found[0] if found else None
    return _font_family


def has_icon(name: str) -> bool:
    _ensure_font()
    return name in _charmap


class GlyphEngine(QIconEngine):
    """Paints one glyph in a colour per icon mode (normal, disabled, active, selected)."""

    def __init__(self, char: str, family: str, colours: dict[QIcon.Mode, QColor], scale: float = 0.9) -> None:
        super().__init__()
        self.char, self.family, self.colours, self.scale = char, family, colours, scale

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        painter.save()
        font = QFont(self.family)
        font.setPixelSize(max(1, round(min(rect.width(), rect.height()) * self.scale)))
        painter.setFont(font)
        painter.setPen(self.colours.get(mode, self.colours[QIcon.Mode.Normal]))
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing)
        painter.drawText(rect, int(Qt.AlignmentFlag.AlignCenter), self.char)
        painter.restore()

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        pm = QPixmap(size)
        if size.isEmpty():  # Qt asks for 0×0 pixmaps at times (a hidden tool button): nothing to paint
            return pm
        pm.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pm)
        self.paint(painter, QRect(QPoint(0, 0), size), mode, state)
        painter.end()
        return pm

    def clone(self) -> "GlyphEngine":
        return GlyphEngine(self.char, self.family, dict(self.colours), self.scale)


ColourLookup = Callable[[str], QColor]


def make_icon(name: str, colour: QColor, *, disabled: QColor | None = None, active: QColor | None = None) -> QIcon:
    """The Phosphor icon ``name`` (e.g. ``"magnifying-glass"``) in explicit colours; a null icon if
    the set is missing or has no such name (logged once: a typo is a bug, not a crash)."""
    family = _ensure_font()
    char = _charmap.get(name)
    if family is None or char is None:
        if family is not None:
            log.warning("no Phosphor icon named %r", name)
        return QIcon()
    if disabled is None:
        disabled = QColor(colour)
        disabled.setAlphaF(0.38)
    colours = {QIcon.Mode.Normal: colour, QIcon.Mode.Disabled: disabled,
               QIcon.Mode.Active: active or colour, QIcon.Mode.Selected: active or colour}
    return QIcon(GlyphEngine(char, family, colours))


def bind(target: Any, name: str, role: str, lookup: Callable[[str, str], QIcon]) -> QIcon:
    """Set ``target``'s icon (a QAction or button) and remember it for the next theme switch."""
    icon = lookup(name, role)
    target.setIcon(icon)
    _bound[target] = (name, role)
    return icon


def rebind_all(lookup: Callable[[str, str], QIcon]) -> int:
    """Re-make every bound icon (after a theme switch); returns how many were re-made."""
    count = 0
    for target, (name, role) in list(_bound.items()):
        try:
            target.setIcon(lookup(name, role))
        except RuntimeError:  # the C++ object is gone
            _bound.pop(target, None)
            continue
        count += 1
    return count
