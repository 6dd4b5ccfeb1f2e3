"""A per-answer budget: at most so many tokens, or so many US dollars, for one answer.

An answer is one ``ai_chat`` call (a prompt, a Retry or a Continue). Its tokens are the sum,
over its model turns, of input and output tokens: each model turn resends the conversation,
and that is what a provider bills. The budget is checked after a model turn whose tool calls
have all run (so every call has its result and the chat continues cleanly); when it is reached
the answer ends with a visible notice and the chat offers Continue, as the iteration limit does
(``IterationLimit(kind="budget")``, ``Finished("limit")``, ``Notice.BUDGET``). A turn that
ends with the model's final text is never cut: the answer is done anyway.

Where a server reports no usage (llama.cpp without ``stream_options``, some gateways), the turn
counts with the request's estimate (``agent/context.py``) and the answer's characters / 4, so a
token budget still holds. A money budget needs the model's price (``llm/prices.py`` and the
settings' ``agent.prices``): for a model without one it cannot be checked, and the notice of a
token budget is all there is (the CLI says so once on stderr).

A session's budget is kept in the settings file under ``agent.session_budgets`` (keyed by the
session id, as ``agent.session_scopes`` is), set in the session settings dialog; the CLI's
``chat --budget-tokens N`` / ``--budget-cost USD`` set one for that run only.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from cks_desktop.llm.events import Usage
from cks_desktop.llm.prices import cost_usd, price_for
from cks_desktop.settings.sections import MAX_BUDGET_COST, MAX_BUDGET_TOKENS, Agent

if TYPE_CHECKING:
    from cks_desktop.llm.provider import Provider
    from cks_desktop.settings import Settings



class BudgetError(ValueError):
    """One sentence saying which budget value is wrong and what is allowed."""


@dataclass(frozen=True)
class AnswerBudget:
    """The most one answer may use (None: no limit of that kind); ``prices``: the person's overrides."""

    tokens: int | None = None
    cost_usd: float | None = None
    prices: Mapping[str, Any] = field(default_factory=dict)

    @property
    def empty(self) -> bool:
        return self.tokens is None and self.cost_usd is None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {}
        if self.tokens is not None:
            data["tokens"] = self.tokens
        if self.cost_usd is not None:
            data["cost_usd"] = self.cost_usd
        return data


def check_tokens(value: Any) -> int | None:
    """A token budget as stored (None: not set); raises ``BudgetError`` with a sentence."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = value if isinstance(value, int) else int(str(value).strip().replace(",", "").replace("_", ""))
    except ValueError:
        raise BudgetError(f"The token budget must be a whole number of tokens, not {str(value)[:40]!r}.") from None
    if isinstance(value, bool) or not 1 <= number <= MAX_BUDGET_TOKENS:
        raise BudgetError(f"The token budget must be from 1 to {MAX_BUDGET_TOKENS:,} tokens; {value} is outside.")
    return number


def check_cost(value: Any) -> float | None:
    """A money budget in US dollars as stored (None: not set); raises ``BudgetError`` with a sentence."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(str(value).strip().lstrip("$")) if isinstance(value, str) else float(value)
    except (TypeError, ValueError):
        raise BudgetError(f"The cost budget must be an amount in US dollars, like 0.50, not "
                          f"{str(value)[:40]!r}.") from None
    if isinstance(value, bool) or not math.isfinite(number) or not 0 < number <= MAX_BUDGET_COST:
        raise BudgetError(f"The cost budget must be more than 0 and at most {MAX_BUDGET_COST:,.0f} US dollars; "
                          f"{value} is outside.")
    return number


def session_budget(settings: "Settings", session_id: str) -> AnswerBudget:
    """The session's budget from the settings file (a hand-edited bad entry was dropped on reading)."""
    agent = settings.section(Agent)
    entry = agent.session_budgets.get(session_id) or {}
    return AnswerBudget(entry.get("tokens"), entry.get("cost_usd"), agent.prices)


def set_session_budget(settings: "Settings", session_id: str, tokens: Any, cost_usd: Any) -> AnswerBudget:
    """Check both values, then store them (both empty removes the entry). The caller saves the settings."""
    checked = AnswerBudget(check_tokens(tokens), check_cost(cost_usd))
    agent = settings.section(Agent)
    budgets = dict(agent.session_budgets)
    if checked.empty:
        budgets.pop(session_id, None)
    else:
        budgets[session_id] = checked.to_json()
    settings.set_section(replace(agent, session_budgets=budgets))
    return checked


def describe_budget(budget: AnswerBudget) -> str:
    """"50,000 tokens", "$0.50", or "50,000 tokens or $0.50"."""
    parts = []
    if budget.tokens is not None:
        parts.append(f"{budget.tokens:,} tokens")
    if budget.cost_usd is not None:
        parts.append(f"${budget.cost_usd:.2f}")
    return " or ".join(parts)


class BudgetMeter:
    """What one answer has used so far, against its budget."""

    def __init__(self, budget: AnswerBudget) -> None:
        self.budget = budget
        self.tokens = 0
        self.cost: float | None = 0.0  # None once a turn's model has no price
        self.estimated = False  # some turn reported no usage and was estimated

    def add(self, usage: Usage | None, provider: "Provider", *, estimate_in: int = 0, estimate_out_chars: int = 0) -> None:
        """Count one model turn: its ``usage``, else the estimate (request tokens, answer characters / 4)."""
        if usage is not None and (usage.input_tokens or usage.output_tokens):
            inp, out, cached, written = (usage.input_tokens, usage.output_tokens, usage.cached_tokens,
                                         usage.cache_write_tokens)
        else:
            inp, out, cached, written = max(0, estimate_in), max(0, estimate_out_chars) // 4, 0, 0
            self.estimated = True
        self.tokens += inp + out
        model, name = provider.config.model, provider.config.name
        billed = usage.cost_usd if usage is not None else None  # what the server said it billed wins
        cost = billed if billed is not None else cost_usd(price_for(model, self.budget.prices, name), inp, out,
                                                           cached, written)
        self.cost = None if cost is None or self.cost is None else self.cost + cost

    @property
    def reached(self) -> bool:
        if self.budget.tokens is not None and self.tokens >= self.budget.tokens:
            return True
        return self.budget.cost_usd is not None and self.cost is not None and self.cost >= self.budget.cost_usd

    def notice_text(self) -> str:
        """The notice: the fact only (the way on is the front end's Continue, as for the iteration limit)."""
        used = f"{self.tokens:,} tokens" + (" (estimated)" if self.estimated else "")
        if self.cost is not None and self.budget.cost_usd is not None:
            used += f", ${self.cost:.4f}"
        return (f"Reached this answer's budget ({describe_budget(self.budget)}; used {used}); "
                "the answer may be unfinished.")
