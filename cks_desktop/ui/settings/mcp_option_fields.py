"""The MCP server editor's field for each declared option (``mcp/config.py``'s ``OPTIONS``).

One widget per option kind, built from the declaration (its words, tooltip, choices, object name)
and read back to the value the form keeps; so a new option shows in the editor without a line
here. The wheel guard (``ui/wheel_guard.py``) keeps a combo or spin box from changing under a
scrolling wheel, as for every other field of the form.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QFormLayout, QLineEdit, QWidget

from cks_desktop.mcp.config import ServerOption
from cks_desktop.ui.text import plain_tooltip


def option_field(option: ServerOption, value: Any) -> QWidget:
    """The editor's field for ``option``, showing ``value``."""
    widget: QWidget
    match option.kind:
        case "text" | "folder":
            edit = QLineEdit("" if value is None else str(value))
            edit.setPlaceholderText(option.placeholder)
            widget = edit
        case "flag":
            box = QCheckBox(option.label)
            box.setChecked(bool(value))
            widget = box
        case "seconds":
            spin = QDoubleSpinBox()
            spin.setRange(1, 3600)
            spin.setDecimals(0)
            spin.setSuffix(" s")
            spin.setValue(float(value))
            widget = spin
        case "choice":
            combo = QComboBox()
            for choice, words in option.choices:
                combo.addItem(f"{choice} — {words}" if words else choice, choice)
            combo.setCurrentIndex(max(0, combo.findData(value)))
            widget = combo
    widget.setToolTip(plain_tooltip(option.help))
    widget.setAccessibleName(option.label.rstrip(":"))
    if option.widget_name:
        widget.setObjectName(option.widget_name)
    return widget


def add_option_row(form: QFormLayout, option: ServerOption, widget: QWidget) -> None:
    """A flag is its own words (a check box under the fields); the others have a label."""
    form.addRow("" if option.kind == "flag" else option.label, widget)


def option_value(option: ServerOption, widget: QWidget) -> Any:
    """What the person set in ``widget``, as the form keeps it."""
    match option.kind:
        case "text" | "folder":
            assert isinstance(widget, QLineEdit)
            return widget.text()
        case "flag":
            assert isinstance(widget, QCheckBox)
            return widget.isChecked()
        case "seconds":
            assert isinstance(widget, QDoubleSpinBox)
            return float(widget.value())
        case "choice":
            assert isinstance(widget, QComboBox)
            return widget.currentData()


def on_option_changed(option: ServerOption, widget: QWidget, changed: Callable[[], None]) -> None:
    """Call ``changed`` whenever the person edits the field."""
    if isinstance(widget, QLineEdit):
        widget.textChanged.connect(lambda _text: changed())
    elif isinstance(widget, QCheckBox):
        widget.toggled.connect(lambda _on: changed())
    elif isinstance(widget, QDoubleSpinBox):
        widget.valueChanged.connect(lambda _v: changed())
    elif isinstance(widget, QComboBox):
        widget.currentIndexChanged.connect(lambda _i: changed())
