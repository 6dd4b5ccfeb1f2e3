"""No untrusted text reaches the terminal with its escape sequences live.

Real subprocesses of ``python -m cks_desktop``: ``mcp tools`` / ``mcp call``
against a hostile MCP server (official SDK) whose tool names, titles,
descriptions and results carry ANSI sequences, OSC 52 clipboard writes, a C1
CSI and a right-to-left override; and ``chat`` through a fake provider (real
wire protocol) whose answer and tool-call names carry the same. Human output
shows each such character as an escape (``\\u001b``); ``--json`` output stays
valid JSON and decodes to exactly what the server or model sent.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.graph.store import GraphStore
from cks_desktop.untrusted_text import reveal
from tests.fakes.providers import make_fake
from tests.fakes.script import ScriptedCall, Turn, text_turn
from tests.mcp.servers import hostile_text_server as hostile

MAIN = Path(__file__).resolve().parents[2]
SERVER = MAIN / "tests" / "mcp" / "servers" / "hostile_text_server.py"
BASE_ENV = {k: v for k, v in os.environ.items()
            if k not in ("CKS_DESKTOP_HOME", "ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY",
                         "GOOGLE_API_KEY", "CKS_DESKTOP_TEST_KEYRING", "SHELL")}
BASE_ENV["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
BASE_ENV["PYTHONPATH"] = str(MAIN)


def cks(home: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), *argv],
                          capture_output=True, text=True, encoding="utf-8", env=BASE_ENV, cwd=MAIN, timeout=120)


def assert_inert(text: str) -> None:
    """Nothing in ``text`` would act on a terminal: revealing it again changes nothing."""
    assert "\x1b" not in text and "\x07" not in text and "\x9b" not in text and "\u202e" not in text, text
    assert reveal(text) == text, text


@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = tmp_path / "home"
    root.mkdir()
    proc = cks(root, "mcp", "add", "hostile", "--approval", "auto", "--", sys.executable, str(SERVER))
    assert proc.returncode == 0, proc.stderr
    return root


def test_mcp_tools_shows_hostile_names_and_descriptions_inertly(home: Path) -> None:
    proc = cks(home, "mcp", "tools", "hostile")
    assert proc.returncode == 0, proc.stderr
    assert_inert(proc.stdout)
    assert_inert(proc.stderr)
    assert "\\u001b]52;c;cm0gLXJmIH4K\\u0007" in proc.stdout  # the OSC 52 write, visible and harmless
    assert "\\u202etxt.exe\\u009b31m" in proc.stdout

    proc = cks(home, "mcp", "tools", "hostile", "--json")
    assert proc.returncode == 0, proc.stderr
    assert_inert(proc.stdout)
    listing = json.loads(proc.stdout)
    described = {t["name"]: t for t in listing["tools"]} | {s["name"]: s for s in listing["skipped"]}
    assert described["paint"]["description"] == hostile.TOOLS[0].description  # the same text, only escaped
    assert described["paint"]["title"] == hostile.TOOLS[0].title


@pytest.mark.slow
def test_mcp_call_result_is_inert_in_text_and_exact_in_json(home: Path) -> None:
    proc = cks(home, "mcp", "call", "hostile", "paint")
    assert proc.returncode == 0, proc.stderr
    assert_inert(proc.stdout)
    assert proc.stdout.startswith("result \\u001b]52;c;")
    assert "\r\nnext line" in proc.stdout or "\nnext line" in proc.stdout  # a Windows line end is a line end

    proc = cks(home, "mcp", "call", "hostile", "paint", "--json")
    assert proc.returncode == 0, proc.stderr
    assert_inert(proc.stdout)
    assert json.loads(proc.stdout)["content"] == hostile.RESULT  # exact, once decoded

    proc = cks(home, "mcp", "call", "hostile", "fail")  # an error result goes to stderr: inert there too
    assert proc.returncode == 1
    assert_inert(proc.stderr)
    assert "failed \\u001b]52;" in proc.stderr


@pytest.fixture
def chat_home(tmp_path: Path) -> tuple[Path, str]:
    root = tmp_path / "chat"
    root.mkdir()
    with GraphStore.open(root / "cks.sqlite3") as store:
        session = store.create_session("escapes")
    return root, session.id


def _chat(root: Path, sid: str, fake: Any, *extra: str) -> subprocess.CompletedProcess[str]:
    env_key = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}
    env = dict(BASE_ENV)
    if fake.name in env_key:
        env[env_key[fake.name]] = "test"
    return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(root), "chat", "--session", sid,
                           "--provider", fake.name, "--base-url", fake.base_url, "--model", fake.default_model,
                           "--no-mcp", *extra, "hello"],
                          capture_output=True, text=True, encoding="utf-8", env=env, cwd=MAIN, timeout=120)


ANSWER = ["Sure.\x1b]52;c;", "cm0gLXJmIH4K\x07 Done\x1b[2J", " \u202eevil\x9b1m\n"]
EVIL_CALL = "evil\x1b[31m"


@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_chat_answer_and_model_tool_names_are_inert(chat_home: tuple[Path, str], as_json: bool) -> None:
    root, sid = chat_home
    with make_fake("ollama") as fake:
        fake.queue(Turn(tool_calls=[ScriptedCall(EVIL_CALL, {"x": "\x1b[5m"})]), text_turn(*ANSWER))
        proc = _chat(root, sid, fake, *(["--json"] if as_json else []))
        assert not fake.problems, fake.problems
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert_inert(proc.stdout)
    assert_inert(proc.stderr)
    if not as_json:
        assert "Sure.\\u001b]52;c;cm0gLXJmIH4K\\u0007 Done\\u001b[2J \\u202eevil\\u009b1m" in proc.stdout
        assert "→ evil\\u001b[31m" in proc.stdout
        return
    events = [json.loads(line) for line in proc.stdout.splitlines()]  # every line is still valid JSON
    text = "".join(e.get("text", "") for e in events if e.get("type") == "text_delta")
    assert text == "".join(ANSWER)
    assert EVIL_CALL in [e.get("name") for e in events]
