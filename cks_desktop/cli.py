"""The one entry point: the GUI by default, headless subcommands otherwise.

Exit codes everywhere: 0 success, 1 the operation ran but ended in an error
(a tool's error result, a chat turn that failed), 2 bad usage or bad input.
Errors are one line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any
from collections.abc import Sequence

from cks_desktop import APP_ID
from cks_desktop.commands import COMMANDS, load_command
from cks_desktop.commands.common import CliError, EXIT_TOOL_ERROR, EXIT_USAGE, revealing_output
from cks_desktop.settings import SettingsError


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors exit 2 with one line (argparse already uses 2), and never echo a
    secret: argparse quotes the words it could not place ("unrecognized arguments: …"), which may be
    a database address with its password or a key typed in the wrong place."""

    def error(self, message: str) -> None:  # type: ignore[override]
        from cks_desktop.secret_shapes import redact_text

        self.exit(EXIT_USAGE, f"{self.prog}: {redact_text(message)}\n")


class _Version(argparse.Action):
    """``--version``: the version is read (``importlib.metadata``) only when asked for."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        import cks_desktop

        sys.stdout.write(f"{parser.prog} {cks_desktop.__version__}\n")  # stdout, as argparse's own action
        parser.exit(0)


# The options before a command; those that take a value take the next word.
_OPTIONS_WITH_VALUE = frozenset({"--data-dir", "--database"})
_FLAGS = frozenset({"--version", "--self-test", "--verbose", "-v", "-h", "--help"})


def command_given(args: Sequence[str]) -> str | None:
    """The command ``args`` name, when they plainly name one; None when they name none or may not
    be read without the whole parser (an abbreviated option, an unknown word)."""
    words = iter(args)
    for word in words:
        if word in _OPTIONS_WITH_VALUE:
            next(words, None)
        elif word.split("=", 1)[0] in _OPTIONS_WITH_VALUE or word in _FLAGS:
            continue
        else:
            return word if word in COMMANDS else None
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or — with ``only`` — the parser with only that command's module loaded
    (every other command listed by its help line, as ``--help`` shows them)."""
    parser = _Parser(prog=APP_ID, description="CKS Desktop: knowledge graphs built with an AI assistant.")
    parser.add_argument("--version", action=_Version, nargs=0, help="show the version and exit")
    parser.add_argument("--data-dir", metavar="DIR", help="keep data, settings and logs in DIR "
                        "(overrides $CKS_DESKTOP_HOME and the platform folders)")
    parser.add_argument("--database", metavar="ADDRESS|FILE", help="use this graph database: a team's "
                        "postgresql://user@host/db (password from the keychain or PGPASSFILE, never in the "
                        "address) or a SQLite file; default: Settings → Storage, else the data folder's file")
    parser.add_argument("--self-test", action="store_true", help="start the window offscreen, run one "
                        "scripted chat turn, exit 0 on success")
    parser.add_argument("--verbose", "-v", action="store_true", help="log debug output to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for name, help_line in COMMANDS.items():
        if only is None or name == only:
            load_command(name).add_parser(sub)
        else:
            sub.add_parser(name, help=help_line)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(only=command_given(args_list))
    args = parser.parse_args(args_list)
    if args.command is None:
        logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                            format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
        from cks_desktop.app import run_gui

        return run_gui(data_dir=args.data_dir, self_test=args.self_test)
    with revealing_output():  # no untrusted text reaches the terminal with its escape sequences live
        logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING,
                            format="%(levelname)s %(name)s: %(message)s", stream=sys.stderr)
        try:
            return int(args.handler(args) or 0)
        except CliError as exc:
            print(f"{APP_ID}: {exc}", file=sys.stderr)
            return exc.code
        except SettingsError as exc:  # a save that failed (disk full, lock taken): one sentence, file kept
            print(f"{APP_ID}: {exc}", file=sys.stderr)
            return EXIT_TOOL_ERROR
        except KeyboardInterrupt:
            print(f"{APP_ID}: interrupted", file=sys.stderr)
            return 130
