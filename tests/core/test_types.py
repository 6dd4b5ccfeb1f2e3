"""The type checker is part of the test suite: mypy with the project's configuration
(``[tool.mypy]`` in pyproject.toml: strict on the core's packages, default mode for the rest)
must find no error in ``cks_desktop``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_mypy_finds_no_errors() -> None:
    proc = subprocess.run([sys.executable, "-m", "mypy", "--no-error-summary", "--hide-error-context"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-6000:] + proc.stderr[-2000:]


def test_the_core_is_checked_strictly() -> None:
    """The strict flags must cover the packages the issue names (a config edit cannot drop one)."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    strict = next(o for o in config["overrides"] if o.get("disallow_untyped_defs"))
    for package in ("graph", "tools", "llm", "agent", "mcp"):
        assert f"cks_desktop.{package}.*" in strict["module"], package
    for module in ("settings", "secrets"):
        assert f"cks_desktop.{module}" in strict["module"], module
    for flag in ("disallow_any_generics", "disallow_untyped_calls", "warn_return_any", "strict_equality",
                 "check_untyped_defs", "no_implicit_reexport"):
        assert strict[flag] is True, flag
