"""Settings → Chat & agent → "Extracting documents": the cap above which the window asks before an
extraction (and that ``documents extract`` uses when no ``--max-calls``/``--max-cost`` is given).

The keys and their meaning live in the Qt-free ``cks_desktop.extraction.caps``; this group only
shows and validates them (``errors()`` before Save, one sentence each)."""

from __future__ import annotations

from dataclasses import replace

from PySide6.QtWidgets import QCheckBox, QFormLayout, QGroupBox, QLineEdit, QSpinBox, QWidget

from cks_desktop.extraction.caps import Cap, cap_of, parse_calls, parse_cost, with_cap
from cks_desktop.settings import Extraction, Settings
from cks_desktop.ui.settings.widgets import note_label
from cks_desktop.ui.text import plain_tooltip


class ExtractionCapBox(QGroupBox):
    def __init__(self, settings: Settings, parent: QWidget | None = None) -> None:
        super().__init__("Extracting documents", parent)
        self.setObjectName("extractionCapBox")
        form = QFormLayout(self)
        section = settings.section(Extraction)
        cap = cap_of(section)
        self.cost = QLineEdit("" if cap.max_cost_usd is None else f"{cap.max_cost_usd:g}")
        self.cost.setObjectName("extractionMaxCost")
        self.cost.setPlaceholderText("no cap")
        self.cost.setToolTip(plain_tooltip("Ask before an extraction whose estimated cost is over this many US "
                                           "dollars; empty: always ask"))
        form.addRow("Ask when the estimate is over $:", self.cost)
        self.calls = QLineEdit("" if cap.max_calls is None else str(cap.max_calls))
        self.calls.setObjectName("extractionMaxCalls")
        self.calls.setPlaceholderText("no cap")
        self.calls.setToolTip(plain_tooltip("Ask before an extraction that needs more model calls than this; "
                                            "empty: always ask"))
        form.addRow("…or over this many model calls:", self.calls)
        form.addRow(note_label("Under both, Extract knowledge starts without asking and stops if its real cost "
                               "crosses the cap. `cks-desktop documents extract` refuses a run over it unless "
                               "--max-calls/--max-cost say otherwise."))
        # review before writing is the default above a size the person sets
        self.review_over = QSpinBox()
        self.review_over.setObjectName("extractionReviewOver")
        self.review_over.setRange(0, 100_000_000)
        self.review_over.setSingleStep(5_000)
        self.review_over.setGroupSeparatorShown(True)
        self.review_over.setSuffix(" characters")
        self.review_over.setValue(section.review_over_chars)
        self.review_over.setToolTip(plain_tooltip("A document longer than this opens the review panel before "
                                                  "anything is written; 0: always review. Whatever needs a look "
                                                  "(a quote not found) is always reviewed."))
        form.addRow("Review before writing documents over:", self.review_over)
        self.per_chunk = QCheckBox("Write a document that skips review part by part (one change per part)")
        self.per_chunk.setObjectName("extractionPerChunk")
        self.per_chunk.setChecked(section.write_per_chunk)
        self.per_chunk.setToolTip(plain_tooltip("Off: the whole document is one change, undone at once"))
        form.addRow(self.per_chunk)

    def cap(self) -> Cap:
        """The typed cap (ValueError with one sentence when a field is not valid)."""
        return Cap(parse_calls(self.calls.text()), parse_cost(self.cost.text()))

    def errors(self) -> list[str]:
        problems = []
        for parse, field in ((parse_cost, self.cost), (parse_calls, self.calls)):
            try:
                parse(field.text())
            except ValueError as exc:
                problems.append(str(exc))
        return problems

    def save(self, settings: Settings) -> None:
        section = replace(settings.section(Extraction), review_over_chars=self.review_over.value(),
                          write_per_chunk=self.per_chunk.isChecked())
        try:
            section = with_cap(section, self.cap())
        except ValueError:
            pass  # errors() said so before Save; an invalid field keeps the stored value
        settings.set_section(section)
