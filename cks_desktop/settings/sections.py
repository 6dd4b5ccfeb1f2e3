"""The sections of the settings file, typed: what every key means, its default and its check.

Code reads ``settings.section(Extraction).review_over_chars`` and writes
``settings.set_section(replace(extraction, review_over_chars=50_000))``; nothing outside
this package reads the file's dict (a test walks the code for it). ``schema.py`` says how a
section is read (bad values replaced by their defaults, with a note), checked (a bad value is
one sentence naming its key, and is never written) and written (only what changed, unknown
keys kept).

Tables of entries (prices, per-session choices) are checked entry by entry: a hand-edited bad
entry is dropped on reading, the others stay.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from cks_desktop.settings.schema import (
    Invalid,
    choice,
    fields_of,
    flag,
    migration,
    nested,
    number,
    optional,
    required,
    section,
    setting,
    table,
    table_of,
    text,
    texts,
    whole,
)

PROVIDERS = ("anthropic", "ollama", "openai", "gemini")
DEFAULT_MAX_ITERATIONS = 8
MAX_ITERATIONS_LIMIT = 1_000_000
TEMPERATURE_RANGE = (0.0, 2.0)  # every provider accepts this range (Anthropic's own ends at 1.0)
MAX_TOKENS_RANGE = (1, 1_000_000)
# Thinking budget in tokens: Anthropic's minimum is 1,024 (smaller budgets are raised to it);
# Gemini's cap is lower on some models (24,576 on Flash): the provider's sentence says so.
REASONING_BUDGET_RANGE = (1, 128_000)
MAX_BUDGET_TOKENS = 1_000_000_000
MAX_BUDGET_COST = 100_000.0
MAX_PRICE = 10_000.0  # US dollars per million tokens; anything above is a typo, not a price
MAX_CALLS_LIMIT = 1_000_000
MAX_COST_CAP = 1e9
DEFAULT_MAX_FILE_MB = 100
REVIEW_OVER_CHARS = 20_000
POLICIES = ("auto", "once", "always")
THEMES = ("system", "light", "dark")
SHARE_APPROVALS = ("host", "app")
BACKENDS = ("file", "postgresql")


# -- providers -----------------------------------------------------------------------------------------
_YES = ("yes", "true", "on", "1")
_NO = ("no", "false", "off", "0")


def yes_no(value: Any) -> str:
    """``"yes"`` or ``"no"`` from a flag or the words people write for one."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    word = str(value).strip().lower() if isinstance(value, str) else ""
    if word in _YES:
        return "yes"
    if word in _NO:
        return "no"
    raise Invalid(f"must be yes or no (got {value!r})")

@dataclass(frozen=True)
class ProviderEntry:
    """One provider's choices (``providers.<name>``); the API key is in the keychain, never here.

    Besides the model, address, time-out and retries: the context window the person knows
    (``context_window``; Ollama's own ``num_ctx``), whether the model takes images (``images``:
    yes/no, unset = the known models), and the options only some providers read, each named in
    its profile's ``setting_options`` (``llm/profiles.py``): OpenAI's ``api`` and reasoning
    fields, Ollama's ``think_level``."""

    model: str = setting("", text)
    base_url: str = setting("", text)
    num_ctx: int | None = setting(None, optional(whole(256, 10_000_000)))  # Ollama's context window
    timeout: float | None = setting(None, optional(number(0, 3600, above_low=True)))
    max_retries: int | None = setting(None, optional(whole(0, 20)))
    context_window: int | None = setting(None, optional(whole(256, 100_000_000)))
    images: str | None = setting(None, optional(yes_no))
    api: str | None = setting(None, optional(text))  # another wire API (OpenAI's "responses")
    think_level: str | None = setting(None, optional(text))  # Ollama: a level for ``think``
    reasoning_request: dict[str, Any] | None = setting(None, optional(table))  # merged into the body
    reasoning_echo: str | None = setting(None, optional(text))  # when reasoning is sent back

    def options(self, names: "tuple[str, ...]") -> dict[str, Any]:
        """The entry's options of those ``names`` that are set (a provider's ``setting_options``)."""
        return {name: getattr(self, name) for name in names if getattr(self, name, None)}


@section
@dataclass(frozen=True)
class Providers:
    KEY: ClassVar[str] = "providers"

    default: str = setting("", choice("", *PROVIDERS))
    anthropic: ProviderEntry = setting(ProviderEntry("claude-sonnet-5"), nested(ProviderEntry))
    ollama: ProviderEntry = setting(ProviderEntry("llama3.1", "http://127.0.0.1:11434", 16384),
                                    nested(ProviderEntry))
    openai: ProviderEntry = setting(ProviderEntry("gpt-4.1-mini"), nested(ProviderEntry))
    gemini: ProviderEntry = setting(ProviderEntry("gemini-2.5-flash"), nested(ProviderEntry))

    def entry(self, name: str) -> ProviderEntry:
        value = getattr(self, name, None) if name in PROVIDERS else None
        return value if isinstance(value, ProviderEntry) else ProviderEntry()


# -- agent ---------------------------------------------------------------------------------------------
_reasoning = fields_of(enabled=optional(flag), budget=optional(whole(*REASONING_BUDGET_RANGE)))
_budget = fields_of(tokens=optional(whole(1, MAX_BUDGET_TOKENS)),
                    cost_usd=optional(number(0, MAX_BUDGET_COST, above_low=True)))
