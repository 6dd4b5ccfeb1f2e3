"""What every subcommand shares: errors, exit codes, opening the store, JSON output."""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cks_desktop import paths

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2


class CliError(Exception):
    """One line for stderr, and the exit code to return."""

    def __init__(self, message: str, code: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.code = code


def app_paths(args: argparse.Namespace) -> paths.AppPaths:
    return paths.resolve(getattr(args, "data_dir", None)).ensure()


def open_store(args: argparse.Namespace) -> "GraphStore":
    """``--database`` (a team's PostgreSQL or another file), else the choice the window uses on this
    data folder (Settings → Storage), else the data folder's file."""
    from cks_desktop.runtime.storage import StorageRefused, open_chosen_store

    database = getattr(args, "database", None)
    try:
        if database:
            store = open_chosen_store(database, app_paths(args).database, None)
        else:
            from cks_desktop.settings import Settings

            store = open_chosen_store(None, app_paths(args).database, Settings.load(app_paths(args).settings_file))
    except StorageRefused as exc:
        raise CliError(str(exc)) from None
    if store.read_only_reason:  # damaged or full disk: reads go on, writes are refused with the full sentence
        why = "is damaged" if store.damage else "is on a full disk"
        print(f"cks-desktop: warning: the database {store.path} {why} and is open read-only "
              "(see: cks-desktop storage check).", file=sys.stderr)
    return store


def parse_json_arg(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}.") from None


@contextlib.contextmanager
def revealing_output() -> Iterator[None]:
    """Every headless command runs inside this: stdout and stderr reveal hidden characters.

    Model text, tool results and MCP servers' names and descriptions reach the
    terminal through many ``print`` calls; wrapping the two streams once is the
    one output layer that no command can go around. An ESC, a C1 control or a
    bidi override becomes ``\\u001b`` / ``\\u202e`` (see ``untrusted_text``), which
    inside ``--json`` output is JSON's own escape for the same character, so
    JSON stays valid and means the same. Binary writes to ``sys.stdout.buffer``
    (the MCP protocol of ``mcp serve``) are not touched.
    """
    from cks_desktop.untrusted_text import RevealingStream

    saved = sys.stdout, sys.stderr
    sys.stdout = RevealingStream(sys.stdout)
    sys.stderr = RevealingStream(sys.stderr)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = saved


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n")


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print exactly one JSON document on stdout")


@contextlib.contextmanager
def ctrl_c_stops() -> Iterator[None]:
    """Ctrl+C raises ``KeyboardInterrupt`` here, even when the command was started by a program
    that ignores SIGINT for its children (a non-interactive shell's background job: Python keeps
    an inherited "ignore"). The previous handler comes back afterwards."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
