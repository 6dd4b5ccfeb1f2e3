"""The assistant: one object that answers chat turns, built once, used by every front end.

In the spirit of pydantic-ai's ``Agent(model, toolsets).run(prompt, message_history)``: an
``Assistant`` is built once from the settings, the store, the tool registry, the transcript
store and the provider holder (and, once they are started, the MCP servers, whose tools are
already in the registry). A turn is one call::

    turn = await assistant.run(session_id, prompt, approver=approver, on_event=listener)

or ``async for event in assistant.stream(session_id, prompt, approver=approver)`` for the same
events as an iterator. The window's chat controller, ``cks-desktop chat`` and the tests all answer
through it, so a turn means the same thing everywhere:

- the scopes granted are read from the settings at the start of each turn (a change in Settings
  applies to the next turn), plus ``extra_scopes`` for this turn only (the CLI's ``--grant``);
- the provider is the holder's (made on first use, shared, replaced when the settings change);
- the conversation continues from ``history`` when the caller keeps one (the window does), else
  from the saved transcript; every turn is saved as it finishes;
- every failure once the turn has started, including "no provider is set up" and a bug in the
  app, ends in an ``ErrorEvent`` followed by ``Finished``, never in an exception; only Stop
  (cancelling the task) propagates, after the transcript has been left consistent. (A saved
  transcript that cannot be read at all raises before the turn starts, as the store's error.)

``ai_chat`` (``agent/loop.py``) stays the stateless engine underneath: the assistant owns the
wiring that every caller used to repeat (grant, provider, limits, folders, transcript).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from cks_desktop.agent import events as ev
from cks_desktop.agent.budget import AnswerBudget, session_budget
from cks_desktop.agent.chat_inputs import ChatDeps, TurnOptions
from cks_desktop.agent.loop import ai_chat
from cks_desktop.agent.providers import Factory, ProviderHolder
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.llm.messages import Message
from cks_desktop.llm.provider import GenerationParams, ProviderError
from cks_desktop.tools.approval import Approver, Decision, StaticApprover
from cks_desktop.tools.context import Run
from cks_desktop.tools.scopes import chat_grant
from cks_desktop.tools.types import Caller, Scope, ToolCall

if TYPE_CHECKING:
    from cks_desktop.agent.citations import AnswerCitations
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.mcp.manager import McpManager
    from cks_desktop.secrets import SecretStore
    from cks_desktop.settings import Settings
    from cks_desktop.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

REVERT_TOOL = "revert_change"
_revert_ids = itertools.count(1)


@dataclass(frozen=True)
class TurnResult:
    """How a turn ended: the conversation the next turn continues from, and why it stopped.

    ``citations``: the verdict on the answer's citations of the passages the turn retrieved
    (``agent/citations.py``); None when the answer cites none or the turn retrieved nothing."""

    messages: list[Message]
    reason: ev.FinishReason
    citations: "AnswerCitations | None" = None


class _Relay:
    """Passes events on to the caller's listener (errors isolated) and remembers how the turn ended."""

    def __init__(self, listener: ev.EventListener | None) -> None:
        self._listener = listener
        self.reason: ev.FinishReason | None = None
        self.citations: AnswerCitations | None = None

    def __call__(self, event: ev.AgentEvent) -> None:
        if isinstance(event, ev.Finished):
            self.reason = event.reason
        elif isinstance(event, ev.AssistantMessage) and event.citations is not None:
            self.citations = event.citations
        if self._listener is None:
            return
        try:
            self._listener(event)
        except Exception:  # a broken listener must not break the chat
            log.exception("agent event listener failed")


