"""Test set-up shared by every suite.

Offscreen Qt, a qasync loop for async tests (pytest-asyncio's loop-factory
hook, STACK.md R8), an in-memory keyring with priority -1 (so it never wins
auto-discovery), and a fresh data directory per test.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

# Offscreen Qt on a desktop-sized screen (its default is 800×800): the window fits itself into the
# screen's available area, so a smaller screen would shrink every window the tests size.
if os.environ.get("QT_QPA_PLATFORM", "offscreen") == "offscreen":
    os.environ["QT_QPA_PLATFORM"] = f"offscreen:configfile={Path(__file__).with_name('offscreen-screen.json')}"
os.environ.pop("CKS_DESKTOP_HOME", None)
# The processes the tests start (the CLI, the window, MCP servers of our own) read cached bytecode,
# as an installed app does. With PYTHONDONTWRITEBYTECODE set (some shells and CI set it) each of
# them compiled every module it imported again: about 0.1 s per CLI start, 0.4 s per window.
# The cache lives outside the tree, so the checkout stays clean.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
os.environ.setdefault("PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / f"cks-tests-pycache-{os.getuid()}"))
for _var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
    os.environ.pop(_var, None)

from collections.abc import Iterator  # noqa: E402

import keyring  # noqa: E402
import pytest  # noqa: E402
from keyring.backend import KeyringBackend  # noqa: E402


class MemoryKeyring(KeyringBackend):
    """A keychain that lives in a dict. priority -1: never picked by discovery."""

    priority = -1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self.store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self.store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self.store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        from keyring.errors import PasswordDeleteError

        if (service, username) not in self.store:
            raise PasswordDeleteError(username)
        del self.store[(service, username)]


def _qapp():
    from PySide6.QtWidgets import QApplication

    app = QApplication.instance() or QApplication([])
    app.setQuitOnLastWindowClosed(False)
    return app


# Every qasync loop a test used stays referenced until the session ends. A closed loop
# still owns Qt timers (qasync leaves a cancelled call_later's timer registered until it
# fires, e.g. an HTTP client's read timeout); if the garbage collector happens to run in
# another thread (a fake server's, an executor's) and frees the loop there, Qt cannot
# unregister those timers ("QObject::~QObject: Timers cannot be stopped from another
# thread") and the next one that fires crashes the process. Kept alive, the stopped
# loop's timers just fire once more in the main thread and are killed.
_LOOPS: list = []


def _new_qasync_loop():
    from cks_desktop.ui.event_loop import AppEventLoop

    loop = AppEventLoop(_qapp())
    _LOOPS.append(loop)
    return loop


def pytest_asyncio_loop_factories(config, item):  # pytest-asyncio 1.5 hook
    return {"qasync": _new_qasync_loop}


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    previous = keyring.get_keyring()
    kr = MemoryKeyring()
    keyring.set_keyring(kr)
    try:
        yield kr
    finally:
        keyring.set_keyring(previous)


@pytest.fixture
def secret_store(memory_keyring: MemoryKeyring):
    from cks_desktop.secrets import SecretStore

    return SecretStore(secure=True)


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "cks-home"
    home.mkdir()
    monkeypatch.setenv("CKS_DESKTOP_HOME", str(home))
    return home
