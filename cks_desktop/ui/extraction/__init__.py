"""The window's part of document extraction (issue 17 §2): the progress bar in the status area with
Pause and Cancel (``progress``), the review panel before writing (``review``), and the controller
that runs an extraction for the Documents panel's "Extract knowledge" (``controller``). The pipeline
itself is Qt-free (``cks_desktop.extraction``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cks_desktop.ui.extraction.controller import ExtractionController
    from cks_desktop.ui.main_window import MainWindow


def install(window: "MainWindow") -> "ExtractionController":
    """Put the progress widget in the status bar and connect the Documents panel's Extract button."""
    from cks_desktop.ui.extraction.controller import ExtractionController

    controller = ExtractionController(window)
    window.statusBar().addPermanentWidget(controller.progress)
    window.documents_panel.connect_extractor(controller.request)
    return controller
