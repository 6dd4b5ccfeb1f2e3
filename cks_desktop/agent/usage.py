"""Tokens per model turn, saved beside the transcript and summed per answer and per session.

One row per model turn that finished with a ``Usage`` event (table ``chat_usage``,
schema step 6). An answer is the run of turns that starts with iteration 1 (one
``ai_chat`` call: a prompt, a Retry or a Continue). Rows stay when the chat is
cleared or a turn deleted: the tokens were spent all the same, and the session
total is what the person paid for. Costs are computed when read, from
``llm/prices.py`` and the person's overrides, so a corrected price corrects history;
a turn whose server said what it billed (OpenRouter's ``usage.cost``, column
``reported_cost``) costs that.
"""

from __future__ import annotations

import bisect
import logging
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.diskfull import is_disk_full
from cks_desktop.graph.errors import DatabaseError, Unreachable
from cks_desktop.llm.events import Usage
from cks_desktop.llm.prices import cost_usd, price_for
from cks_desktop.agent.transcript import last_seq

if TYPE_CHECKING:
    from cks_desktop.llm.provider import Provider

log = logging.getLogger(__name__)
_COLUMNS = ("input_tokens", "output_tokens", "cached_tokens", "cache_write_tokens", "reasoning_tokens")


@dataclass
class Tokens:
    """Summed counts; ``cost`` None when any model in the sum has no price."""

    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0
    cost: float | None = 0.0
    turns: int = 0

    def add(self, other: "Tokens") -> None:
        for name in _COLUMNS:
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.cost = None if self.cost is None or other.cost is None else self.cost + other.cost
        self.turns += other.turns

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {name: getattr(self, name) for name in _COLUMNS}
        data["cost_usd"] = round(self.cost, 6) if self.cost is not None else None
        data["turns"] = self.turns
        return data


@dataclass
class TurnUsage:
    """One model turn of an answer: which provider and model, and its tokens (``turns`` 1)."""

    iteration: int
    provider: str
    model: str
    tokens: Tokens

    def to_json(self) -> dict[str, Any]:
        data = {"iteration": self.iteration, "provider": self.provider, "model": self.model,
                **self.tokens.to_json()}
        data.pop("turns")
        return data


@dataclass
class AnswerUsage:
    """One answer: its turns' models, the summed tokens, and each model turn."""

    after_seq: int
    models: list[str] = field(default_factory=list)
    tokens: Tokens = field(default_factory=Tokens)
    turns: list[TurnUsage] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"after_seq": self.after_seq, "models": self.models, **self.tokens.to_json(),
                "model_turns": [t.to_json() for t in self.turns]}


def record(transcript: TranscriptStore | None, session_id: str, iteration: int, provider: "Provider | None",
           usage: Usage | None) -> None:
    """Save one turn's usage (nothing without a transcript or a usage report).

    ``provider``: the adapter, whose ``config`` names the provider and model (None: unnamed)."""
    if transcript is None or usage is None:
        return
    name, model = (provider.config.name, provider.config.model) if provider is not None else ("", "")
    at = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
    try:
        _insert(transcript, session_id, iteration, name, model, usage, at)
    except Unreachable:
        raise  # a team database that is down: the turn's save says so and stops
    except (sqlite3.Error, DatabaseError, OSError) as exc:  # the count is a nicety: a failed write never ends the answer
        if isinstance(exc, DatabaseError) or is_disk_full(exc):  # a full disk: said once by the save
            log.info("could not save token usage for session %s: %s", session_id, exc)
        else:
            log.warning("could not save token usage for session %s", session_id, exc_info=True)


