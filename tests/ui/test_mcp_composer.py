"""The composer's MCP parts against a real server subprocess: the resource picker (search,
template arguments with completions, attach) and prompts as slash commands (the form, with
completions as the person types)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest

from cks_desktop.mcp.config import parse_server
from cks_desktop.mcp.connection import McpConnection
from cks_desktop.mcp.stderr_log import ServerLog
from cks_desktop.ui.chat.composer import Composer
from cks_desktop.ui.chat.slash_commands import install_mcp_features, slash_commands

LIBRARY = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "library_server.py"


async def library(tmp_path: Path) -> McpConnection:
    config = parse_server("lib", {"command": sys.executable, "args": [str(LIBRARY)], "protocol": "legacy"})
    conn = McpConnection(config, log=ServerLog(tmp_path / "lib.log"))
    assert await conn.start(), conn.reason
    assert await conn.features.wait_listed(20)
    return conn


@pytest.mark.asyncio
async def test_picker_searches_fills_templates_and_attaches_as_data(qtbot, tmp_path):
    conn = await library(tmp_path)
    try:
        composer = Composer()
        qtbot.addWidget(composer)
        features = install_mcp_features(composer, lambda: {"lib": conn})
        sent: list[str] = []
        composer.sendClicked.connect(sent.append)

        picker = features.open_picker()
        assert picker.server_box.currentData() == "lib"
        assert picker.items.count() == 10  # 9 resources and the template
        picker.search.setText("note 3")
        assert [picker.items.item(i).text() for i in range(picker.items.count())] == ["Note 3 — note://3"]
        outcome = await picker.attach()
        assert outcome is not None and not picker.isVisible()
        assert features.bar.isVisibleTo(composer) and len(features.bar.items) == 1

        picker = features.open_picker()
        picker.search.setText("template")
        assert picker.items.count() == 1
        fields = picker.fields()
        assert list(fields) == ["topic", "id"]
        fields["topic"].setText("g")
        await fields["topic"].ask_now()
        assert fields["topic"].suggestions.stringList() == ["gamma", "gallium"]
        assert await picker.attach() is None and "Fill in topic, id" not in picker.notice.text()
        assert "Fill in id" in picker.notice.text()  # topic has a value, id not yet
        fields["topic"].setText("gamma")
        fields["id"].setText("1")
        assert (await picker.attach()).uri == "notes://gamma/1"

        composer.input.setPlainText("Summarise these")
        composer.submit()
        [message] = sent
        assert message.startswith("Summarise these\n\n[Attached resource note://3 from MCP server 'lib'")
        assert "Body of note 3." in message and "A note at notes://gamma/1." in message
        assert "not instructions" in message and not features.bar.items and not features.bar.isVisibleTo(composer)
    finally:
        await conn.stop()


@pytest.mark.asyncio
async def test_prompts_are_slash_commands_with_a_form_and_completions(qtbot, tmp_path):
    conn = await library(tmp_path)
    try:
        composer = Composer()
        qtbot.addWidget(composer)
        composer.show()
        features = install_mcp_features(composer, lambda: {"lib": conn})
        sent: list[str] = []
        composer.sendClicked.connect(sent.append)
        assert [c.text for c in slash_commands({"lib": conn})] == ["/lib:greet", "/lib:report"]

        composer.input.setFocus()
        QTest.keyClicks(composer.input, "/lib:g")
        assert features.completer.completionCount() == 1
        assert features.completer.currentCompletion() == "/lib:greet"
        QTest.keyClick(composer.input, Qt.Key.Key_Return)  # picks the command: its form opens, nothing is sent
        form = features.form
        assert form is not None and form.isVisible() and sent == []
        assert list(form.fields) == ["name", "style"]

        form.fields["style"].setText("fu")
        await form.fields["style"].ask_now()
        assert form.fields["style"].suggestions.stringList() == ["funny", "furious"]
        assert await form.insert() is None and form.notice.text() == "The prompt 'greet' needs name."
        form.fields["name"].setText("Ada")
        form.fields["style"].setText("funny")
        assert await form.insert() == "Write a funny greeting for Ada."
        assert composer.input.toPlainText() == "Write a funny greeting for Ada." and sent == []

        composer.input.setPlainText("/lib:nothing-like-this")
        composer.submit()  # not a prompt: sent as the person wrote it
        assert sent == ["/lib:nothing-like-this"]
    finally:
        await conn.stop()
