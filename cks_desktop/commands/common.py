"""What every subcommand shares: errors, exit codes, opening the store, JSON output."""

from __future__ import annotations

import argparse
import json
import sys
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
    from cks_desktop.graph.errors import StoreError
    from cks_desktop.graph.store import GraphStore

    try:
        return GraphStore.open(app_paths(args).database)
    except StoreError as exc:
        raise CliError(str(exc)) from None


def parse_json_arg(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"{what} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}.") from None


def print_json(value: Any) -> None:
    sys.stdout.write(json.dumps(value, ensure_ascii=False, indent=2, default=str) + "\n")


def add_json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print exactly one JSON document on stdout")
