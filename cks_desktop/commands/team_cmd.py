"""`cks-desktop team init|password|check|copy`: a team graph on PostgreSQL (docs/team.md).

- ``team init postgresql://admin@host/db --member ann --member bo``: as the server's
  admin, create the database, the schema, the members' group role and a login role
  per member (each member's password is asked for, or read one per line from stdin).
- ``team password ADDRESS``: save this member's password for ADDRESS in the keychain.
- ``team check ADDRESS``: connect once; exit 0 when it works, else one sentence.
- ``team copy SESSION --to ADDRESS|FILE``: copy a session between two stores (the
  source is ``--database`` or the usual one), ids kept, one change in the target.
- ``--database ADDRESS team private|shared SESSION``: who may see a session (row-level
  security in the database enforces it; only the session's creator can make it private).

Passwords never go on the command line; the address must not hold one.
"""

from __future__ import annotations

import argparse
import getpass
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cks_desktop.commands import add_command
from cks_desktop.commands.common import EXIT_OK, EXIT_TOOL_ERROR, CliError, app_paths, print_json
from cks_desktop.plural import counted

if TYPE_CHECKING:
    from cks_desktop.secrets import SecretStore


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "team",
                    description="A team graph: the same app on a shared PostgreSQL database (docs/team.md).")
    tsub = p.add_subparsers(dest="team_command", metavar="ACTION", required=True)
    init = tsub.add_parser("init", help="as the server's admin: create the database, schema and member roles")
    init.add_argument("address", metavar="ADDRESS", help="postgresql://admin@host[:port]/database")
    init.add_argument("--member", action="append", default=[], metavar="NAME",
                      help="create a login role for this member (repeat); the password is asked for")
    init.add_argument("--no-passwords", action="store_true",
                      help="create member roles without passwords (the server authenticates otherwise)")
    init.set_defaults(handler=_init)
    pw = tsub.add_parser("password", help="save your password for a team database in the keychain")
    pw.add_argument("address", metavar="ADDRESS")
    pw.add_argument("--delete", action="store_true", help="forget the saved password")
    pw.set_defaults(handler=_password)
    check = tsub.add_parser("check", help="connect once and say whether it works")
    check.add_argument("address", metavar="ADDRESS")
    check.set_defaults(handler=_check)
    copy = tsub.add_parser("copy", help="copy a session to another store (a team database or a file)")
    copy.add_argument("session_id", metavar="SESSION")
    copy.add_argument("--to", required=True, metavar="ADDRESS|FILE")
    copy.add_argument("--title", help="the copy's title (default: the same)")
    copy.set_defaults(handler=_copy)
    private = tsub.add_parser("private", help="make a session of yours private on the team database "
                              "(only you see it; enforced by the database)")
    private.add_argument("session_id", metavar="SESSION")
    private.set_defaults(handler=_private)
    shared = tsub.add_parser("shared", help="share a session with every member of the team database")
    shared.add_argument("session_id", metavar="SESSION")
    shared.set_defaults(handler=_shared)
    for leaf in (init, pw, check, copy, private, shared):
        leaf.add_argument("--json", action="store_true", help="print the result as JSON")


def _secrets() -> "SecretStore":
    from cks_desktop.secrets import SecretStore

    return SecretStore()


def _checked(address: str) -> str:
    from cks_desktop.graph.errors import StoreError
    from cks_desktop.storage_choice import is_postgres, refuse_password_in_address

    if not is_postgres(address):
        raise CliError(f"{address!r} is not a PostgreSQL address (postgresql://user@host/database).")
    try:
        refuse_password_in_address(address)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    return address


def _ask(prompt: str) -> str:
    if sys.stdin.isatty():
        return getpass.getpass(prompt)
    line = sys.stdin.readline()
    return line.rstrip("\r\n")


