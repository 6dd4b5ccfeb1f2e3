"""`cks-desktop sessions share ID | unshare ID | shared`: which sessions other apps may see.

A shared session is offered by `mcp serve` (without --session) and by the window's "Share with
other apps" server: MCP hosts can read it and, by its title or id, call the graph tools on it.
An unshared session is unreachable for them (a running server stops offering it within half a
second). The choice is the settings key ``mcp_serve.shared_sessions`` (``serve/prefs.py``).
"""

from __future__ import annotations

import argparse
from typing import Any

from cks_desktop.commands.common import EXIT_OK, CliError, app_paths, print_json


def add_share_parsers(ssub: Any, leaf: Any) -> None:
    """Register under ``sessions`` (``leaf`` is sessions_cmd's leaf-maker, for --json and errors)."""
    leaf(ssub, "share", "let MCP hosts (mcp serve, the window's sharing) see and change this session", _share) \
        .add_argument("session_id", metavar="ID")
    leaf(ssub, "unshare", "take a session back from MCP hosts", _unshare).add_argument("session_id", metavar="ID")
    leaf(ssub, "shared", "list the sessions shared with MCP hosts", _shared)


def _settings(args: argparse.Namespace) -> Any:
    from cks_desktop.settings import Settings

    return Settings.load(app_paths(args).settings_file)


def _save(settings: Any) -> None:
    from cks_desktop.settings import SettingsSaveError

    try:
        settings.save()
    except SettingsSaveError as exc:
        raise CliError(str(exc)) from None


def _share(args: argparse.Namespace) -> int:
    from cks_desktop.commands.sessions_cmd import store_for
    from cks_desktop.serve import prefs

    with store_for(args) as store:
        session = store.get_session(args.session_id)  # NotFound → one line, exit 2
    settings = _settings(args)
    changed = prefs.share(settings, session.id)
    if changed:
        _save(settings)
    if args.json:
        print_json({"shared": True, "changed": changed, "id": session.id, "title": session.title})
    else:
        print(f"{'Shared' if changed else 'Already shared:'} {session.id} ({session.title}) with MCP hosts.")
    return EXIT_OK


def _unshare(args: argparse.Namespace) -> int:
    from cks_desktop.serve import prefs

    settings = _settings(args)
    changed = prefs.unshare(settings, args.session_id)
    if changed:
        _save(settings)
    if args.json:
        print_json({"shared": False, "changed": changed, "id": args.session_id})
    else:
        print(f"{'No longer shared' if changed else 'Was not shared'}: {args.session_id}.")
    return EXIT_OK


def _shared(args: argparse.Namespace) -> int:
    from cks_desktop.commands.sessions_cmd import store_for
    from cks_desktop.graph.errors import StoreError
    from cks_desktop.serve import prefs

    ids = prefs.shared_sessions(_settings(args))
    rows = []
    with store_for(args) as store:
        for sid in ids:
            try:
                rows.append({"id": sid, "title": store.get_session(sid).title})
            except StoreError:
                continue  # deleted since
    if args.json:
        print_json({"sessions": rows})
    elif not rows:
        print("No session is shared. Share one with: cks-desktop sessions share ID")
    else:
        for row in rows:
            print(f"{row['id']}  {row['title']}")
    return EXIT_OK
