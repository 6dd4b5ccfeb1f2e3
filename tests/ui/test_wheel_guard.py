"""The mouse wheel never changes a combo box, spin box or slider that does not have the focus, on
every settings page and in the Add MCP server form; scrolling there scrolls the form. A control the
person focused takes the wheel as usual. Real dialogs on a real data folder, real wheel events."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QPointF, Qt
from PySide6.QtGui import QWheelEvent
from PySide6.QtWidgets import QAbstractSlider, QAbstractSpinBox, QApplication, QComboBox, QScrollBar, QWidget

from cks_desktop.paths import resolve
from cks_desktop.runtime import AppServices
from cks_desktop.secrets import SecretStore
from cks_desktop.ui import wheel_guard
from cks_desktop.ui.settings.dialog import SettingsDialog
from cks_desktop.ui.settings.mcp_editor import McpServerEditor
from cks_desktop.ui.tasks import TaskTracker
from tests.ui.conftest import home  # noqa: F401  (a fixture)


@pytest.fixture
def services(home: Path) -> Any:  # noqa: F811
    services = AppServices.open(resolve(home), secrets=SecretStore(secure=False))
    yield services
    services.store.close()


def _value(widget: QWidget) -> object:
    if isinstance(widget, QComboBox):
        return widget.currentIndex()
    if isinstance(widget, QAbstractSpinBox):
        return widget.text()
    assert isinstance(widget, QAbstractSlider)
    return widget.value()


def _wheel(widget: QWidget, steps: int = -3) -> None:
    centre = QPointF(widget.rect().center())
    event = QWheelEvent(centre, QPointF(widget.mapToGlobal(QPoint(int(centre.x()), int(centre.y())))), QPoint(),
                        QPoint(0, 120 * steps), Qt.MouseButton.NoButton, Qt.KeyboardModifier.NoModifier,
                        Qt.ScrollPhase.NoScrollPhase, False)
    QApplication.sendEvent(widget, event)


def _guarded(root: QWidget) -> list[QWidget]:
    """Every control on ``root`` whose value a wheel could change (scroll bars are for scrolling)."""
    found = [w for kind in wheel_guard.GUARDED for w in root.findChildren(kind)
             if w.isEnabled() and not isinstance(w, QScrollBar)]
    return [w for w in dict.fromkeys(found) if not (isinstance(w, QComboBox) and w.count() < 2)
            and not (isinstance(w, QAbstractSlider) and w.maximum() == w.minimum())]


def _check_unfocused_controls_keep_their_values(dialog: QWidget, sink: QWidget) -> int:
    checked = 0
    for control in _guarded(dialog):
        sink.setFocus()
        before = _value(control)
        _wheel(control)
        _wheel(control, steps=3)
        assert _value(control) == before, f"{control.objectName() or type(control).__name__} changed under the wheel"
        assert control.focusPolicy() != Qt.FocusPolicy.WheelFocus
        checked += 1
    return checked


def test_the_wheel_changes_no_unfocused_control_on_any_settings_page(qtbot, services: Any) -> None:
    wheel_guard.install(QApplication.instance())
    dialog = SettingsDialog(services, TaskTracker())
    qtbot.addWidget(dialog)
    dialog.show()
    checked = 0
    for row in range(dialog.nav.count()):
        dialog.nav.setCurrentRow(row)
        checked += _check_unfocused_controls_keep_their_values(dialog.stack.currentWidget(), dialog.nav)
    assert checked >= 5  # the pages do have such controls (approval policies, caps, themes…)


def test_scrolling_the_add_server_form_never_weakens_its_approval(qtbot, services: Any) -> None:
    wheel_guard.install(QApplication.instance())
    editor = McpServerEditor(services, TaskTracker())
    qtbot.addWidget(editor)
    editor.show()
    approval = editor.approval_box
    chosen = approval.currentData()
    assert _check_unfocused_controls_keep_their_values(editor, editor.name_edit) >= 2
    assert approval.currentData() == chosen
    # focused by the person, the wheel works on it as usual
    approval.setFocus()
    qtbot.waitUntil(approval.hasFocus)
    before = approval.currentIndex()
    _wheel(approval, steps=-1 if before < approval.count() - 1 else 1)
    assert approval.currentIndex() != before
