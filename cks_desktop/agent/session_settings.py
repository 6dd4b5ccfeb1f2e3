"""A session's own chat settings: its instructions (system prompt) and model parameters.

Each session may have its own instructions (the ``sessions.instructions``
column, read by ``agent/prompt.py`` for every turn) and its own temperature and max output
tokens (the ``session_params`` table). A parameter the session leaves empty falls back to the
app's default from Settings → Chat & agent (``agent.temperature``,
``agent.max_output_tokens`` in the settings file), and one left empty there too is not sent
at all, so the provider's own default applies (``llm.provider.GenerationParams``).

Reasoning: a per-session switch "think before answering" and a thinking
budget in tokens (``GenerationParams.reasoning``/``reasoning_budget``), default off. The
``session_params`` table has no column for them, so they are kept the way per-session scopes
are, in the settings file (the typed ``settings.Agent`` section): ``agent.session_reasoning.<session
id> = {"enabled": bool, "budget": int}``, with the app's default in ``agent.reasoning`` (Settings
→ Chat & agent). A session without a choice of its own follows the default.

Values are checked here, once, for every front end (the session settings panel, tests):
bad input gets one sentence and nothing is written: every value is checked before the
first write, so the panel's Save never stores half its values.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from cks_desktop.llm.provider import GenerationParams
from cks_desktop.settings.sections import MAX_TOKENS_RANGE, REASONING_BUDGET_RANGE, TEMPERATURE_RANGE, Agent

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.settings import Settings

MAX_INSTRUCTIONS = 8000  # agent/prompt.py keeps this many characters


class SessionSettingsError(ValueError):
    """One sentence saying which value is wrong and what is allowed."""


@dataclass(frozen=True)
class SessionSettings:
    instructions: str = ""
    temperature: float | None = None  # None: the app's default
    max_output_tokens: int | None = None  # None: the app's default
    reasoning: bool | None = None  # think before answering; None: the app's default (off unless set)
    reasoning_budget: int | None = None  # thinking tokens; None: the app's default, else the provider's

    @property
    def params(self) -> GenerationParams:
        return GenerationParams(self.temperature, self.max_output_tokens, bool(self.reasoning),
                                self.reasoning_budget)


def check_temperature(value: Any) -> float | None:
    """A temperature as stored (None: not set); raises ``SessionSettingsError`` with a sentence."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise SessionSettingsError(f"The temperature must be a number from {TEMPERATURE_RANGE[0]:g} to "
                                   f"{TEMPERATURE_RANGE[1]:g}, not {str(value)[:40]!r}.") from None
    low, high = TEMPERATURE_RANGE
    if isinstance(value, bool) or not math.isfinite(number) or not low <= number <= high:
        raise SessionSettingsError(f"The temperature must be from {low:g} to {high:g}; {value} is outside.")
    return number


def check_max_tokens(value: Any) -> int | None:
    """Max output tokens as stored (None: not set); raises ``SessionSettingsError`` with a sentence."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    low, high = MAX_TOKENS_RANGE
    try:
        number = int(str(value).strip()) if not isinstance(value, int) else value
    except ValueError:
        raise SessionSettingsError(f"Max output tokens must be a whole number from {low} to {high:,}, "
                                   f"not {str(value)[:40]!r}.") from None
    if isinstance(value, bool) or not low <= number <= high:
        raise SessionSettingsError(f"Max output tokens must be from {low} to {high:,}; {value} is outside.")
    return number


def check_reasoning_budget(value: Any) -> int | None:
    """A thinking budget as stored (None: not set); raises ``SessionSettingsError`` with a sentence."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    low, high = REASONING_BUDGET_RANGE
    try:
        number = int(str(value).strip().replace(",", "")) if not isinstance(value, int) else value
    except ValueError:
        raise SessionSettingsError(f"The thinking budget must be a whole number of tokens from {low} to "
                                   f"{high:,}, not {str(value)[:40]!r}.") from None
    if isinstance(value, bool) or not low <= number <= high:
        raise SessionSettingsError(f"The thinking budget must be from {low} to {high:,} tokens; {value} is outside.")
    return number


def _reasoning_entry(value: Any) -> tuple[bool | None, int | None]:
    """(switch, budget) of a stored ``{"enabled": …, "budget": …}``; anything invalid counts as not set."""
    if not isinstance(value, dict):
        return None, None
    enabled = value.get("enabled")
    try:
        budget = check_reasoning_budget(value.get("budget"))
    except SessionSettingsError:
        budget = None
    return (enabled if isinstance(enabled, bool) else None), budget


def _reasoning_choice(enabled: bool | None, budget: int | None) -> dict[str, Any] | None:
    """The stored form of a thinking choice (None: no choice of its own)."""
    if enabled is None and budget is None:
        return None
    entry: dict[str, Any] = {} if enabled is None else {"enabled": enabled}
    if budget is not None:
        entry["budget"] = budget
    return entry


