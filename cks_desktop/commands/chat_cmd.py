"""`cks-desktop chat`: one chat turn in a session, headless, streamed to stdout.

It is the GUI's chat without the window: the same core composition
(``runtime.AppServices``) and the same ``Assistant.run`` turn, so the same
tools (built-ins plus ``construct_knowledge`` and the MCP servers'), the saved
transcript continued and every turn saved to the same file; it shows what
happens as it happens. Tool calls are lines (``→ name {args}`` then ``← ok`` or
``← error: …``); ``--json`` prints every agent event as one JSON object per
line instead, for scripts. Approvals work as in ``tools call``: ``--yes``
allows every asking tool, otherwise such calls are declined and the model is
told why (with the hint to use ``--yes``).

Citations: an answer that cites the passages ``retrieve_passages`` gave it in the same turn
(``[n]`` or ``[n "exact words"]``) has each citation checked, as ``ask`` checks its answers
(``agent/citations.py``); the ones that fail are printed in one line after the answer
(``Not in the passages: [99] “…” (the model was given no passage with this number); …``).
``--json`` has the whole verdict on the answer's ``assistant_message`` event (``citations``).

Managing the chat (the graph is never touched): ``--history`` prints it with
each exchange's number (``you #2: …``; an exchange is one message of yours
and its whole answer), ``--delete-turn N`` deletes exchange N whole (its tool
calls and their results go with it, so the chat still loads and continues),
``--export FILE [--format markdown|json]`` writes the chat with its tool calls (as the window's
File → Export chat… does),
``--clear`` deletes every message (both ask first on a terminal; ``--yes``
skips the question, and is required when there is no terminal). A message that never got an answer (the
app was killed, the provider failed) is shown as ``unanswered``; it is not
sent with the next prompt, and ``--retry`` sends it again on its own.

Usage and budgets: ``--usage`` prints each answer's tokens (input, cached, output,
reasoning), its model turns and the session's total, with the cost where the model has a price
(``--json``: one object). ``--budget-tokens N`` / ``--budget-cost USD`` end this answer with a
notice once it has used that much (default: the session's budget from its chat settings); the
way on is the same as at the iteration cap.

Exit codes: 0 the turn ended normally, 1 it ended in an error or at the
iteration cap or its budget (or a repeated failure), 2 bad usage (unknown session, no
provider, missing API key, empty prompt), 130 interrupted (Ctrl-C saves the
transcript first, like Stop).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any, TextIO, assert_never

from cks_desktop.commands import add_command
from cks_desktop.commands.common import EXIT_OK, EXIT_TOOL_ERROR, CliError, app_paths, open_store
from cks_desktop.llm.profiles import PROVIDER_NAMES
from cks_desktop.tools.types import Outcome, Scope, ToolResult
from cks_desktop.plural import counted

if TYPE_CHECKING:
    from cks_desktop.agent.budget import AnswerBudget
    from cks_desktop.agent.events import AgentEvent, FinishReason
    from cks_desktop.agent.transcript import SavedMessage
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.llm.provider import Provider
    from cks_desktop.runtime import AppServices
    from cks_desktop.secrets import SecretStore
    from cks_desktop.settings import Settings

ARGS_SHOWN = 120  # characters of a call's arguments on its → line
DENIAL_HINT = "Run the command again with --yes to allow calls that ask for approval."
CONTINUE_HINT = 'To let the assistant go on, run the command again with the prompt "Continue."'



def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "chat",
                    description="Send PROMPT to the session's assistant; the answer streams to stdout, "
                                "tool calls show as → / ← lines, and the chat is saved with the session.")
    p.add_argument("--session", required=True, metavar="ID", help="the session to chat in")
    p.add_argument("--provider", choices=PROVIDER_NAMES, help="the provider (default: the one chosen in settings)")
    p.add_argument("--model", metavar="M", help="the model name (default: from settings)")
    p.add_argument("--base-url", metavar="URL", help="the provider's address (default: from settings)")
    p.add_argument("--max-iterations", type=int, metavar="N", help="model turns at most (default: settings, 8)")
    p.add_argument("--yes", action="store_true",
                   help="allow tool calls that ask for approval; with --clear or --delete-turn, delete without asking")
    p.add_argument("--json", action="store_true", help="print one JSON event per line instead of text")
    p.add_argument("--no-mcp", action="store_true", help="do not start the configured MCP servers")
    p.add_argument("--grant", action="append", default=[], metavar="SCOPE", choices=[s.value for s in Scope],
                   help="grant this scope to the run besides the session's (repeatable; e.g. code.execute for "
                        "the tools of stdio MCP servers, net.fetch for remote ones)")
    what = p.add_mutually_exclusive_group()
    what.add_argument("--history", action="store_true", help="print the saved transcript and exit")
    what.add_argument("--clear", action="store_true", help="delete every message of the chat (the graph stays)")
    what.add_argument("--delete-turn", type=int, metavar="N",
                      help="delete exchange N (as numbered by --history) with its whole answer")
    what.add_argument("--retry", action="store_true",
                      help="answer the chat's last message again when it got no answer (no PROMPT)")
    what.add_argument("--export", metavar="FILE",
                      help="write the chat (messages, tool calls and results) to FILE and exit; '-' for stdout")
    what.add_argument("--usage", action="store_true",
                      help="print the tokens (and cost, where the model's price is known) of each answer and "
                           "model turn, and the session's total, then exit")
    p.add_argument("--budget-tokens", metavar="N",
                   help="end the answer with a notice once it has used N tokens (input + output over its model "
                        "turns); default: the session's budget from its chat settings")
    p.add_argument("--budget-cost", metavar="USD",
                   help="end the answer once it has cost USD US dollars (needs the model's price: "
                        "Settings → Chat & agent → Prices)")
    p.add_argument("--format", choices=("markdown", "json"),
                   help="with --export: the file's format (default: json for a .json FILE, else markdown)")
    p.add_argument("--image", action="append", default=[], metavar="FILE",
                   help="an image to send with the message (PNG, JPEG, GIF or WebP, up to 20 MB; repeat for more)")
    p.add_argument("prompt", nargs="?", metavar="PROMPT", help="the message; '-' reads it from stdin")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    if args.max_iterations is not None and args.max_iterations < 1:
        raise CliError("--max-iterations must be at least 1.")
    if args.format is not None and args.export is None:
        raise CliError("--format goes with --export FILE.")
    manage = args.history or args.clear or args.delete_turn is not None or args.export is not None or args.usage
    if (manage or args.retry) and args.prompt is not None:
        raise CliError("Give either a PROMPT or one of --history, --clear, --delete-turn, --retry, --export, "
                       "--usage, not both.")
    if manage and (args.budget_tokens is not None or args.budget_cost is not None):
        raise CliError("--budget-tokens and --budget-cost go with a PROMPT or --retry.")
    args.budget = _budget(args)
    if args.image and (manage or args.retry):
        raise CliError("--image goes with a PROMPT.")
    args.images = _read_images(args.image)
    if not manage and not args.retry:
        prompt = sys.stdin.read() if args.prompt == "-" else (args.prompt or "")
        if not prompt.strip() and not args.images:
            raise CliError("Give a message to send (PROMPT), or use --history to see the chat.")
        args.prompt = prompt
    store = open_store(args)
    try:
        _session(store, args.session)
        if args.history:
            return _print_history(store, args.session, as_json=args.json)
        if args.usage:
            return _print_usage(store, args.session, _settings(args), as_json=args.json)
        if args.export is not None:
            return _export(store, args)
        if args.clear or args.delete_turn is not None:
            return _delete(store, args)
        if args.retry:
            _check_retry(store, args)
        return asyncio.run(_chat(args, store))
    finally:
        store.close()


def _delete(store: "GraphStore", args: argparse.Namespace) -> int:
    """--clear / --delete-turn N: whole exchanges only, in one transaction."""
    from cks_desktop.runtime import UseCases
    from cks_desktop.runtime.chat import ChatEditRefused

    chat = UseCases(store, _settings(args)).chat
    what = "every message of the chat" if args.clear else f"exchange {args.delete_turn} of the chat"
    if not args.yes:
        if args.json or not sys.stdin.isatty():
            raise CliError(f"This would delete {what} (the graph stays); nothing was deleted "
                           "(add --yes to confirm).")
        print(f"Delete {what}? The graph stays; this cannot be undone. [y/N] ", end="", file=sys.stderr, flush=True)
        if sys.stdin.readline().strip().lower() not in ("y", "yes"):
            raise CliError("Nothing was deleted.")
    try:
        edit = chat.clear(args.session) if args.clear else chat.delete_exchange(args.session, args.delete_turn)
    except ChatEditRefused as exc:
        raise CliError(str(exc)) from None
    removed, text = edit.removed, edit.sentence
    if args.json:
        print(json.dumps({"session": args.session, "deleted_messages": removed,
                          "exchange": None if args.clear else args.delete_turn}))
    else:
        print(text)
    return EXIT_OK


def _export(store: "GraphStore", args: argparse.Namespace) -> int:
    """--export FILE [--format markdown|json]: the chat as the window's File → Export chat… writes it."""
    from cks_desktop.agent.chat_export import export_chat, format_for, write_export

    fmt = args.format or format_for(args.export)
    text = export_chat(store, args.session, fmt)
    if args.export == "-":
        sys.stdout.write(text)
        return EXIT_OK
    try:
        target = write_export(args.export, text)
    except OSError as exc:
        raise CliError(f"Could not write {args.export}: {exc.strerror or exc}.") from None
    print(f"Wrote the chat of {args.session} as {fmt} to {target}.", file=sys.stderr)
    return EXIT_OK


