"""`cks-desktop ask --session S "question" --retrieve-only [--k K] [--json]`: what the documents say.

Calls the ask use case only (``runtime/ask.py``). With ``--retrieve-only`` it prints the passages
(exact document, page and character span: ``start``/``end`` are offsets in the text
``documents show --text`` prints), and the objects and relations the question leads to. Answers
written by a model are not built yet: without ``--retrieve-only`` the command says so in one
sentence and exits 2. A bad question (empty, over 4,000 characters) or an unknown session is one
sentence, exit 2. ``--themes`` (no question) asks for the main themes of the whole graph
(``themes_cmd.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from cks_desktop.commands import themes_cmd
from cks_desktop.commands.common import EXIT_OK, EXIT_USAGE, CliError, add_json_flag, print_json


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ask", help="ask a session's documents and graph a question",
                       description="Find the passages of a session's documents that answer a question "
                                   "(words, meaning and the graph together).")
    add_json_flag(p)
    p.add_argument("--session", "-s", required=True, metavar="ID", help="the session")
    p.add_argument("question", metavar="QUESTION", nargs="?", default="", help="the question, in any wording")
    p.add_argument("--retrieve-only", action="store_true", help="print the passages found, without an answer")
    p.add_argument("--k", type=int, default=5, metavar="K", help="at most K passages (1-50, default 5)")
    themes_cmd.add_arguments(p)
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from cks_desktop.commands.sessions_cmd import json_errors

    with json_errors(args):
        return themes_cmd.run_themes(args) if args.themes else _ask(args)


def _ask(args: argparse.Namespace) -> int:
    from cks_desktop.commands.common import app_paths
    from cks_desktop.commands.sessions_cmd import store_for
    from cks_desktop.runtime.ask import ANSWER_NEEDS_PROVIDER, AskUseCase
    from cks_desktop.runtime.cases import UseCases
    from cks_desktop.settings import Settings

    themes_cmd.check_without_themes(args)
    if not args.retrieve_only:
        raise CliError(ANSWER_NEEDS_PROVIDER, EXIT_USAGE)
    settings = Settings.load(app_paths(args).settings_file)
    with store_for(args) as store:
        try:
            found = asyncio.run(UseCases(store, settings).ask.retrieve(args.session, args.question, k=args.k))
        except AskUseCase.Error as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
    if not found.documents:
        print("cks-desktop: This session has no documents to search; add some with: "
              "cks-desktop documents add --session ID FILE…", file=sys.stderr)
    if args.json:
        print_json(found.to_json())
        return EXIT_OK
    for i, hit in enumerate(found.passages, 1):
        where = f"page {hit.page}, " if hit.page is not None else ""
        print(f"[{i}] {hit.document} ({where}characters {hit.start}-{hit.end}, score {hit.score})")
        print("    " + hit.text.replace("\n", "\n    "))
    if found.objects:
        print("Objects: " + ", ".join(f"{o.name} ({o.type})" for o in found.objects))
    return EXIT_OK
