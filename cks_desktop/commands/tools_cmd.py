"""`cks-desktop tools list [--all] [--json]` and `tools call NAME --session ID --args JSON [--yes] [--json]`.

``tools list`` without ``--all`` shows exactly what a model would be offered
(``registry.offered`` for a MODEL run, with the schema the model sees); it
needs no database. ``tools call`` runs one tool through ``ToolRegistry.invoke``
as a CLI run, so every check (schema, pinning, approval) is the real one.
Approvals are answered by the same ``Approver`` interface as the GUI: ``--yes``
allows, otherwise a call whose policy asks is denied with a hint.

Exit codes: 0 success; 1 the tool returned an error result (including a
denial); 2 bad usage or input (malformed or schema-invalid arguments, unknown
tool, missing session, unusable database).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

from cks_desktop.commands import add_command
from cks_desktop.commands.common import (
    CliError, EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, add_json_flag, app_paths, parse_json_arg, print_json,
)
from cks_desktop.commands.sessions_cmd import json_errors, store_for

if TYPE_CHECKING:
    from cks_desktop.settings import Settings
    from cks_desktop.tools.registry import ToolRegistry
    from cks_desktop.tools.types import ToolSpec

DENIAL_HINT = "Run it again with --yes to allow it."


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "tools",
                    description="List the tools and call one without the window.")
    tsub = p.add_subparsers(dest="tools_command", metavar="ACTION", required=True)

    lst = tsub.add_parser("list", help="the tools a model is offered (--all: every tool)",
                          description="Without --all: exactly the tools a model would be offered, with the "
                                      "input schema the model sees. With --all: every tool, with its full schema.")
    lst.add_argument("--all", action="store_true", help="include the tools never offered to models")
    add_json_flag(lst)
    lst.set_defaults(handler=_guarded(_list))

    c = tsub.add_parser("call", help="run one tool and print its result",
                        description="Run one tool as the CLI. Calls whose approval policy asks are denied "
                                    "unless --yes is given.")
    c.add_argument("name", metavar="NAME", help="the tool's name (see 'tools list --all')")
    c.add_argument("--session", metavar="ID", help="the session the tool works on (needed by graph tools)")
    c.add_argument("--args", default="{}", metavar="JSON",
                   help="the arguments as a JSON object (default {}); - reads them from stdin")
    c.add_argument("--yes", "-y", action="store_true", help="allow the call if its policy asks for approval")
    add_json_flag(c)
    c.set_defaults(handler=_guarded(_call))


def _guarded(fn: Any) -> Any:
    def run(args: argparse.Namespace) -> int:
        with json_errors(args):
            return fn(args)

    return run


def _settings(args: argparse.Namespace) -> "Settings":
    from cks_desktop.settings import Settings

    return Settings.load(app_paths(args).settings_file)


def _first_sentence(text: str, width: int = 90) -> str:
    head = text.split(". ", 1)[0].strip()
    head = head if head.endswith(".") else head + "."
    return head if len(head) <= width else head[: width - 1].rstrip() + "…"


def _tool_json(spec: "ToolSpec", registry: "ToolRegistry", *, full: bool) -> dict[str, Any]:
    from cks_desktop.tools.registry import model_schema
    from cks_desktop.tools.wire_names import to_wire

    return {
        "name": spec.name,
        "wire_name": to_wire(spec.name),
        "title": spec.title,
        "description": spec.description,
        "scopes": sorted(s.value for s in spec.scopes),
        "policy": registry.effective_policy(spec).value,
        "default_policy": spec.default_policy.value,
        "llm_exposed": spec.llm_exposed,
        "source": spec.source,
        "input_schema": dict(spec.input_schema) if full else model_schema(spec),
    }


def _list(args: argparse.Namespace) -> int:
    from cks_desktop.agent.toolset import build_chat_registry
    from cks_desktop.tools.context import Run
    from cks_desktop.tools.types import Caller

    registry = build_chat_registry(None, _settings(args))
    specs = registry.specs() if args.all else registry.offered(Run(session_id="", caller=Caller.MODEL))
    if args.json:
        print_json({"tools": [_tool_json(s, registry, full=args.all) for s in specs]})
        return EXIT_OK
    for spec in specs:
        scopes = ",".join(sorted(s.value for s in spec.scopes)) or "-"
        hidden = "" if spec.llm_exposed else "  [not offered to models]"
        print(f"{spec.name:<18} {registry.effective_policy(spec).value:<6} {scopes:<13} "
              f"{_first_sentence(spec.description)}{hidden}")
    return EXIT_OK


def _parse_arguments(raw: str) -> dict[str, Any]:
    text = sys.stdin.read() if raw == "-" else raw
    value = parse_json_arg(text, "--args")
    if not isinstance(value, dict):
        raise CliError(f"--args must be a JSON object like {{\"ref\": \"Ada\"}}, not {json.dumps(value)[:60]}.")
    return value


def _call(args: argparse.Namespace) -> int:
    from cks_desktop.ids import new_id
    from cks_desktop.tools.approval import Decision, StaticApprover
    from cks_desktop.agent.toolset import build_chat_registry
    from cks_desktop.tools.context import Run
    from cks_desktop.tools.registry import SESSION_ARG
    from cks_desktop.tools.types import Caller, ToolCall

    arguments = _parse_arguments(args.args)  # before touching the database: bad input writes nothing
    settings = _settings(args)
    probe = build_chat_registry(None, settings)
    spec = probe.resolve(args.name)
    if spec is None:
        raise CliError(f"Unknown tool {args.name!r}; see 'cks-desktop tools list --all'.")
    needs_session = spec.pin_session and SESSION_ARG in (spec.input_schema.get("properties") or {})
    if needs_session and not args.session:
        raise CliError(f"{spec.name} works on a session: pass --session ID (see 'cks-desktop sessions list').")

    approver = (StaticApprover(Decision.ALLOW) if args.yes
                else StaticApprover(Decision.DENY, denial_hint=DENIAL_HINT))
    with store_for(args) as store:
        if args.session:
            store.get_session(args.session)  # NotFound → one line, exit 2
        registry = build_chat_registry(store, settings)
        run = Run(session_id=args.session or "", caller=Caller.CLI, approver=approver,
                  allowed_folders=tuple(settings.allowed_folders))
        result = asyncio.run(registry.invoke(ToolCall(new_id("call_"), spec.name, arguments), run))

    invalid = result.is_error and isinstance(result.structured, dict) and "validation_errors" in result.structured
    code = EXIT_OK if not result.is_error else EXIT_USAGE if invalid else EXIT_TOOL_ERROR
    if args.json:
        print_json(result.to_json())
    elif result.is_error:
        print(f"cks-desktop: {result.content}", file=sys.stderr)
    else:
        sys.stdout.write(result.content if result.content.endswith("\n") else result.content + "\n")
    return code
