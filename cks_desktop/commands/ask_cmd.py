"""`cks-desktop ask --session S "question" [--retrieve-only] [--k K] [--json]`: what the documents say.

Calls the ask use case only (``runtime/ask.py``). With ``--retrieve-only`` it prints the passages
(exact document, page and character span: ``start``/``end`` are offsets in the text
``documents show --text`` prints), and the objects and relations the question leads to; no model is
asked. Without it, the provider chosen in settings (or by ``--provider``/``--model``/``--base-url``,
as ``chat`` and ``documents extract`` take them) writes the answer from the numbered passages, and every
citation is checked: ``--json`` prints ``{"answer", "citations", "unsupported"}``. The model answers
only from the passages unless ``--allow-outside``.

Exit codes: 0 answered (or the documents do not say); 1 the session has no documents, or the model
could not be reached; 2 bad input (an empty question, one over 4,000 characters, ``--k`` outside
1-50, an unknown session, no provider chosen). Each is one sentence on stderr.

``--themes`` (no question) asks for the main themes of the whole graph (``themes_cmd.py``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING

from cks_desktop.commands import add_command, themes_cmd
from cks_desktop.commands.common import EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, CliError, add_json_flag, print_json
from cks_desktop.commands.provider_opts import add_provider_flags

if TYPE_CHECKING:
    from cks_desktop.runtime.answer import Answer


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = add_command(sub, "ask",
                    description="Find the passages of a session's documents that answer a question "
                                "(words, meaning and the graph together).")
    add_json_flag(p)
    p.add_argument("--session", "-s", required=True, metavar="ID", help="the session")
    p.add_argument("question", metavar="QUESTION", nargs="?", default="", help="the question, in any wording")
    p.add_argument("--retrieve-only", action="store_true", help="print the passages found, without an answer")
    p.add_argument("--k", type=int, default=5, metavar="K", help="at most K passages (1-50, default 5)")
    p.add_argument("--allow-outside", action="store_true",
                   help="let the model add what it knows beyond the documents (marked, never cited)")
    add_provider_flags(p)
    themes_cmd.add_arguments(p)
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    from cks_desktop.commands.sessions_cmd import json_errors

    with json_errors(args):
        return themes_cmd.run_themes(args) if args.themes else _ask(args)


def _ask(args: argparse.Namespace) -> int:
    from cks_desktop.commands.common import app_paths
    from cks_desktop.commands.sessions_cmd import store_for
    from cks_desktop.runtime.ask import AskUseCase
    from cks_desktop.runtime.cases import UseCases
    from cks_desktop.settings import Settings

    themes_cmd.check_without_themes(args)
    if not args.retrieve_only:
        return _answer(args)
    settings = Settings.load(app_paths(args).settings_file)
    with store_for(args) as store:
        try:
            found = asyncio.run(UseCases(store, settings).ask.retrieve(args.session, args.question, k=args.k))
        except AskUseCase.Error as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
    for note in found.notes:
        print(f"cks-desktop: {note}", file=sys.stderr)
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
    for m in found.messages:
        print(f"Message {m.seq} ({m.role}, score {m.score}): " + m.text.replace("\n", " "))
    return EXIT_OK


def _answer(args: argparse.Namespace) -> int:
    from cks_desktop.commands.provider_opts import provider_holder
    from cks_desktop.commands.sessions_cmd import store_for
    from cks_desktop.llm.provider import ProviderError
    from cks_desktop.runtime.ask import ANSWER_NEEDS_PROVIDER, AskUseCase
    from cks_desktop.runtime.cases import UseCases

    try:
        AskUseCase.check_question(args.question)  # a bad question is refused before any provider is made
    except AskUseCase.Error as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    holder, settings = provider_holder(args)
    if not holder.configured:
        raise CliError(ANSWER_NEEDS_PROVIDER, EXIT_USAGE)

    async def run() -> "Answer":
        try:
            provider = await holder.prepare()
            with store_for(args) as store:
                return await UseCases(store, settings).ask.answer(provider, args.session, args.question, k=args.k,
                                                                  outside=args.allow_outside)
        finally:
            await holder.aclose()

    try:
        answer = asyncio.run(run())
    except AskUseCase.Error as exc:
        raise CliError(str(exc), EXIT_USAGE) from None
    except ProviderError as exc:
        raise CliError(exc.message, EXIT_TOOL_ERROR) from None
    except ValueError as exc:  # a provider setting the factory refuses
        raise CliError(str(exc), EXIT_USAGE) from None
    return _show(args, answer)


def _show(args: argparse.Namespace, answer: "Answer") -> int:
    from cks_desktop.plural import counted
    from cks_desktop.untrusted_text import reveal

    code = EXIT_TOOL_ERROR if answer.retrieval.documents == 0 else EXIT_OK
    if answer.unsupported:
        print(f"cks-desktop: {counted(len(answer.unsupported), 'citation')} of the answer "
              f"{'is' if len(answer.unsupported) == 1 else 'are'} not supported by the passages the model "
              "was given; marked [n: unsupported], never shown as a source.", file=sys.stderr)
    if code != EXIT_OK:
        print(f"cks-desktop: {answer.text}", file=sys.stderr)
    if args.json:
        print_json(answer.to_json())
        return code
    print(reveal(answer.text))
    if answer.citations:
        print("\nSources:")
    for c in answer.citations:
        where = f"page {c.page}, " if c.page is not None else ""
        quote = f': "{reveal(c.quote)}"' if c.quote else ""
        print(f"[{c.n}] {reveal(c.document)} ({where}characters {c.start}-{c.end}){quote}")
    for u in answer.unsupported:
        quote = f' "{reveal(u.quote)}"' if u.quote else ""
        print(f"[{u.n}: unsupported]{quote}: {u.to_json()['reason']}")
    return code
