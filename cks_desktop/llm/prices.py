"""What a model turn costs: a small table of USD per million tokens, which the person can override.

The table is each provider's ``prices`` (``llm/profiles.py``): its default models and a few
close relatives; prices change, so the settings' ``agent.prices`` (edited in Settings →
Chat & agent) wins over it. An entry there is keyed by the model name, or by
``"<provider>/<model>"`` to price one provider's model only (the same open model costs
nothing on Ollama and something on a gateway), and holds
``{"input": .., "output": .., "cached_input": .., "cache_write": ..}`` (the last two
optional). A model in neither has no price: callers show its tokens only, never a
made-up cost. Local models (Ollama) cost nothing per token and are priced at zero only
if the person says so.

Cached tokens and tokens written to the cache are parts of the input tokens
(``llm/events.Usage``: Anthropic's cache reads and writes are added in), so they are
billed at their own rates and the rest at the input rate. A missing cached rate means
the input rate, a missing cache-write rate too (Anthropic charges 1.25× for writes: its
entries say so).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cks_desktop.llm.profiles import PROFILES
from cks_desktop.llm.provider import Price
from cks_desktop.settings.sections import MAX_PRICE

_FIELDS = ("input", "output", "cached_input", "cache_write")


class PriceError(ValueError):
    """One sentence saying which price is wrong."""


# Every profile's model prices (``ProviderProfile.prices``: the provider's facts live with it).
DEFAULT_PRICES: dict[str, Price] = {name: price for profile in PROFILES.values() for name, price in profile.prices}


def _rate(value: Any, name: str, key: str) -> float | None:
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise PriceError(f"The {name} price of {key} must be a number of US dollars per million tokens, "
                         f"not {str(value)[:40]!r}.") from None
    if isinstance(value, bool) or not math.isfinite(number) or not 0 <= number <= MAX_PRICE:
        raise PriceError(f"The {name} price of {key} must be from 0 to {MAX_PRICE:,.0f} US dollars per million "
                         f"tokens; {value} is outside.")
    return number


def check_price(key: str, value: Any) -> Price:
    """One settings entry as a ``Price``; raises ``PriceError`` with a sentence (input and output required)."""
    if not isinstance(key, str) or not key.strip():
        raise PriceError("A price needs the model's name (or provider/model).")
    if not isinstance(value, Mapping):
        raise PriceError(f"The price of {key} must be a table of input, output, cached_input and cache_write.")
    rates = {name: _rate(value.get(name, value.get("cached") if name == "cached_input" else None),
                         name.replace("_", " "), key) for name in _FIELDS}
    inp, out = rates["input"], rates["output"]
    if inp is None or out is None:
        raise PriceError(f"The price of {key} needs both an input and an output price.")
    return Price(inp, out, rates["cached_input"], rates["cache_write"])


def _price_from(key: str, value: Any) -> Price | None:
    """One override entry, or None when it is not valid (the settings file may be edited by hand)."""
    try:
        return check_price(key, value)
    except PriceError:
        return None


def price_for(model: str, overrides: Mapping[str, Any] | None = None, provider: str = "") -> Price | None:
    """The override for ``provider/model``, else for ``model``, else the table's entry; dated ids
    ("claude-haiku-4-5-20251001") fall back to the longest table name they start with."""
    if overrides:
        for key in ((f"{provider}/{model}",) if provider else ()) + (model,):
            value = overrides.get(key)
            found = value if isinstance(value, Price) else _price_from(key, value) if value is not None else None
            if found is not None:
                return found
    for name in (model, _gateway_name(model)):
        if name in DEFAULT_PRICES:
            return DEFAULT_PRICES[name]
        prefixes = [known for known in DEFAULT_PRICES if name.startswith(known + "-")]
        if prefixes:
            return DEFAULT_PRICES[max(prefixes, key=len)]
    return None


def _gateway_name(model: str) -> str:
    """A gateway's id of a vendor's model as the vendor names it: OpenRouter's
    "anthropic/claude-sonnet-4.5" is "claude-sonnet-4-5", "openai/gpt-4o" is "gpt-4o" (gateways
    pass the vendor's price on; a different one goes in ``agent.prices``)."""
    if "/" not in model:
        return model
    vendor, _, name = model.partition("/")
    name = name.split(":", 1)[0]  # ":free", ":thinking" variants
    return name.replace(".", "-") if vendor == "anthropic" else name


def cost_usd(price: Price | None, input_tokens: int, output_tokens: int, cached_tokens: int = 0,
             cache_write_tokens: int = 0) -> float | None:
    """The cost of one turn in USD, or None without a price."""
    if price is None:
        return None
    total_in = max(input_tokens, 0)
    cached = min(max(cached_tokens, 0), total_in)
    written = min(max(cache_write_tokens, 0), total_in - cached)
    cached_rate = price.cached if price.cached is not None else price.input
    write_rate = price.cache_write if price.cache_write is not None else price.input
    return ((total_in - cached - written) * price.input + cached * cached_rate + written * write_rate
            + max(output_tokens, 0) * price.output) / 1e6
