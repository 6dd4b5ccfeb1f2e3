"""Settings → Chat & agent → Prices: what a model's tokens cost, per model or per provider/model.

A small table editor over the settings' ``agent.prices`` (``llm/prices.py``): one row per model
name ("gpt-4o") or ``provider/model`` ("openai/qwen2.5-7b" for a model behind one provider only),
with its input, output, cached-input and cache-write prices in US dollars per million tokens
(the last two may stay empty: the input price applies). A model in neither this table nor the
built-in one shows tokens only. Every row is checked by the core (``check_price``) before
Save; a bad row is one sentence and nothing is written.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QHBoxLayout, QHeaderView, QLineEdit, QPushButton, QTableWidget, QVBoxLayout, QWidget

from cks_desktop.llm.prices import PriceError, check_price
from cks_desktop.ui import theme
from cks_desktop.ui.text import plain_tooltip

COLUMNS = ("Model", "Input", "Output", "Cached input", "Cache write")
HEADER_TIPS = ("A model's name (gpt-4o), or provider/model (openai/qwen2.5-7b) for a model behind one provider only",
               "US dollars per million input tokens", "US dollars per million output tokens",
               "US dollars per million cached input tokens (empty: the input price)",
               "US dollars per million tokens written to the cache (empty: the input price)")
_KEYS = ("input", "output", "cached_input", "cache_write")


def _text(value: Any) -> str:
    return "" if value is None else f"{value:g}" if isinstance(value, (int, float)) else str(value)


class PricesTable(QWidget):
    changed = Signal()

    def __init__(self) -> None:
        super().__init__()
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        self.table = QTableWidget(0, len(COLUMNS))
        self.table.setObjectName("pricesTable")
        self.table.setHorizontalHeaderLabels(list(COLUMNS))
        self.table.verticalHeader().hide()
        for column, tip in enumerate(HEADER_TIPS):
            item = self.table.horizontalHeaderItem(column)
            if item is not None:
                item.setToolTip(plain_tooltip(tip))
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        # The price columns as wide as their heading (a price is short): with ResizeToContents the
        # cells' line edits (about 125 px each) squeezed the model column until its heading was cut.
        metrics = header.fontMetrics()
        for column in range(1, len(COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.Fixed)
            header.resizeSection(column, max(metrics.horizontalAdvance(COLUMNS[column]),
                                             metrics.horizontalAdvance("0.000000")) + 28)
        self.table.setMinimumHeight(90)
        layout.addWidget(self.table)
        buttons = QHBoxLayout()
        self.add_button = QPushButton("Add price")
        self.add_button.setObjectName("addPriceButton")
        self.add_button.setAutoDefault(False)
        self.add_button.setToolTip("Add a row for a model's prices")
        theme.bind_icon(self.add_button, "plus", "normal")
        self.add_button.clicked.connect(lambda: self.add_row("", {}))
        self.remove_button = QPushButton("Remove")
        self.remove_button.setObjectName("removePriceButton")
        self.remove_button.setAutoDefault(False)
        self.remove_button.setToolTip("Remove the selected row (the built-in price, if any, applies again)")
        self.remove_button.clicked.connect(self._remove_current)
        buttons.addWidget(self.add_button)
        buttons.addWidget(self.remove_button)
        buttons.addStretch(1)
        layout.addLayout(buttons)

    def set_prices(self, prices: Mapping[str, Any]) -> None:
        self.table.setRowCount(0)
        for key, value in prices.items():
            self.add_row(str(key), value if isinstance(value, Mapping) else {})

    def add_row(self, key: str, value: Mapping[str, Any]) -> None:
        row = self.table.rowCount()
        self.table.insertRow(row)
        cells = [key] + [_text(value.get(name, value.get("cached") if name == "cached_input" else None))
                         for name in _KEYS]
        for column, text in enumerate(cells):
            edit = QLineEdit(text)
            edit.setObjectName(f"price_{row}_{column}")
            edit.setPlaceholderText("e.g. gpt-4o" if column == 0 else "the input price" if column > 2 else "0.00")
            edit.setToolTip(plain_tooltip(HEADER_TIPS[column]))
            edit.textChanged.connect(lambda _t: self.changed.emit())
            self.table.setCellWidget(row, column, edit)
        self.changed.emit()

    def _remove_current(self) -> None:
        row = self.table.currentRow()
        if row < 0 and self.table.rowCount():
            row = self.table.rowCount() - 1
        if row >= 0:
            self.table.removeRow(row)
            self.changed.emit()

    def _cell(self, row: int, column: int) -> str:
        widget = self.table.cellWidget(row, column)
        return widget.text().strip() if isinstance(widget, QLineEdit) else ""

    def rows(self) -> list[tuple[str, dict[str, str]]]:
        """The rows as typed; rows left wholly empty are ignored."""
        out = []
        for row in range(self.table.rowCount()):
            key = self._cell(row, 0)
            values = {name: self._cell(row, column) for column, name in enumerate(_KEYS, 1)}
            if key or any(values.values()):
                out.append((key, values))
        return out

    def errors(self) -> list[str]:
        problems: list[str] = []
        seen: set[str] = set()
        for key, values in self.rows():
            try:
                check_price(key, values)
            except PriceError as exc:
                problems.append(str(exc))
            if key in seen:
                problems.append(f"{key} has two price rows; keep one.")
            seen.add(key)
        return problems

    def prices(self) -> dict[str, dict[str, float]]:
        """The valid rows as ``agent.prices`` stores them (call ``errors()`` first)."""
        out: dict[str, dict[str, float]] = {}
        for key, values in self.rows():
            try:
                out[key] = check_price(key, values).to_json()
            except PriceError:
                continue
        return out
