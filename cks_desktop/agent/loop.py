"""``ai_chat``: one bounded, stateless chat turn with tool calling.

The loop takes the conversation so far and a prompt, and returns the longer
conversation; it keeps nothing between calls, so the GUI, the CLI and tests
all drive it the same way and the transcript store stays the single source of
truth. Each model round-trip streams through the provider-neutral events; the
calls of one answer run one after another through ``ToolRegistry.invoke`` (the
only place tools run), and their results go back as one ``tool`` message.

Invariants the rest of the app relies on:
- Every tool call in an assistant message has a result in the next message,
  whatever happened (error, denial, Stop), so any provider accepts the history.
- The transcript is saved after each model turn, one transaction per save, so a
  killed process loses at most the turn in flight, never half a message.
- Endings are explicit: a ``Finished`` event always comes last, and the cap and
  the repeated-failure stop leave a visible notice in the chat.
"""

from __future__ import annotations

import asyncio
import logging
import time
import weakref
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from cks_desktop.agent import context as ctx
from cks_desktop.agent import events as ev
from cks_desktop.agent.budget import BudgetMeter
from cks_desktop.agent.citations import AnswerCitations, check_answer, exchange, given_in
from cks_desktop.agent.chat_inputs import ChatDeps, TurnOptions
from cks_desktop.agent.images import ImageStore, part_of
from cks_desktop.agent.prompt import build_system_prompt
from cks_desktop.agent.turn import stream_turn
from cks_desktop.agent.usage import record as record_usage
from cks_desktop.graph.errors import Unreachable
from cks_desktop.llm.assembler import StreamAssembler
from cks_desktop.llm import vision
from cks_desktop.llm.events import ToolCallDone
from cks_desktop.llm.messages import ImagePart, Message, Reasoning, Text, ToolCallPart, ToolDef, ToolResultPart
from cks_desktop.llm.provider import GenerationParams, Provider, ProviderError
from cks_desktop.llm.windows import known_window_for, needs_lookup, window_for
from cks_desktop.tools.approval import ApprovalRequest, Approver, Decision, fingerprint
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry, model_schema
from cks_desktop.tools.types import Caller, Outcome, ToolCall, ToolResult
from cks_desktop.tools.wire_names import to_wire

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.agent.transcript import Mark, TranscriptStore

log = logging.getLogger(__name__)

# ErrorEvent.kind of a prompt the turn could not save (the database server is unreachable):
# nothing was sent to the model and the window gives the typed text back.
NOT_SAVED = "not_saved"

REPEATED_FAILURE_LIMIT = 3
THINKING_ROOM = 8192  # tokens kept for thinking when the session asks for it without a budget
CANCELLED_TEXT = "cancelled by the person"


def limit_text(limit: int) -> str:
    """The limit notice: the fact only. The way on is the front end's one clear offer (the chat's
    Continue button, the CLI's hint line), never a second, different hint in this text."""
    turns = "model turn" if limit == 1 else "model turns"
    return f"Reached the iteration limit ({limit} {turns}); the answer may be unfinished."


class _ApprovalRelay:
    """Wraps the caller's approver so listeners see approvals start and end (Stop included)."""

    def __init__(self, inner: Approver, emit: ev.EventListener) -> None:
        self._inner = inner
        self._emit = emit
        self._waited_ms: dict[str, float] = {}  # call id → time spent waiting for the person

    @property
    def denial_hint(self) -> str:  # the registry appends it to a refusal
        return self._inner.denial_hint

    def take_wait_ms(self, call_id: str) -> float:
        """How long ``call_id`` waited for the person's answer (then forgotten): a row's duration
        is the call's own time, not the time the person took to read the approval dialog."""
        return self._waited_ms.pop(call_id, 0.0)

    async def request_approval(self, request: ApprovalRequest) -> Decision:
        call_id = request.call.id
        self._emit(ev.ApprovalRequested(call_id, request.reason, request.preview))
        started = time.perf_counter()
        try:
            decision = await self._inner.request_approval(request)
        except asyncio.CancelledError:
            self._note_wait(call_id, started)
            self._emit(ev.ApprovalResolved(call_id, "cancelled"))
            raise
        self._note_wait(call_id, started)
        self._emit(ev.ApprovalResolved(call_id, Decision(decision)))
        return decision

    def _note_wait(self, call_id: str, started: float) -> None:
        self._waited_ms[call_id] = self._waited_ms.get(call_id, 0.0) + (time.perf_counter() - started) * 1000


