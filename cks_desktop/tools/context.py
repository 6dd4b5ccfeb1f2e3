"""The run: who is calling, for which session, and what was already approved.

A run lives for one ai_chat call, one CLI command, or one MCP-serve session.
Approval memory (``once`` answers, ``allow_for_run`` upgrades, fingerprints of
``always`` calls) lives here and dies with the run, by design.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cks_desktop.tools.approval import Approver, Decision, StaticApprover
from cks_desktop.tools.types import ALL_SCOPES, Caller, Scope

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.tools.registry import ToolRegistry


@dataclass
class Run:
    session_id: str
    caller: Caller
    approver: Approver = field(default_factory=lambda: StaticApprover(Decision.DENY))
    granted_scopes: frozenset[Scope] = ALL_SCOPES
    # Extra scopes for the tools of one source ("mcp:<server>"), granted per server (tools/scopes.py).
    source_grants: Mapping[str, frozenset[Scope]] = field(default_factory=dict)
    # Where the person turns a scope on, for the refusal a model reads (tools/scopes.py).
    scope_setting: str = ""
    # Folders `read_text_file` may read (from settings); empty means none.
    allowed_folders: tuple[Path, ...] = ()
    # A handle on the session's LLM provider for tools that call a model
    # (construct_knowledge); None where no provider is configured.
    llm: Any = None  # a Provider; opaque here, since tools sits below llm in the layers
    # Hears a running call's progress (call id, progress, total or None, message or None): the
    # chat loop turns it into ``ToolCallProgress`` events; None where nobody shows progress.
    on_progress: Callable[[str, float, float | None, str | None], None] | None = None
    # Approval memory for this run.
    allowed_for_run: set[str] = field(default_factory=set)
    once_answers: dict[str, bool] = field(default_factory=dict)
    fingerprint_answers: dict[str, bool] = field(default_factory=dict)
    # What a model caller added itself in this run (object and relation ids, "type:<kind>:<name>"):
    # editing those does not ask, as changing what a person or a document wrote does
    # (tools/builtin/effects.py, ``overwrite_count``).
    own_additions: set[str] = field(default_factory=set)
    # How many passages ``retrieve_passages`` gave in this run: its next passage is number
    # ``passages_given + 1``, so a model's ``[n]`` names one passage across all its calls
    # (the chat checks those citations, agent/citations.py).
    passages_given: int = 0

    def grants_for(self, source: str) -> frozenset[Scope]:
        """The scopes a tool of ``source`` may use in this run."""
        extra = self.source_grants.get(source)
        return self.granted_scopes | extra if extra else self.granted_scopes

    @property
    def origin(self) -> str:
        """What the change history records as the author of a write."""
        return self.caller.value


@dataclass(frozen=True)
class ToolContext:
    """What a handler gets besides its arguments.

    ``changes`` collects the ids of the graph changes this call wrote (``record_change``, called
    by the built-ins' one write path), so the registry can put the call's ``change_id`` on its
    ``ToolResult`` without reading it back out of what the handler returned for the model.
    """

    session_id: str
    store: "GraphStore"
    run: Run
    registry: "ToolRegistry"
    call_id: str = ""
    changes: list[str] = field(default_factory=list)

    def record_change(self, change_id: str | None) -> None:
        """Note that this call wrote the change ``change_id`` (None: the write changed nothing)."""
        if change_id:
            self.changes.append(change_id)

    @property
    def change_id(self) -> str | None:
        """The change this call wrote (the last, should a handler write more than once)."""
        return self.changes[-1] if self.changes else None
