"""chat export, headless (`cks-desktop chat --session S --export FILE`).

A real ``cks-desktop chat`` process answers with a tool call against the fake Anthropic
server; a second one, then a stopped/errored transcript written by the loop, is exported
as Markdown and JSON through the real CLI; bad use gets one sentence and writes nothing.
"""

from __future__ import annotations

import pytest

import json
from pathlib import Path

from cks_desktop.agent.chat_export import fence

from tests.agent.test_chat_cli import chat, cks, home, one_line_error  # noqa: F401  (home is a fixture)
from tests.fakes.providers import make_fake
from tests.fakes.script import Turn, call_turn, text_turn


@pytest.mark.slow
def test_export_markdown_and_json_from_the_cli(home: tuple[Path, str], tmp_path: Path) -> None:
    root, sid = home
    with make_fake("anthropic") as fake:
        fake.queue(call_turn("add_object", {"type": "Person", "name": "Alice"}, text="Adding Alice."),
                   text_turn("Alice is in."), Turn(status=401))
        assert chat(root, fake, sid, "--yes", "Add Alice").returncode == 0
        failed = chat(root, fake, sid, "And now?")
        assert failed.returncode != 0
    md_path, json_path = tmp_path / "out" / "chat.md", tmp_path / "chat.json"
    (tmp_path / "out").mkdir()
    made = cks(root, "chat", "--session", sid, "--export", str(md_path))
    assert made.returncode == 0, made.stderr
    assert str(md_path) in made.stderr
    markdown = md_path.read_text(encoding="utf-8")
    assert "## You · exchange 1" in markdown and "Add Alice" in markdown and "Alice is in." in markdown
    assert "**Tool call**" in markdown and "(`add_object`)" in markdown and '"name": "Alice"' in markdown
    assert "## You · exchange 2 (no answer)" in markdown and "> **Error:**" in markdown  # the saved error
    made = cks(root, "chat", "--session", sid, "--export", str(json_path), "--format", "json")
    assert made.returncode == 0, made.stderr
    data = json.loads(json_path.read_text(encoding="utf-8"))
    assert data["format"] == "cks-desktop-chat" and data["session"]["id"] == sid
    roles = [m["role"] for m in data["messages"]]
    assert roles[:4] == ["user", "assistant", "tool", "assistant"]
    call = next(p for m in data["messages"] for p in m["parts"] if p["kind"] == "tool_call")
    assert call["name"] == "add_object" and call["arguments"] == {"type": "Person", "name": "Alice"}
    assert data["messages"][-1]["mark"] == "error"
    # stdout, and the format follows the name when not given
    out = cks(root, "chat", "--session", sid, "--export", "-", "--format", "json")
    assert out.returncode == 0 and json.loads(out.stdout)["session"]["id"] == sid


def test_export_refusals_are_one_sentence_and_write_nothing(home: tuple[Path, str], tmp_path: Path) -> None:
    root, sid = home
    (tmp_path / "a-file").write_text("not a folder", encoding="utf-8")
    target = tmp_path / "a-file" / "chat.md"
    assert "Could not write" in one_line_error(cks(root, "chat", "--session", sid, "--export", str(target)), 2)
    assert not target.exists()
    assert "--format goes with --export" in one_line_error(cks(root, "chat", "--session", sid, "--format",
                                                               "json", "hi"), 2)
    assert "not both" in one_line_error(cks(root, "chat", "--session", sid, "--export", "x.md", "hi"), 2)


def test_a_code_fence_outlasts_the_backticks_inside() -> None:
    block = fence("a ``` b ```` c")
    assert block.startswith("`````\n") and block.endswith("\n`````")
