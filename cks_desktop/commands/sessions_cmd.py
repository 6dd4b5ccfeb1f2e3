"""`cks-desktop sessions list|create|rename|delete|show|export|import|compact|watch`.

Every action opens the store, does one thing and closes it. Failures (a
missing session, a locked/corrupt/too-new database, a file that cannot be
read or written, data that does not import) are one line on stderr with exit
code 2 and write nothing: imports are one batch in the store, exports to a
file are written atomically. With ``--json`` exactly one JSON document goes to
stdout, also on failure (``{"error": …}``), so scripts can always parse it.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cks_desktop.commands import add_command
from cks_desktop.commands.common import CliError, EXIT_USAGE, add_json_flag, open_store, print_json
from cks_desktop.plural import counted, noun
from cks_desktop.runtime.graph_io import EXPORT_FORMATS, IMPORT_FORMATS

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore

ON_CONFLICT = ("skip", "merge", "rename", "error")  # the same as graph/formats/conflicts.py (a test checks)
CLI_ORIGIN = "cli"
LATEST = 10


@contextmanager
def json_errors(args: argparse.Namespace) -> Iterator[None]:
    """With --json, a failure still prints one JSON document before the stderr line."""
    try:
        yield
    except CliError as exc:
        if getattr(args, "json", False):
            print_json({"error": str(exc), "exit_code": exc.code})
        raise


@contextmanager
def store_for(args: argparse.Namespace) -> Iterator["GraphStore"]:
    """Open the store; turn every failure of it into one readable line."""
    from cks_desktop.graph.errors import StoreError

    store = open_store(args)
    try:
        yield store
    except StoreError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    except sqlite3.Error as exc:  # should have been a DatabaseError; never show a traceback for it
        raise CliError(f"The database could not be used: {exc}.", EXIT_USAGE) from None
    finally:
        store.close()


def _command(fn: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        with json_errors(args):
            return fn(args)

    return run


def _leaf(ssub: Any, name: str, help_text: str, fn: Callable[[argparse.Namespace], int]) -> argparse.ArgumentParser:
    p = ssub.add_parser(name, help=help_text, description=help_text)
    add_json_flag(p)
    p.set_defaults(handler=_command(fn))
    return p


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "sessions",
                    description="Manage sessions (each holds one knowledge graph and one chat).")
    ssub = p.add_subparsers(dest="sessions_command", metavar="ACTION", required=True)
    _leaf(ssub, "list", "list every session with its counts", _list)
    _leaf(ssub, "create", "create a session and print its id", _create).add_argument("title", metavar="TITLE")
    rename = _leaf(ssub, "rename", "give a session a new title", _rename)
    rename.add_argument("session_id", metavar="ID")
    rename.add_argument("title", metavar="TITLE")
    _leaf(ssub, "delete", "delete a session with its graph, history and chat", _delete) \
        .add_argument("session_id", metavar="ID")
    _leaf(ssub, "show", "show a session's title, counts, types and latest changes", _show) \
        .add_argument("session_id", metavar="ID")
    export = _leaf(ssub, "export", "export a session's graph", _export)
    export.add_argument("session_id", metavar="ID")
    export.add_argument("--format", required=True, choices=EXPORT_FORMATS)
    export.add_argument("--output", "-o", metavar="FILE", help="write to FILE (atomically) instead of stdout")
    imp = _leaf(ssub, "import", "import a graph file into a session (one revertable change)", _import)
    imp.add_argument("session_id", metavar="ID")
    imp.add_argument("file", metavar="FILE", help="the file to import, or - for stdin")
    imp.add_argument("--format", required=True, choices=IMPORT_FORMATS)
    imp.add_argument("--on-conflict", choices=ON_CONFLICT, default="error",
                     help="an imported object with the type and name of one already there: error (refuse, "
                          "naming every conflict; the default), skip it, merge it into the existing one, "
                          "or rename it (keep both, the import's as \"Name (2)\")")
    compact = _leaf(ssub, "compact", "drop a session's oldest history; dropped changes can no longer be "
                    "reverted (the graph is unchanged)", _compact)
    compact.add_argument("session_id", metavar="ID")
    keep = compact.add_mutually_exclusive_group(required=True)
    keep.add_argument("--keep-days", type=int, metavar="N", help="keep the changes of the last N days")
    keep.add_argument("--keep-last", type=int, metavar="N", help="keep the N newest changes")
    compact.add_argument("--yes", "-y", action="store_true",
                         help="do not ask (needed when stdin is not a terminal)")
    compact.add_argument("--no-vacuum", action="store_true",
                         help="do not rewrite the file afterwards (it then keeps its size; the space is reused)")
    from cks_desktop.commands.watch_cmd import add_watch_parser

    add_watch_parser(ssub)  # `sessions watch`: the change feed, until interrupted
    from cks_desktop.commands.share_cmd import add_share_parsers

    add_share_parsers(ssub, _leaf)  # `sessions share|unshare|shared`: what MCP hosts may see


def session_json(session: Any) -> dict[str, Any]:
    return {"id": session.id, "title": session.title, "created_at": session.created_at}


def _title(raw: str) -> str:
    title = raw.strip()
    if not title:
        raise CliError("The title must not be empty.")
    return title


def _list(args: argparse.Namespace) -> int:
    with store_for(args) as store:
        rows = [{**session_json(s), **_counts_if_readable(store, s.id)} for s in store.list_sessions()]
    if args.json:
        print_json({"sessions": rows})
    elif not rows:
        print("No sessions yet. Create one with: cks-desktop sessions create TITLE")
    else:
        for row in rows:
            if "objects" not in row:  # its pages are damaged: the list still names it
                print(f"{row['id']}  {'(counts unreadable: damaged)':<33}  {row['title']}")
                continue
            objects, relations = row.get("objects", 0), row.get("relations", 0)
            print(f"{row['id']}  {objects:>6} {noun(objects, 'object'):<7}  {relations:>6} "
                  f"{noun(relations, 'relation'):<9}  {row['title']}")
    return 0


def _counts_if_readable(store: Any, session_id: str) -> dict[str, int]:
    """A session's counts, or none when the pages holding them are damaged.

    Listing sessions is how a person finds what to export from a damaged file, so one session
    whose object pages are unreadable must not hide the others (``storage export`` salvages it).
    """
    from cks_desktop.graph.errors import DamagedDatabase

    try:
        return dict(store.counts(session_id))
    except DamagedDatabase:
        return {}


def _create(args: argparse.Namespace) -> int:
    title = _title(args.title)
    with store_for(args) as store:
        session = store.create_session(title)
    if args.json:
        print_json(session_json(session))
    else:
        print(session.id)
    return 0


def _rename(args: argparse.Namespace) -> int:
    title = _title(args.title)
    with store_for(args) as store:
        session = store.rename_session(args.session_id, title)
    if args.json:
        print_json(session_json(session))
    else:
        print(f"Renamed {session.id} to {session.title!r}.")
    return 0


def _delete(args: argparse.Namespace) -> int:
    with store_for(args) as store:
        session = store.get_session(args.session_id)
        store.delete_session(session.id)
    if args.json:
        print_json({**session_json(session), "deleted": True})
    else:
        print(f"Deleted session {session.id} ({session.title!r}).")
    return 0


def _spent(args: argparse.Namespace, store: Any, session_id: str) -> tuple[Any, int]:
    """The session's chat tokens and cost its summed usage rows, priced with the settings'."""
    from cks_desktop.agent import usage
    from cks_desktop.agent.transcript import TranscriptStore
    from cks_desktop.commands.common import app_paths
    from cks_desktop.settings import Agent, Settings

    prices = Settings.load(app_paths(args).settings_file).section(Agent).prices
    items = usage.answers(TranscriptStore.for_store(store), session_id, prices)
    return usage.session_total(items), len(items)


def _show(args: argparse.Namespace) -> int:
    with store_for(args) as store:
        session = store.get_session(args.session_id)
        counts = store.counts(session.id)
        types = store.type_stats(session.id)
        changes = store.list_changes(session.id, limit=LATEST, with_ops=False)
        spent, answers = _spent(args, store, session.id)
    if args.json:
        print_json({"session": {**session_json(session), "instructions": session.instructions},
                    "counts": counts, "types": types, "latest_changes": [c.to_json() for c in changes],
                    "usage": {"answers": answers, **spent.to_json()}})
        return 0

    def listing(kind: str) -> str:
        items = [f"{t['name']} ({t.get('count', 0)})" for t in types.get(kind, [])]
        return ", ".join(items) if items else "(none)"

    print(f"Title:      {session.title}")
    print(f"Id:         {session.id}")
    print(f"Created:    {session.created_at}")
    print(f"Objects:    {counts.get('objects', 0)}   types: {listing('object_types')}")
    print(f"Relations:  {counts.get('relations', 0)}   types: {listing('relation_types')}")
    if answers:
        from cks_desktop.agent.usage import describe

        print(f"Tokens:     {describe(spent)}   ({counted(answers, 'answer')}; `chat --usage` has the details)")
    print("Latest changes:" if changes else "Latest changes: (none)")
    for change in changes:
        print(f"  {change.at}  {change.origin:<6}  {change.summary}  [{change.id}]")
    return 0


def _export(args: argparse.Namespace) -> int:
    from cks_desktop.runtime.graph_io import GraphIOUseCase

    target = Path(args.output).expanduser() if args.output else None
    with store_for(args) as store:
        graph_io = GraphIOUseCase(store)  # json carries the documents (runtime/graph_io.py)
        if target is None:
            data = graph_io.export_text(args.session_id, args.format)
        else:
            try:
                data = graph_io.export_file(args.session_id, args.format, target)
            except OSError as exc:
                from cks_desktop.diskfull import disk_full_sentence, is_disk_full

                if is_disk_full(exc, target):
                    raise CliError(disk_full_sentence(target)) from None
                raise CliError(f"Cannot write {target}: {exc.strerror or exc}.") from None
    if target is not None:
        if args.json:
            print_json({"session_id": args.session_id, "format": args.format, "output": str(target),
                        "characters": len(data)})
        else:
            print(f"Wrote {args.format} export of {args.session_id} to {target}.", file=sys.stderr)
    elif args.json:
        print_json({"session_id": args.session_id, "format": args.format, "data": data})
    else:
        sys.stdout.write(data if data.endswith("\n") else data + "\n")
    return 0


def _read_input(name: str) -> str:
    if name == "-":
        return sys.stdin.read()
    path = Path(name).expanduser()
    try:
        return path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise CliError(f"{path} is not UTF-8 text.") from None
    except OSError as exc:
        raise CliError(f"Cannot read {path}: {exc.strerror or exc}.") from None


def _import(args: argparse.Namespace) -> int:
    text = _read_input(args.file)
    from cks_desktop.runtime.graph_io import GraphIOUseCase

    with store_for(args) as store:  # json brings its documents back too (runtime/graph_io.py)
        imported = GraphIOUseCase(store).import_text(args.session_id, args.format, text, CLI_ORIGIN,
                                                     on_conflict=args.on_conflict)
    result, documents = imported.result, imported.documents_added
    change_id = result.change.id if result.change else None
    if args.json:
        print_json({"session_id": args.session_id, "change_id": change_id, "summary": result.summary,
                    "counts": dict(result.counts), "documents_added": documents})
    else:
        print(f"Imported into {args.session_id}: {result.summary or 'nothing new'}"
              + (f" (change {change_id})" if change_id else "")
              + (f", and {counted(documents, 'document')}." if documents else "."))
    return 0


def _compact(args: argparse.Namespace) -> int:
    """Say what will be dropped, ask (or require --yes), drop it, then VACUUM to give the space back."""
    for value, flag in ((args.keep_days, "--keep-days"), (args.keep_last, "--keep-last")):
        if value is not None and value < 0:
            raise CliError(f"{flag} must be 0 or more.")
    with store_for(args) as store:
        session = store.get_session(args.session_id)
        drop, keep = store.history_compaction_preview(session.id, args.keep_days, args.keep_last)
        if drop and not args.yes:
            question = (f"Drop the {counted(drop, 'oldest change')} of {session.title!r} "
                        f"(keep {keep})? Dropped changes can no longer be reverted; the graph stays as it is.")
            if args.json or not sys.stdin.isatty():
                raise CliError(f"Compacting would drop the {counted(drop, 'oldest change')} of "
                               f"{session.title!r}, which could then no longer be reverted; nothing was dropped "
                               "(add --yes to confirm).")
            print(question + " [y/N] ", end="", file=sys.stderr, flush=True)
            if sys.stdin.readline().strip().lower() not in ("y", "yes"):
                raise CliError("Nothing was dropped.", EXIT_USAGE)
        on_file = store.backend == "sqlite"  # a team database's space is its server's (docs/team.md)
        before = store.path.stat().st_size if on_file else 0
        result = store.compact_history(session.id, args.keep_days, args.keep_last)
        if result.dropped and not args.no_vacuum and on_file:
            with store.connection_lock() as conn:
                conn.execute("VACUUM")
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        after = store.path.stat().st_size if on_file else 0
    if args.json:
        print_json({"session_id": session.id, "dropped": result.dropped, "kept": result.kept,
                    "oldest_kept": result.oldest_kept, "bytes_before": before, "bytes_after": after})
    else:
        print(result.sentence() + (f" The database went from {before / 1e6:.1f} MB to {after / 1e6:.1f} MB."
                                   if result.dropped and not args.no_vacuum and before else ""))
    return 0
