"""The inputs of one ``ai_chat`` turn, grouped by what they mean.

``ai_chat`` used to take ~19 loose parameters; the Assistant (``agent/assistant.py``) now builds
these once per turn and hands them over whole:

- ``ChatDeps``: what the turn works with (the model, the tools, the store, where it is saved);
- ``TurnOptions``: how the turn runs (what it may use, ``grant``; limits, prompt, sampling).

Both are frozen: a turn never changes its own inputs halfway through.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cks_desktop.llm.provider import GenerationParams, Provider
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.scopes import ChatGrant

if TYPE_CHECKING:
    from cks_desktop.agent.budget import AnswerBudget
    from cks_desktop.agent.transcript import TranscriptStore
    from cks_desktop.graph.store import GraphStore

DEFAULT_MAX_ITERATIONS = 8


@dataclass(frozen=True)
class ChatDeps:
    """What a turn uses: ``transcript`` given, the prompt and every model turn are saved as they
    finish (None: nothing is saved, for benchmarks and a few tests)."""

    provider: Provider
    registry: ToolRegistry
    store: "GraphStore"
    transcript: "TranscriptStore | None" = None


@dataclass(frozen=True)
class TurnOptions:
    """How a turn runs.

    ``grant``: what the run may use (scopes, per-server scopes, folders, where a refusal points);
    the GUI and the CLI pass the person's choice (``tools.scopes.chat_grant``). It has no default
    on purpose: a turn that forgot it must not silently get every scope.
    ``instructions`` None reads the session's own instructions from the store.
    ``system_prompt`` given: used as is (tests, benchmarks) instead of the built one.
    ``params``: temperature and max output tokens for every request (None: the provider's defaults).
    ``server_instructions``: MCP server name → its handshake instructions; those of servers whose
    tools this run offers are quoted as data in the built prompt (``prompt.servers_block``).
    ``budget``: the answer ends with a notice and Continue once it has used this much (None: no budget).
    """

    grant: ChatGrant
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    instructions: str | None = None
    system_prompt: str | None = None
    params: GenerationParams | None = None
    server_instructions: Mapping[str, str] = field(default_factory=dict)
    budget: "AnswerBudget | None" = None  # at most these tokens / dollars per answer (agent/budget.py)
