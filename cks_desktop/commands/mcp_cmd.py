"""`cks-desktop mcp …` (being built)."""

from __future__ import annotations

import argparse

from cks_desktop.commands.common import CliError


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("mcp", help="(being built)")
    p.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    raise CliError("this command is not built yet")
