"""One listener mechanism everywhere: the core's ``Callbacks``, with its error isolation.

A hand-rolled list of listeners lets one broken listener stop the others (or undo
the caller's work by raising through it). The first test reads the source of the
core and of ``ui``'s Qt-free parts and fails on a listener list kept by hand; the
others check, on the real classes, that a listener that raises is logged and
skipped while the rest still hear the news.
"""

from __future__ import annotations

import ast
import logging
from pathlib import Path

import pytest

import cks_desktop
from cks_desktop.graph.store import GraphStore
from cks_desktop.settings import Settings
from cks_desktop.ui.chat.model import ChatModel, MessageItem
from cks_desktop.ui.sessions.presenter import SessionsPresenter

PACKAGE = Path(cks_desktop.__file__).parent
MECHANISM = PACKAGE / "callbacks.py"
QT = ("PySide6", "qasync", "shiboken6")


def _imports_qt(tree: ast.AST) -> bool:
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        if any(n.split(".")[0] in QT for n in names):
            return True
    return False


def _is_list_value(node: ast.AST | None) -> bool:
    if isinstance(node, ast.List):
        return True
    if isinstance(node, ast.Call):  # field(default_factory=list) or list()
        if isinstance(node.func, ast.Name) and node.func.id == "list":
            return True
        return any(k.arg == "default_factory" and isinstance(k.value, ast.Name) and k.value.id == "list"
                   for k in node.keywords)
    return False


def hand_rolled(path: Path) -> list[str]:
    """Listener lists kept by hand in ``path``: a ``*listener*``/``*subscriber*`` attribute holding a list,
    or a ``subscribe`` that appends to one."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found: list[str] = []
    for node in ast.walk(tree):
        targets: list[ast.AST] = []
        value: ast.AST | None = None
        if isinstance(node, ast.Assign):
            targets, value = list(node.targets), node.value
        elif isinstance(node, ast.AnnAssign):
            targets, value = [node.target], node.value
        for target in targets:
            name = target.attr if isinstance(target, ast.Attribute) else target.id \
                if isinstance(target, ast.Name) else ""
            if any(w in name.lower() for w in ("listener", "subscriber", "observer")) and _is_list_value(value):
                found.append(f"{path}:{node.lineno}: {name} is a list")
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in ("subscribe", "add_listener"):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Call) and isinstance(inner.func, ast.Attribute) \
                        and inner.func.attr == "append":
                    found.append(f"{path}:{inner.lineno}: {node.name} appends to a list")
    return found


def test_no_hand_rolled_listener_lists() -> None:
    found: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path == MECHANISM:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        if path.is_relative_to(PACKAGE / "ui") and _imports_qt(tree):
            continue  # Qt widgets use signals
        found += hand_rolled(path)
    assert found == [], "use cks_desktop.callbacks.Callbacks:\n" + "\n".join(found)


def test_the_check_notices_a_hand_rolled_list(tmp_path: Path) -> None:
    bad = tmp_path / "model.py"
    bad.write_text("class M:\n    def __init__(self):\n        self._listeners = []\n"
                   "    def subscribe(self, f):\n        self._listeners.append(f)\n", encoding="utf-8")
    assert len(hand_rolled(bad)) == 2


def _boom(*_args: object) -> None:
    raise RuntimeError("a broken view")


def test_a_broken_settings_listener_is_skipped(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    f = tmp_path / "settings.json"
    window, terminal = Settings.load(f), Settings.load(f)
    heard: list[set[str]] = []
    window.subscribe(_boom)
    unsubscribe = window.subscribe(heard.append)
    terminal.max_iterations = 3
    terminal.save()
    with caplog.at_level(logging.ERROR):
        assert window.reload() == {"agent"}
    assert heard == [{"agent"}] and "a settings listener failed" in caplog.text
    unsubscribe()
    terminal.max_iterations = 4
    terminal.save()
    window.reload()
    assert heard == [{"agent"}]


class _Recorder:
    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    def items_reset(self) -> None:
        self.seen.append(("reset", -1))

    def item_inserted(self, index: int) -> None:
        self.seen.append(("inserted", index))

    def item_changed(self, index: int) -> None:
        self.seen.append(("changed", index))


class _Broken(_Recorder):
    def item_inserted(self, index: int) -> None:
        raise RuntimeError("a broken view")


def test_a_broken_chat_view_does_not_stop_the_model(caplog: pytest.LogCaptureFixture) -> None:
    model = ChatModel()
    broken, good = _Broken(), _Recorder()
    model.subscribe(broken)
    unsubscribe = model.subscribe(good)
    item = MessageItem(role="assistant", text="hi")
    with caplog.at_level(logging.ERROR):
        assert model.append(item) == 0  # the row is added although a listener raised
    model.changed(item)
    model.reset([])
    assert good.seen == [("inserted", 0), ("changed", 0), ("reset", -1)]
    assert broken.seen == [("changed", 0), ("reset", -1)] and "chat model insert listener failed" in caplog.text
    unsubscribe()
    model.unsubscribe(broken)
    model.append(item)
    assert len(good.seen) == 3 and len(broken.seen) == 2


def test_a_broken_sidebar_listener_is_skipped(tmp_path: Path) -> None:
    store = GraphStore.open(tmp_path / "cks.sqlite3")
    try:
        presenter = SessionsPresenter(store)
        heard: list[int] = []
        presenter.subscribe(_boom)
        presenter.subscribe(lambda: heard.append(len(presenter.sessions)))
        store.create_session("Research")
        presenter.refresh()
        assert heard == [1]
    finally:
        store.close()
