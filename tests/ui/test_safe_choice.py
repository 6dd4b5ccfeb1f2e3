"""Every question the window asks answers Esc with the choice that does nothing, and Enter too unless
its code chose another default on purpose: one rule in ``run_dialog`` (``default_to_safe``), and a
sweep that finds every message box the window's code builds and checks that it is opened through
that rule or offers a single answer."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from PySide6.QtCore import Qt, QTimer
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QMessageBox

import cks_desktop.ui
from cks_desktop.ui.dialogs import run_dialog
from cks_desktop.ui.labels import plain_message_box

UI = Path(cks_desktop.ui.__file__).resolve().parent
OPENERS = {"run_dialog", "_run", "confirm", "choose"}
SINGLE = {"Ok", "Close"}


def _boxes() -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef]]:
    """Each function of the window's code that builds a message box, with its file."""
    found = []
    for path in sorted(UI.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            calls = [c for c in ast.walk(node) if isinstance(c, ast.Call)]
            if any(_name(c.func) in {"plain_message_box", "QMessageBox"} for c in calls):
                found.append((f"{path.relative_to(UI)}:{node.name}", node))
    return found


def _name(func: ast.expr) -> str:
    return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""


def _answers(node: ast.AST) -> set[str]:
    """The standard buttons and added buttons a function puts on its box."""
    out: set[str] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Attribute) and \
                sub.value.attr == "StandardButton":
            out.add(sub.attr)
        if isinstance(sub, ast.Call) and _name(sub.func) == "addButton":
            out.add("added")
    return out


def test_every_box_with_a_choice_is_opened_through_the_safe_rule() -> None:
    boxes = _boxes()
    assert len(boxes) >= 8, [where for where, _ in boxes]  # the sweep finds the window's boxes
    unsafe = []
    for where, node in boxes:
        opened = {_name(c.func) for c in ast.walk(node) if isinstance(c, ast.Call)} & OPENERS
        answers = _answers(node) - {"NoButton"}
        if where.endswith("dialogs.py:choose") or where.endswith("dialogs.py:confirm"):
            continue  # they set Esc and the default themselves, and open through run_dialog
        if not opened and not answers <= SINGLE | set():
            unsafe.append((where, sorted(answers)))
        if not opened and "added" in answers:
            unsafe.append((where, "adds buttons but is not opened through run_dialog"))
    assert not unsafe, unsafe


async def _escape(box: QMessageBox) -> None:
    """Open ``box`` through ``run_dialog`` and press Esc in it once it is open."""
    await run_dialog(box, lambda opened: QTimer.singleShot(
        0, lambda: QTest.keyClick(opened, Qt.Key.Key_Escape)))


def _box(*added: tuple[str, QMessageBox.ButtonRole],
         standard: QMessageBox.StandardButton = QMessageBox.StandardButton.NoButton) -> QMessageBox:
    box = plain_message_box(None, icon=QMessageBox.Icon.Question, title="Question", text="Go on?",
                            buttons=standard)
    for text, role in added:
        box.addButton(text, role)
    return box


SHAPES = {
    "Ok or Cancel (the extraction's estimate)":
        lambda: _box(standard=QMessageBox.StandardButton.Ok | QMessageBox.StandardButton.Cancel),
    "Remove or Cancel (a document)":
        lambda: _box(("Remove", QMessageBox.ButtonRole.DestructiveRole),
                     ("Cancel", QMessageBox.ButtonRole.RejectRole)),
    "Remove them too, Keep them or Cancel":
        lambda: _box(("Remove them too", QMessageBox.ButtonRole.DestructiveRole),
                     ("Keep them", QMessageBox.ButtonRole.AcceptRole),
                     ("Cancel", QMessageBox.ButtonRole.RejectRole)),
    "Yes or No": lambda: _box(standard=QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No),
}


@pytest.mark.asyncio
@pytest.mark.parametrize("shape", sorted(SHAPES))
async def test_esc_and_enter_take_the_answer_that_does_nothing(qapp, qtbot, shape) -> None:
    box = SHAPES[shape]()
    qtbot.addWidget(box)
    await _escape(box)
    assert box.clickedButton() is not None
    assert box.buttonRole(box.clickedButton()) in (QMessageBox.ButtonRole.RejectRole, QMessageBox.ButtonRole.NoRole)
    assert box.defaultButton() is box.escapeButton() is box.clickedButton()


@pytest.mark.asyncio
async def test_a_default_chosen_on_purpose_is_kept_and_esc_still_refuses(qapp, qtbot) -> None:
    box = _box(standard=QMessageBox.StandardButton.Save | QMessageBox.StandardButton.Cancel)
    box.setDefaultButton(QMessageBox.StandardButton.Save)
    qtbot.addWidget(box)
    await _escape(box)
    assert box.defaultButton() is box.button(QMessageBox.StandardButton.Save)
    assert box.clickedButton() is box.button(QMessageBox.StandardButton.Cancel)
