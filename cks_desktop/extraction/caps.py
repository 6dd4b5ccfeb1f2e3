"""The extraction cap a person sets once (Settings → Chat & agent → "Extracting documents"), used by
the window and the CLI alike.

Settings keys ``extraction.max_calls`` (model calls) and ``extraction.max_cost_usd`` (US dollars),
each absent or null for "no cap":

- the window asks before an extraction whose estimate is over either cap (showing which), and
  starts one under both without asking; with no cap set it always asks (the estimate box);
- ``cks-desktop documents extract`` uses them when ``--max-calls``/``--max-cost`` are not given:
  a run whose estimate is over is refused before any call, one whose real cost crosses is stopped.

Kept Qt-free and tiny so both sides read the same section the same way (``runtime.extraction``)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from cks_desktop.settings.sections import MAX_CALLS_LIMIT, MAX_COST_CAP

if TYPE_CHECKING:
    from cks_desktop.settings import Extraction as ExtractionSettings


@dataclass(frozen=True)
class Cap:
    max_calls: int | None = None
    max_cost_usd: float | None = None

    @property
    def is_set(self) -> bool:
        return self.max_calls is not None or self.max_cost_usd is not None

    def over(self, calls: int, cost_usd: float | None) -> list[str]:
        """What of an estimate is over the cap, as short phrases (empty: within it). An unknown
        cost is never "over" a cost cap (the running cost check still applies)."""
        out = []
        if self.max_calls is not None and calls > self.max_calls:
            out.append(f"{calls} model calls, over your cap of {self.max_calls}")
        if self.max_cost_usd is not None and cost_usd is not None and cost_usd > self.max_cost_usd:
            out.append(f"about ${cost_usd:.2f}, over your cap of ${self.max_cost_usd:.2f}")
        return out


def cap_of(section: "ExtractionSettings") -> Cap:
    """The cap the settings' ``extraction`` section holds (its values were checked on reading)."""
    return Cap(section.max_calls, section.max_cost_usd)


def with_cap(section: "ExtractionSettings", cap: Cap) -> "ExtractionSettings":
    """``section`` holding ``cap`` (an unset part is removed from the file, not stored as null)."""
    return replace(section, max_calls=cap.max_calls, max_cost_usd=cap.max_cost_usd)


def parse_calls(text: str) -> int | None:
    """A typed call cap ("" → None); ValueError with one sentence when it is not one."""
    text = text.strip().replace(",", "").replace("_", "")
    if not text:
        return None
    if not text.isdigit() or int(text) > MAX_CALLS_LIMIT:
        raise ValueError(f"The call cap must be a whole number from 0 to {MAX_CALLS_LIMIT:,}, or empty for none.")
    return int(text)


def parse_cost(text: str) -> float | None:
    """A typed cost cap in US dollars ("" → None; "$0.50" and "0,50" are read); ValueError when not one."""
    text = text.strip().lstrip("$").strip().replace(",", ".")
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (0 <= value < MAX_COST_CAP):
        raise ValueError("The cost cap must be an amount in US dollars such as 0.50, or empty for none.")
    return value