_rate = optional(number(0, MAX_PRICE))
# A price: US dollars per million tokens; input and output required, the cache rates optional.
price_entry = fields_of(input=required(number(0, MAX_PRICE)), output=required(number(0, MAX_PRICE)),
                        cached_input=_rate, cache_write=_rate)
_server_grant = fields_of(scopes=optional(texts), identity=optional(text))


@section
@dataclass(frozen=True)
class Agent:
    """The chat: its limits, tool policies, readable folders, scopes, defaults, budgets and prices."""

    KEY: ClassVar[str] = "agent"

    max_iterations: int = setting(DEFAULT_MAX_ITERATIONS, whole(1, MAX_ITERATIONS_LIMIT))
    tool_policies: dict[str, str] = setting(None, table_of(choice(*POLICIES)), factory=dict)
    allowed_folders: tuple[str, ...] = setting((), texts)
    granted_scopes: tuple[str, ...] | None = setting(None, optional(texts))  # None: the built-in defaults
    session_scopes: dict[str, tuple[str, ...]] = setting(None, table_of(texts), factory=dict)
    server_scopes: dict[str, dict[str, Any]] = setting(None, table_of(_server_grant), factory=dict)
    temperature: float | None = setting(None, optional(number(*TEMPERATURE_RANGE)))
    max_output_tokens: int | None = setting(None, optional(whole(*MAX_TOKENS_RANGE)))
    reasoning: dict[str, Any] | None = setting(None, optional(_reasoning))  # {"enabled": bool, "budget": int}
    session_reasoning: dict[str, dict[str, Any]] = setting(None, table_of(_reasoning), factory=dict)
    session_budgets: dict[str, dict[str, Any]] = setting(None, table_of(_budget), factory=dict)
    # keyed by the model's name or "<provider>/<model>"; llm/prices.py reads them
    prices: dict[str, dict[str, float]] = setting(None, table_of(price_entry), factory=dict)


# -- documents and extraction --------------------------------------------------------------------------
@section
@dataclass(frozen=True)
class Documents:
    KEY: ClassVar[str] = "documents"

    max_file_mb: float = setting(DEFAULT_MAX_FILE_MB, number(0, 1_000_000, above_low=True))

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)


@section
@dataclass(frozen=True)
class Extraction:
    """The cap over which the window asks (and the CLI refuses), and the review and write choices."""

    KEY: ClassVar[str] = "extraction"

    max_calls: int | None = setting(None, optional(whole(0, MAX_CALLS_LIMIT)))
    max_cost_usd: float | None = setting(None, optional(number(0, MAX_COST_CAP)))
    review_over_chars: int = setting(REVIEW_OVER_CHARS, whole(0, 100_000_000))
    write_per_chunk: bool = setting(False, flag)


# -- sharing, storage, the window ----------------------------------------------------------------------
@section
@dataclass(frozen=True)
class Sharing:
    """What ``mcp serve`` offers other apps: the sessions shared, and who asks before a risky call."""

    KEY: ClassVar[str] = "mcp_serve"

    shared_sessions: tuple[str, ...] = setting((), texts)
    approval: str = setting("host", choice(*SHARE_APPROVALS))


@section
@dataclass(frozen=True)
class Storage:
    """The embedded file or a team's PostgreSQL (``storage_choice.PgSettings`` reads ``postgresql``)."""

    KEY: ClassVar[str] = "storage"

    backend: str = setting("file", choice(*BACKENDS))
    postgresql: dict[str, Any] | None = setting(None, optional(table))


@section
@dataclass(frozen=True)
class Ui:
    KEY: ClassVar[str] = "ui"

    enter_sends: bool = setting(True, flag)
    theme: str = setting("system", choice(*THEMES))
    last_session: str = setting("", text)
    sessions_folded: bool = setting(False, flag)
    geometry: str = setting("", text)  # base64 of Qt's saveGeometry
    window_state: str = setting("", text)  # base64 of Qt's saveState


# -- shapes older versions wrote ---------------------------------------------------------------------------
@migration
def _dotted_prices(data: dict[str, Any]) -> None:
    """``"agent.prices"`` as one top-level key (what ``documents extract`` once read) → ``agent.prices``;
    an entry already under ``agent.prices`` wins."""
    if "agent.prices" not in data:
        return
    old, agent = data.pop("agent.prices"), data.get("agent")
    if isinstance(old, dict) and isinstance(agent, dict):  # Settings.load made "agent" a table first
        prices = agent.get("prices")
        agent["prices"] = {**old, **prices} if isinstance(prices, dict) else dict(old)


@migration
def _extraction_caps(data: dict[str, Any]) -> None:
    """``extraction.caps = {"max_calls", "max_cost_usd"}`` → those keys on ``extraction`` itself."""
    extraction = data.get("extraction")
    caps = extraction.get("caps") if isinstance(extraction, dict) else None
    if not isinstance(extraction, dict) or "caps" not in extraction:
        return
    if isinstance(caps, dict):
        for key in ("max_calls", "max_cost_usd"):
            if key in caps and key not in extraction:
                extraction[key] = caps[key]
    del extraction["caps"]