def _budget(args: argparse.Namespace) -> "AnswerBudget | None":
    """--budget-tokens / --budget-cost for this run (None: the session's own, from the settings)."""
    if args.budget_tokens is None and args.budget_cost is None:
        return None
    from cks_desktop.agent.budget import AnswerBudget, BudgetError, check_cost, check_tokens

    try:
        return AnswerBudget(check_tokens(args.budget_tokens), check_cost(args.budget_cost))
    except BudgetError as exc:
        raise CliError(str(exc)) from None


def _with_prices(args: argparse.Namespace, services: "AppServices") -> "AnswerBudget | None":
    """This run's budget with the settings' prices (None: the assistant reads the session's own).
    A money budget on a model without a price cannot be checked: said once on stderr."""
    from dataclasses import replace

    from cks_desktop.agent.budget import session_budget
    from cks_desktop.llm.prices import price_for
    from cks_desktop.settings import Agent

    prices = services.settings.section(Agent).prices
    budget = replace(args.budget, prices=prices) if args.budget is not None else None
    wanted = budget if budget is not None else session_budget(services.settings, args.session)
    model, name = args.model or services.providers.model, services.providers.name
    if wanted.cost_usd is not None and model and price_for(model, prices, name) is None:
        what = "--budget-cost" if budget is not None else "The session's cost budget"
        print(f"cks-desktop: {what} cannot be checked: there is no price for {model} (add one in Settings → "
              "Chat & agent → Prices); only a token budget applies.", file=sys.stderr, flush=True)
    return budget


