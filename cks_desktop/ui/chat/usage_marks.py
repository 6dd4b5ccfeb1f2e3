"""Tokens and cost on the chat's answers and for the session (Qt-free).

``agent/usage.py`` sums the saved usage rows per answer (one ``ai_chat`` call: a prompt, a Retry,
a Continue); here those answers are grouped by exchange and put on the exchange's last answer
item (the assistant's text or the loop's notice, never a summary row), as a short line under
it and a tooltip with the details. The session's total is a line for the panel. A model without
a price shows tokens only: the tooltip says which model has none and where to add one.
"""

from __future__ import annotations

from collections.abc import Sequence

from cks_desktop.agent.usage import AnswerUsage, Tokens, describe
from cks_desktop.plural import counted
from cks_desktop.ui.chat.model import ChatModel, MessageItem

NO_PRICE = "no price for {models}: add one in Settings → Chat & agent → Prices"


def _token_lines(tokens: Tokens) -> list[str]:
    lines = [f"Input: {tokens.input_tokens:,} tokens"
             + (f" ({tokens.cached_tokens:,} cached)" if tokens.cached_tokens else ""),
             f"Output: {tokens.output_tokens:,} tokens"
             + (f" ({tokens.reasoning_tokens:,} reasoning)" if tokens.reasoning_tokens else "")]
    if tokens.cache_write_tokens:
        lines.append(f"Written to the cache: {tokens.cache_write_tokens:,} tokens")
    return lines


def tooltip(tokens: Tokens, models: Sequence[str], answers: int = 1) -> str:
    """The details of one exchange's usage, one fact a line."""
    lines = _token_lines(tokens)
    turns = counted(tokens.turns, "model turn")
    lines.append(f"{turns} in {counted(answers, 'answer')}" if answers > 1 else turns)
    if models:
        lines.append("Model: " + ", ".join(models))
    lines.append(f"Cost: ${tokens.cost:.4f}" if tokens.cost is not None
                 else "Cost: " + NO_PRICE.format(models=", ".join(models) or "this model"))
    return "\n".join(lines)


def apply(model: ChatModel, answers: Sequence[AnswerUsage], exchanges: Sequence[int | None]) -> None:
    """Put each exchange's summed usage on its last answer item (and clear it elsewhere)."""
    by_exchange: dict[int, tuple[Tokens, list[str], int]] = {}
    for answer, exchange in zip(answers, exchanges):
        if exchange is None:
            continue
        tokens, models, count = by_exchange.get(exchange, (Tokens(), [], 0))
        tokens.add(answer.tokens)
        models += [m for m in answer.models if m not in models]
        by_exchange[exchange] = (tokens, models, count + 1)
    last: dict[int, MessageItem] = {}
    for item in model.items:
        if isinstance(item, MessageItem) and item.role in ("assistant", "notice") and not item.summary:
            last[item.turn] = item
    for item in model.items:
        if not isinstance(item, MessageItem):
            continue
        found = by_exchange.get(item.turn) if last.get(item.turn) is item else None
        line, tip = (describe(found[0]), tooltip(*found)) if found else ("", "")
        if (item.usage_line, item.usage_tip) != (line, tip):
            item.usage_line, item.usage_tip = line, tip
            model.changed(item)


def session_line(total: Tokens, answers: int) -> str:
    """"Session: 12,345 in · 678 out · $0.0421" (empty before the first answer)."""
    return f"Session: {describe(total)}" if answers else ""


def session_tip(total: Tokens, answers: int) -> str:
    lines = [f"{counted(answers, 'answer')}, {counted(total.turns, 'model turn')} in this session",
             *_token_lines(total)]
    lines.append(f"Cost: ${total.cost:.4f}" if total.cost is not None else
                 "Cost: not known (a model used here has no price; add one in Settings → Chat & agent → Prices)")
    return "\n".join(lines)
