"""The app's visual design, applied: Fusion, a QPalette and ONE style sheet from the tokens.

``install(app, mode)`` (app.py, before any window) loads the bundled fonts, sets the Fusion style,
the palette, the app-wide style sheet and the icon colours for the effective scheme. ``mode`` is
the person's choice, ``"system"`` (the default: follows ``QStyleHints.colorScheme()`` and its
``colorSchemeChanged``), ``"light"`` or ``"dark"``; View → Theme changes it live
(``theme.menu.ThemeMenu``) and it is kept in settings as ``ui.theme``.

For other modules:

- ``manager().themeChanged(str)`` fires with ``"light"``/``"dark"`` after every switch: re-polish
  what has colours baked in (QTextCharFormats, pixmaps); icons made through ``icon``/``bind_icon``
  and widgets that read ``palette()`` at paint time follow by themselves (LOOK.md pitfall 7);
- ``color(token)`` / ``hex_color(token)`` — a token of the current scheme (``"muted"``, ``"danger"``…);
- ``icon(name, role)`` / ``bind_icon(target, name, role)`` — a Phosphor icon in a token's colour;
- ``set_role(widget, role, tone)`` / ``set_invalid(widget, bool)`` — the style sheet's roles;
- ``current_tokens()``, ``spacing(key)``, ``radius(key)``, ``size(key)``, ``point_size(scale_key)``, ``code_font()``.

Nothing here blocks or touches the network; the whole install costs a few milliseconds
(measured in /work/notes and docs/benchmarks.md).
"""

from __future__ import annotations

import logging
from typing import Any

from PySide6.QtCore import QObject, Qt, Signal
from PySide6.QtGui import QColor, QFont, QGuiApplication, QIcon, QPalette
from PySide6.QtWidgets import QApplication, QStyleFactory, QWidget

from cks_desktop.ui.theme import fonts, icons, images, qss
from cks_desktop.ui.theme.tokens import Tokens, load

log = logging.getLogger(__name__)
MODES = ("system", "light", "dark")
# The colour token each icon role is drawn in: toolbar/menu icons are muted, "accent" for the
# one thing to do next, "on_accent" for icons on an accent button.
ICON_ROLES = {"normal": "muted", "text": "text", "accent": "accent", "on_accent": "on_accent",
              "danger": "danger", "success": "success", "warning": "warning", "faint": "faint"}


def normal_mode(value: Any) -> str:
    """A stored ``ui.theme`` value, or "system" for anything unknown (a hand-edited file)."""
    return value if isinstance(value, str) and value in MODES else "system"


class ThemeManager(QObject):
    themeChanged = Signal(str)  # the effective scheme after a switch: "light" or "dark"
    modeChanged = Signal(str)  # the person's choice: "system", "light" or "dark"

    def __init__(self, app: QApplication, tokens: Tokens) -> None:
        super().__init__(app)
        self.app = app
        self.tokens = tokens
        self.mode = "system"
        self.scheme = ""
        self.stylesheet = ""
        hints = QGuiApplication.styleHints()
        self._hints = hints
        if hasattr(hints, "colorSchemeChanged"):
            hints.colorSchemeChanged.connect(self._system_changed)

    # -- the scheme ---------------------------------------------------------------------
    def system_scheme(self) -> str:
        scheme = self._hints.colorScheme() if hasattr(self._hints, "colorScheme") else None
        return "dark" if scheme == Qt.ColorScheme.Dark else "light"

    def set_mode(self, mode: str) -> None:
        """Follow the system, or force light/dark; re-applies only when the scheme changes."""
        mode = normal_mode(mode)
        changed_mode = mode != self.mode
        self.mode = mode
        self._request_window_scheme(mode)
        self.apply(self.system_scheme() if mode == "system" else mode)
        if changed_mode:
            self.modeChanged.emit(mode)

    def _request_window_scheme(self, mode: str) -> None:
        """Tell the platform (title bars on Windows/macOS) which scheme the app draws, Qt 6.8+."""
        hints = self._hints
        if not hasattr(hints, "setColorScheme"):
            return
        self._requesting = True
        try:
            if mode == "system":
                hints.unsetColorScheme()
            else:
                hints.setColorScheme(Qt.ColorScheme.Dark if mode == "dark" else Qt.ColorScheme.Light)
        finally:
            self._requesting = False

    def _system_changed(self, _scheme: object) -> None:
        if self.mode == "system" and not getattr(self, "_requesting", False):
            self.apply(self.system_scheme())

    def apply(self, scheme: str, *, force: bool = False) -> None:
        if scheme == self.scheme and not force:
            return
        self.scheme = scheme
        colours = self.tokens.palette(scheme)
        self.app.setPalette(build_palette(colours))
        files = images.write_images(scheme, colours)
        self.stylesheet = qss.build(self.tokens, scheme, fonts.base_point_size(self.tokens), files)
        self.app.setStyleSheet(self.stylesheet)
        icons.rebind_all(self.icon)
        self.themeChanged.emit(scheme)

    # -- lookups --------------------------------------------------------------------------
    def hex_color(self, token: str) -> str:
        return self.tokens.palette(self.scheme or "light")[token]

    def color(self, token: str) -> QColor:
        return QColor(self.hex_color(token))

    def icon(self, name: str, role: str = "normal") -> QIcon:
        token = ICON_ROLES.get(role, role)
        return icons.make_icon(name, self.color(token), disabled=self.color("disabled_text"))