def _active_ms(run: Run, call_id: str, started: float) -> float:
    """Milliseconds since ``started`` without the time the call waited for approval."""
    total = (time.perf_counter() - started) * 1000
    relay = run.approver
    waited = relay.take_wait_ms(call_id) if isinstance(relay, _ApprovalRelay) else 0.0
    return max(0.0, total - waited)


@dataclass
class _CallOutcome:
    part: ToolCallPart
    result: ToolResult
    duration_ms: float
    display_name: str
    source: str
    images: tuple[ImagePart, ...] = ()  # the result's images, stored in the session (agent/images.py)

    @property
    def state(self) -> ev.CallState:
        return ev.CallState.of(self.result.outcome)


def _expected_failure(exc: BaseException) -> bool:
    """A save that failed for a reason its own sentence explains (a full disk, a read-only or
    unreachable database): logged without a traceback."""
    from cks_desktop.diskfull import is_disk_full
    from cks_desktop.graph.errors import DatabaseError

    return isinstance(exc, DatabaseError) or is_disk_full(exc)


def _not_saved_sentence(exc: BaseException) -> str:
    """What was not saved, and why, in one sentence (a full disk named as such)."""
    from cks_desktop.diskfull import is_disk_full

    why = str(exc).rstrip(".")
    if "disk is full" in why.lower() or is_disk_full(exc):
        if not why.lower().startswith("the disk is full"):
            why = f"The disk is full ({why})"
        return (f"{why}; this turn (your message, the answer and its usage) could not be saved in the "
                "session: it is shown here, and the next turn is saved once there is space.")
    return f"The chat could not be saved: {why}."


@dataclass
class _Chat:
    """Mutable state of one ``ai_chat`` call (never outlives it)."""

    session_id: str
    messages: list[Message]
    emit: ev.EventListener
    transcript: "TranscriptStore | None"
    save_failed: bool = False
    streak_fp: str | None = None
    streak: int = 0
    tripped: _CallOutcome | None = None
    iterations: int = 0
    budget: int | None = None  # tighter request budget after a "prompt too long" (agent/context.py)
    retried_too_long: bool = False
    summary_failed: bool = False
    images: ImageStore | None = None  # where the turn's images are kept (None: only in memory)

    def save(self, new: Sequence[Message], outcomes: Sequence[_CallOutcome] = (), *,
             notice: ev.Notice | None = None, mark: "Mark | None" = None,
             citations: AnswerCitations | None = None) -> Exception | None:
        """Append messages to the list and, in one transaction, to the transcript.

        Returns the save's failure (None when saved): the prompt's caller stops the turn when
        the database server cannot be reached (``graph.errors.Unreachable``)."""
        self.messages.extend(new)
        if self.transcript is None or not new:
            return None
        from cks_desktop.agent.transcript import CallRecord, sign_in_of

        records = [CallRecord(o.part.id, o.part.name, o.display_name, o.source, o.state, o.duration_ms,
                              o.result.change_id, sign_in=sign_in_of(o.result.structured)) for o in outcomes]
        try:
            self.transcript.append(self.session_id, list(new), calls=records, notice=notice, mark=mark,
                                   citations=citations)
        except Exception as exc:  # disk full, locked file: the chat goes on, the person is told once
            if _expected_failure(exc):  # its sentence says all; no traceback in the log or the terminal
                log.info("saving the transcript failed: %s", exc)
            else:
                log.exception("saving the transcript failed")
            if not self.save_failed and not (isinstance(exc, Unreachable) and not self.iterations):
                self.save_failed = True
                self.emit(ev.ErrorEvent(_not_saved_sentence(exc), "save_failed"))
            return exc
        return None

    def record_error(self, text: str) -> None:
        """Keep a failure's sentence in the transcript (a ``Mark.ERROR`` row, never sent to a
        model), so the chat shows it again after a restart, beside Retry."""
        if self.transcript is None:
            return
        from cks_desktop.agent.transcript import Mark

        try:
            self.transcript.append(self.session_id, [_assistant(text)], mark=Mark.ERROR)
        except Exception as exc:  # the chat already shows the error; a failed save is logged
            if _expected_failure(exc):
                log.info("saving the error in the transcript failed: %s", exc)
            else:
                log.exception("saving the error in the transcript failed")

    def finish(self, reason: ev.FinishReason) -> None:
        self.emit(ev.Finished(reason, self.iterations))


