"""Untrusted text is never interpreted as HTML anywhere in the window.

Two halves. The runtime half opens the real window with a hostile name
everywhere — session title, object names, property values, relation types,
an MCP server's arguments and (through a real SDK server) its tool
descriptions, a failing server's reason in the status bar, a tool row, the
relate dialog, the approval dialog, the relation-properties dialog, a
confirmation box — then walks every widget and item: a label showing the name
is plain text, and no tooltip carries live markup. The source half makes the
rule structural, so a new label cannot forget it: ``QLabel``/``QMessageBox``
are constructed only in ``ui/labels.py``, and every tooltip is a literal or
goes through ``plain_tooltip``.
"""

from __future__ import annotations

import ast
import asyncio
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from PySide6.QtCore import Qt
from PySide6.QtGui import QAction
from PySide6.QtWidgets import (QApplication, QLabel, QListWidget, QMessageBox, QTableWidget, QTreeWidget,
                               QWidget)

import cks_desktop.ui
from cks_desktop.graph.store import GraphStore
from cks_desktop.paths import resolve
from cks_desktop.ui.approval.dialog import ApprovalDialog
from cks_desktop.ui.chat.model import RowState, ToolItem
from cks_desktop.ui.chat.tool_row import ToolCallRow
from cks_desktop.ui.graph.dialogs import RelationTypeDialog
from cks_desktop.ui.labels import plain_input_dialog, plain_message_box
from cks_desktop.ui.settings.dialog import SettingsDialog
from cks_desktop.ui.text import plain_tooltip

from tests.ui.conftest import open_window
from tests.ui.helpers import approval_request, tool_spec, wait

MARK = "<img"
HOSTILE = "<img src='file:///etc/hosts'><b style='color:red'>Your licence expired</b>"
SERVER = Path(__file__).resolve().parents[1] / "mcp" / "servers" / "hostile_text_server.py"
UI = Path(cks_desktop.ui.__file__).resolve().parent


def _tooltips(widget: QWidget) -> list[str]:
    """The widget's own tooltip and those of every item it shows."""
    tips = [widget.toolTip()]
    if isinstance(widget, QListWidget):
        tips += [widget.item(i).toolTip() for i in range(widget.count())]
    elif isinstance(widget, QTableWidget):
        tips += [widget.item(r, c).toolTip() for r in range(widget.rowCount()) for c in range(widget.columnCount())
                 if widget.item(r, c) is not None]
    elif isinstance(widget, QTreeWidget):
        for i in range(widget.topLevelItemCount()):
            item = widget.topLevelItem(i)
            tips += [item.toolTip(c) for c in range(widget.columnCount())]
    tips += [a.toolTip() for a in widget.findChildren(QAction)]
    return tips


def assert_nothing_interpreted() -> int:
    """Walk every widget; return how many plain labels show the hostile text (so it cannot pass vacuously)."""
    shown = 0
    for widget in QApplication.allWidgets():
        if isinstance(widget, QLabel) and MARK in widget.text():
            assert widget.textFormat() == Qt.TextFormat.PlainText, (widget.objectName(), widget.text())
            shown += 1
        for tip in _tooltips(widget):
            assert MARK not in tip, (type(widget).__name__, widget.objectName(), tip)  # escaped, or not there
    return shown


@pytest.mark.slow
@pytest.mark.asyncio
async def test_hostile_names_show_as_text_everywhere(qtbot, home: Path) -> None:
    with GraphStore.open(resolve(home).database) as store:
        session = store.create_session(HOSTILE)
        store.apply(session.id, [
            {"op": "add_object", "type": "Person", "name": HOSTILE, "properties": {"note": HOSTILE}},
            {"op": "add_object", "type": "Person", "name": "Bob"},
        ], "user")
        hostile_id = store.resolve(session.id, HOSTILE).id
        bob_id = store.resolve(session.id, "Bob").id
        store.apply(session.id, [{"op": "add_relation", "type": "knows", "source": hostile_id, "target": bob_id,
                                  "properties": {"why": HOSTILE}}], "user")
    servers = {"hostile": {"command": sys.executable, "args": [str(SERVER), HOSTILE], "enabled": False}}
    async with open_window(home, mcp_servers=servers, mcp_targets={}) as window:
        await wait(window.graph_view.inspect(hostile_id))
        window.status.set_servers([SimpleNamespace(name="hostile", status="failed", reason=HOSTILE, enabled=True)])

        row = ToolCallRow(ToolItem("c1", "mcp:x:paint", HOSTILE, "mcp:x", {"name": HOSTILE},
                                   state=RowState.ERROR, result=HOSTILE, revert_error=HOSTILE))
        qtbot.addWidget(row)
        row.show()
        relate = RelationTypeDialog(window, HOSTILE, "Bob", [HOSTILE])
        relate.show()
        spec = tool_spec("mcp:x:paint", source="mcp:x", title=HOSTILE)
        approval = ApprovalDialog(approval_request({"name": HOSTILE}, spec=spec, preview=HOSTILE), window,
                                  session_title=HOSTILE)
        approval.show()
        props = plain_input_dialog(window, title=HOSTILE, label=f"Properties of “{HOSTILE}”:")
        props.show()
        box = plain_message_box(window, icon=QMessageBox.Icon.Warning, title=HOSTILE, text=HOSTILE,
                                informative=HOSTILE)
        box.show()

        window.open_settings("mcp", "hostile")
        settings = window.findChild(SettingsDialog)
        editor = settings.mcp_page.open_editor("hostile")
        assert editor is not None
        editor.show()
        assert await wait(editor.test_connection(), 60), editor.test_result.text()  # the real hostile server
        await asyncio.sleep(0)

        assert window.graph_view.inspector.title.text() == HOSTILE
        assert assert_nothing_interpreted() >= 6
        for widget in (relate, approval, props, box, editor, settings):
            widget.close()