def _print_usage(store: "GraphStore", session_id: str, settings: "Settings", *, as_json: bool) -> int:
    """--usage: each answer's tokens and cost, its model turns, and the session's total."""
    from cks_desktop.agent import usage
    from cks_desktop.agent.transcript import TranscriptStore
    from cks_desktop.settings import Agent

    transcript = TranscriptStore.for_store(store)
    items = usage.answers(transcript, session_id, settings.section(Agent).prices)
    numbers = usage.exchanges(items, transcript.history(session_id))
    total = usage.session_total(items)
    out = sys.stdout
    if as_json:
        answers = [{"exchange": n, **item.to_json()} for n, item in zip(numbers, items)]
        out.write(json.dumps({"session": session_id, "answers": answers,
                              "total": {"answers": len(items), **total.to_json()}}, ensure_ascii=False) + "\n")
        return EXIT_OK
    if not items:
        out.write("(no tokens used yet)\n")
        return EXIT_OK
    for index, (number, item) in enumerate(zip(numbers, items), 1):
        where = f"exchange {number}" if number is not None else "deleted exchange"
        models = ", ".join(item.models) or "unknown model"
        out.write(f"answer {index} ({where}, {models}, {counted(item.tokens.turns, 'model turn')}): "
                  f"{usage.describe(item.tokens)}\n")
        if len(item.turns) > 1:
            for turn in item.turns:
                out.write(f"  turn {turn.iteration}: {usage.describe(turn.tokens)}\n")
    out.write(f"session total ({counted(len(items), 'answer')}, {counted(total.turns, 'model turn')}): "
              f"{usage.describe(total)}\n")
    if total.cost is None:
        out.write("(no cost shown: a model used here has no price; add one in Settings → Chat & agent → Prices)\n")
    return EXIT_OK