def _safe_emit(on_event: ev.EventListener | None) -> ev.EventListener:
    if on_event is None:
        return lambda _event: None

    def emit(event: ev.AgentEvent) -> None:
        try:
            on_event(event)
        except Exception:  # a broken listener must not break the chat
            log.exception("agent event listener failed")

    return emit


# Tool definitions per registry and granted scopes, dropped whenever the registry changes
# (an MCP server's tools refreshed, a tool registered): building them deep-copies every
# schema, which would otherwise be most of the loop's own cost per chat.
_TOOL_DEFS: "weakref.WeakKeyDictionary[ToolRegistry, dict[Any, tuple[list[ToolDef], dict[str, str]]]]" \
    = weakref.WeakKeyDictionary()


def tool_defs(registry: ToolRegistry, run: Run) -> tuple[list[ToolDef], dict[str, str]]:
    """The tools offered to the model (wire-named, session pinned away) and wire → internal names.

    The result is shared between calls: treat the ``ToolDef``s as read-only.
    """
    cache = _TOOL_DEFS.get(registry)
    if cache is None:
        cache = _TOOL_DEFS[registry] = {}
        registry.subscribe(cache.clear)
    grant_key = (run.granted_scopes, frozenset(run.source_grants.items()))
    hit = cache.get(grant_key)
    if hit is not None:
        return hit
    offered = registry.offered(run)
    table = registry.wire_names(offered)
    defs: list[ToolDef] = []
    back: dict[str, str] = {}
    for spec in offered:
        wire = table.wire(spec.name)
        if wire is None:  # its wire name is another tool's (tools/wire_names.py): never offer it twice
            log.warning("tool %s left out of the request: its wire name %s is taken", spec.name, to_wire(spec.name))
            continue
        try:
            schema = model_schema(spec)
        except Exception:  # one tool's schema (a server's) must never fail every turn
            log.warning("tool %s left out of the request: its schema cannot be copied", spec.name, exc_info=True)
            continue
        back[wire] = spec.name
        defs.append(ToolDef(wire, spec.description, schema))
    cache[grant_key] = (defs, back)
    return defs, back


async def _run_call(chat: _Chat, registry: ToolRegistry, run: Run, done_call: ToolCallDone,
                    part: ToolCallPart) -> _CallOutcome:
    """Run one finished call through the registry; Stop becomes a cancelled outcome, then re-raises."""
    name = part.name  # internal name, or the unknown name exactly as the model sent it
    spec = registry.resolve(name)
    display = spec.display_name if spec else name
    source = spec.source if spec else "unknown"
    chat.emit(ev.ToolCallStarted(done_call.id, name, display, done_call.arguments, source))
    started = time.perf_counter()
    if done_call.arguments is None:
        why = done_call.error or "the text is not valid JSON"
        result = ToolResult(done_call.id, f"The arguments for {name} were not a valid JSON object ({why}). "
                            "Send the arguments again as one JSON object.", Outcome.ERROR, name=name)
    else:
        try:
            result = await registry.invoke(ToolCall(done_call.id, name, dict(done_call.arguments)), run)
        except asyncio.CancelledError:
            elapsed = _active_ms(run, done_call.id, started)
            result = ToolResult(done_call.id, CANCELLED_TEXT, Outcome.CANCELLED, name=name, duration_ms=elapsed)
            outcome = _CallOutcome(part, result, elapsed, display, source)
            chat.emit(ev.ToolCallFinished(done_call.id, result, elapsed))
            raise _CancelledDuringCall(outcome) from None
        except Exception as exc:  # the registry promises not to raise; if it does, the model still gets an answer
            log.exception("tool call %s raised", name)
            result = ToolResult(done_call.id, f"{display} failed inside the app: {type(exc).__name__}.",
                                Outcome.ERROR, name=name)
    elapsed = _active_ms(run, done_call.id, started)
    stored = await _keep_images(chat, result)
    chat.emit(ev.ToolCallFinished(done_call.id, result, elapsed))
    return _CallOutcome(part, result, elapsed, display, source, stored)


