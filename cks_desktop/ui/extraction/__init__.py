"""The window's part of document extraction: the progress bar in the status area with
Pause and Cancel (``progress``), the review panel before writing (``review``), and the controller
that runs an extraction for the Documents panel's "Extract knowledge" (``controller``). The pipeline
itself is Qt-free (``cks_desktop.extraction``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMenu

    from cks_desktop.ui.extraction.controller import ExtractionController
    from cks_desktop.ui.main_window import MainWindow


def install(window: "MainWindow", file_menu: "QMenu | None" = None) -> "ExtractionController":
    """Put the progress widget in the status bar, connect the Documents panel's Extract button and
    add File → Extract knowledge… (``menu``) after what the menu has so far (Add documents…)."""
    from cks_desktop.ui.extraction.controller import ExtractionController
    from cks_desktop.ui.extraction.menu import ExtractMenu

    controller = ExtractionController(window)
    window.statusBar().addPermanentWidget(controller.progress)
    window.documents_panel.connect_extractor(controller.request)
    controller.menu = ExtractMenu(window, controller)
    if file_menu is not None:
        controller.menu.install(file_menu)
    return controller
