"""`cks-desktop documents add|list|show|remove --session S`: the documents of a session.

Each action calls the documents use case (``runtime/documents.py``) and prints its result.
``add`` reads every file first (size cap from Settings key ``documents.max_file_mb``, checked
before a byte is read), then stores the readable ones in one transaction. Each file that
cannot be read gets one line on stderr naming it and why; it is not added at all. Exit codes:
0 all added (or already there), 1 some files were refused (the others were added), 2 bad usage
or no file could be added. With ``--json`` exactly one JSON document goes to stdout.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from cks_desktop.commands import add_command
from cks_desktop.commands.common import EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, CliError, add_json_flag, print_json
from cks_desktop.plural import counted

if TYPE_CHECKING:
    from cks_desktop.runtime.documents import DocumentsUseCase


def add_parser(sub: argparse._SubParsersAction) -> None:
    from cks_desktop.runtime.documents import DocumentsUseCase

    formats = DocumentsUseCase.format_names()
    p = add_command(sub, "documents",
                    description=f"Documents in a session: files ({formats}) whose text is kept for "
                                "extraction and for citing sources.")
    dsub = p.add_subparsers(dest="documents_command", metavar="ACTION", required=True)

    def leaf(name: str, help_text: str, fn: Any) -> argparse.ArgumentParser:
        from cks_desktop.commands.sessions_cmd import json_errors

        leaf_parser = dsub.add_parser(name, help=help_text, description=help_text)
        add_json_flag(leaf_parser)
        leaf_parser.add_argument("--session", "-s", required=True, metavar="ID", help="the session")

        def run(args: argparse.Namespace) -> int:
            with json_errors(args):
                return int(fn(args))

        leaf_parser.set_defaults(handler=run)
        return leaf_parser

    leaf("add", f"add files to a session ({formats})", _add) \
        .add_argument("files", nargs="+", metavar="FILE")
    leaf("list", "list a session's documents", _list)
    show = leaf("show", "show one document's details (and, with --text, its text)", _show)
    show.add_argument("ref", metavar="DOC", help="the document's id (or its first 6+ characters) or file name")
    show.add_argument("--text", action="store_true", help="print the extracted text too")
    remove = leaf("remove", "remove a document (and its sources) from a session", _remove)
    remove.add_argument("ref", metavar="DOC", help="the document's id (or its first 6+ characters) or file name")
    remove.add_argument("--orphans", choices=("keep", "remove"), default="keep",
                        help="what to do with objects and relations that had no other source: keep them "
                             "(default; they are listed) or remove them (in the same change)")
    from cks_desktop.commands.extract_cmd import add_arguments, run_extract

    add_arguments(leaf("extract", "extract objects and relations from a document, with their sources", run_extract))


@contextmanager
def _documents(args: argparse.Namespace) -> Iterator["DocumentsUseCase"]:
    """The documents use case on the store the command opened (and the settings' size cap)."""
    from cks_desktop.commands.common import app_paths
    from cks_desktop.commands.sessions_cmd import store_for
    from cks_desktop.runtime.cases import UseCases
    from cks_desktop.settings import Settings

    settings = Settings.load(app_paths(args).settings_file)
    with store_for(args) as store:
        yield UseCases(store, settings).documents


def _doc_errors(fn: Any) -> Any:
    """DocumentError (unknown or ambiguous reference) → one line, exit 2."""
    from cks_desktop.documents.errors import DocumentError

    def run(*a: Any) -> Any:
        try:
            return fn(*a)
        except DocumentError as exc:
            raise CliError(str(exc), EXIT_USAGE) from None

    return run


class _Progress:
    """Progress lines on stderr for a long read (a PDF of hundreds of pages or more): one at each
    tenth of the way, so a big file never reads for minutes in silence."""

    EVERY_OVER = 200  # pages: smaller files are read without a word

    def __init__(self) -> None:
        self._shown: tuple[str, int] = ("", -1)

    def __call__(self, name: str, done: int, total: int) -> None:
        if total < self.EVERY_OVER:
            return
        tenth = done * 10 // total
        if (name, tenth) != self._shown:
            self._shown = (name, tenth)
            print(f"Reading {name}: {done:,} of {total:,} pages…", file=sys.stderr, flush=True)


def _add(args: argparse.Namespace) -> int:
    from cks_desktop.commands.common import ctrl_c_stops
    from cks_desktop.documents.progress import ReadProgress

    with _documents(args) as documents:
        try:
            with ctrl_c_stops():
                outcome = documents.add_files(args.session, args.files, ReadProgress(_Progress()))
        except KeyboardInterrupt:  # Ctrl+C: the files are read before anything is stored
            print("cks-desktop: stopped; nothing was added.", file=sys.stderr)
            return 130
    if args.json:
        print_json({"session_id": args.session, "added": [d.to_json() for d in outcome.added],
                    "already": [d.to_json() for d in outcome.already],
                    "refused": [r.to_json() for r in outcome.refused]})
    else:
        for doc in outcome.added:
            print(f"Added {doc.name} ({_describe(doc)}) [{doc.id[:12]}]")
        for doc in outcome.already:
            print(f"Already in the session: {doc.name} [{doc.id[:12]}]")
    for item in outcome.refused:
        print(f"cks-desktop: {item.error}", file=sys.stderr)
    if outcome.refused and outcome.nothing_added:
        return EXIT_USAGE
    return EXIT_TOOL_ERROR if outcome.refused else EXIT_OK


def _describe(doc: Any) -> str:
    parts = [doc.media_type, counted(doc.characters, "character", grouped=True)]
    if doc.pages:
        parts.append(counted(doc.pages, "page"))
    return ", ".join(parts)


def _list(args: argparse.Namespace) -> int:
    with _documents(args) as documents:
        docs = documents.list(args.session)
    if args.json:
        print_json({"session_id": args.session, "documents": [d.to_json() for d in docs]})
    elif not docs:
        print("No documents in this session. Add some with: cks-desktop documents add --session ID FILE…")
    else:
        for doc in docs:
            print(f"{doc.id[:12]}  {doc.name}  ({_describe(doc)}, added {doc.added_at})")
    return EXIT_OK


@_doc_errors
def _show(args: argparse.Namespace) -> int:
    with _documents(args) as documents:
        doc = documents.open(args.session, args.ref)
    if args.json:
        print_json(doc.to_json(with_text=args.text))
        return EXIT_OK
    print(f"{doc.name}\n  id:       {doc.id}\n  type:     {doc.media_type}\n  size:     {doc.size:,} bytes\n"
          f"  text:     {_describe(doc)}\n  from:     {doc.source or '(unknown)'}\n  added:    {doc.added_at}\n"
          f"  read by:  {doc.reader}")
    if args.text:
        sys.stdout.write("\n" + doc.text + ("" if doc.text.endswith("\n") else "\n"))
    return EXIT_OK


@_doc_errors
def _remove(args: argparse.Namespace) -> int:
    from cks_desktop.commands.sessions_cmd import CLI_ORIGIN

    with _documents(args) as documents:
        removal = documents.remove(args.session, args.ref, args.orphans, CLI_ORIGIN)
    if args.json:
        print_json({"session_id": args.session, **removal.to_json()})
    else:
        print(f"{removal.sentence()} [{removal.document.id[:12]}]")
    return EXIT_OK
