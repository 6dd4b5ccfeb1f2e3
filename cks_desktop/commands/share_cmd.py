"""`cks-desktop sessions share ID | unshare ID | shared`: which sessions other apps may see.

A shared session is offered by `mcp serve` (without --session) and by the window's "Share with
other apps" server: MCP hosts can read it and, by its title or id, call the graph tools on it.
An unshared session is unreachable for them (a running server stops offering it within half a
second). The choice is the settings key ``mcp_serve.shared_sessions`` (``runtime/sharing.py``).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from cks_desktop.commands.common import EXIT_OK, CliError, app_paths, print_json

if TYPE_CHECKING:
    from cks_desktop.runtime.sharing import SharingUseCase


def add_share_parsers(ssub: Any, leaf: Any) -> None:
    """Register under ``sessions`` (``leaf`` is sessions_cmd's leaf-maker, for --json and errors)."""
    leaf(ssub, "share", "let MCP hosts (mcp serve, the window's sharing) see and change this session", _share) \
        .add_argument("session_id", metavar="ID")
    leaf(ssub, "unshare", "take a session back from MCP hosts", _unshare).add_argument("session_id", metavar="ID")
    leaf(ssub, "shared", "list the sessions shared with MCP hosts", _shared)


@contextmanager
def _sharing(args: argparse.Namespace) -> Iterator["SharingUseCase"]:
    """The sharing use case on the store and settings the arguments name; its refusal is one line."""
    from cks_desktop.commands.sessions_cmd import store_for
    from cks_desktop.runtime.cases import UseCases
    from cks_desktop.runtime.sharing import SharingRefused
    from cks_desktop.settings import Settings

    settings = Settings.load(app_paths(args).settings_file)
    with store_for(args) as store:
        try:
            yield UseCases(store, settings).sharing
        except SharingRefused as exc:
            raise CliError(str(exc)) from None


def _share(args: argparse.Namespace) -> int:
    with _sharing(args) as sharing:
        change = sharing.share(args.session_id)
    if args.json:
        print_json({"shared": True, "changed": change.changed, "id": change.session_id, "title": change.title})
    else:
        print(f"{'Shared' if change.changed else 'Already shared:'} {change.session_id} ({change.title}) with MCP hosts.")
    return EXIT_OK


def _unshare(args: argparse.Namespace) -> int:
    with _sharing(args) as sharing:
        change = sharing.unshare(args.session_id)
    if args.json:
        print_json({"shared": False, "changed": change.changed, "id": change.session_id})
    else:
        print(f"{'No longer shared' if change.changed else 'Was not shared'}: {change.session_id}.")
    return EXIT_OK


def _shared(args: argparse.Namespace) -> int:
    from cks_desktop.runtime.sharing import NOTHING_SHARED

    with _sharing(args) as sharing:
        rows = sharing.shared()
    if args.json:
        print_json({"sessions": [{"id": r.id, "title": r.title} for r in rows]})
    elif not rows:
        print(NOTHING_SHARED)
    else:
        for row in rows:
            print(f"{row.id}  {row.title}")
    return EXIT_OK