def _check_retry(store: "GraphStore", args: argparse.Namespace) -> None:
    from cks_desktop.runtime import UseCases
    from cks_desktop.runtime.chat import ChatEditRefused

    try:
        UseCases(store, _settings(args)).chat.prepare_retry(args.session)
    except ChatEditRefused as exc:
        raise CliError(str(exc)) from None


def _session(store: "GraphStore", session_id: str) -> Any:
    from cks_desktop.graph.errors import NotFound

    try:
        return store.get_session(session_id)
    except NotFound:
        raise CliError(f"There is no session {session_id!r}; `cks-desktop sessions list` shows them.") from None


def _settings(args: argparse.Namespace) -> "Settings":
    from cks_desktop.settings import Settings

    settings = Settings.load(app_paths(args).settings_file)
    if settings.problem:
        print(f"cks-desktop: {settings.problem}", file=sys.stderr)
    return settings


def _services(args: argparse.Namespace, store: "GraphStore") -> "AppServices":
    """The core composed as for the window (``runtime.AppServices``), with this command's
    ``--provider``/``--model``/``--base-url`` choices and its own hint for granting scopes."""
    from cks_desktop.llm.factory import create_provider
    from cks_desktop.runtime import AppServices
    from cks_desktop.tools.scopes import CLI_SETTING

    settings = _settings(args)

    def factory(name: str, settings: "Settings", secrets: "SecretStore | None") -> "Provider":
        return create_provider(name, settings, secrets, model=args.model, base_url=args.base_url)

    return AppServices.build(app_paths(args), settings, store, provider_factory=factory,
                             pinned_provider=args.provider, scope_setting=CLI_SETTING)


def _read_images(paths: list[str]) -> list[Any]:
    """``--image`` files, validated before anything is sent (a refused one is a usage error)."""
    from cks_desktop.agent.images import read_image_file
    from cks_desktop.tools.images import ImageRefused

    try:
        return [read_image_file(path) for path in paths]
    except ImageRefused as exc:
        raise CliError(str(exc)) from None


def _prompt_with_images(args: argparse.Namespace, store: "GraphStore") -> Any:
    """The prompt, as a message carrying the ``--image`` files (stored in the session) when given."""
    if not getattr(args, "images", None) or args.retry:
        return None if args.retry else args.prompt
    from cks_desktop.agent.images import ImageStore
    from cks_desktop.llm.messages import Message, Part, Text

    images = ImageStore(store)
    parts: list[Part] = [Text(args.prompt)] if args.prompt.strip() else []
    parts += [images.put(args.session, blob) for blob in args.images]
    return Message("user", parts)


