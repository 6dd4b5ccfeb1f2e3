"""`cks-desktop mcp …`: manage MCP servers, call their tools, serve our graph over MCP.

    mcp list [--json] [--no-probe]          every server, with its status after a probe
    mcp add NAME [--env K=V]… [--secret-env K]… [--scope S]… [--approval P] [--timeout S] -- COMMAND [ARGS…]
    mcp add NAME --url URL [--header K:V]… [--secret-header K]…
            [--oauth-client-credentials CLIENT_ID [--oauth-auth M] [--oauth-private-key PEM] [--oauth-scope S]
             [--oauth-issuer URL]]          a machine-to-machine OAuth client (mcp_oauth_opts.py)
    mcp show NAME [--json]                  one server's entry, secrets shown as [secret]
    mcp remove NAME | enable NAME | disable NAME
    mcp grant NAME | revoke NAME            whether every chat may use the server's tools (``add`` grants;
                                            ``--no-grant`` and imports do not)
    mcp tools NAME [--json]                 connect and list the server's tools
    mcp call NAME TOOL --args JSON [--json] call one tool (an explicit call counts as approved)
    mcp resources NAME | read NAME URI | prompts NAME | prompt NAME PROMPT --args JSON   [--json]
                                            resources and prompts (mcp_resources_cmd.py)
    mcp login NAME [--no-browser] [--id-token] | logout NAME
                                            OAuth sign-in to a URL server (mcp_login_cmd.py)
    mcp import-claude [PATH] [--json]       copy Claude Desktop's servers
    mcp serve [--session ID] [--http [HOST:]PORT [--no-auth]] [--yes]
                                            serve the shared sessions (or one) over stdio or HTTP
    mcp token [--rotate]                    the bearer token of `mcp serve --http`

Exit codes as everywhere: 0 success, 1 the operation ran and ended in an error
(a server that cannot start, a tool's error result), 2 bad usage or input.
Secret values go to the keychain: ``--secret-env``/``--secret-header`` (the
value is typed at a hidden prompt, or read from stdin one line per secret, so it
never sits on a command line other programs can read; ``K=V`` still works with
a warning), and any value that looks secret by name or shape — in ``--env``,
``--header``, the arguments after ``--`` (``--api-key sk-…``, ``--token=…``) or
the URL (``?api_key=…``, ``user:pass@``). With no keychain they are refused,
never written in clear: this process ends, so a memory-only secret would be lost
at once. Listings show them as ``[secret]``.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cks_desktop import APP_ID
from cks_desktop.commands import add_command
from cks_desktop.commands.common import (
    EXIT_OK,
    EXIT_TOOL_ERROR,
    CliError,
    add_json_flag,
    app_paths,
    open_store,
    parse_json_arg,
    print_json,
)
from cks_desktop.plural import counted

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.mcp.config import ServerConfig
    from cks_desktop.runtime.serving import ServeRun
    from cks_desktop.secrets import SecretStore
    from cks_desktop.settings import Settings

PROBE_TIMEOUT = 60.0


def _add_options(p: argparse.ArgumentParser) -> None:
    _add_keyring_file(p)
    p.add_argument("--env", action="append", default=[], metavar="K=V", help="environment variable for the server")
    p.add_argument("--secret-env", action="append", default=[], metavar="K",
                   help="environment variable kept in the keychain; its value is asked for (hidden) or read "
                        "from stdin, one line per secret")
    p.add_argument("--url", help="a streamable HTTP server instead of a command")
    p.add_argument("--header", action="append", default=[], metavar="K:V", help="HTTP header for --url")
    p.add_argument("--secret-header", action="append", default=[], metavar="K",
                   help="HTTP header kept in the keychain; its value is asked for (hidden) or read from stdin")
    p.add_argument("--scope", action="append", default=[], metavar="S",
                   help="scope its tools need (graph.read, graph.mutate, fs.read, code.execute, net.fetch, "
                        "provider.call); default code.execute, or net.fetch for --url")
    p.add_argument("--approval", choices=("auto", "once", "always"), help="when to ask before a call "
                   "(default always)")
    p.add_argument("--timeout", type=float, metavar="SECONDS", help="per-call timeout (default 120)")
    p.add_argument("--protocol", choices=("auto", "legacy", "2026-07-28"), help="protocol negotiation "
                   "(default auto)")
    p.add_argument("--disabled", action="store_true", help="add it without starting it")
    p.add_argument("--no-grant", action="store_true",
                   help="do not grant its scopes to chats: its tools then reach only the chats of sessions "
                        "that grant them (Scopes… in the window, or chat --grant)")
    from cks_desktop.commands.mcp_oauth_opts import add_options as add_oauth_options

    add_oauth_options(p)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "mcp",
                    description="Manage MCP servers, call their tools, and serve a session's graph over MCP.")
    msub = p.add_subparsers(dest="mcp_command", metavar="SUBCOMMAND", parser_class=type(p))

    q = msub.add_parser("list", help="list servers with their status (after a probe)")
    add_json_flag(q)
    q.add_argument("--no-probe", action="store_true", help="do not connect; show the configuration only")

    q = msub.add_parser("add", help="add a server", usage="%(prog)s NAME [OPTIONS] -- COMMAND [ARGS...] | "
                        "%(prog)s NAME --url URL [--header K:V]...")
    _add_options(q)
    q.add_argument("rest", nargs=argparse.REMAINDER, metavar="NAME [OPTIONS] -- COMMAND [ARGS...]")

    q = msub.add_parser("show", help="show one server's settings entry (secrets as [secret])")
    q.add_argument("name")
    add_json_flag(q)

    for verb, text in (("remove", "remove a server and its keychain secrets"),
                       ("enable", "enable a server"), ("disable", "disable a server"),
                       ("grant", "let every chat use this server's tools (grants the scopes they need)"),
                       ("revoke", "take that back: its tools reach only sessions that grant their scopes")):
        q = msub.add_parser(verb, help=text)
        q.add_argument("name")

    q = msub.add_parser("tools", help="connect to a server and list its tools")
    q.add_argument("name")
    add_json_flag(q)

    q = msub.add_parser("call", help="call one tool of a server (counts as approved)")
    q.add_argument("name")
    q.add_argument("tool")
    q.add_argument("--args", default="{}", metavar="JSON", help="the arguments as a JSON object")
    q.add_argument("--yes", action="store_true",
                   help="accept the server's input requests with their defaults (when every required field "
                        "has one), and let it sample the model where its settings say \"sampling\": \"allow\"")
    add_json_flag(q)

    from cks_desktop.commands.mcp_resources_cmd import add_parsers as add_resource_parsers

    add_resource_parsers(msub)
    from cks_desktop.commands.mcp_login_cmd import add_parsers as add_login_parsers

    add_login_parsers(msub)

    q = msub.add_parser("import-claude", help="import the servers of Claude Desktop's config")
    q.add_argument("path", nargs="?", help="claude_desktop_config.json (default: Claude Desktop's own)")
    add_json_flag(q)

    q = msub.add_parser("serve", help="serve the graph over MCP, on stdio or HTTP (for MCP hosts)",
                        description="Serve the graph to MCP hosts: one session (--session), else the sessions "
                                    "shared with `sessions share` (else a new session for this launch).")
    q.add_argument("--session", metavar="ID", help="serve this session only (default: the shared sessions)")
    q.add_argument("--http", metavar="[HOST:]PORT", help="streamable HTTP on this address (127.0.0.1 unless a "
                   "host is given; port 0 picks a free one) instead of stdio")
    q.add_argument("--no-auth", action="store_true", help="no bearer token (only with a loopback address)")
    q.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="another Host name clients may use (besides loopback names and the bound host)")
    q.add_argument("--yes", action="store_true", help="approve the calls this app would ask about, when it is "
                   "set to ask too (mcp_serve.approval = app)")

    q = msub.add_parser("token", help="show the bearer token of `mcp serve --http` (kept in the keychain)")
    q.add_argument("--rotate", action="store_true", help="replace it with a new one (hosts need the new one)")

    for verb, parser in msub.choices.items():
        if verb != "add":  # `add` takes it with its other options (before or after NAME)
            _add_keyring_file(parser)
    p.set_defaults(handler=_run)


def _add_keyring_file(q: argparse.ArgumentParser) -> None:
    q.add_argument("--keyring-file", metavar="PATH", default=argparse.SUPPRESS,
                   help="without an OS keychain: keep MCP sign-ins and secrets in this file (mode 0600) "
                        "instead (also CKS_DESKTOP_KEYRING_FILE); give it to every command that needs them")


def _run(args: argparse.Namespace) -> int:
    command = getattr(args, "mcp_command", None)
    if command is None:
        raise CliError(f"say what to do: {APP_ID} mcp {{list,show,add,remove,enable,disable,grant,revoke,tools,call,"
                       "resources,read,prompts,prompt,import-claude,serve,token} (see --help)")
    if not getattr(args, "verbose", False):
        # The SDK logs tracebacks for things we already report in one sentence.
        for name in ("mcp", "client", "httpx2", "httpcore2"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
    global _keyring_file
    if command != "add":  # `add` reads it after its second parse
        _keyring_file = getattr(args, "keyring_file", None) or os.environ.get("CKS_DESKTOP_KEYRING_FILE") or None
    from cks_desktop.commands.mcp_login_cmd import handlers as login_handlers
    from cks_desktop.commands.mcp_resources_cmd import handlers as resource_handlers

    handler = {"list": _list, "show": _show, "add": _add, "remove": _remove, "enable": _enable, "disable": _disable,
               "grant": _grant, "revoke": _revoke,
               "tools": _tools, "call": _call, "import-claude": _import_claude, "serve": _serve,
               "token": _token, **resource_handlers(), **login_handlers()}[command]
    return handler(args)


# -- shared -----------------------------------------------------------------------------
def _settings(args: argparse.Namespace) -> "Settings":
    from cks_desktop.settings import Settings

    from cks_desktop.mcp.config import protect_stored_servers

    settings = Settings.load(app_paths(args).settings_file)
    if settings.problem:
        print(f"{APP_ID}: warning: {settings.problem}", file=sys.stderr)
    moved = protect_stored_servers(settings, _secrets())
    if moved:  # secrets an older version kept in clear
        settings.save()
        print(f"{APP_ID}: moved to the keychain from the settings file: {', '.join(moved)}", file=sys.stderr)
    return settings


_keyring_file: str | None = None  # --keyring-file / CKS_DESKTOP_KEYRING_FILE of this command
_stores: dict[str, "SecretStore"] = {}


def _secrets() -> "SecretStore":
    """The OS keychain; or, when the person named one, the keyring file (said in one warning line)."""
    from cks_desktop.secrets import SecretStore

    if not _keyring_file:
        return SecretStore()
    store = _stores.get(_keyring_file)
    if store is None:
        from cks_desktop.mcp.keyring_file import FileSecretStore, KeyringFileError, warning_line

        try:
            store = FileSecretStore(Path(_keyring_file))
        except KeyringFileError as exc:
            raise CliError(str(exc)) from None
        print(f"{APP_ID}: {warning_line(store.path)}", file=sys.stderr)
        _stores[_keyring_file] = store
    return store


NO_KEYCHAIN_HINT = ("on a machine without one (CI, a server) give --keyring-file PATH to keep them in a file "
                    "(mode 0600) instead")


def _config(settings: "Settings", name: str) -> "ServerConfig":
    from cks_desktop.mcp.config import ConfigError, parse_server

    if name not in settings.mcp_servers:
        known = ", ".join(settings.mcp_servers) or "none are configured"
        raise CliError(f"There is no MCP server named '{name}' ({known}).")
    try:
        return parse_server(name, settings.mcp_servers[name])
    except ConfigError as exc:
        raise CliError(str(exc)) from None


def _manager(args: argparse.Namespace, settings: "Settings", secrets: "SecretStore | None") -> Any:
    from cks_desktop.mcp.manager import McpManager

    return McpManager(settings, secrets, None, app_paths(args).mcp_log_dir, startup_timeout=PROBE_TIMEOUT)


def _pairs(items: list[str], sep: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in items:
        key, found, value = item.partition(sep)
        if not found or not key.strip():
            raise CliError(f"{what} '{item}' must look like KEY{sep}VALUE.")
        out[key.strip()] = value.strip() if sep == ":" else value
    return out


# -- list / tools / call ---------------------------------------------------------------------
def _list(args: argparse.Namespace) -> int:
    from cks_desktop.mcp.config import parse_servers, shown

    settings = _settings(args)
    configs, problems = parse_servers(settings.mcp_servers)
    problems = {k: shown(v) for k, v in problems.items()}  # a bad URL is quoted in its sentence
    rows: list[dict[str, Any]] = []
    for name in settings.mcp_servers:
        if name in problems:
            rows.append({"name": name, "enabled": False, "transport": "", "target": "", "status": "invalid",
                         "reason": problems[name], "tools": None, "protocol": None})
            continue
        cfg = configs[name]
        rows.append({"name": name, "enabled": cfg.enabled, "transport": cfg.transport, "target": cfg.describe(),
                     "status": "enabled" if cfg.enabled else "disabled", "reason": "", "tools": None,
                     "protocol": None})
    probe_names = [r["name"] for r in rows if r["enabled"]] if not args.no_probe else []
    if probe_names:
        manager = _manager(args, settings, _secrets())

        async def probe_all() -> list[Any]:
            return await asyncio.gather(*(manager.probe(n) for n in probe_names))

        for name, result in zip(probe_names, asyncio.run(probe_all()), strict=True):
            row = next(r for r in rows if r["name"] == name)
            signing_in = not result.ok and result.status == "needs_auth"  # a browser sign-in, not a failure
            hint = f" Run: {APP_ID} mcp login {name}" if signing_in else ""
            row.update(status="ready" if result.ok else "sign-in" if signing_in else "failed",
                       reason=shown(result.reason) + hint,
                       tools=len([t for t in result.tools if configs[name].tool_enabled(t.name)]) if result.ok
                       else None, protocol=result.protocol_version)
    if args.json:
        print_json(rows)
        return EXIT_OK
    if not rows:
        print(f"No MCP servers are configured. Add one with: {APP_ID} mcp add NAME -- COMMAND [ARGS...]")
        return EXIT_OK
    width = max(len(r["name"]) for r in rows)
    for r in rows:
        tools = counted(r["tools"], "tool") if r["tools"] is not None else ""
        print(f"{r['name']:<{width}}  {r['status']:<8}  {tools:<9}  {r['transport'] or '-':<5}  {r['target']}")
        if r["reason"]:
            print(f"{'':<{width}}  └ {r['reason']}")
    return EXIT_OK


def _show(args: argparse.Namespace) -> int:
    from cks_desktop.mcp.config import shown_entry

    settings = _settings(args)
    if args.name not in settings.mcp_servers:
        known = ", ".join(settings.mcp_servers) or "none are configured"
        raise CliError(f"There is no MCP server named '{args.name}' ({known}).")
    entry = shown_entry(settings.mcp_servers[args.name])
    if args.json:
        print_json({"name": args.name, "entry": entry})
        return EXIT_OK
    import json

    print(f"{args.name}:")
    print(json.dumps(entry, indent=2, ensure_ascii=False))
    return EXIT_OK


def _tools(args: argparse.Namespace) -> int:
    from cks_desktop.mcp.convert import tool_info

    settings = _settings(args)
    config = _config(settings, args.name)
    result = asyncio.run(_manager(args, settings, _secrets()).probe(config))
    if not result.ok:
        raise CliError(f"Could not connect to MCP server '{args.name}': {result.reason}", EXIT_TOOL_ERROR)
    tools = [tool_info(t, config) for t in result.tools]
    skipped = [{"name": s.name, "reason": s.reason} for s in result.skipped]
    if args.json:
        print_json({"server": args.name, "protocol": result.protocol_version, "tools": tools, "skipped": skipped})
        return EXIT_OK
    print(f"{args.name}: {counted(len(tools), 'tool')} (protocol {result.protocol_version})")
    for t in tools:
        flags = [t["policy"]]
        if not t["enabled"]:
            flags.append("disabled")
        if t["annotations"].get("readOnlyHint"):
            flags.append("read-only")
        if t["annotations"].get("destructiveHint"):
            flags.append("destructive")
        summary = (t["description"].strip().splitlines() or [""])[0]
        title = f" ({t['title']})" if t["title"] else ""
        print(f"  {t['name']}{title} [{', '.join(flags)}]" + (f" — {summary}" if summary else ""))
    for s in skipped:
        print(f"  {s['name']} [left out] — {s['reason']}")
    return EXIT_OK


def _call(args: argparse.Namespace) -> int:
    arguments = parse_json_arg(args.args, "--args")
    if not isinstance(arguments, dict):
        raise CliError("--args must be a JSON object, e.g. '{\"text\": \"hi\"}'.")
    settings = _settings(args)
    config = _config(settings, args.name)
    if not config.tool_enabled(args.tool):
        raise CliError(f"The tool '{args.tool}' of MCP server '{args.name}' is disabled in the settings "
                       "(enabledTools).")
    result = asyncio.run(_call_async(args, settings, config, arguments))
    if args.json:
        print_json(result.to_json())
    else:
        stream = sys.stderr if result.is_error else sys.stdout
        print(result.content, file=stream)
    return EXIT_TOOL_ERROR if result.is_error else EXIT_OK


async def _call_async(args: argparse.Namespace, settings: "Settings", config: "ServerConfig",
                      arguments: dict[str, Any]) -> Any:
    from cks_desktop.mcp.connection import McpConnection
    from cks_desktop.mcp.convert import internal_name
    from cks_desktop.mcp.stderr_log import ServerLog, log_file_name
    from cks_desktop.tools.approval import Decision, StaticApprover
    from cks_desktop.tools.context import Run
    from cks_desktop.tools.registry import ToolRegistry
    from cks_desktop.tools.types import Caller, ToolCall

    registry = ToolRegistry(None)  # type: ignore[arg-type]  # MCP tools never touch the graph store
    secrets = _secrets()
    log = ServerLog(app_paths(args).mcp_log_dir / log_file_name(config.name), secrets=secrets.known_values)
    conn = McpConnection(config, log=log, registry=registry, secrets=secrets, startup_timeout=PROBE_TIMEOUT,
                         hooks=(hooks := _headless_hooks(args, settings, secrets)))
    try:
        if not await conn.start():
            hint = f" Run: {APP_ID} mcp login {config.name}" if conn.status.value == "needs_auth" else ""
            raise CliError(f"Could not connect to MCP server '{config.name}': {conn.reason}{hint}", EXIT_TOOL_ERROR)
        name = internal_name(config.name, args.tool)
        if registry.get(name) is None:
            skipped = next((s for s in conn.skipped if s.name == args.tool), None)
            if skipped is not None:
                raise CliError(f"The tool '{args.tool}' cannot be used: {skipped.reason}.", EXIT_TOOL_ERROR)
            names = ", ".join(t.name for t in conn.tools) or "none"
            raise CliError(f"MCP server '{config.name}' has no tool named '{args.tool}' (its tools: {names}).")
        run = Run("", Caller.CLI, approver=StaticApprover(Decision.ALLOW))
        return await registry.invoke(ToolCall("cli-1", name, arguments), run)
    finally:
        await conn.stop()
        sampler = getattr(hooks.host, "sampler", None)
        if sampler is not None:
            await sampler.providers.aclose()


def _headless_hooks(args: argparse.Namespace, settings: "Settings", secrets: "SecretStore | None") -> Any:
    """What the server may ask during ``mcp call``: the headless rules (``mcp/host.py``), said on stderr;
    sampling runs with the default provider where the server's settings allow it."""
    from cks_desktop.agent.mcp_sampling import ProviderSampler
    from cks_desktop.agent.providers import ProviderHolder
    from cks_desktop.mcp.client_hooks import ClientHooks
    from cks_desktop.mcp.host import HeadlessHost

    host = HeadlessHost(yes=bool(getattr(args, "yes", False)), sampler=ProviderSampler(ProviderHolder(settings, secrets)),
                        note=lambda text: print(f"{APP_ID}: {text}", file=sys.stderr, flush=True))
    return ClientHooks(host, lambda: settings.allowed_folders)


