"""A property's value in plain words for the inspector's Value column.

The cell keeps the value's JSON (what Edit shows and what is parsed back), but a person reads
``["Nobel Prize in Physics 1903", "Nobel Prize in Chemistry 1911"]`` better as two lines, and
``{"city": "Paris", "year": 1891}`` as ``city: Paris`` and ``year: 1891``. Only the display
changes; text that is not a JSON list or object is shown as it is.

The cell's height is measured at the width its text really gets (``wrapped_items``): measured at
a wider width, a wrapped value's last line would fall below the row and be cut.
"""

from __future__ import annotations

import json
from typing import Any

from cks_desktop.ui.wrapped_items import WrappedTextDelegate

BULLET = "• "


def _scalar(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "—"
    if isinstance(value, (int, float)):
        return str(value)
    return json.dumps(value, ensure_ascii=False)  # nested deeper: kept exact


def plain_words(text: str) -> str:
    """``text`` (a cell's JSON or plain text) as a person reads it."""
    stripped = text.strip()
    if not stripped or stripped[0] not in "[{":
        return text
    try:
        value = json.loads(stripped)
    except ValueError:
        return text
    if isinstance(value, list):
        if not value:
            return "(none)"
        if len(value) == 1:
            return _scalar(value[0])
        return "\n".join(BULLET + _scalar(item) for item in value)
    if isinstance(value, dict):
        if not value:
            return "(none)"
        return "\n".join(f"{key}: {_scalar(item)}" for key, item in value.items())
    return text


class PlainValueDelegate(WrappedTextDelegate):
    """Draws a value cell in plain words (``plain_words``); its editor still holds the JSON."""

    def displayText(self, value: Any, locale: Any) -> str:  # noqa: N802 (Qt naming)
        if not isinstance(value, str):
            return super().displayText(value, locale)
        return plain_words(value).replace("\n", "\u2028")  # Qt breaks a drawn cell's line only here
