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
    from cks_desktop.runtime.storage import StorageUseCase


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


def _storage(args: argparse.Namespace) -> "StorageUseCase":
    """The storage use case on this data folder's settings (the keychain opened when needed)."""
    from cks_desktop.runtime.storage import StorageUseCase
    from cks_desktop.settings import Settings

    return StorageUseCase(Settings.load(app_paths(args).settings_file))


def _checked(address: str) -> str:
    from cks_desktop.runtime.storage import StorageRefused, checked_address

    try:
        return checked_address(address)
    except StorageRefused as exc:
        raise CliError(str(exc)) from None


def _ask(prompt: str) -> str:
    if sys.stdin.isatty():
        return getpass.getpass(prompt)
    line = sys.stdin.readline()
    return line.rstrip("\r\n")


def _init(args: argparse.Namespace) -> int:
    from cks_desktop.runtime.storage import StorageRefused

    address = _checked(args.address)
    members: dict[str, str | None] = {}
    for name in args.member:
        members[name] = None if args.no_passwords else (_ask(f"Password for {name}: ") or None)
    try:
        done = _storage(args).init_team(address, members)
    except StorageRefused as exc:
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
    from cks_desktop.runtime.storage import NO_PASSWORD, StorageRefused

    address = _checked(args.address)
    storage = _storage(args)
    try:
        if args.delete:
            storage.forget_password(address)
        else:
            value = _ask("Password: ")
            if not value:
                raise CliError(NO_PASSWORD)
            storage.save_password(address, value)
    except StorageRefused as exc:
        raise CliError(str(exc), EXIT_TOOL_ERROR) from None
    if args.json:
        print_json({"saved": not args.delete, "deleted": args.delete})
    else:
        print("Password forgotten." if args.delete else "Password saved in the keychain.")
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    address = _checked(args.address)
    problem = _storage(args).check(address)
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
    from cks_desktop.runtime.storage import StorageRefused, open_chosen_store

    storage = _storage(args)
    try:
        source = open_chosen_store(getattr(args, "database", None), app_paths(args).database, None, storage.secrets())
        try:
            target = open_chosen_store(args.to, Path(args.to), None, storage.secrets())
            try:
                copied = storage.copy(source, args.session_id, target, args.title)
                counts = target.counts(copied.id)
            finally:
                target.close()
        finally:
            source.close()
    except StorageRefused as exc:
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
    from cks_desktop.runtime.storage import StorageRefused, is_postgres, open_chosen_store

    database = getattr(args, "database", None)
    if not is_postgres(database):
        raise CliError("Private and shared sessions are for a team database: pass --database postgresql://….")
    try:
        store = open_chosen_store(database, app_paths(args).database, None)
        try:
            store.set_session_shared(args.session_id, shared)  # type: ignore[attr-defined]
            owner, now_shared = store.session_access(args.session_id)  # type: ignore[attr-defined]
        finally:
            store.close()
    except (StoreError, StorageRefused) as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print_json({"id": args.session_id, "owner": owner, "shared": now_shared})
    else:
        print(f"Session {args.session_id} is {'shared with every member' if now_shared else 'private to ' + owner}.")
    return EXIT_OK
