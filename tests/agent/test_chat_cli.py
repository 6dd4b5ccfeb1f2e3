"""The real `cks-desktop chat` in a subprocess, talking to a fake provider server over a socket.

The fake runs in this process (a thread); the subprocess gets its address
through ``--base-url`` and a key through the environment variable, exactly as
a person would set it. tests/conftest.py strips those variables from this
process, so each run passes them explicitly.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.graph.store import GraphStore

from tests.fakes.providers import PROVIDER_NAMES, make_fake
from tests.fakes.script import ScriptedCall, Turn, call_turn, text_turn

KEY_ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}
BASE_ENV = {k: v for k, v in os.environ.items()
            if k not in ("CKS_DESKTOP_HOME", *KEY_ENV.values(), "GOOGLE_API_KEY")}
BASE_ENV["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"  # never touch a real keychain


def cks(home: Path, *args: str, provider: str | None = None, key: bool = True,
        stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(BASE_ENV)
    if provider in KEY_ENV and key:
        env[KEY_ENV[provider]] = "test"
    return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), *args],
                          capture_output=True, text=True, timeout=90, env=env, input=stdin)


def chat(home: Path, fake: Any, session: str, *args: str, **kw: Any) -> subprocess.CompletedProcess[str]:
    return cks(home, "chat", "--session", session, "--provider", fake.name, "--base-url", fake.base_url,
               "--model", fake.default_model, *args, provider=fake.name, **kw)


def one_line_error(proc: subprocess.CompletedProcess[str], code: int) -> str:
    assert proc.returncode == code, (proc.returncode, proc.stdout, proc.stderr)
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.fixture
def home(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A data dir with one session holding one object."""
    root = tmp_path / "home"
    root.mkdir()
    with GraphStore.open(root / "cks.sqlite3") as store:
        session = store.create_session("CLI chat")
        store.apply(session.id, [{"op": "add_object", "type": "Person", "name": "Bob"}], "user")
    yield root, session.id


@pytest.mark.parametrize("name", PROVIDER_NAMES)
def test_chat_streams_text_and_tool_lines(name: str, home: tuple[Path, str]) -> None:
    root, sid = home
    with make_fake(name) as fake:
        fake.queue(call_turn("add_object", {"type": "Person", "name": "Alice"}, text="Adding Alice."),
                   text_turn("Alice is ", "in the graph."))
        proc = chat(root, fake, sid, "Add Alice")
        assert not fake.problems, fake.problems
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert proc.stdout.splitlines() == [
        "Adding Alice.",
        '→ add_object {"type": "Person", "name": "Alice"}',
        "← ok",
        "Alice is in the graph.",
    ]
    assert proc.stderr == ""
    with GraphStore.open(root / "cks.sqlite3") as store:
        assert store.resolve(sid, "Alice").type == "Person"


def test_json_events_and_history(home: tuple[Path, str]) -> None:
    root, sid = home
    with make_fake("ollama") as fake:
        fake.queue(call_turn("search_objects", {"query": "Bob"}), text_turn("Found Bob."))
        proc = chat(root, fake, sid, "--json", "Who is there?")
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    types = [e["type"] for e in events]
    assert types[0] == "turn_started" and types[-1] == "finished" and events[-1]["reason"] == "stop"
    started = next(e for e in events if e["type"] == "tool_call_started")
    finished = next(e for e in events if e["type"] == "tool_call_finished")
    assert started["name"] == "search_objects" and finished["state"] == "done"
    assert "Bob" in finished["result"]["content"]
    rows = [json.loads(line) for line in cks(root, "chat", "--session", sid, "--history", "--json").stdout.splitlines()]
    assert [r["role"] for r in rows] == ["user", "assistant", "tool", "assistant"]
    assert rows[1]["calls"][0]["state"] == "done" and rows[1]["calls"][0]["display_name"]
    history = cks(root, "chat", "--session", sid, "--history")
    lines = history.stdout.splitlines()
    assert history.returncode == 0 and lines[0] == "you #1: Who is there?" and lines[-1] == "assistant: Found Bob."
    assert '→ search_objects {"query": "Bob"}  [done]' in lines
    # the next prompt continues the saved chat
    with make_fake("ollama") as fake:
        fake.queue(text_turn("Still just Bob."))
        proc = chat(root, fake, sid, "And now?")
        sent = fake.generation_requests[0].body["messages"]
    assert proc.returncode == 0 and proc.stdout == "Still just Bob.\n"
    assert [m["role"] for m in sent if m["role"] != "system"] == ["user", "assistant", "tool", "assistant", "user"]


