"""Headless subcommands, one module each. Each module exposes ``add_parser(subparsers)``
and sets ``handler`` on its parser; imports of heavy libraries stay inside handlers
so ``cks-desktop --help`` stays fast.

``COMMANDS`` names each module's top-level command and its one-line help, in the order ``--help``
lists them: a run loads only the module of the command it was given (the others appear in the
listing by their help line alone), so a command's start does not pay for every other command's imports.
"""

from __future__ import annotations

import argparse
import importlib
from types import ModuleType
from typing import Any

COMMANDS: dict[str, str] = {
    "sessions": "list, create, rename, delete, show, export and import sessions",
    "tools": "list the tools and call one headless",
    "chat": "send one message to a session's assistant and stream the answer",
    "mcp": "manage MCP servers and serve the graph over MCP",
    "storage": "check, back up, restore or salvage the database file",
    "documents": "add, list, show and remove the documents of a session",
    "ask": "ask a session's documents and graph a question",
    "team": "set up and use a team graph on PostgreSQL",
}


def load_command(name: str) -> ModuleType:
    return importlib.import_module(f"cks_desktop.commands.{name}_cmd")


def add_command(sub: "argparse._SubParsersAction[Any]", name: str, **kwargs: Any) -> argparse.ArgumentParser:
    """The top-level parser of command ``name``, with its help line from ``COMMANDS``."""
    parser: argparse.ArgumentParser = sub.add_parser(name, help=COMMANDS[name], **kwargs)
    return parser
