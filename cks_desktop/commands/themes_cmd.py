"""`cks-desktop ask --session S --themes [--estimate] [--max-calls N] [--json]`: the main themes.

The provider is the ask command's (``--provider``/``--model``/``--base-url``, ``provider_opts.py``).

Calls the themes use case only (``runtime/themes.py``). ``--estimate`` prints the communities and
the model calls a run takes and asks nothing. A run prints that budget first (stderr), refuses in
one sentence when it is over ``--max-calls``, then prints each theme with the passages it cites
(document, page, ``start``-``end`` in the text ``documents show --text`` prints).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from cks_desktop.commands.common import EXIT_OK, EXIT_USAGE, CliError, print_json

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--themes", action="store_true",
                   help="the main themes of the whole graph (communities summarised, then combined)")
    p.add_argument("--estimate", action="store_true", help="with --themes: print the model calls it takes; ask nothing")
    p.add_argument("--max-calls", type=int, metavar="N", help="with --themes: refuse above N model calls")


def check_without_themes(args: argparse.Namespace) -> None:
    """The options that only go with ``--themes``, refused in one sentence without it."""
    given = [flag for flag, value in (("--estimate", args.estimate), ("--max-calls", args.max_calls is not None))
             if value]
    if given:
        raise CliError(f"{' and '.join(given)} go{'es' if len(given) == 1 else ''} with --themes.")


def run_themes(args: argparse.Namespace) -> int:
    from cks_desktop.commands.sessions_cmd import store_for

    if args.question:
        raise CliError("--themes asks about the whole graph and takes no question; drop the question or --themes.")
    if args.max_calls is not None and args.max_calls < 1:
        raise CliError(f"--max-calls must be at least 1; it was {args.max_calls}.")
    with store_for(args) as store:
        return asyncio.run(_themes(store, args))


async def _themes(store: "GraphStore", args: argparse.Namespace) -> int:
    from cks_desktop.commands.provider_opts import NO_PROVIDER, provider_holder
    from cks_desktop.llm.provider import ProviderError
    from cks_desktop.runtime.cases import UseCases

    holder, settings = provider_holder(args)
    themes = UseCases(store, settings).themes
    try:
        try:
            estimate = await themes.estimate(args.session)
        except themes.Error as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
        if args.estimate:
            if args.json:
                print_json(estimate.to_json())
            else:
                print(estimate.sentence())
            return EXIT_OK
        provider = None
        if estimate.calls and estimate.communities:
            if not holder.configured:
                raise CliError(NO_PROVIDER)
            try:
                provider = await holder.prepare()
            except (ProviderError, ValueError) as exc:
                raise CliError(exc.message if isinstance(exc, ProviderError) else str(exc)) from None
        if estimate.communities:
            print(f"cks-desktop: {estimate.sentence()}", file=sys.stderr)
        try:
            found = await themes.run(args.session, provider, max_calls=args.max_calls, estimate=estimate)
        except themes.Error as exc:
            raise CliError(str(exc), EXIT_USAGE) from None
        except ProviderError as exc:
            raise CliError(f"{exc.message} The summaries written so far are kept.") from None
        _print(args, found)
        return EXIT_OK
    finally:
        await holder.aclose()


def _print(args: argparse.Namespace, found: Any) -> None:
    if args.json:
        print_json(found.to_json())
        return
    for i, theme in enumerate(found.themes, 1):
        print(f"{i}. {theme.title}")
        print("   " + theme.summary)
        for c in theme.citations:
            where = f"page {c.page}, " if c.page is not None else ""
            print(f"   - {c.document} ({where}characters {c.start}-{c.end})")
    for t in found.unsupported:
        print(f"Unsupported (cites no community it was given): {t['title']}")