def build_palette(c: dict[str, str]) -> QPalette:
    """The QPalette of a scheme: what Fusion and custom-painted widgets (the graph) draw with."""
    pal = QPalette()
    R = QPalette.ColorRole
    roles = {
        R.Window: "background", R.WindowText: "text", R.Base: "background", R.AlternateBase: "surface_alt",
        R.Text: "text", R.Button: "surface", R.ButtonText: "text", R.BrightText: "on_accent",
        R.ToolTipBase: "surface", R.ToolTipText: "text", R.PlaceholderText: "faint",
        R.Highlight: "accent", R.HighlightedText: "on_accent", R.Link: "link", R.LinkVisited: "link",
        R.Light: "surface", R.Midlight: "border", R.Mid: "border_strong", R.Dark: "border_strong",
        R.Shadow: "border_strong",
    }
    if hasattr(R, "Accent"):
        roles[R.Accent] = "accent"
    for role, token in roles.items():
        pal.setColor(role, QColor(c[token]))
    G = QPalette.ColorGroup.Disabled
    for role in (R.Text, R.WindowText, R.ButtonText):
        pal.setColor(G, role, QColor(c["disabled_text"]))
    pal.setColor(G, R.Highlight, QColor(c["border_strong"]))
    return pal


_manager: ThemeManager | None = None


def install(app: QApplication, mode: str = "system") -> ThemeManager:
    """Apply the design to ``app`` (once; later calls only change the mode)."""
    global _manager
    if _manager is None or _manager.app is not app:
        tokens = load()
        fonts.load_bundled_fonts()
        fonts.system_point_size()  # remember it before the app font changes it
        style = QStyleFactory.create("Fusion")
        if style is not None:
            app.setStyle(style)
        fonts.apply_app_font(app, tokens)
        _manager = ThemeManager(app, tokens)
    _manager.set_mode(mode)
    return _manager


def uninstall() -> None:
    """Undo ``install`` (tests share one QApplication)."""
    global _manager
    if _manager is None:
        return
    app = _manager.app
    app.setStyleSheet("")
    app.setPalette(QPalette())
    _manager.deleteLater()
    _manager = None


def manager() -> ThemeManager | None:
    return _manager


def current_scheme() -> str:
    return _manager.scheme if _manager is not None else "light"


def current_tokens() -> Tokens:
    return _manager.tokens if _manager is not None else load()


def hex_color(token: str) -> str:
    return current_tokens().palette(current_scheme())[token]


def color(token: str) -> QColor:
    return QColor(hex_color(token))


def icon(name: str, role: str = "normal") -> QIcon:
    """A Phosphor icon (e.g. "magnifying-glass") in the current scheme's colour for ``role``."""
    token = ICON_ROLES.get(role, role)
    return icons.make_icon(name, color(token), disabled=color("disabled_text"))


def bind_icon(target: Any, name: str, role: str = "normal") -> QIcon:
    """Set ``target``'s icon and re-make it on every theme switch."""
    return icons.bind(target, name, role, icon)


def set_role(widget: QWidget, role: str, tone: str = "") -> None:
    """Give ``widget`` a style-sheet role (see ``theme.qss``) and re-polish it."""
    widget.setProperty("cksRole", role)
    if tone:
        widget.setProperty("cksTone", tone)
    _repolish(widget)


def set_invalid(widget: QWidget, invalid: bool) -> None:
    if bool(widget.property("invalid")) == invalid:
        return
    widget.setProperty("invalid", invalid)
    _repolish(widget)


def _repolish(widget: QWidget) -> None:
    style = widget.style()
    style.unpolish(widget)
    style.polish(widget)
    widget.update()


def spacing(key: str) -> int:
    return int(current_tokens().spacing[key])


def radius(key: str) -> int:
    return int(current_tokens().radius[key])


def size(key: str) -> int:
    return int(current_tokens().size[key])


def point_size(scale_key: str) -> float:
    return round(fonts.base_point_size(current_tokens()) * float(current_tokens().type_scale[scale_key]), 1)


def code_font() -> QFont:
    return fonts.code_font(current_tokens())