async def _keep_images(chat: _Chat, result: ToolResult) -> tuple[ImagePart, ...]:
    """A result's images, stored once in the session (a failed write keeps them for this turn only)."""
    parts: list[ImagePart] = []
    for blob in result.images:
        try:
            parts.append(await chat.images.store_async(chat.session_id, blob) if chat.images is not None
                         else part_of(blob))
        except Exception:  # the transcript then names an image it cannot show again; the turn goes on
            log.warning("could not store an image of %s", result.name, exc_info=True)
            parts.append(part_of(blob))
    return tuple(parts)


class _CancelledDuringCall(Exception):
    """Carries the cancelled call's outcome out of ``_run_call`` (re-raised as CancelledError)."""

    def __init__(self, outcome: _CallOutcome) -> None:
        super().__init__("cancelled")
        self.outcome = outcome


def _track_failures(chat: _Chat, outcome: _CallOutcome) -> None:
    if outcome.result.outcome is Outcome.OK:
        chat.streak_fp, chat.streak = None, 0
        return
    fp = fingerprint(outcome.part.name, outcome.part.arguments)
    if fp == chat.streak_fp:
        chat.streak += 1
    else:
        chat.streak_fp, chat.streak = fp, 1
    if chat.streak >= REPEATED_FAILURE_LIMIT and chat.tripped is None:
        chat.tripped = outcome


def _tool_message(outcomes: Iterable[_CallOutcome]) -> Message:
    return Message("tool", [ToolResultPart(o.part.id, o.part.name, o.result.content, o.result.is_error,
                                           images=o.images) for o in outcomes])


def _assistant(text: str) -> Message:
    return Message("assistant", [Text(text)] if text else [])


def _notice(chat: _Chat, text: str, kind: ev.Notice) -> None:
    message = _assistant(text)
    chat.emit(ev.AssistantMessage(message, notice=kind))
    chat.save([message], notice=kind)


_Step = Literal["again", "ended"]  # a model turn to repeat (after compaction), or a chat that has ended


async def ai_chat(
    session_id: str,
    messages: Sequence[Message],
    prompt: str | Message | None,
    deps: ChatDeps,
    options: TurnOptions,
    *,
    approver: Approver,
    on_event: ev.EventListener | None = None,
) -> list[Message]:
    """Answer ``prompt`` in the session's chat; return the whole conversation afterwards.

    ``prompt`` None continues the conversation as it is, without a new user
    message (Retry after an error, Continue after the iteration limit). A ``Message`` prompt
    carries the person's images (``ImagePart``s already stored with ``agent/images.py``); for a
    model that takes no images it is refused with one sentence and nothing is saved.
    ``deps`` is what the turn uses, ``options`` how it runs (``agent/chat_inputs.py``); the
    Assistant builds both once per turn.
    Cancelling the task is Stop: the transcript is saved consistently, then the
    ``CancelledError`` propagates.

    The steps: prepare (the run, the tools, the system prompt, the prompt saved), then per model
    turn stream it (``_model_turn``), run its calls (``_run_calls``) and decide whether to go on
    (``_stopped_after_calls``); the iteration cap ends it with a notice.
    """
    max_iterations = options.max_iterations
    if max_iterations < 1:
        raise ValueError("max_iterations must be at least 1")
    emit = _safe_emit(on_event)
    chat = _Chat(session_id, list(messages), emit, deps.transcript)
    run = _run_for(session_id, approver, emit, options, deps.provider)
    tools, wire_back = tool_defs(deps.registry, run)
    system_prompt = options.system_prompt
    if system_prompt is None:
        system_prompt = _system_prompt_for(deps, options, session_id, [wire_back[t.name] for t in tools])
    if not await _take_prompt(chat, deps, prompt):
        return chat.messages
    run.passages_given = given_in(chat.messages)  # a Continue numbers on after the exchange's passages
    meter = BudgetMeter(options.budget) if options.budget is not None and not options.budget.empty else None

    while chat.iterations < max_iterations:
        chat.iterations += 1
        emit(ev.TurnStarted(chat.iterations))
        turn = await _model_turn(chat, deps, tools, wire_back, system_prompt, options.params, meter)
        match turn:
            case "again":
                continue
            case "ended":
                return chat.messages
        assistant = turn.message(wire_back.get)
        calls = list(zip(turn.calls, assistant.tool_calls))
        # The answer is complete: its citations of the turn's passages are checked (agent/citations.py).
        verdict = None if calls else check_answer(assistant.text, exchange(chat.messages))
        if assistant.parts or calls:
            emit(ev.AssistantMessage(assistant, citations=verdict))
        if not calls:
            if assistant.parts:
                chat.save([assistant], citations=verdict)
            chat.finish("stop")
            return chat.messages
        await _run_calls(chat, deps.registry, run, assistant, calls)
        if _stopped_after_calls(chat, meter, max_iterations):
            return chat.messages

    text = limit_text(max_iterations)
    emit(ev.IterationLimit(max_iterations, text))
    _notice(chat, text, ev.Notice.ITERATION_LIMIT)
    chat.finish("limit")
    return chat.messages


