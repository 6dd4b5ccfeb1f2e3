"""The bundled fonts (Inter for text, JetBrains Mono for code; SIL OFL, resources/fonts/).

Loaded once with ``QFontDatabase.addApplicationFont`` (about 5 ms for the six files); the app font
becomes Inter at the *system's* point size (at least the type scale's minimum), so a person's
font-size choice is kept and nothing is sized in pixels (LOOK.md pitfall 1). A font file that
cannot be read is logged and skipped: the app then draws with the system font.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtGui import QFont, QFontDatabase
from PySide6.QtWidgets import QApplication

from cks_desktop.ui.theme.tokens import Tokens

log = logging.getLogger(__name__)
FONTS_DIR = Path(__file__).resolve().parent.parent.parent / "resources" / "fonts"
_loaded: dict[str, list[str]] = {}
_system_point_size: float | None = None


def load_bundled_fonts() -> dict[str, list[str]]:
    """Register every bundled font file once; returns file name → families it added."""
    if _loaded:
        return _loaded
    for path in sorted(FONTS_DIR.glob("*.[ot]tf")):
        font_id = QFontDatabase.addApplicationFont(str(path))
        if font_id < 0:
            log.warning("could not load the bundled font %s", path.name)
            continue
        _loaded[path.name] = list(QFontDatabase.applicationFontFamilies(font_id))
    return _loaded


def families() -> set[str]:
    return {family for names in load_bundled_fonts().values() for family in names}


def system_point_size() -> float:
    """The desktop's font size, remembered before the app font replaces it."""
    global _system_point_size
    if _system_point_size is None:
        size = QApplication.font().pointSizeF()
        _system_point_size = size if size > 0 else 10.0
    return _system_point_size


def base_point_size(tokens: Tokens) -> float:
    return max(system_point_size(), float(tokens.type_scale["min_base_pt"]))


def apply_app_font(app: QApplication, tokens: Tokens) -> QFont:
    """Inter (if it loaded) at the base size, for every widget."""
    size = base_point_size(tokens)
    font = QFont(app.font())
    if tokens.fonts["text"] in families():
        font.setFamilies([tokens.fonts["text"], *font.families()])
    font.setPointSizeF(size)
    app.setFont(font)
    return font


def code_font(tokens: Tokens) -> QFont:
    """JetBrains Mono (or the system's fixed font) at the code scale of the base size."""
    font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
    if tokens.fonts["code"] in families():
        font.setFamilies([tokens.fonts["code"], *font.families()])
    font.setPointSizeF(round(base_point_size(tokens) * float(tokens.type_scale["code"]), 1))
    return font