def test_plain_tooltip_shows_the_text_literally(qtbot) -> None:
    from PySide6.QtGui import QTextDocument

    tip = plain_tooltip(f"{HOSTILE}\n  second line & more")
    document = QTextDocument()
    document.setHtml(tip)
    assert document.toPlainText() == f"{HOSTILE}\n  second line & more"
    assert plain_tooltip("") == ""


# -- the source half -------------------------------------------------------------------------------------------
def _name(call: ast.Call) -> str:
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _literal(node: ast.expr) -> bool:
    """A string literal, a module constant, a choice between those, or the result of plain_tooltip()."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    if isinstance(node, ast.Name) and node.id.isupper():
        return True
    if isinstance(node, ast.IfExp):
        return _literal(node.body) and _literal(node.orelse)
    return isinstance(node, ast.Call) and _name(node) == "plain_tooltip"


def _unmarked_widgets(function: ast.AST) -> list[tuple[int, str]]:
    """``x = QLabel(...)`` / ``QMessageBox(...)`` in ``function`` with no ``x.setTextFormat(...PlainText)``."""
    made: dict[str, int] = {}
    plain: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and \
                _name(node.value) in ("QLabel", "QMessageBox"):
            for target in node.targets:
                made[ast.unparse(target)] = node.lineno
        if isinstance(node, ast.Call) and _name(node) == "setTextFormat" and isinstance(node.func, ast.Attribute) \
                and node.args and "PlainText" in ast.unparse(node.args[0]):
            plain.add(ast.unparse(node.func.value))
    return [(line, target) for target, line in made.items() if target not in plain]


@pytest.mark.slow
def test_every_label_and_tooltip_in_the_ui_is_plain_text() -> None:
    """Labels and message boxes: made by ui/labels.py, or given PlainText where they are made.
    Tooltips and QToolTip.showText: a literal or plain_tooltip(...). No rich format but rich_label()."""
    problems = []
    for path in sorted(UI.rglob("*.py")):
        where = path.relative_to(UI.parent)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if path.name != "labels.py":
            for function in ast.walk(tree):
                if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    for line, target in _unmarked_widgets(function):
                        problems.append(f"{where}:{line}: {target} is a QLabel/QMessageBox without PlainText "
                                        "— use ui.labels.plain_label / plain_message_box")
        assigned = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Assign)}
        for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
            name, at = _name(call), f"{where}:{call.lineno}"
            if name in ("QLabel", "QMessageBox") and path.name != "labels.py" and id(call) not in assigned:
                problems.append(f"{at}: {name}(...) used in passing, its format never set "
                                "— use ui.labels.plain_label / plain_message_box")
            if name == "setToolTip" and call.args and not _literal(call.args[-1]):
                problems.append(f"{at}: setToolTip(...) of a computed text — wrap it in plain_tooltip()")
            if name == "showText" and len(call.args) >= 2 and not _literal(call.args[1]):
                problems.append(f"{at}: QToolTip.showText(...) of a computed text — wrap it in plain_tooltip()")
            if name == "setLabelText" and path.name != "labels.py":
                problems.append(f"{at}: setLabelText(...) — use ui.labels.plain_input_dialog")
            if name == "setTextFormat" and path.name != "labels.py" and call.args and \
                    "PlainText" not in ast.unparse(call.args[0]):
                problems.append(f"{at}: a rich-text format outside ui/labels.py — use rich_label()")
    assert not problems, "\n".join(problems)
