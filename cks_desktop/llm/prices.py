"""What a model turn costs: a small table of USD per million tokens, which the person can override.

The table covers the default models of each provider (``llm/profiles.py``) and a few
close relatives; prices change, so Settings' ``agent.prices`` (a mapping of model name
to ``{"input": .., "output": .., "cached": ..}``) wins over it. A model in neither
has no price: callers show its tokens only, never a made-up cost. Local models
(Ollama) cost nothing per token and are priced at zero only if the person says so.

Cached tokens are a subset of the input tokens (``llm/events.Usage``), so they are
billed at the cached rate and the rest at the input rate; tokens written to the
cache are billed at the input rate (Anthropic charges a little more; close enough
for an estimate, and an override can say otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

PRICES_KEY = "agent.prices"


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float
    cached: float | None = None  # None: cached tokens cost the input rate


DEFAULT_PRICES: dict[str, Price] = {
    # Anthropic (cache reads at a tenth of the input rate)
    "claude-sonnet-4-5": Price(3.0, 15.0, 0.30),
    "claude-sonnet-4-0": Price(3.0, 15.0, 0.30),
    "claude-opus-4-1": Price(15.0, 75.0, 1.50),
    "claude-haiku-4-5": Price(1.0, 5.0, 0.10),
    # OpenAI
    "gpt-4o": Price(2.50, 10.0, 1.25),
    "gpt-4o-mini": Price(0.15, 0.60, 0.075),
    "gpt-4.1": Price(2.0, 8.0, 0.50),
    "gpt-4.1-mini": Price(0.40, 1.60, 0.10),
    "gpt-5": Price(1.25, 10.0, 0.125),
    "gpt-5-mini": Price(0.25, 2.0, 0.025),
    # Google
    "gemini-2.5-flash": Price(0.30, 2.50, 0.075),
    "gemini-2.5-pro": Price(1.25, 10.0, 0.31),
    "gemini-2.0-flash": Price(0.10, 0.40, 0.025),
}


def _price_from(value: Any) -> Price | None:
    """One override entry, or None when it is not a mapping of non-negative numbers."""
    if not isinstance(value, Mapping):
        return None
    try:
        inp, out = float(value["input"]), float(value["output"])
        cached = value.get("cached")
        cached_f = float(cached) if cached is not None else None
    except (KeyError, TypeError, ValueError):
        return None
    if inp < 0 or out < 0 or (cached_f is not None and cached_f < 0):
        return None
    return Price(inp, out, cached_f)


def price_for(model: str, overrides: Mapping[str, Any] | None = None) -> Price | None:
    """The override for ``model``, else the table's entry; dated ids ("claude-haiku-4-5-20251001")
    fall back to the longest table name they start with."""
    if overrides:
        found = _price_from(overrides.get(model))
        if found is not None:
            return found
    if model in DEFAULT_PRICES:
        return DEFAULT_PRICES[model]
    prefixes = [name for name in DEFAULT_PRICES if model.startswith(name + "-")]
    return DEFAULT_PRICES[max(prefixes, key=len)] if prefixes else None


def cost_usd(price: Price | None, input_tokens: int, output_tokens: int, cached_tokens: int = 0) -> float | None:
    """The cost of one turn in USD, or None without a price."""
    if price is None:
        return None
    cached = min(max(cached_tokens, 0), max(input_tokens, 0))
    cached_rate = price.cached if price.cached is not None else price.input
    return ((input_tokens - cached) * price.input + cached * cached_rate + output_tokens * price.output) / 1e6
