"""A prompt left unanswered by a crash is never merged into the next one.

The real ``cks-desktop chat`` runs in a subprocess against a fake provider
server that stalls; once the request arrived (the prompt is saved by then),
the process is killed with SIGKILL. The reopened chat ends in a user message
with no answer: it is marked unanswered, the next prompt is sent without it,
and ``--retry`` sends it again on its own.
"""

from __future__ import annotations

import pytest

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.agent.test_chat_cli import BASE_ENV, KEY_ENV, chat, cks, home  # noqa: F401 - the fixture
from tests.fakes.providers import make_fake
from tests.fakes.script import Turn, text_turn


def kill_mid_turn(root: Path, sid: str, prompt: str, name: str = "anthropic") -> None:
    """Start a chat turn, wait until the provider holds the request, SIGKILL the process."""
    with make_fake(name) as fake:
        fake.queue(Turn(stall_after_text=True))
        env = {**BASE_ENV, KEY_ENV[name]: "test"}
        proc = subprocess.Popen([sys.executable, "-m", "cks_desktop", "--data-dir", str(root), "chat",
                                 "--session", sid, "--provider", name, "--base-url", fake.base_url,
                                 "--model", fake.default_model, prompt],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            assert fake.stalled.wait(60), "the chat never reached the provider"
            os.kill(proc.pid, signal.SIGKILL)
            proc.communicate(timeout=30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate(timeout=30)
        assert proc.returncode == -signal.SIGKILL


def user_texts(body: dict[str, Any]) -> list[str]:
    out = []
    for m in body["messages"]:
        if m["role"] != "user":
            continue
        content = m["content"]
        out.append(content if isinstance(content, str)
                   else "".join(b.get("text", "") for b in content if b.get("type") == "text"))
    return out


@pytest.mark.slow
def test_a_killed_turn_leaves_an_unanswered_prompt_that_is_not_merged(home: tuple[Path, str]) -> None:  # noqa: F811
    root, sid = home
    kill_mid_turn(root, sid, "First question, never answered")
    rows = [json.loads(line) for line in cks(root, "chat", "--session", sid, "--history", "--json").stdout.splitlines()]
    assert [r["role"] for r in rows] == ["user"] and rows[0]["unanswered"] is True
    history = cks(root, "chat", "--session", sid, "--history").stdout.splitlines()
    assert history == ["you #1 (unanswered): First question, never answered"]

    with make_fake("anthropic") as fake:
        fake.queue(text_turn("Second answered."))
        proc = chat(root, fake, sid, "Second question")
        sent = fake.generation_requests[0].body
    assert proc.returncode == 0, proc.stderr
    assert user_texts(sent) == ["Second question"]  # not "First…\n\nSecond…" merged into one turn
    assert "never answered" not in json.dumps(sent)
    lines = cks(root, "chat", "--session", sid, "--history").stdout.splitlines()
    assert lines == ["you #1 (unanswered): First question, never answered", "you #2: Second question",
                     "assistant: Second answered."]
    nothing = cks(root, "chat", "--session", sid, "--retry")
    assert nothing.returncode == 2 and "nothing to retry" in nothing.stderr and "Traceback" not in nothing.stderr


def test_retry_sends_the_unanswered_prompt_alone(home: tuple[Path, str]) -> None:  # noqa: F811
    root, sid = home
    with make_fake("openai") as fake:
        fake.queue(text_turn("Hello back."))
        assert chat(root, fake, sid, "Hello").returncode == 0
    kill_mid_turn(root, sid, "Cut off question", name="openai")
    with make_fake("openai") as fake:
        fake.queue(text_turn("Now answered."))
        proc = chat(root, fake, sid, "--retry")
        sent = fake.generation_requests[0].body
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "Now answered.\n"
    assert user_texts(sent) == ["Hello", "Cut off question"]
    lines = cks(root, "chat", "--session", sid, "--history").stdout.splitlines()
    assert lines == ["you #1: Hello", "assistant: Hello back.", "you #2: Cut off question", "assistant: Now answered."]