class Assistant:
    """Answers chat turns in any session of one store, with one registry and one provider holder."""

    def __init__(self, *, settings: "Settings", store: "GraphStore", registry: "ToolRegistry",
                 transcripts: TranscriptStore, providers: ProviderHolder, mcp: "McpManager | None" = None,
                 scope_setting: str = "") -> None:
        self.settings = settings
        self.store = store
        self.registry = registry
        self.transcripts = transcripts
        self.providers = providers
        self.mcp = mcp
        # Where a refusal for a missing scope tells the person to grant it ("" = the GUI's setting).
        self.scope_setting = scope_setting

    @classmethod
    def build(cls, settings: "Settings", store: "GraphStore", secrets: "SecretStore | None", *,
              registry: "ToolRegistry | None" = None, provider_factory: Factory | None = None,
              pinned_provider: str | None = None, scope_setting: str = "") -> "Assistant":
        """The chat's tools (``build_chat_registry``) unless ``registry`` is given; providers made by
        ``provider_factory`` (default: ``llm.factory.create_provider``), ``pinned_provider`` instead
        of the saved default."""
        if registry is None:
            from cks_desktop.agent.toolset import build_chat_registry

            registry = build_chat_registry(store, settings)
        return cls(settings=settings, store=store, registry=registry, transcripts=TranscriptStore.for_store(store),
                   providers=ProviderHolder(settings, secrets, provider_factory, pinned=pinned_provider),
                   scope_setting=scope_setting)

    def attach_mcp(self, manager: "McpManager") -> None:
        """The MCP servers started late (after the window is up): their tools are in the registry
        already; the assistant closes them with itself."""
        self.mcp = manager

    # -- a turn ------------------------------------------------------------------------
    async def run(self, session_id: str, prompt: str | Message | None, *, approver: Approver,
                  on_event: ev.EventListener | None = None, history: Sequence[Message] | None = None,
                  max_iterations: int | None = None, extra_scopes: Iterable[Scope] = (),
                  budget: "AnswerBudget | None" = None) -> TurnResult:
        """Answer ``prompt`` in ``session_id``'s chat, streaming events to ``on_event``.

        ``prompt`` None continues the conversation as it is (Retry, Continue). ``history`` None
        continues from the saved transcript. ``max_iterations`` None: the settings' limit.
        ``budget`` None: the session's own budget from the settings (``agent/budget.py``), if any.
        Cancelling the task is Stop: ``CancelledError`` propagates once the transcript is saved.
        """
        relay = _Relay(on_event)
        messages = list(history) if history is not None else self.transcripts.load(session_id)
        try:
            options = self.turn_options(session_id, max_iterations=max_iterations, extra_scopes=extra_scopes,
                                        budget=budget)
            async with self.providers.use() as provider:
                deps = ChatDeps(provider, self.registry, self.store, self.transcripts)
                messages = await ai_chat(session_id, messages, prompt, deps, options, approver=approver,
                                         on_event=relay)
        except ProviderError as exc:  # no provider / no key: said in the chat (not saved), with the way out
            relay(ev.ErrorEvent(exc.message, exc.kind))
            relay(ev.Finished("error"))
            return TurnResult(messages, "error")
        except Exception as exc:  # a bug: one sentence for the person, the trace for the log
            log.exception("the chat turn failed")
            relay(ev.ErrorEvent(f"The answer stopped because of an internal error "
                                f"({type(exc).__name__}); the details are in the log.", "internal"))
            relay(ev.Finished("error"))
            return TurnResult(self.saved_messages(session_id, fallback=messages), "error")
        return TurnResult(messages, relay.reason or "stop", relay.citations)

    async def stream(self, session_id: str, prompt: str | Message | None, *, approver: Approver,
                     history: Sequence[Message] | None = None, max_iterations: int | None = None,
                     extra_scopes: Iterable[Scope] = ()) -> AsyncIterator[ev.AgentEvent]:
        """The events of one turn as an async iterator (``Finished`` comes last).

        Leaving the loop early (``break``, or closing the iterator) is Stop: the turn is cancelled
        and its transcript saved consistently. Use ``contextlib.aclosing`` to make that prompt.
        """
        queue: asyncio.Queue[ev.AgentEvent | None] = asyncio.Queue()

        async def turn() -> None:
            try:
                await self.run(session_id, prompt, approver=approver, on_event=queue.put_nowait, history=history,
                               max_iterations=max_iterations, extra_scopes=extra_scopes)
            finally:
                queue.put_nowait(None)

        task = asyncio.ensure_future(turn())
        try:
            while (event := await queue.get()) is not None:
                yield event
            await task
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    def turn_options(self, session_id: str, *, max_iterations: int | None = None,
                     extra_scopes: Iterable[Scope] = (), budget: "AnswerBudget | None" = None) -> TurnOptions:
        """How the next turn in ``session_id`` runs, read from the settings now (so a change in
        Settings applies to the next turn): the grant, the limit, the sampling, the servers' notes."""
        return TurnOptions(
            grant=chat_grant(self.settings, session_id, extra=extra_scopes, scope_setting=self.scope_setting),
            max_iterations=max_iterations or self.settings.max_iterations,
            params=self.generation_params(session_id),
            server_instructions=self.mcp.instructions() if self.mcp is not None else {},
            budget=budget if budget is not None else session_budget(self.settings, session_id))

    def generation_params(self, session_id: str) -> GenerationParams:
        """The session's temperature and max output tokens, else Settings → Chat & agent's (per turn,
        so a change applies to the next turn); an unreadable session gets the app's defaults."""
        from cks_desktop.agent.session_settings import SessionSettingsStore, default_params, effective_params

        try:
            return effective_params(SessionSettingsStore(self.store, self.settings).get(session_id), self.settings)
        except Exception as exc:  # an unknown session fails later, in the tools, with a clear message
            log.warning("could not read the chat settings of session %s: %s", session_id, exc)
            return default_params(self.settings)

    def saved_messages(self, session_id: str, *, fallback: Sequence[Message] = ()) -> list[Message]:
        """The conversation as saved (after a Stop or a failure, what the next turn continues from)."""
        try:
            return self.transcripts.load(session_id)
        except Exception:
            log.exception("reloading the transcript failed")
            return list(fallback)

    # -- revert ------------------------------------------------------------------------
    def can_revert(self, tool_name: str, source: str) -> bool:
        """Whether a call of this tool made a change that Revert can undo (a built-in write)."""
        if source != "builtin":
            return False
        spec = self.registry.get(tool_name)
        return spec is not None and spec.mutating and self.registry.get(REVERT_TOOL) is not None

    async def revert(self, session_id: str, change_id: str) -> str | None:
        """Undo ``change_id`` through the registry's ``revert_change`` (the person's click is the
        approval) and mark it reverted in the transcript; None when done, else the tool's error."""
        run = Run(session_id, Caller.USER, StaticApprover(Decision.ALLOW))
        call = ToolCall(f"revert_{next(_revert_ids)}", REVERT_TOOL, {"change_id": change_id})
        result = await self.registry.invoke(call, run)
        if result.is_error:
            return result.content
        try:
            self.transcripts.mark_reverted(session_id, change_id)
        except Exception:
            log.exception("could not record the revert in the transcript")
        return None

    # -- closing -----------------------------------------------------------------------
    async def aclose(self) -> None:
        """Close the provider clients and the MCP servers concurrently (best effort, logged)."""
        jobs = [self.providers.aclose()]
        if self.mcp is not None:
            jobs.append(self.mcp.aclose())
        results = await asyncio.gather(*jobs, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
                log.warning("closing failed: %s", result)