def _run_for(session_id: str, approver: Approver, emit: ev.EventListener, options: TurnOptions,
             provider: Provider) -> Run:
    """The model's run of this turn: its grants, folders and the approval relay that reports waits."""
    grant = options.grant
    return Run(session_id, Caller.MODEL, _ApprovalRelay(approver, emit), granted_scopes=grant.scopes,
               source_grants=dict(grant.by_source), scope_setting=grant.scope_setting,
               allowed_folders=tuple(grant.allowed_folders), llm=provider,
               on_progress=lambda call_id, done, total, message: emit(ev.ToolCallProgress(call_id, done, total,
                                                                                          message)))


def _system_prompt_for(deps: ChatDeps, options: TurnOptions, session_id: str, offered: list[str]) -> str:
    """The session's system prompt, quoting the instructions of the MCP servers whose tools are offered."""
    sources = {spec.source for spec in (deps.registry.resolve(n) for n in offered) if spec is not None}
    quoted = {name: text for name, text in options.server_instructions.items() if f"mcp:{name}" in sources}
    return _build_prompt(deps.store, session_id, options.instructions, offered, quoted)


async def _take_prompt(chat: _Chat, deps: ChatDeps, prompt: str | Message | None) -> bool:
    """Fill in the transcript's images and save the person's prompt; False when the turn ends here
    (images for a model that takes none, or a team database that could not keep the prompt)."""
    chat.images = ImageStore(deps.store)
    if vision.has_images(chat.messages):  # the transcript keeps references: fill in the bytes once
        chat.messages = await chat.images.hydrate_async(chat.session_id, chat.messages)
    if isinstance(prompt, Message) and prompt.images and not await vision.accepts_images(deps.provider):
        chat.emit(ev.ErrorEvent(vision.refusal(deps.provider), "no_image_support"))  # nothing saved: the draft stays
        chat.finish("error")
        return False
    if prompt is None:
        return True
    not_kept = chat.save([prompt if isinstance(prompt, Message) else Message.user(prompt)])
    if isinstance(not_kept, Unreachable):  # a team database that is down: no answer to a message
        chat.messages.pop()                # it could not keep; the window gives the text back
        chat.emit(ev.ErrorEvent(str(not_kept), NOT_SAVED))
        chat.finish("error")
        return False
    return True


async def _model_turn(chat: _Chat, deps: ChatDeps, tools: list[ToolDef], wire_back: Mapping[str, str],
                      system_prompt: str | None, params: GenerationParams | None,
                      meter: BudgetMeter | None) -> StreamAssembler | _Step:
    """Stream one model turn and record its usage; a failure ends the chat with its sentence, except
    one "prompt too long", which compacts and asks for the turn again. Stop saves what streamed."""
    provider, emit = deps.provider, chat.emit
    turn = StreamAssembler()
    request: ctx.Fitted | None = None
    try:
        request = await _prepare(chat, provider, tools, system_prompt, params)
        await stream_turn(provider, request.messages, tools, system_prompt, turn,
                          lambda text: emit(ev.TextDelta(text)),
                          lambda call_id, wire, size: _preparing(chat, deps.registry, wire_back, call_id, wire, size),
                          params, prepared=True,
                          on_wait=lambda s, kind, n, resumed: emit(ev.Waiting(s, kind, n, resumed)),
                          on_reasoning=lambda text: emit(ev.ReasoningDelta(text)))
    except asyncio.CancelledError:
        _end_partial(chat, turn.text, stopped=True, reasoning=turn.cut())
        chat.finish("cancelled")
        raise
    except ProviderError as exc:
        return _provider_failed(chat, provider, exc, turn, request)
    except Exception as exc:  # an adapter bug: one sentence for the person, the trace for the log
        log.exception("the model stream failed")
        _end_partial(chat, turn.text)
        _fail(chat, f"The answer stopped because of an internal error ({type(exc).__name__}).", "internal")
        return "ended"
    _measure(chat, provider, turn, request, meter)
    return turn