async def _prepare_provider(services: "AppServices") -> None:
    """Make the provider before any request: nothing chosen, a missing key or a bad setting is a
    usage error (exit 2) naming what is missing."""
    from cks_desktop.llm.provider import ProviderError

    if not services.providers.configured:
        raise CliError("No provider is chosen: pass --provider (anthropic, ollama, openai or gemini) "
                       "or choose one in Settings → Providers.")
    try:
        await services.providers.prepare()
    except ProviderError as exc:
        raise CliError(exc.message) from None
    except ValueError as exc:
        raise CliError(str(exc)) from None


async def _chat(args: argparse.Namespace, store: "GraphStore") -> int:
    from cks_desktop.tools.approval import Decision, StaticApprover
    from cks_desktop.tools.scopes import parse_scopes

    extra = parse_scopes(args.grant)  # --grant: this run only
    services = _services(args, store)
    approver = StaticApprover(Decision.ALLOW if args.yes else Decision.DENY,
                              denial_hint="" if args.yes else DENIAL_HINT)
    printer = JsonPrinter(sys.stdout) if args.json else TextPrinter(sys.stdout, sys.stderr)
    try:
        await _prepare_provider(services)
        if not args.no_mcp:
            await _start_mcp(services, yes=args.yes)
        turn = await services.assistant.run(args.session, _prompt_with_images(args, store), approver=approver,
                                            on_event=printer, max_iterations=args.max_iterations,
                                            extra_scopes=extra, budget=_with_prices(args, services))
    finally:
        await services.assistant.aclose()  # provider clients and MCP servers; the store is closed by _run
    return EXIT_OK if turn.reason == "stop" else EXIT_TOOL_ERROR


async def _start_mcp(services: "AppServices", *, yes: bool = False) -> None:
    """Start the enabled MCP servers so the model is offered their tools, as in the app.
    A server that fails is one line on stderr; the chat goes on without it. What a server asks
    of the person is answered by the headless rules (``mcp/host.py``: ``--yes`` accepts a form's
    defaults, sampling only where the server's settings allow it), each said on stderr."""
    if not any(isinstance(c, dict) and c.get("enabled", True) for c in services.settings.mcp_servers.values()):
        return
    from cks_desktop.mcp.connection import Status

    from cks_desktop.agent.mcp_sampling import ProviderSampler
    from cks_desktop.mcp.host import HeadlessHost

    host = HeadlessHost(yes=yes, sampler=ProviderSampler(services.providers),
                        note=lambda text: print(f"cks-desktop: {text}", file=sys.stderr, flush=True))
    services.start_mcp(host=host)
    assert services.mcp is not None and services.mcp_start is not None
    await services.mcp_start
    for state in services.mcp.statuses():
        if state.enabled and state.status is Status.FAILED:
            print(f"cks-desktop: MCP server '{state.name}' is not available: {state.reason}", file=sys.stderr)


