"""`cks-desktop search --session S "words" [--k K] [--json]`: find anything the session holds.

Objects and relations (by name, type, aliases, description and properties), passages of its
documents and messages of its chat (tool results too), by their words and their meaning. Calls
the ask use case's search (``runtime/ask.py``). An empty search, one over 4,000 characters,
``--k`` outside 1–50 or an unknown session: one sentence, exit 2.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from cks_desktop.commands import add_command
from cks_desktop.commands.common import EXIT_OK, EXIT_USAGE, CliError, add_json_flag, print_json


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "search",
                    description="Find the objects, relations, passages and chat messages of a session that "
                                "match some words (by the words and by their meaning).")
    add_json_flag(p)
    p.add_argument("--session", "-s", required=True, metavar="ID", help="the session")
    p.add_argument("words", metavar="WORDS", help="what to search for")
    p.add_argument("--k", type=int, default=5, metavar="K", help="at most K of each kind (1-50, default 5)")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from cks_desktop.commands.sessions_cmd import json_errors

    with json_errors(args):
        return _search(args)


def _search(args: argparse.Namespace) -> int:
    from cks_desktop.commands.sessions_cmd import store_for
    from cks_desktop.runtime.ask import AskUseCase, search

    with store_for(args) as store:
        try:
            found = asyncio.run(search(store, args.session, args.words, k=args.k))
        except AskUseCase.Error as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
    for note in found.notes:
        print(f"cks-desktop: {note}", file=sys.stderr)
    if args.json:
        print_json(found.to_json())
        return EXIT_OK
    if not (found.objects or found.relations or found.passages or found.messages):
        print("Nothing in this session matches.")
    for o in found.objects:
        print(f"object   {o.name} ({o.type})  {o.id}")
    for r in found.relations:
        print(f"relation {r.type}  {r.source_id} → {r.target_id}  {r.id}")
    for hit in found.passages:
        where = f"page {hit.page}, " if hit.page is not None else ""
        print(f"passage  {hit.document} ({where}characters {hit.start}-{hit.end}): " + hit.text.replace("\n", " "))
    for m in found.messages:
        print(f"message  {m.seq} ({m.role}): " + m.text.replace("\n", " "))
    return EXIT_OK