# -- editing ---------------------------------------------------------------------------------
class _AddParser(argparse.ArgumentParser):
    """Parses what follows NAME; its usage errors are one line, exit 2, like every other."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise CliError(f"{message}; put the command after --: {APP_ID} mcp add NAME [OPTIONS] -- COMMAND [ARGS...]")


def _parse_add(args: argparse.Namespace) -> argparse.Namespace:
    """Options may come before or after NAME; everything after ``--`` is the command."""
    rest = list(args.rest)
    if "--" in rest:
        cut = rest.index("--")
        head, command = rest[:cut], rest[cut + 1:]
    else:
        head, command = rest, []
    second = _AddParser(prog=f"{APP_ID} mcp add", add_help=False)
    _add_options(second)
    second.add_argument("name")
    second.add_argument("words", nargs="*")
    late = second.parse_args(head)
    if late.words:
        if command:
            raise CliError(f"unexpected arguments before '--': {' '.join(late.words)}")
        command = late.words
    for key in ("env", "secret_env", "header", "secret_header", "scope"):
        setattr(late, key, getattr(args, key) + getattr(late, key))
    from cks_desktop.commands.mcp_oauth_opts import MERGED as OAUTH_KEYS

    for key in ("url", "approval", "timeout", "protocol", *OAUTH_KEYS):
        if getattr(late, key) is None:
            setattr(late, key, getattr(args, key))
    late.keyring_file = getattr(late, "keyring_file", None) or getattr(args, "keyring_file", None)
    late.disabled = late.disabled or args.disabled
    late.no_grant = late.no_grant or args.no_grant
    late.command = command
    return late


def _secret_items(items: list[str], sep: str, what: str) -> tuple[dict[str, str | None], list[str]]:
    """``--secret-env K`` (value asked for later) or the deprecated ``K=V``; returns the names given as K=V."""
    out: dict[str, str | None] = {}
    inline: list[str] = []
    for item in items:
        key, found, value = item.partition(sep)
        key = key.strip()
        if not key:
            raise CliError(f"{what} '{item}' needs a name: {what} NAME (the value is asked for).")
        if found:
            inline.append(key)
            out[key] = value.strip() if sep == ":" else value
        else:
            out[key] = None
    return out, inline


def _read_secret(key: str, what: str) -> str:
    """The value of one secret, typed at the terminal (not echoed) or one line of stdin; never argv."""
    import getpass

    if sys.stdin is not None and sys.stdin.isatty():
        value = getpass.getpass(f"Value of {what} {key} (not shown): ")
    else:
        line = sys.stdin.readline() if sys.stdin is not None else ""
        value = line[:-1] if line.endswith("\n") else line
        value = value[:-1] if value.endswith("\r") else value
    if not value:
        raise CliError(f"No value was given for {what} {key}; type it when asked, or pipe it on stdin "
                       "(one line per secret, in the order given); nothing was changed.")
    return value


def _add(args: argparse.Namespace) -> int:
    from cks_desktop.commands.mcp_oauth_opts import gather as gather_oauth
    from cks_desktop.commands.mcp_oauth_opts import oauth_entry
    from cks_desktop.mcp.config import ConfigError, add_server, find_name, parse_server, protect_entry
    from cks_desktop.tools.scopes import server_identity

    global _keyring_file
    opts = _parse_add(args)
    _keyring_file = opts.keyring_file or os.environ.get("CKS_DESKTOP_KEYRING_FILE") or None
    if opts.url and opts.command:
        raise CliError("Give either --url or a command after --, not both.")
    if not opts.url and not opts.command:
        raise CliError(f"Say what to run after --, e.g. {APP_ID} mcp add files -- npx -y "
                       "@modelcontextprotocol/server-filesystem ~/notes")
    if opts.url and (opts.env or opts.secret_env):
        raise CliError("--env and --secret-env are for servers started with a command, not --url.")
    if not opts.url and (opts.header or opts.secret_header):
        raise CliError("--header and --secret-header are for --url servers.")
    settings = _settings(args)
    existing = find_name(settings, opts.name)
    if existing is not None:
        raise CliError(f"An MCP server named '{existing}' already exists; remove it first or pick another name.")

    section = "headers" if opts.url else "env"
    flag = "--secret-header" if opts.url else "--secret-env"
    plain = _pairs(opts.header, ":", "--header") if opts.url else _pairs(opts.env, "=", "--env")
    secret, inline = _secret_items(opts.secret_header, ":", flag) if opts.url \
        else _secret_items(opts.secret_env, "=", flag)
    if inline:
        print(f"{APP_ID}: warning: {flag} {inline[0]}{'=' if not opts.url else ':'}VALUE puts the value on the "
              "command line, where other programs on this computer can read it; give only the name "
              f"({flag} {inline[0]}) and type the value when asked, or pipe it on stdin.", file=sys.stderr)

    raw: dict[str, Any] = {"url": opts.url} if opts.url else {"command": opts.command[0], "args": opts.command[1:]}
    values = {**plain, **{k: "keychain:pending" for k in secret}}
    if values:
        raw[section] = values
    if opts.scope:
        raw["scopes"] = opts.scope
    for key, value in (("approval", opts.approval), ("timeout", opts.timeout), ("protocol", opts.protocol)):
        if value is not None:
            raw[key] = value
    if opts.disabled:
        raw["enabled"] = False
    oauth, oauth_kept = oauth_entry(opts, opts.name)
    if oauth is not None:
        raw["oauth"] = oauth
    try:
        parse_server(opts.name, raw)  # validate everything before a secret is stored anywhere
        # A dry run: which values (by name or shape, in env, headers, arguments or the URL) are secret.
        _, found = protect_entry({**raw, section: {**plain, **{k: "" for k in secret}}}, server=opts.name,
                                 secrets=None)
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    kept = [f"{section.rstrip('s')} {k}" for k in secret] + found + oauth_kept
    if kept:
        secrets = _secrets()
        if not secrets.secure:
            names = ", ".join(k.split(" ", 1)[-1] for k in kept)
            raise CliError(f"No secure keychain is available, so {names} cannot be stored persistently, and "
                           f"secrets are never written to the settings file ({NO_KEYCHAIN_HINT}); nothing was "
                           "changed.")
        given = {k: (v if v is not None else _read_secret(k, flag)) for k, v in secret.items()}
        oauth_values = gather_oauth(oauth, opts, _read_secret)  # read (and checked) before storing anything
        try:
            raw, _ = protect_entry({**raw, section: {**plain, **given}} if (plain or given) else raw,
                                   server=opts.name, secrets=secrets,
                                   force_secret={section: frozenset(given)})
        except ConfigError as exc:
            raise CliError(str(exc)) from None
        for ref, value in oauth_values.items():
            secrets.set(ref, value)
        if secrets.last_error:
            raise CliError(secrets.last_error, EXIT_TOOL_ERROR)
    add_server(settings, opts.name, raw)
    config = parse_server(opts.name, raw)
    granted = [] if opts.no_grant else sorted(s.value for s in config.scopes)
    # Adding a server by hand is the person turning it on: its tools reach chats (scopes.py). An
    # import (untrusted input) never grants; --no-grant leaves it to each session's choice.
    settings.set_server_grant(opts.name, granted, server_identity(raw))
    settings.save()
    note = f"; kept in the keychain: {', '.join(kept)}" if kept else ""
    print(f"Added MCP server '{opts.name}' ({config.transport}: {config.describe()}){note}.")
    if granted:
        print(f"Its tools may be used in every chat (granted: {', '.join(granted)}).")
    print(f"Check it with: {APP_ID} mcp tools {opts.name}")
    return EXIT_OK


def _remove(args: argparse.Namespace) -> int:
    from cks_desktop.mcp.config import remove_server

    settings = _settings(args)
    if args.name not in settings.mcp_servers:
        raise CliError(f"There is no MCP server named '{args.name}'.")
    remove_server(settings, args.name, _secrets())
    settings.save()
    print(f"Removed MCP server '{args.name}'.")
    return EXIT_OK


def _set_enabled(args: argparse.Namespace, enabled: bool) -> int:
    from cks_desktop.mcp.config import ConfigError, set_enabled

    settings = _settings(args)
    try:
        set_enabled(settings, args.name, enabled)
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    settings.save()
    print(f"{'Enabled' if enabled else 'Disabled'} MCP server '{args.name}'.")
    return EXIT_OK


def _enable(args: argparse.Namespace) -> int:
    return _set_enabled(args, True)


def _disable(args: argparse.Namespace) -> int:
    return _set_enabled(args, False)


def _set_grant(args: argparse.Namespace, grant: bool) -> int:
    from cks_desktop.mcp.config import ConfigError, find_name, parse_server
    from cks_desktop.tools.scopes import server_identity

    settings = _settings(args)
    name = find_name(settings, args.name)
    if name is None:
        raise CliError(f"There is no MCP server named '{args.name}'.")
    raw = settings.mcp_servers[name]
    try:
        scopes = sorted(s.value for s in parse_server(name, raw).scopes) if grant else []
    except ConfigError as exc:
        raise CliError(str(exc)) from None
    settings.set_server_grant(name, scopes, server_identity(raw))
    settings.save()
    if grant:
        print(f"Every chat may now use the tools of MCP server '{name}' (granted: {', '.join(scopes) or 'nothing'}).")
    else:
        print(f"The tools of MCP server '{name}' now reach only the chats of sessions that grant their scopes.")
    return EXIT_OK


def _grant(args: argparse.Namespace) -> int:
    return _set_grant(args, True)


def _revoke(args: argparse.Namespace) -> int:
    return _set_grant(args, False)


def _import_claude(args: argparse.Namespace) -> int:
    from pathlib import Path

    from cks_desktop.mcp.claude_import import ClaudeImportError, import_claude

    settings = _settings(args)
    try:
        report = import_claude(settings, _secrets(), Path(args.path).expanduser() if args.path else None,
                               allow_memory_secrets=False)
    except ClaudeImportError as exc:
        raise CliError(str(exc)) from None
    if report.imported:
        settings.save()
    if args.json:
        print_json(report.to_json())
        return EXIT_OK
    names = ", ".join(report.imported) or "none"
    print(f"Imported {counted(len(report.imported), 'MCP server')} from {report.source}: {names}.")
    for item in report.secrets_stored:
        print(f"  kept in the keychain: {item}")
    for name, reason in report.skipped:
        print(f"  skipped {name}: {reason}")
    for item in report.ignored:
        print(f"  ignored (an imported server always asks, with the default scopes): {item}")
    if report.imported:
        print(f"Imported servers' tools reach a chat only once you grant them: {APP_ID} mcp grant NAME, or "
              "Settings → MCP servers → the server → Grant these scopes… in every chat.")
    return EXIT_OK


def _serve(args: argparse.Namespace) -> int:
    """Serve over stdio or streamable HTTP until the host goes (stdin closes) or Ctrl+C: the
    serving use case composes the run (``runtime/serving.py``); this parses, prints and waits."""
    from cks_desktop.runtime.serving import ServeFailed, http_bind, open_serve
    from cks_desktop.runtime.sharing import SharingRefused

    bind = None
    if args.http is not None:
        try:
            bind = http_bind(args.http, token=not args.no_auth)
        except SharingRefused as exc:
            raise CliError(f"--http {args.http}" + (" --no-auth" if args.no_auth else "") + f": {exc}") from None
    elif args.no_auth or args.allow_host:
        raise CliError("--no-auth and --allow-host are for --http.")
    settings = _settings(args)
    store = open_store(args)
    try:
        try:
            run = open_serve(app_paths(args), settings, store, _secrets(), args.session, bind=bind,
                             token=not args.no_auth, yes=args.yes, allow_hosts=args.allow_host)
        except ServeFailed as exc:
            raise CliError(str(exc), EXIT_TOOL_ERROR) from None
        except SharingRefused as exc:
            raise CliError(str(exc)) from None
        try:
            if bind is None:
                print(f"{APP_ID}: serving {run.what} over MCP on stdio", file=sys.stderr, flush=True)
                asyncio.run(run.serve_stdio())
                return EXIT_OK
            _announce_token(run)
            return _serve_http(run)
        finally:
            run.close()
    finally:
        store.close()


def _announce_token(run: "ServeRun") -> None:
    made = run.token
    if made is None:
        return
    if made.new:
        where = "kept in the keychain; `cks-desktop mcp token` shows it again" if made.kept else \
            "no keychain: a new token is made at each start"
        print(f"{APP_ID}: bearer token (shown once; {where}): {made.value}", file=sys.stderr, flush=True)
    else:
        print(f"{APP_ID}: using the bearer token kept in the keychain (`{APP_ID} mcp token` shows it)",
              file=sys.stderr, flush=True)


def _serve_http(run: "ServeRun") -> int:
    import signal

    from cks_desktop.runtime.sharing import SharingRefused

    async def main() -> int:
        try:
            url = await run.start_http()
        except SharingRefused as exc:
            raise CliError(str(exc), EXIT_TOOL_ERROR) from None
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                loop.add_signal_handler(sig, run.request_stop)
            except (NotImplementedError, RuntimeError):  # Windows: Ctrl+C arrives as KeyboardInterrupt
                pass
        print(f"{APP_ID}: serving {run.what} over MCP at {url}" + ("" if run.token else " (no token)")
              + "; Ctrl+C stops", file=sys.stderr, flush=True)
        await run.serve_http_until_stopped()
        return EXIT_OK

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        return EXIT_OK


def _token(args: argparse.Namespace) -> int:
    from cks_desktop.runtime.sharing import NoKeychain, SharingRefused, kept_token

    try:  # the token needs neither a store nor the settings
        made = kept_token(_secrets(), rotate=args.rotate)
    except NoKeychain as exc:
        raise CliError(str(exc)) from None
    except SharingRefused as exc:
        raise CliError(str(exc), EXIT_TOOL_ERROR) from None
    print(made.value)
    if args.rotate:
        print(f"{APP_ID}: a new token; hosts configured with the old one must be given this one.", file=sys.stderr)
    return EXIT_OK
