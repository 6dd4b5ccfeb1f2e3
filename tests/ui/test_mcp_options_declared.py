"""A simple MCP server option is declared once (mcp/config.py OPTIONS): the editor's field, the form's
reading and writing, the entry's check and its known keys all come from the record."""

from __future__ import annotations

from pathlib import Path

import pytest

import cks_desktop
from cks_desktop.mcp.config import OPTIONS, ConfigError, Transport, parse_server
from cks_desktop.ui.settings.mcp_form import ServerForm
from tests.ui.test_settings import services  # noqa: F401 - the fixture

SETTINGS_UI = Path(cks_desktop.__file__).parent / "ui" / "settings"
VALUES = {"cwd": "/srv/work", "inheritEnv": True, "timeout": 30.0, "logLevel": "warning", "sampling": "off"}


def test_the_editor_and_the_form_name_no_option() -> None:
    for module in ("mcp_form.py", "mcp_editor.py", "mcp_option_fields.py"):
        text = (SETTINGS_UI / module).read_text(encoding="utf-8")
        for option in OPTIONS:
            assert f'"{option.key}"' not in text, (module, option.key)


def test_every_start_option_belongs_to_one_transport() -> None:
    for option in OPTIONS:
        if option.place == "start":
            assert len(option.transports) == 1, option.key  # a transport's page shows it


@pytest.mark.parametrize("option", OPTIONS, ids=lambda o: o.key)
def test_an_option_round_trips_and_a_bad_value_names_its_key(option) -> None:
    transport = next(iter(option.transports)) if option.transports else Transport.STDIO
    base = {"command": "srv"} if transport is Transport.STDIO else {"url": "https://x.example/mcp"}
    entry = {**base, option.key: VALUES[option.key]}
    config = parse_server("srv", entry)
    assert getattr(config, option.attr) == VALUES[option.key]
    form = ServerForm.from_entry("srv", entry)
    assert form.options[option.key] == VALUES[option.key]
    assert form.owned(None)[option.key] == VALUES[option.key]
    assert option.key not in ServerForm.from_entry("srv", base).owned(None) or option.written_when_default
    with pytest.raises(ConfigError) as bad:
        parse_server("srv", {**base, option.key: ["not", "a", "value"]})
    assert bad.value.key == option.key and f'"{option.key}"' in str(bad.value)


def test_the_editor_shows_each_option_where_it_is_declared(qtbot, services) -> None:  # noqa: F811
    from cks_desktop.ui.settings.mcp_editor import McpServerEditor
    from cks_desktop.ui.tasks import TaskTracker
    from cks_desktop.ui.text import plain_tooltip

    editor = McpServerEditor(services, TaskTracker(), ServerForm.from_entry("srv", {"command": "srv", **{
        k: v for k, v in VALUES.items()}}))
    qtbot.addWidget(editor)
    for option in OPTIONS:
        field = editor.option_fields[option.key]
        assert field.objectName() == option.widget_name and field.toolTip() == plain_tooltip(option.help)
    assert editor.collect().options == VALUES
