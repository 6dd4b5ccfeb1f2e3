"""`cks-desktop storage check|backup|backups|restore|export`: the database file itself.

The way out of a damaged database, from a terminal (the GUI's start-up dialog
offers the same): ``check`` says whether the file is sound (exit 1 if not),
``export DIR`` writes every session that can still be read to ``DIR`` (a
damaged file opens read-only, so this works on one), ``restore`` puts the
newest sound automatic backup in place (the current file is kept in
``damaged/``), ``backup`` makes one now and ``backups`` lists them. Backups
are made automatically once a day by the GUI (``graph/backup.py``).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path
from cks_desktop.commands import add_command
from cks_desktop.commands.common import EXIT_TOOL_ERROR, CliError, app_paths, print_json
from cks_desktop.commands.sessions_cmd import _command, _leaf, store_for


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


def _database(args: argparse.Namespace) -> Path:
    return app_paths(args).database


def _check(args: argparse.Namespace) -> int:
    from cks_desktop.graph.errors import damaged_sentence
    from cks_desktop.graph.integrity import missing_parts, quick_check
    from cks_desktop.graph.sqlite_util import database_error

    path = _database(args)
    if not path.is_file():
        raise CliError(f"There is no database at {path} yet.")
    try:
        conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
        try:
            verdict = quick_check(conn, None, full=args.full)
            problem = verdict.problem if not verdict.ok else ", ".join(f"missing {m}" for m in missing_parts(conn))
        finally:
            conn.close()
    except sqlite3.Error as exc:
        raise CliError(str(database_error(exc, path))) from None
    if args.json:
        print_json({"database": str(path), "ok": not problem, "problem": problem or None,
                    "check": "integrity_check" if args.full else "quick_check"})
    elif problem:
        print(damaged_sentence(path, problem))
    else:
        print(f"The database {path} passed its {'full ' if args.full else ''}integrity check.")
    return EXIT_TOOL_ERROR if problem else 0


def _backup(args: argparse.Namespace) -> int:
    from cks_desktop.graph import backup
    from cks_desktop.graph.errors import StoreError

    path = _database(args)
    try:
        made = backup.make_backup(path)
    except StoreError as exc:
        raise CliError(str(exc), EXIT_TOOL_ERROR) from None
    if args.json:
        print_json(made.to_json())
    else:
        print(f"Backed up {path} to {made.path} (the newest {backup.KEEP} backups are kept).")
    return 0


def _backups(args: argparse.Namespace) -> int:
    from cks_desktop.graph import backup

    path = _database(args)
    found = backup.list_backups(path)
    if args.json:
        print_json({"database": str(path), "backups": [b.to_json() for b in found]})
    elif not found:
        print(f"No backups of {path} yet (they are kept in {backup.backup_dir(path)}).")
    else:
        for b in found:
            print(f"{b.made_at.isoformat(timespec='seconds')}  {b.path}")
    return 0


def _restore(args: argparse.Namespace) -> int:
    from cks_desktop.graph import backup
    from cks_desktop.graph.errors import StoreError

    path = _database(args)
    try:
        done = backup.restore(path, Path(args.backup).expanduser() if args.backup else None)
    except StoreError as exc:
        raise CliError(str(exc), EXIT_TOOL_ERROR) from None
    if args.json:
        print_json({"database": str(path), "restored_from": str(done.backup.path),
                    "previous_file": str(done.kept_as) if done.kept_as else None})
    else:
        kept = f"; the previous file is kept as {done.kept_as}" if done.kept_as else ""
        print(f"Restored {path} from the backup of {done.backup.made_at.isoformat(timespec='seconds')}{kept}.")
    return 0


def _export(args: argparse.Namespace) -> int:
    from cks_desktop.graph.salvage import export_readable

    folder = Path(args.folder).expanduser()
    with store_for(args) as store:
        result = export_readable(store, folder)
    if args.json:
        print_json({"written": result.written, "failed": result.failed})
    else:
        for row in result.written:
            print(f"Wrote {row['title']!r} to {row['file']}" + (f" ({row['note']})." if row.get("note") else "."))
        for row in result.failed:
            print(f"Could not read {row['title']!r} ({row['session_id']}): {row['error']}", file=sys.stderr)
    return EXIT_TOOL_ERROR if result.failed else 0