def _init(args: argparse.Namespace) -> int:
    from cks_desktop.graph.errors import StoreError
    from cks_desktop.graph.pg.team import init_team
    from cks_desktop.storage_choice import secret_ref

    address = _checked(args.address)
    members: dict[str, str | None] = {}
    for name in args.member:
        members[name] = None if args.no_passwords else (_ask(f"Password for {name}: ") or None)
    try:
        done = init_team(address, members, password=_secrets().get(secret_ref(address)))
    except StoreError as exc:
        raise CliError(str(exc), EXIT_TOOL_ERROR) from None
    if args.json:
        print_json({"database_created": done.database_created, "schema_version": done.schema_version,
                    "members_created": done.members_created, "members_existing": done.members_existing})
    else:
        made = "created" if done.database_created else "ready"
        who = ", ".join(done.members_created + done.members_existing) or "no members yet"
        print(f"Team database {made} (schema {done.schema_version}); members: {who}.")
    return EXIT_OK


def _password(args: argparse.Namespace) -> int:
    from cks_desktop.storage_choice import secret_ref

    address = _checked(args.address)
    secrets = _secrets()
    ref = secret_ref(address)
    if args.delete:
        secrets.delete(ref)
    else:
        value = _ask("Password: ")
        if not value:
            raise CliError("No password given; nothing was saved.")
        secrets.set(ref, value)
    if secrets.last_error:
        raise CliError(secrets.last_error, EXIT_TOOL_ERROR)
    if args.json:
        print_json({"saved": not args.delete, "deleted": args.delete})
    else:
        print("Password forgotten." if args.delete else "Password saved in the keychain.")
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    from cks_desktop.storage_choice import check_connection, secret_ref

    address = _checked(args.address)
    problem = check_connection(address, _secrets().get(secret_ref(address)))
    if args.json:
        print_json({"ok": problem is None, "problem": problem})
    elif problem is None:
        print("The connection works.")
    if problem is not None:
        if not args.json:
            raise CliError(problem, EXIT_TOOL_ERROR)
        return EXIT_TOOL_ERROR
    return EXIT_OK


def _copy(args: argparse.Namespace) -> int:
    from cks_desktop.graph.errors import StoreError
    from cks_desktop.storage_choice import copy_session, is_postgres, open_store, refuse_password_in_address

    secrets = _secrets()
    try:
        refuse_password_in_address(args.to)
        source = open_store(getattr(args, "database", None), app_paths(args).database, secrets)
        try:
            target = open_store(args.to, Path(args.to), secrets) if is_postgres(args.to) else open_store(
                str(Path(args.to).expanduser()), Path(args.to), secrets)
            try:
                copied = copy_session(source, args.session_id, target, args.title)
                counts = target.counts(copied.id)
            finally:
                target.close()
        finally:
            source.close()
    except StoreError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print_json({"id": copied.id, "title": copied.title, **counts})
    else:
        print(f"Copied to {copied.id} ({copied.title}): {counted(counts['objects'], 'object')}, "
              f"{counted(counts['relations'], 'relation')}.")
    return EXIT_OK


def _private(args: argparse.Namespace) -> int:
    return _set_shared(args, False)


def _shared(args: argparse.Namespace) -> int:
    return _set_shared(args, True)


def _set_shared(args: argparse.Namespace, shared: bool) -> int:
    from cks_desktop.graph.errors import StoreError
    from cks_desktop.storage_choice import is_postgres, open_store

    database = getattr(args, "database", None)
    if not is_postgres(database):
        raise CliError("Private and shared sessions are for a team database: pass --database postgresql://….")
    try:
        store = open_store(database, app_paths(args).database, _secrets())
        try:
            store.set_session_shared(args.session_id, shared)  # type: ignore[attr-defined]
            owner, now_shared = store.session_access(args.session_id)  # type: ignore[attr-defined]
        finally:
            store.close()
    except StoreError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print_json({"id": args.session_id, "owner": owner, "shared": now_shared})
    else:
        print(f"Session {args.session_id} is {'shared with every member' if now_shared else 'private to ' + owner}.")
    return EXIT_OK
