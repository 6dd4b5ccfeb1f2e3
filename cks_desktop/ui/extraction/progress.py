"""The extraction's progress in the status area: a bar (parts read / total), what was found and what
it cost so far, Pause/Resume and Cancel. Hidden when nothing runs. It only shows ``Progress``
values and calls the run's ``pause``/``resume``/``cancel`` (which take effect between parts)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from PySide6.QtWidgets import QHBoxLayout, QProgressBar, QToolButton, QWidget

from cks_desktop.plural import counted
from cks_desktop.ui import theme
from cks_desktop.ui.labels import plain_label
from cks_desktop.ui.text import plain_tooltip

if TYPE_CHECKING:
    from cks_desktop.runtime.extraction import Extraction, Progress


class ExtractionProgress(QWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("extractionProgress")
        self.run: "Extraction | None" = None
        lay = QHBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        self.label = plain_label(name="extractionProgressLabel")
        self.bar = QProgressBar()
        self.bar.setObjectName("extractionProgressBar")
        self.bar.setMaximumWidth(160)
        self.bar.setTextVisible(False)
        self.pause_button = QToolButton()
        self.pause_button.setObjectName("extractionPause")
        self.pause_button.setToolTip(plain_tooltip("Pause the extraction after the part being read"))
        theme.bind_icon(self.pause_button, "pause")
        self.pause_button.clicked.connect(lambda *_: self.toggle_pause())
        self.cancel_button = QToolButton()
        self.cancel_button.setObjectName("extractionCancel")
        self.cancel_button.setToolTip(plain_tooltip("Stop the extraction; the parts already read are kept "
                                                    "and the next run goes on from there"))
        theme.bind_icon(self.cancel_button, "x")
        self.cancel_button.clicked.connect(lambda *_: self.cancel())
        for w in (self.label, self.bar, self.pause_button, self.cancel_button):
            lay.addWidget(w)
        self.hide()

    def start(self, run: "Extraction", name: str) -> None:
        self.run = run
        self.name = name
        self.bar.setRange(0, max(1, len(run.chunks)))
        self.bar.setValue(0)
        self.label.setText(f"Extracting {name}…")
        theme.bind_icon(self.pause_button, "pause")
        self.pause_button.show()
        self.cancel_button.show()
        self.show()

    def show_writing(self, name: str, done: int, total: int) -> None:
        """The write of the reviewed plan (one transaction: no pause or cancel half-way)."""
        self.run = None
        self.pause_button.hide()
        self.cancel_button.hide()
        self.bar.setRange(0, max(1, total))
        self.bar.setValue(min(done, total))
        self.label.setText(f"Writing {name}: {done:,} of {total:,} operations…" if total else f"Writing {name}…")
        self.show()

    def update_progress(self, p: "Progress") -> None:
        self.bar.setMaximum(max(1, p.chunks_total))
        self.bar.setValue(p.chunks_done)
        cost = f", ${p.cost_usd:.3f}" if p.cost_usd is not None else ""
        state = " (paused)" if p.state == "paused" else ""
        waiting = f", {p.waiting}" if p.waiting else ""
        self.label.setText(f"{getattr(self, 'name', '')}: {p.chunks_done}/{p.chunks_total} parts, "
                           f"{counted(p.objects_found, 'object')} found{cost}{state}{waiting}")

    def toggle_pause(self) -> None:
        if self.run is None:
            return
        if self.run.progress.state == "paused":
            self.run.resume()
            theme.bind_icon(self.pause_button, "pause")
            self.pause_button.setToolTip(plain_tooltip("Pause the extraction after the part being read"))
        else:
            self.run.pause()
            theme.bind_icon(self.pause_button, "play")
            self.pause_button.setToolTip(plain_tooltip("Go on with the extraction"))

    def cancel(self) -> None:
        if self.run is not None:
            self.run.cancel()

    def finish(self) -> None:
        self.run = None
        self.hide()
