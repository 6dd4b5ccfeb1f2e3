"""`cks-desktop documents add|list|show|remove --session S`: the documents of a session.

``add`` reads every file first (size cap from Settings key ``documents.max_file_mb``, checked
before a byte is read), then stores the readable ones in one transaction. Each file that
cannot be read gets one line on stderr naming it and why; it is not added at all. Exit codes:
0 all added (or already there), 1 some files were refused (the others were added), 2 bad usage
or no file could be added. With ``--json`` exactly one JSON document goes to stdout.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from cks_desktop.commands.common import EXIT_OK, EXIT_TOOL_ERROR, EXIT_USAGE, CliError, add_json_flag, print_json
from cks_desktop.plural import counted


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("documents", help="add, list, show and remove the documents of a session",
                       description="Documents in a session: text, Markdown, HTML, PDF and DOCX files whose "
                                   "text is kept for extraction and for citing sources.")
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

    leaf("add", "add files to a session (text, Markdown, HTML, PDF, DOCX)", _add) \
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


def _max_bytes(args: argparse.Namespace) -> int:
    from cks_desktop.commands.common import app_paths
    from cks_desktop.documents.readers import max_file_bytes
    from cks_desktop.settings import Settings

    return max_file_bytes(Settings.load(app_paths(args).settings_file).data)


def _documents(store: Any) -> Any:
    from cks_desktop.documents.store import DocumentStore

    return DocumentStore(store)


def _doc_errors(fn: Any) -> Any:
    """DocumentError (unknown or ambiguous reference) → one line, exit 2."""
    from cks_desktop.documents.errors import DocumentError

    def run(*a: Any) -> Any:
        try:
            return fn(*a)
        except DocumentError as exc:
            raise CliError(str(exc), EXIT_USAGE) from None

    return run


def _add(args: argparse.Namespace) -> int:
    from cks_desktop.commands.sessions_cmd import store_for
    from cks_desktop.documents.errors import UnreadableDocument
    from cks_desktop.documents.readers import read_path

    limit = _max_bytes(args)
    with store_for(args) as store:
        store.get_session(args.session)  # an unknown session is refused before any file is read
        read, refused = [], []
        for name in args.files:
            try:
                read.append(read_path(Path(name).expanduser(), limit))
            except UnreadableDocument as exc:
                refused.append({"file": name, "error": str(exc)})
        result = _documents(store).add(args.session, read)
    if args.json:
        print_json({"session_id": args.session, "added": [d.to_json() for d in result.added],
                    "already": [d.to_json() for d in result.already], "refused": refused})
    else:
        for doc in result.added:
            print(f"Added {doc.name} ({_describe(doc)}) [{doc.id[:12]}]")
        for doc in result.already:
            print(f"Already in the session: {doc.name} [{doc.id[:12]}]")
    for item in refused:
        print(f"cks-desktop: {item['error']}", file=sys.stderr)
    if refused and not (result.added or result.already):
        return EXIT_USAGE
    return EXIT_TOOL_ERROR if refused else EXIT_OK


def _describe(doc: Any) -> str:
    parts = [doc.media_type, counted(doc.characters, "character", grouped=True)]
    if doc.pages:
        parts.append(counted(doc.pages, "page"))
    return ", ".join(parts)


def _list(args: argparse.Namespace) -> int:
    from cks_desktop.commands.sessions_cmd import store_for

    with store_for(args) as store:
        docs = _documents(store).list_documents(args.session)
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
    from cks_desktop.commands.sessions_cmd import store_for

    with store_for(args) as store:
        doc = _documents(store).get(args.session, args.ref)
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
    from cks_desktop.commands.sessions_cmd import store_for

    from cks_desktop.commands.sessions_cmd import CLI_ORIGIN
    from cks_desktop.provenance.documents import remove_document

    with store_for(args) as store:
        removal = remove_document(store, args.session, args.ref, args.orphans, CLI_ORIGIN)
    if args.json:
        print_json({"session_id": args.session, **removal.to_json()})
    else:
        print(f"{removal.sentence()} [{removal.document.id[:12]}]")
    return EXIT_OK
