"""Headless subcommands, one module each. Each module exposes ``add_parser(subparsers)``
and sets ``handler`` on its parser; imports of heavy libraries stay inside handlers
so ``cks-desktop --help`` stays fast."""

from __future__ import annotations

import importlib
from types import ModuleType

COMMAND_MODULES: tuple[str, ...] = ("sessions", "tools", "chat", "mcp", "storage", "documents", "ask", "search", "team")


def load_command(name: str) -> ModuleType:
    return importlib.import_module(f"cks_desktop.commands.{name}_cmd")