def _insert(transcript: TranscriptStore, session_id: str, iteration: int, name: str, model: str, usage: Usage,
            at: str) -> None:
    with transcript._transaction() as conn:  # noqa: SLF001 - the transcript's own connection access
        _has_reported_cost(conn)
        row = (last_seq(conn, session_id),)
        conn.execute(
            "INSERT INTO chat_usage (session_id, after_seq, iteration, provider, model, input_tokens, "
            "output_tokens, cached_tokens, cache_write_tokens, reasoning_tokens, reported_cost, created_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (session_id, int(row[0]), iteration, name, model, usage.input_tokens, usage.output_tokens,
             usage.cached_tokens, usage.cache_write_tokens, usage.reasoning_tokens, usage.cost_usd, at))


def _has_reported_cost(conn: sqlite3.Connection) -> None:
    """Databases made by a pre-release build of schema step 6 lack ``reported_cost``: add it once."""
    columns = {row[1] for row in conn.execute("PRAGMA table_info(chat_usage)")}
    if columns and "reported_cost" not in columns:
        conn.execute("ALTER TABLE chat_usage ADD COLUMN reported_cost REAL")


def answers(transcript: TranscriptStore, session_id: str,
            prices: Mapping[str, Any] | None = None) -> list[AnswerUsage]:
    """The session's answers in order, each with its summed tokens and cost."""
    with transcript._read() as conn:  # noqa: SLF001
        columns = {row[1] for row in conn.execute("PRAGMA table_info(chat_usage)")}
        reported = "reported_cost" if "reported_cost" in columns else "NULL"
        rows = conn.execute(
            "SELECT after_seq, iteration, provider, model, " + ", ".join(_COLUMNS) + f", {reported}"
            " FROM chat_usage WHERE session_id = ? ORDER BY n", (session_id,)).fetchall()
    out: list[AnswerUsage] = []
    for after_seq, iteration, provider, model, *counts, billed in rows:
        if iteration <= 1 or not out:
            out.append(AnswerUsage(int(after_seq)))
        turn = Tokens(**{name: int(c) for name, c in zip(_COLUMNS, counts)}, turns=1)
        # What the server said it billed (OpenRouter) wins over the price table; else the table.
        turn.cost = float(billed) if billed is not None else turn_cost(turn, provider, model, prices)
        answer = out[-1]
        if model and model not in answer.models:
            answer.models.append(model)
        answer.tokens.add(turn)
        answer.turns.append(TurnUsage(int(iteration), str(provider), str(model), turn))
    return out


def turn_cost(tokens: Tokens, provider: str, model: str, prices: Mapping[str, Any] | None) -> float | None:
    """What one turn's tokens cost at ``model``'s price (None: the model has no price)."""
    return cost_usd(price_for(model, prices, provider), tokens.input_tokens, tokens.output_tokens,
                    tokens.cached_tokens, tokens.cache_write_tokens)


def exchanges(items: list[AnswerUsage], history: list[Any]) -> list[int | None]:
    """The exchange number (as ``chat --history`` numbers them) each answer belongs to: that of the
    last saved message before its first model turn; None when that message was deleted since."""
    rows = sorted(((int(r.seq), int(r.turn)) for r in history), key=lambda pair: pair[0])
    seqs = [seq for seq, _ in rows]
    out: list[int | None] = []
    for item in items:
        at = bisect.bisect_right(seqs, item.after_seq) - 1
        out.append(rows[at][1] if at >= 0 and rows[at][0] == item.after_seq and rows[at][1] > 0 else None)
    return out


def session_total(items: list[AnswerUsage]) -> Tokens:
    total = Tokens()
    for item in items:
        total.add(item.tokens)
    return total


def describe(tokens: Tokens) -> str:
    """One line for a person: "1,234 in (200 cached) · 56 out (10 reasoning) · $0.0042"."""
    text = f"{tokens.input_tokens:,} in"
    if tokens.cached_tokens:
        text += f" ({tokens.cached_tokens:,} cached)"
    text += f" · {tokens.output_tokens:,} out"
    if tokens.reasoning_tokens:
        text += f" ({tokens.reasoning_tokens:,} reasoning)"
    if tokens.cost is not None:
        text += f" · ${tokens.cost:.4f}"
    return text
