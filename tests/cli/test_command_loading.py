"""A command's start loads only that command's module; the help listing and the errors are the
same as with every module loaded."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cks_desktop.cli import build_parser, command_given
from cks_desktop.commands import COMMANDS

ROOT = Path(__file__).resolve().parents[2]

LOADED = r"""
import json, sys
from cks_desktop.cli import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
print(json.dumps(sorted(m for m in sys.modules if m.startswith("cks_desktop.commands."))))
"""


@pytest.mark.parametrize(("args", "expected"), [
    (["sessions", "list"], "sessions"),
    (["--data-dir", "/x", "documents", "list"], "documents"),
    (["--data-dir=/x", "-v", "ask", "q"], "ask"),
    (["--database", "postgresql://u@h/db", "team", "status"], "team"),
    (["--data-d", "/x", "sessions"], None),  # an abbreviation: only the whole parser can read it
    (["sesions", "list"], None),
    ([], None),
    (["--help"], None),
])
def test_the_command_is_read_from_plain_words_only(args: list[str], expected: str | None) -> None:
    assert command_given(args) == expected


def test_the_help_listing_is_the_same_with_one_module_or_all() -> None:
    whole = build_parser().format_help()
    for name in COMMANDS:
        assert build_parser(only=name).format_help() == whole


def test_a_command_loads_only_its_own_modules(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), CKS_DESKTOP_HOME=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", LOADED, "sessions", "list"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60, check=True)
    loaded = json.loads(out.stdout.splitlines()[-1])
    assert "cks_desktop.commands.sessions_cmd" in loaded
    assert not any(f"cks_desktop.commands.{name}_cmd" in loaded for name in COMMANDS if name != "sessions")


def test_a_mistyped_command_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    from cks_desktop.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["sesions", "list"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'sesions'" in err and all(f"'{name}'" in err for name in COMMANDS)


def test_a_misplaced_address_is_not_echoed_with_its_password(capsys: pytest.CaptureFixture[str]) -> None:
    from cks_desktop.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["sessions", "list", "--database", "postgresql://ann:hunter2-secret@db.example/team"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "unrecognized arguments" in err and "hunter2-secret" not in err and "db.example" in err
