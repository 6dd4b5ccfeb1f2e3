"""`cks-desktop storage check|backup|backups|restore|export`: the database file itself.

The way out of a damaged database, from a terminal (the GUI's start-up dialog
offers the same): ``check`` says whether the file is sound (exit 1 if not),
``export DIR`` writes every session that can still be read to ``DIR`` (a
damaged file opens read-only, so this works on one), ``restore`` puts the
newest sound automatic backup in place (the current file is kept in
``damaged/``), ``backup`` makes one now and ``backups`` lists them. Backups
are made automatically once a day by the GUI (``graph/backup.py``). Each action is one call of
the database-file use case (``runtime/database_file.py``), as the GUI's start-up dialog's are.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cks_desktop.commands import add_command
from cks_desktop.commands.common import EXIT_TOOL_ERROR, CliError, app_paths, print_json
from cks_desktop.commands.sessions_cmd import _command, _leaf, store_for

if TYPE_CHECKING:
    from cks_desktop.runtime.database_file import DatabaseFile


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "storage",
                    description="The database file: integrity check, backups, restore, export of what "
                                "can be read.")
    ssub = p.add_subparsers(dest="storage_command", metavar="ACTION", required=True)
    check = _leaf(ssub, "check", "check the database's integrity (exit 1 if it is damaged)", _check)
    check.add_argument("--full", action="store_true", help="run the slower full integrity_check "
                       "(every index entry too) instead of quick_check")
    _leaf(ssub, "backup", "make a backup now (the newest 2 are kept)", _backup)
    _leaf(ssub, "backups", "list the backups", _backups)
    restore = _leaf(ssub, "restore", "replace the database with a backup (default: the newest sound one); "
                    "the current file is kept in damaged/", _restore)
    restore.add_argument("backup", metavar="BACKUP", nargs="?", help="a backup file (see: storage backups)")
    export = _leaf(ssub, "export", "export every session that can still be read, one JSON file each", _export)
    export.add_argument("folder", metavar="DIR", help="the folder to write <session id>.json files into")


def _file(args: argparse.Namespace) -> "DatabaseFile":
    from cks_desktop.runtime.database_file import DatabaseFile

    return DatabaseFile(app_paths(args).database)


def _check(args: argparse.Namespace) -> int:
    from cks_desktop.graph.errors import StoreError

    try:
        checked = _file(args).check(full=args.full)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    if args.json:
        print_json(checked.to_json())
    else:
        print(checked.sentence())
    return 0 if checked.ok else EXIT_TOOL_ERROR


def _backup(args: argparse.Namespace) -> int:
    from cks_desktop.graph.errors import StoreError

    database = _file(args)
    try:
        made = database.backup()
    except StoreError as exc:
        raise CliError(str(exc), EXIT_TOOL_ERROR) from None
    if args.json:
        print_json(made.to_json())
    else:
        print(f"Backed up {database.path} to {made.path} (the newest {database.kept()} backups are kept).")
    return 0


def _backups(args: argparse.Namespace) -> int:
    database = _file(args)
    found = database.backups()
    if args.json:
        print_json({"database": str(database.path), "backups": [b.to_json() for b in found]})
    elif not found:
        print(f"No backups of {database.path} yet (they are kept in {database.backup_folder()}).")
    else:
        for b in found:
            print(f"{b.made_at.isoformat(timespec='seconds')}  {b.path}")
    return 0


def _restore(args: argparse.Namespace) -> int:
    from cks_desktop.graph.errors import StoreError

    database = _file(args)
    try:
        done = database.restore(Path(args.backup).expanduser() if args.backup else None)
    except StoreError as exc:
        raise CliError(str(exc), EXIT_TOOL_ERROR) from None
    if args.json:
        print_json({"database": str(database.path), "restored_from": str(done.backup.path),
                    "previous_file": str(done.kept_as) if done.kept_as else None})
    else:
        print(f"{database.path}: {database.restored_sentence(done)}")
    return 0


def _export(args: argparse.Namespace) -> int:
    folder = Path(args.folder).expanduser()
    with store_for(args) as store:
        result = _file(args).salvage(store, folder).result
    if args.json:
        print_json({"written": result.written, "failed": result.failed})
    else:
        for row in result.written:
            print(f"Wrote {row['title']!r} to {row['file']}" + (f" ({row['note']})." if row.get("note") else "."))
        for row in result.failed:
            print(f"Could not read {row['title']!r} ({row['session_id']}): {row['error']}", file=sys.stderr)
    return EXIT_TOOL_ERROR if result.failed else 0