def _measure(chat: _Chat, provider: Provider, turn: StreamAssembler, request: ctx.Fitted,
             meter: BudgetMeter | None) -> None:
    """Record a finished turn's usage, count it against the budget and teach the token estimator."""
    record_usage(chat.transcript, chat.session_id, chat.iterations, provider, turn.usage)
    if meter is not None:
        meter.add(turn.usage, provider, estimate_in=request.tokens,
                  estimate_out_chars=len(turn.text) + sum(len(c.raw_arguments) for c in turn.calls))
    if turn.usage is not None and turn.usage.input_tokens:
        ctx.estimator_for(provider).observe(request.chars, len(request.messages), turn.usage.input_tokens)


def _provider_failed(chat: _Chat, provider: Provider, exc: ProviderError, turn: StreamAssembler,
                     request: ctx.Fitted | None) -> _Step:
    """A provider's error: one compaction and retry for a first "prompt too long" before any text,
    else the partial answer kept and the error's sentence shown and recorded."""
    if exc.kind == "prompt_too_long" and not chat.retried_too_long and not turn.text and request:
        # Trust the estimate less and aim well below it.
        log.info("the provider said the prompt was too long (estimate %d tokens); compacting", request.tokens)
        chat.retried_too_long = True
        ctx.estimator_for(provider).tighten()
        chat.budget = max(256, min(request.budget, request.tokens) * 7 // 10)
        chat.iterations -= 1
        return "again"
    _end_partial(chat, turn.text, reasoning=turn.cut())
    _fail(chat, exc.message, exc.kind)
    return "ended"


def _fail(chat: _Chat, text: str, kind: str) -> None:
    """End the chat on an error: its sentence shown and kept in the transcript beside Retry."""
    chat.emit(ev.ErrorEvent(text, kind))
    chat.record_error(text)
    chat.finish("error")


async def _run_calls(chat: _Chat, registry: ToolRegistry, run: Run, assistant: Message,
                     calls: Sequence[tuple[ToolCallDone, ToolCallPart]]) -> None:
    """Run an answer's calls one after another and save the answer with all their results; on Stop,
    save the calls that ran (a result each) and re-raise."""
    outcomes: list[_CallOutcome] = []
    try:
        for done, part in calls:
            outcome = await _run_call(chat, registry, run, done, part)
            outcomes.append(outcome)
            _track_failures(chat, outcome)
    except _CancelledDuringCall as stop:
        outcomes.append(stop.outcome)
        ran_ids = {o.part.id for o in outcomes}  # calls that never started are dropped
        ran = Message("assistant", [p for p in assistant.parts
                                    if not isinstance(p, ToolCallPart) or p.id in ran_ids])
        from cks_desktop.agent.transcript import Mark

        chat.save([ran, _tool_message(outcomes)], outcomes, mark=Mark.STOPPED)
        chat.finish("cancelled")
        raise asyncio.CancelledError() from None
    chat.save([assistant, _tool_message(outcomes)], outcomes)


def _stopped_after_calls(chat: _Chat, meter: BudgetMeter | None, max_iterations: int) -> bool:
    """End the chat after a round of calls when one call failed the same way too often, or the
    budget is spent before the cap (the cap itself is the loop's end); each leaves a notice."""
    if chat.tripped is not None:
        failed = chat.tripped
        last = failed.result.content.strip().splitlines()[0] if failed.result.content.strip() else ""
        text = (f"Stopped: the call to {failed.display_name} failed {REPEATED_FAILURE_LIMIT} times in a row "
                f"with the same arguments. Last error: {last}")
        chat.emit(ev.ErrorEvent(text, "repeated_failure"))
        _notice(chat, text, ev.Notice.REPEATED_FAILURE)
        chat.finish("repeated_failure")
        return True
    if meter is not None and meter.reached and chat.iterations < max_iterations:  # like the cap
        text = meter.notice_text()
        chat.emit(ev.IterationLimit(chat.iterations, text, kind="budget"))
        _notice(chat, text, ev.Notice.BUDGET)
        chat.finish("limit")
        return True
    return False


async def _prepare(chat: _Chat, provider: Provider, tools: list[ToolDef], system: str | None,
                   params: GenerationParams | None) -> ctx.Fitted:
    """The request of the next model turn, within the model's window (agent/context.py): stubs, then a
    summary saved as a visible notice row, then cuts. Emits ``ContextUsage`` for the composer's meter."""
    window = known_window_for(provider)
    estimator = ctx.estimator_for(provider)
    answer = (params.max_output_tokens if params is not None and params.max_output_tokens
              else provider.config.max_tokens or 4096)
    if params is not None and params.reasoning:  # thinking is output too: the window must hold it
        answer += params.reasoning_budget or THINKING_ROOM

    def fitted(allow_summary: bool) -> ctx.Fitted:
        return ctx.fit(chat.messages, system=system, tools=tools, window=window, answer_tokens=answer,
                       estimator=estimator, allow_summary=allow_summary, budget=chat.budget)

    request = fitted(not chat.summary_failed)
    if needs_lookup(provider, request.tokens):  # a long chat: ask the server once what its window is
        found = await window_for(provider)
        if found != window:
            window = found
            request = fitted(not chat.summary_failed)
    # Near the budget, the provider's own count where it has one (Anthropic, Gemini): at most one a turn.
    if await ctx.check_count(provider, request, tools=tools, system=system, params=params, estimator=estimator):
        request = fitted(not chat.summary_failed)
    if request.summary_needed:
        try:
            body = await ctx.summarise(provider, request.older, window=window, estimator=estimator)
        except ProviderError as exc:  # the cut request below still goes out; the person is not stuck
            log.warning("summarising earlier messages failed: %s", exc.message)
            body = ""
        if body:
            message = ctx.summary_message(body, request.summarised)
            chat.emit(ev.AssistantMessage(message, notice=ev.Notice.SUMMARY))
            chat.save([message], notice=ev.Notice.SUMMARY)
            request = fitted(False)
        else:
            chat.summary_failed = True
    chat.emit(ev.ContextUsage(request.tokens, window, request.budget, request.stubbed, request.cut,
                              request.summarised, request.dropped))
    return request


def _end_partial(chat: _Chat, text: str, *, stopped: bool = False, reasoning: Sequence[Reasoning] = ()) -> None:
    """Keep the text that streamed before a failure or Stop; drop calls that never ran.
    ``stopped``: Stop cut it short, and the transcript marks it so (shown as "stopped").
    ``reasoning``: the thinking that streamed before it, kept with the text (shown above it)."""
    if text or any(r.text for r in reasoning):
        from cks_desktop.agent.transcript import Mark

        message = _assistant(text)
        message.parts[:0] = list(reasoning)
        chat.emit(ev.AssistantMessage(message))
        chat.save([message], mark=Mark.STOPPED if stopped else None)


def _preparing(chat: _Chat, registry: ToolRegistry, wire_back: Mapping[str, str], call_id: str, wire: str,
               size: int) -> None:
    """A call the model is still writing: its row shows at once, with the arguments' size so far."""
    name = wire_back.get(wire, wire)
    spec = registry.resolve(name)
    chat.emit(ev.ToolCallPreparing(call_id, name, spec.display_name if spec else name,
                                   spec.source if spec else "unknown", size))


def _build_prompt(store: "GraphStore", session_id: str, instructions: str | None, tool_names: list[str],
                  server_instructions: Mapping[str, str] | None = None) -> str:
    title = ""
    try:
        session = store.get_session(session_id)
        title = session.title
        if instructions is None:
            instructions = session.instructions
    except Exception as exc:  # an unknown session fails later, in the tools, with a clear message
        log.warning("could not read session %s: %s", session_id, exc)
    return build_system_prompt(store, session_id, title=title, instructions=instructions or "",
                               tool_names=tool_names, server_instructions=server_instructions)

