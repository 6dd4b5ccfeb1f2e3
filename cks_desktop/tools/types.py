"""The tool vocabulary every layer shares: specs, calls, results, scopes, policies.

A tool is data (``ToolSpec``) plus an async handler. The registry is the only
place that runs handlers, so validation, session pinning, approval and the
errors-as-data rule live in exactly one spot (``registry.py``).
"""

from __future__ import annotations

import enum
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from cks_desktop.tools.images import ImageBlob

if TYPE_CHECKING:
    from cks_desktop.tools.context import ToolContext


class Scope(str, enum.Enum):
    """What a tool may touch; a run grants a set of scopes."""

    GRAPH_READ = "graph.read"
    GRAPH_MUTATE = "graph.mutate"
    FS_READ = "fs.read"
    CODE_EXECUTE = "code.execute"
    NET_FETCH = "net.fetch"
    PROVIDER_CALL = "provider.call"

    def __str__(self) -> str:
        return self.value


ALL_SCOPES: frozenset[Scope] = frozenset(Scope)


class Policy(str, enum.Enum):
    """When to ask the person before a tool runs.

    ``auto``: never ask. ``once``: ask on the first call in a run; the answer
    covers the rest of the run. ``always``: ask for every distinct call; an
    identical repeat (same fingerprint) in the same run reuses the answer.
    """

    AUTO = "auto"
    ONCE = "once"
    ALWAYS = "always"

    def __str__(self) -> str:
        return self.value

    @property
    def rank(self) -> int:
        """How strict: auto 0 < once 1 < always 2."""
        return _POLICY_RANK[self]


_POLICY_RANK = {Policy.AUTO: 0, Policy.ONCE: 1, Policy.ALWAYS: 2}


def strictest(*policies: Policy) -> Policy:
    """The policy that asks the most; ``auto`` for none."""
    return max(policies, key=lambda p: p.rank, default=Policy.AUTO)


class Caller(str, enum.Enum):
    """Who started a run. Only ``USER`` and ``CLI`` may reach non-exposed tools."""

    MODEL = "model"  # an LLM in ai_chat
    MCP_CLIENT = "mcp_client"  # another app talking to `cks-desktop mcp serve`
    USER = "user"  # a person editing by hand in the GUI
    CLI = "cli"  # `cks-desktop tools call`

    @property
    def is_model(self) -> bool:
        return self in (Caller.MODEL, Caller.MCP_CLIENT)


@dataclass(frozen=True)
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


class Outcome(str, enum.Enum):
    """How a tool call ended. Only ``OK`` is a success; every other outcome reaches a model as
    an error result (``ToolResult.is_error``), and the outcome says which kind, so nobody has
    to read it back out of the text or the structured payload."""

    OK = "ok"
    ERROR = "error"  # unknown tool, refused scope, invalid arguments, the handler failed
    DENIED = "denied"  # the person (or the approver standing in for them) declined the call
    CANCELLED = "cancelled"  # Stop withdrew the call while it ran or waited for approval
    TIMEOUT = "timeout"  # the tool's own deadline (``ToolSpec.timeout``) expired

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class ToolResult:
    """What a tool call produced.

    ``content`` (and ``structured``, for callers that want JSON) is what the model reads; it
    never carries app bookkeeping. The facts the app acts on are fields: ``outcome`` (how the
    call ended) and ``change_id`` (the change the call's write recorded in the graph history,
    what the chat's Revert and the editor's Undo revert; None when it wrote nothing).
    """

    call_id: str
    content: str
    outcome: Outcome = Outcome.OK
    structured: Any = None
    name: str = ""
    duration_ms: float | None = None
    change_id: str | None = None
    # Images the tool returned (an MCP image block), validated (``tools/images.py``); ``content``
    # names each in a note. The loop stores them in the session (``agent/images.py``).
    images: tuple[ImageBlob, ...] = ()

    @property
    def is_error(self) -> bool:
        """What the model is told: anything but ``OK`` is an error result."""
        return self.outcome is not Outcome.OK

    def to_json(self) -> dict[str, Any]:
        return {
            "call_id": self.call_id,
            "name": self.name,
            "is_error": self.is_error,
            "outcome": self.outcome.value,
            "content": self.content,
            "structured": self.structured,
            "change_id": self.change_id,
            **({"images": [{"media_type": i.media_type, "width": i.width, "height": i.height, "bytes": i.size,
                            "sha256": i.digest} for i in self.images]} if self.images else {}),
        }


@dataclass(frozen=True)
class ToolOutput:
    """What a handler may return when plain JSON is not enough (MCP results, images)."""

    content: str
    structured: Any = None
    is_error: bool = False
    images: tuple[ImageBlob, ...] = ()  # validated image bytes; ``content`` keeps their notes


class ToolError(Exception):
    """An expected failure inside a handler: becomes an error result, not a crash.

    ``structured`` is sent along (e.g. evolve_knowledge's validation report).
    """

    def __init__(self, message: str, structured: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.structured = structured


Handler = Callable[[dict[str, Any], "ToolContext"], Awaitable[Any]]
"""A handler takes validated, session-pinned arguments and returns JSON-able data,
a ``ToolOutput``, or raises ``ToolError``."""

PreviewFn = Callable[[dict[str, Any], "ToolContext"], Awaitable[str | None]]
"""Describes what a call would change, for the approval dialog (a dry run)."""

EffectsFn = Callable[[dict[str, Any], "ToolContext"], Awaitable[Mapping[str, int]]]
"""What a call does, as counts keyed by the name of the single-purpose tool whose policy
each part follows (``{"remove_object": 3}`` for a batch with three removals).

Approval follows the effect, not the tool's name: the registry asks with the strictest
policy among the tool's own and those of every tool named here, so a batch tool can
never do without asking what a stricter tool asks for. A tool that can do what another
tool does declares this; one whose effect is only its own needs nothing."""


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    input_schema: Mapping[str, Any]
    scopes: frozenset[Scope]
    default_policy: Policy
    llm_exposed: bool
    handler: Handler
    title: str = ""
    annotations: Mapping[str, Any] = field(default_factory=dict)
    # Built-in tools pin every `session_id` argument to the run's session. MCP tools
    # do not: a remote server's `session_id` is its own concept, and it cannot reach
    # our graph anyway.
    pin_session: bool = True
    timeout: float | None = None
    preview: PreviewFn | None = None
    source: str = "builtin"  # "builtin" or "mcp:<server>"
    effects: EffectsFn | None = None
    # What a successful result holds: the keys of its JSON object, none required (the MCP output
    # schema is derived from them). None: not declared, or the result is not always an object.
    result_keys: tuple[str, ...] | None = None
    # The arguments that tell what a call is about, in the order a chat row's summary shows them
    # (empty: the row picks the argument whose name usually carries the point).
    summary_args: tuple[str, ...] = ()

    @property
    def display_name(self) -> str:
        if self.source.startswith("mcp:"):
            server = self.source[4:]
            return f"{server} · {self.title or self.name.rsplit(':', 1)[-1]}"
        return self.title or self.name

    @property
    def mutating(self) -> bool:
        return Scope.GRAPH_MUTATE in self.scopes
