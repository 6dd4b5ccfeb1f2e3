"""What a connected MCP server may ask of the app, and the interface that answers (Qt-free).

A server can ask the person for input (``elicitation/create``, a form or a URL to open)
and ask the person's model for a completion (``sampling/createMessage``). The SDK hands
those to callbacks (``client_hooks.py``); they turn each into one of the plain requests
below and pass it to an ``McpHost``. The window's host (``ui/mcp_host``) shows modal
dialogs, one at a time; the headless host here (``HeadlessHost``) follows the CLI's
rules, so a run without a person never waits for one:

- elicitation: accepted with the schema's defaults only under ``--yes`` and only when every
  required field has a default; declined otherwise (a URL is never opened headless);
- sampling: denied, unless the server's settings say ``"sampling": "allow"`` and ``--yes``
  was given, in which case it runs with the session's provider (``agent/mcp_sampling.py``).

A host never raises for the person's choice: declining is an answer. The texts in a
request (the server's message, the messages to sample) are the server's, untrusted:
dialogs show them as plain text.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, Protocol

from cks_desktop.mcp.elicit_form import Form, Value, check_answer

ElicitAction = Literal["accept", "decline", "cancel"]
MAX_SAMPLING_CHARS = 400_000  # about 100k tokens: past this no model the app drives has room for it
MAX_SAMPLING_TOKENS = 16_384  # the most output tokens a server may ask for (more is cut to this)


@dataclass(frozen=True)
class ElicitationRequest:
    server: str
    message: str
    mode: Literal["form", "url"] = "form"
    form: Form = field(default_factory=Form)
    url: str = ""
    elicitation_id: str | None = None


@dataclass(frozen=True)
class ElicitationAnswer:
    action: ElicitAction
    content: dict[str, Value] | None = None  # only with accept, in form mode

    @classmethod
    def decline(cls) -> "ElicitationAnswer":
        return cls("decline")


@dataclass(frozen=True)
class SampleTurn:
    """One message of a sampling request as the dialog shows (and may edit) it."""

    role: str  # "user" | "assistant"
    text: str  # its text parts; other blocks as short notes ("[image: image/png]")
    editable: bool = True  # False when it holds tool uses/results or media: only text-only turns are edited


@dataclass(frozen=True)
class SamplingRequest:
    server: str
    turns: tuple[SampleTurn, ...]
    system_prompt: str = ""
    max_tokens: int = 1024
    temperature: float | None = None
    stop_sequences: tuple[str, ...] = ()
    model_preferences: str = ""  # hints and priorities in words, for the dialog
    tools: tuple[str, ...] = ()  # names of the tools the server lets the model use
    ask: bool = True  # the server's setting: ask the person (default) or run at once
    params: Any = None  # the SDK's CreateMessageRequestParams, for what the turns do not carry

    @property
    def size(self) -> int:
        """Characters the model would read (for the context check)."""
        return len(self.system_prompt) + sum(len(t.text) for t in self.turns)

    def edited(self, *, system_prompt: str | None = None, texts: dict[int, str] | None = None,
               max_tokens: int | None = None) -> "SamplingRequest":
        """The request with the person's edits (only text-only turns change)."""
        turns = list(self.turns)
        for i, text in (texts or {}).items():
            if 0 <= i < len(turns) and turns[i].editable:
                turns[i] = replace(turns[i], text=text)
        return replace(self, turns=tuple(turns),
                       system_prompt=self.system_prompt if system_prompt is None else system_prompt,
                       max_tokens=self.max_tokens if max_tokens is None else max(1, max_tokens))


@dataclass(frozen=True)
class ToolUse:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class SamplingReply:
    model: str
    text: str
    stop_reason: str = "endTurn"
    tool_uses: tuple[ToolUse, ...] = ()


@dataclass(frozen=True)
class SamplingAnswer:
    """The reply to send back, or why not (one sentence the server receives as the error)."""

    reply: SamplingReply | None = None
    refusal: str = ""

    @classmethod
    def refuse(cls, why: str) -> "SamplingAnswer":
        return cls(None, why)


Sampler = Callable[[SamplingRequest], Awaitable[SamplingAnswer]]
"""Runs a (possibly edited) request with the session's model (``agent/mcp_sampling.py``)."""


class McpHost(Protocol):
    """Who answers a server's requests: the window's dialogs, the CLI's rules, a test."""

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer: ...

    async def sample(self, request: SamplingRequest) -> SamplingAnswer: ...


def sampling_problem(request: SamplingRequest) -> str | None:
    """Why a request cannot be run at all, before anyone is asked (None: it can)."""
    if not request.turns:
        return f"MCP server '{request.server}' asked for a completion without any message."
    if request.size > MAX_SAMPLING_CHARS:
        return (f"MCP server '{request.server}' asked for a completion of {request.size:,} characters, more than "
                f"the {MAX_SAMPLING_CHARS:,} a model's context can take; it was refused.")
    return None


class HeadlessHost:
    """The CLI's answers (``chat``, ``mcp call``): see the module docstring for the rules."""

    def __init__(self, *, yes: bool = False, sampler: Sampler | None = None,
                 note: Callable[[str], None] | None = None) -> None:
        self.yes = yes
        self.sampler = sampler
        self._note = note or (lambda text: None)

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        if request.mode == "url":
            self._note(f"MCP server '{request.server}' asked to open {request.url[:200]}; declined (no browser is "
                       "opened in a headless run).")
            return ElicitationAnswer.decline()
        missing = request.form.required_without_default
        if not self.yes:
            self._note(f"MCP server '{request.server}' asked for input; declined (run with --yes to accept the "
                       "defaults of its form).")
            return ElicitationAnswer.decline()
        if missing:
            self._note(f"MCP server '{request.server}' asked for input that has no default "
                       f"({', '.join(missing[:5])}); declined.")
            return ElicitationAnswer.decline()
        values = request.form.defaults()
        if check_answer(request.form, values):
            return ElicitationAnswer.decline()
        self._note(f"MCP server '{request.server}' asked for input; accepted with its defaults (--yes).")
        return ElicitationAnswer("accept", values)

    async def sample(self, request: SamplingRequest) -> SamplingAnswer:
        if request.ask or not self.yes or self.sampler is None:
            why = (f"MCP server '{request.server}' asked for a completion from the model; sampling is denied in a "
                   "headless run (set the server's \"sampling\" to \"allow\" and run with --yes to permit it).")
            self._note(why)
            return SamplingAnswer.refuse(why)
        return await self.sampler(request)


class DecliningHost:
    """No person and no model behind it (a probe): every request is declined."""

    async def elicit(self, request: ElicitationRequest) -> ElicitationAnswer:
        return ElicitationAnswer.decline()

    async def sample(self, request: SamplingRequest) -> SamplingAnswer:
        return SamplingAnswer.refuse(f"MCP server '{request.server}' asked for a completion, but no model is "
                                     "available here.")