def test_approval_needs_yes(home: tuple[Path, str]) -> None:
    root, sid = home
    with make_fake("ollama") as fake:
        fake.queue(call_turn("remove_object", {"ref": "Bob"}), text_turn("You declined, Bob stays."))
        denied = chat(root, fake, sid, "Remove Bob")
    assert denied.returncode == 0
    out = denied.stdout.splitlines()
    assert out[0] == '→ remove_object {"ref": "Bob"}'
    assert out[1].startswith("← denied: The person declined") and "--yes" in out[1]
    with make_fake("ollama") as fake:
        fake.queue(call_turn("remove_object", {"ref": "Bob"}), text_turn("Bob is gone."))
        allowed = chat(root, fake, sid, "--yes", "Remove Bob, really")
    assert allowed.returncode == 0 and allowed.stdout.splitlines()[1] == "← ok"


def test_cap_and_errors_exit_1(home: tuple[Path, str]) -> None:
    root, sid = home
    with make_fake("ollama") as fake:
        fake.queue(call_turn("graph_summary", {}))
        capped = chat(root, fake, sid, "--max-iterations", "1", "Summarise")
    assert capped.returncode == 1
    assert capped.stdout.splitlines()[-1] == "Reached the iteration limit (1 model turn); the answer may be unfinished."
    assert 'run the command again with the prompt "Continue."' in capped.stderr  # the one way on
    with make_fake("ollama") as fake:
        fake.queue(Turn(text=["Half an ans"], error_mid_stream="error"))
        failed = chat(root, fake, sid, "Go")
    assert failed.returncode == 1 and failed.stdout == "Half an ans\n"
    assert "Traceback" not in failed.stderr and len(failed.stderr.strip().splitlines()) == 1


def test_usage_errors_exit_2(home: tuple[Path, str], tmp_path: Path) -> None:
    root, sid = home
    with make_fake("anthropic") as fake:
        unknown = chat(root, fake, "s_NOPE", "hi")
        assert "s_NOPE" in one_line_error(unknown, 2)
        no_key = chat(root, fake, sid, "hi", key=False)
        assert "ANTHROPIC_API_KEY" in one_line_error(no_key, 2)
        empty = chat(root, fake, sid, "  ")
        assert "PROMPT" in one_line_error(empty, 2)
        assert fake.generation_requests == []
    no_provider = cks(root, "chat", "--session", sid, "hi")
    assert "--provider" in one_line_error(no_provider, 2)


def test_prompt_from_stdin_and_invalid_arguments_from_the_model(home: tuple[Path, str]) -> None:
    root, sid = home
    with make_fake("openai") as fake:
        fake.queue(Turn(tool_calls=[ScriptedCall("add_object", raw_arguments='{"type": "Pers')]),
                   text_turn("Sorry, let me retry later."))
        proc = chat(root, fake, sid, "-", stdin="Add someone\n")
        body = fake.generation_requests[0].body
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "→ add_object (invalid JSON)" and lines[1].startswith("← error: The arguments for add_object")
    assert body["messages"][-1]["content"] == "Add someone\n"


@pytest.mark.slow
def test_chat_offers_the_tools_of_configured_mcp_servers(home: tuple[Path, str]) -> None:
    """A configured MCP server starts for the chat; its tools reach the model under wire names,
    and a call to it (approved with --yes, since MCP tools ask by default) runs in the server."""
    root, sid = home
    toy = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "toy_server.py"
    added = cks(root, "mcp", "add", "toy", "--", sys.executable, str(toy))
    assert added.returncode == 0, added.stderr
    with make_fake("anthropic") as fake:
        fake.queue(call_turn("mcp__toy__add", {"a": 2, "b": 3}), text_turn("It is 5."))
        # A stdio server's tools need code.execute, which a chat grants only when asked to.
        proc = chat(root, fake, sid, "--yes", "--grant", "code.execute", "What is 2+3?")
        offered = {t["name"] for t in fake.requests[0].body["tools"]}
    assert proc.returncode == 0, (proc.stdout, proc.stderr)
    assert {"mcp__toy__add", "mcp__toy__echo", "add_object"} <= offered
    assert proc.stdout.splitlines()[:2] == ['→ mcp:toy:add {"a": 2, "b": 3}', "← ok"]
