"""`cks-desktop mcp resources|read|prompts|prompt …`: a server's resources and prompts, headless.

    mcp resources NAME [--json]                   its resources and resource templates
    mcp read NAME URI [--json] [--max-chars N] [--out FILE]
                                                  one resource: text on stdout (cut at N characters,
                                                  with a notice on stderr); binary content is named,
                                                  or written to FILE with --out
    mcp prompts NAME [--json]                     its prompts and their arguments
    mcp prompt NAME PROMPT [--args JSON] [--json] one prompt, filled in with the arguments

Each connects, asks, and disconnects. Exit codes: 0 success, 1 the server could not be
reached or refused the request, 2 bad usage or input (unknown server, arguments that are not
a JSON object of strings, a missing required argument). Output goes through the terminal
sanitiser like every headless command's (``commands/common.revealing_output``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from cks_desktop.commands.common import EXIT_OK, EXIT_TOOL_ERROR, CliError, add_json_flag, parse_json_arg, print_json
from cks_desktop.plural import counted

if TYPE_CHECKING:
    from cks_desktop.mcp.connection import McpConnection

T = TypeVar("T")
LIST_TIMEOUT = 60.0


def add_parsers(msub: argparse._SubParsersAction) -> None:
    q = msub.add_parser("resources", help="connect to a server and list its resources and templates")
    q.add_argument("name")
    add_json_flag(q)

    q = msub.add_parser("read", help="read one resource of a server")
    q.add_argument("name")
    q.add_argument("uri")
    q.add_argument("--max-chars", type=int, default=None, metavar="N",
                   help="characters of text to print at most (default 10,000,000)")
    q.add_argument("--out", metavar="FILE", help="write the content (text or binary) to FILE instead")
    add_json_flag(q)

    q = msub.add_parser("prompts", help="connect to a server and list its prompts")
    q.add_argument("name")
    add_json_flag(q)

    q = msub.add_parser("prompt", help="get one prompt of a server, filled in with arguments")
    q.add_argument("name")
    q.add_argument("prompt")
    q.add_argument("--args", default="{}", metavar="JSON", help="the arguments as a JSON object of strings")
    add_json_flag(q)


def handlers() -> dict[str, Callable[[argparse.Namespace], int]]:
    return {"resources": _resources, "read": _read, "prompts": _prompts, "prompt": _prompt}


def _connected(args: argparse.Namespace, work: Callable[["McpConnection"], Awaitable[T]]) -> T:
    """Connect to the named server, run ``work``, disconnect; faults become one sentence."""
    from cks_desktop.commands.common import app_paths
    from cks_desktop.commands.mcp_cmd import PROBE_TIMEOUT, _config, _secrets, _settings
    from cks_desktop.mcp.connection import McpConnection
    from cks_desktop.mcp.requests import RequestFailed
    from cks_desktop.mcp.stderr_log import ServerLog, log_file_name

    settings = _settings(args)
    config = _config(settings, args.name)
    secrets = _secrets()

    async def go() -> T:
        log = ServerLog(app_paths(args).mcp_log_dir / log_file_name(config.name), secrets=secrets.known_values)
        conn = McpConnection(config, log=log, registry=None, secrets=secrets, startup_timeout=PROBE_TIMEOUT)
        try:
            if not await conn.start():
                raise CliError(f"Could not connect to MCP server '{config.name}': {conn.reason}", EXIT_TOOL_ERROR)
            return await work(conn)
        except RequestFailed as exc:
            raise CliError(str(exc), EXIT_TOOL_ERROR) from None
        finally:
            await conn.stop()

    return asyncio.run(go())


def _resources(args: argparse.Namespace) -> int:
    from cks_desktop.mcp.resources import list_resources, resource_info, supports_resources, template_info

    async def work(conn: "McpConnection") -> tuple[Any, bool]:
        return await list_resources(conn), supports_resources(conn)

    listing, supported = _connected(args, work)
    resources = [resource_info(r) for r in listing.resources]
    templates = [template_info(t) for t in listing.templates]
    if args.json:
        print_json({"server": args.name, "supported": supported, "resources": resources, "templates": templates,
                    "notice": listing.notice})
        return EXIT_OK
    if not supported:
        print(f"{args.name} offers no resources.")
        return EXIT_OK
    print(f"{args.name}: {counted(len(resources), 'resource')}, {counted(len(templates), 'template')}")
    for r in resources:
        title = f" ({r['title']})" if r["title"] and r["title"] != r["name"] else ""
        mime = f" [{r['mime_type']}]" if r["mime_type"] else ""
        print(f"  {r['uri']}  {r['name']}{title}{mime}")
    for t in templates:
        print(f"  {t['uri_template']}  {t['name']} [template: {', '.join(t['variables']) or 'no variables'}]")
    if listing.notice:
        print(listing.notice, file=sys.stderr)
    return EXIT_OK


def _read(args: argparse.Namespace) -> int:
    from cks_desktop.mcp.resources import MAX_BYTES, MAX_CLI_CHARS, read_resource

    limit = args.max_chars if args.max_chars is not None else MAX_CLI_CHARS
    if limit <= 0:
        raise CliError("--max-chars must be a positive number of characters.")
    out = Path(args.out).expanduser() if args.out else None
    if out is not None and (out.is_dir() or not out.parent.is_dir()):
        raise CliError(f"--out {args.out}: not a file in an existing folder.")

    async def work(conn: "McpConnection") -> Any:
        return await read_resource(conn, args.uri, max_chars=limit, max_bytes=MAX_BYTES if out else 0)

    outcome = _connected(args, work)
    if out is not None:
        payload = b"".join((c.data or b"") if c.binary else (c.text or "").encode() for c in outcome.contents)
        tmp = out.with_name(out.name + ".part")
        try:
            tmp.write_bytes(payload)
            tmp.replace(out)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise CliError(f"Could not write {out}: {exc.strerror or exc}.", EXIT_TOOL_ERROR) from None
    if args.json:
        value = outcome.to_json()
        if out is not None:
            value["written"] = {"path": str(out), "bytes": len(payload)}
        print_json(value)
        return EXIT_OK
    if out is not None:
        print(f"Wrote {len(payload):,} bytes of {args.uri} to {out}.")
    else:
        for c in outcome.contents:
            if c.binary:
                print(f"[binary content: {c.uri}, {c.mime_type or 'no type'}, {c.size:,} bytes; "
                      "save it with --out FILE]")
            else:
                print(c.text)
        if not outcome.contents:
            print("(the resource is empty)", file=sys.stderr)
    if outcome.notice:
        print(outcome.notice, file=sys.stderr)
    return EXIT_OK


def _prompts(args: argparse.Namespace) -> int:
    from cks_desktop.mcp.prompts import list_prompts, prompt_info, supports_prompts

    async def work(conn: "McpConnection") -> tuple[Any, str, bool]:
        items, notice = await list_prompts(conn)
        return items, notice, supports_prompts(conn)

    items, notice, supported = _connected(args, work)
    prompts = [prompt_info(p) for p in items]
    if args.json:
        print_json({"server": args.name, "supported": supported, "prompts": prompts, "notice": notice})
        return EXIT_OK
    if not supported:
        print(f"{args.name} offers no prompts.")
        return EXIT_OK
    print(f"{args.name}: {counted(len(prompts), 'prompt')}")
    for p in prompts:
        arg_list = ", ".join(a["name"] + ("" if a["required"] else "?") for a in p["arguments"])
        summary = (p["description"].strip().splitlines() or [""])[0]
        print(f"  /{args.name}:{p['name']}({arg_list})" + (f" — {summary}" if summary else ""))
    if notice:
        print(notice, file=sys.stderr)
    return EXIT_OK


def _prompt(args: argparse.Namespace) -> int:
    from cks_desktop.mcp.prompts import check_arguments, get_prompt, list_prompts

    raw = parse_json_arg(args.args, "--args")
    try:
        check_arguments(None, raw)  # the shape first, before anything connects
    except ValueError as exc:
        raise CliError(str(exc)) from None

    async def work(conn: "McpConnection") -> Any:
        items, _ = await list_prompts(conn)
        prompt = next((p for p in items if p.name == args.prompt), None)
        if prompt is None:
            names = ", ".join(p.name for p in items) or "none"
            raise CliError(f"MCP server '{args.name}' has no prompt named '{args.prompt}' (its prompts: {names}).")
        try:
            values = check_arguments(prompt, raw)
        except ValueError as exc:
            raise CliError(str(exc)) from None
        return await get_prompt(conn, prompt.name, values)

    result = _connected(args, work)
    if args.json:
        print_json(result.to_json())
        return EXIT_OK
    print(result.text)
    return EXIT_OK