def default_reasoning(settings: "Settings") -> tuple[bool, int | None]:
    """Settings → Chat & agent's thinking default: (on, budget); off when not set."""
    enabled, budget = _reasoning_entry(settings.section(Agent).reasoning)
    return bool(enabled), budget


def set_default_reasoning(settings: "Settings", enabled: bool, budget: Any = None) -> None:
    """Store the app's thinking default (the budget checked first). The caller saves the settings."""
    checked = check_reasoning_budget(budget)
    # off without a budget is the built-in default: stored as no choice
    entry = None if not enabled and checked is None else _reasoning_choice(bool(enabled), checked)
    settings.set_section(replace(settings.section(Agent), reasoning=entry))


def session_reasoning(settings: "Settings", session_id: str) -> tuple[bool | None, int | None]:
    """The session's own thinking choice (None: the default)."""
    return _reasoning_entry(settings.section(Agent).session_reasoning.get(session_id))


def default_params(settings: "Settings") -> GenerationParams:
    """Settings → Chat & agent's defaults (a value that is not valid there was read as not set)."""
    agent = settings.section(Agent)
    reasoning, budget = default_reasoning(settings)
    return GenerationParams(agent.temperature, agent.max_output_tokens, reasoning, budget)


def set_default_params(settings: "Settings", temperature: Any, max_output_tokens: Any) -> None:
    """Store the app's defaults (checked first; None removes one). The caller saves the settings."""
    settings.set_section(replace(settings.section(Agent), temperature=check_temperature(temperature),
                                 max_output_tokens=check_max_tokens(max_output_tokens)))


def effective_params(own: SessionSettings, settings: "Settings") -> GenerationParams:
    """What a request in this session carries: the session's value, else the app's default."""
    fallback = default_params(settings)
    return GenerationParams(own.temperature if own.temperature is not None else fallback.temperature,
                            own.max_output_tokens if own.max_output_tokens is not None
                            else fallback.max_output_tokens,
                            own.reasoning if own.reasoning is not None else fallback.reasoning,
                            own.reasoning_budget if own.reasoning_budget is not None else fallback.reasoning_budget)


class SessionSettingsStore:
    """Reads and writes one store's per-session chat settings.

    ``settings`` given: the session's thinking choice is read from (and written to) it too; the
    caller saves the settings file after ``set``."""

    def __init__(self, store: "GraphStore", settings: "Settings | None" = None) -> None:
        self.store = store
        self.settings = settings

    def get(self, session_id: str) -> SessionSettings:
        session = self.store.get_session(session_id)  # raises the store's error for an unknown session
        with self.store.connection_lock() as conn:
            row = conn.execute("SELECT temperature, max_output_tokens FROM session_params WHERE session_id = ?",
                               (session_id,)).fetchone()
        temperature, max_tokens = (row[0], row[1]) if row else (None, None)
        reasoning, budget = session_reasoning(self.settings, session_id) if self.settings else (None, None)
        return SessionSettings(session.instructions or "", temperature, max_tokens, reasoning, budget)

    def set(self, session_id: str, *, instructions: str, temperature: Any = None,
            max_output_tokens: Any = None, reasoning: bool | None = None,
            reasoning_budget: Any = None) -> SessionSettings:
        """Check every value, then write them in one transaction; returns what was stored.
        ``reasoning`` None (and no budget): the session follows the app's thinking default."""
        if not isinstance(instructions, str):
            raise SessionSettingsError("The instructions must be text.")
        if len(instructions) > MAX_INSTRUCTIONS:
            raise SessionSettingsError(f"The instructions are {len(instructions):,} characters long; at most "
                                       f"{MAX_INSTRUCTIONS:,} are kept. Shorten them and save again.")
        checked = SessionSettings(instructions, check_temperature(temperature), check_max_tokens(max_output_tokens),
                                  reasoning if isinstance(reasoning, bool) else None,
                                  check_reasoning_budget(reasoning_budget))
        current = self.store.get_session(session_id)
        with self.store.transaction() as conn:
            if checked.temperature is None and checked.max_output_tokens is None:
                conn.execute("DELETE FROM session_params WHERE session_id = ?", (session_id,))
            else:
                conn.execute("INSERT INTO session_params (session_id, temperature, max_output_tokens) "
                             "VALUES (?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
                             "temperature = excluded.temperature, max_output_tokens = excluded.max_output_tokens",
                             (session_id, checked.temperature, checked.max_output_tokens))
        if instructions != (current.instructions or ""):
            self.store.set_session_instructions(session_id, instructions)  # emits the session's "updated" event
        if self.settings is not None:
            agent = self.settings.section(Agent)
            choices = dict(agent.session_reasoning)
            entry = _reasoning_choice(checked.reasoning, checked.reasoning_budget)
            if entry is None:
                choices.pop(session_id, None)
            else:
                choices[session_id] = entry
            self.settings.set_section(replace(agent, session_reasoning=choices))
        return checked