def short_json(value: Any, limit: int = ARGS_SHOWN) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def one_line(text: str, limit: int = 200) -> str:
    """A result on one line: whitespace collapsed, cut at ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class TextPrinter:
    """Text on stdout as it streams; each tool call on its own → / ← lines; errors on stderr."""

    def __init__(self, out: TextIO, err: TextIO) -> None:
        self.out, self.err = out, err
        self.reason: "FinishReason | None" = None
        self._mid_line = False

    def _end_line(self) -> None:
        if self._mid_line:
            self.out.write("\n")
            self.out.flush()
            self._mid_line = False

    def _line(self, text: str) -> None:
        self._end_line()
        self.out.write(text + "\n")
        self.out.flush()

    def __call__(self, event: "AgentEvent") -> None:
        """Every event kind has its case (most print nothing); a new one fails the type check."""
        from cks_desktop.agent import events as ev

        match event:
            case ev.TextDelta():
                self.out.write(event.text)
                self.out.flush()
                self._mid_line = not event.text.endswith("\n")
            case ev.ToolCallStarted():
                shown = "(invalid JSON)" if event.arguments is None else short_json(event.arguments)
                self._line(f"→ {event.name} {shown}")
            case ev.ToolCallFinished():
                self._line(_outcome(event.result))
            case ev.AssistantMessage():
                if event.notice is not None:  # the model's own text already streamed as deltas
                    self._line(event.message.text)
                elif event.citations is not None and event.citations.unsupported:  # after the answer
                    self._line(event.citations.unsupported_line())
            case ev.ErrorEvent():
                self._end_line()
                if event.kind != "repeated_failure":  # that one is already shown as the notice
                    print(f"cks-desktop: {event.message}", file=self.err, flush=True)
            case ev.Waiting():
                if not event.resumed:
                    self._end_line()
                    print(f"cks-desktop: {event.text}", file=self.err, flush=True)
            case ev.Finished():
                self.reason = event.reason
                self._end_line()
                if event.reason == "limit":  # the notice says the fact; this is the one way on
                    print(f"cks-desktop: {CONTINUE_HINT}", file=self.err, flush=True)
            case ev.TurnStarted() | ev.ToolCallPreparing() | ev.ToolCallProgress() | ev.ApprovalRequested() \
                    | ev.ApprovalResolved() | ev.ReasoningDelta() \
                    | ev.IterationLimit() | ev.ContextUsage():
                pass  # approvals are answered by --yes; a call's → line comes when it runs; the limit: below;
                # thinking is never printed with the answer (--json has it as reasoning_delta events)
            case _:
                assert_never(event)


def _outcome(result: ToolResult) -> str:
    """The ← line of a finished call."""
    match result.outcome:
        case Outcome.OK:
            return "← ok"
        case Outcome.CANCELLED:
            return "← cancelled"
        case Outcome.DENIED:
            return f"← denied: {one_line(result.content)}"
        case Outcome.ERROR | Outcome.TIMEOUT:
            return f"← error: {one_line(result.content)}"
        case _:
            assert_never(result.outcome)


class JsonPrinter:
    """One JSON object per event per line (``--json``)."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.reason: "FinishReason | None" = None

    def __call__(self, event: "AgentEvent") -> None:
        from cks_desktop.agent.events import Finished, event_to_json

        if isinstance(event, Finished):
            self.reason = event.reason
        self.out.write(json.dumps(event_to_json(event), ensure_ascii=False, default=str) + "\n")
        self.out.flush()


def _print_history(store: "GraphStore", session_id: str, *, as_json: bool) -> int:
    from cks_desktop.agent.transcript import TranscriptStore

    rows = TranscriptStore.for_store(store).history(session_id)
    out = sys.stdout
    for row in rows:
        if as_json:
            out.write(json.dumps(row.to_json(), ensure_ascii=False, default=str) + "\n")
        else:
            out.write(_history_text(row))
    if not rows and not as_json:
        out.write("(no messages yet)\n")
    return EXIT_OK


def _history_text(row: "SavedMessage") -> str:
    message = row.message
    lines: list[str] = []
    if message.role == "user":
        lines.append(f"you #{row.turn}{' (unanswered)' if row.unanswered else ''}: {message.text}")
    elif message.role == "assistant":
        records = {c.call_id: c for c in row.calls}
        if message.reasoning:  # the thinking is not printed, only that it happened
            from cks_desktop.agent.reasoning import headline, shown

            lines.append(f"({headline(shown(message.reasoning)[1]).lower()})")
        if message.text:
            lines.append(f"{'notice' if row.notice else 'assistant'}: {message.text}")
        for call in message.tool_calls:
            record = records.get(call.id)
            suffix = f"  [{record.state}{', reverted' if record.reverted else ''}]" if record else ""
            lines.append(f"→ {call.name} {short_json(call.arguments)}{suffix}")
    elif message.role == "tool":
        for result in message.tool_results:
            lines.append(f"← error: {one_line(result.content)}" if result.is_error
                         else f"← {one_line(result.content)}")
    return "".join(line + "\n" for line in lines)
