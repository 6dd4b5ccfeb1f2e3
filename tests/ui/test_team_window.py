"""The window on a team database (PostgreSQL): its server going away and coming back,
private/shared sessions, another member's writes arriving live. A real server (tests/pgcluster.py),
the fake LLM server speaking the real wire protocol, a real second process where it says so."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

import pytest
from PySide6.QtCore import Qt

from cks_desktop.paths import resolve
from cks_desktop.settings import Settings
from cks_desktop.storage_choice import PgSettings
from tests import pgcluster
from tests.pgfixtures import pg_cluster, pg_url  # noqa: F401

pytestmark = pytest.mark.skipif(pgcluster.missing_reason() is not None,
                                reason=pgcluster.missing_reason() or "")


@pytest.fixture
def own_cluster() -> Iterator[pgcluster.Cluster]:
    """A server of this test's own: the test pauses and resumes it."""
    import psycopg

    cluster = pgcluster.start_cluster()
    try:
        with psycopg.connect(cluster.dsn(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE team")
        yield cluster
    finally:
        cluster.stop()


def _choose_team(home: Path, url: str) -> None:
    from cks_desktop.storage_choice import choose

    settings = Settings.load(resolve(home).ensure().settings_file)
    choose(settings, PgSettings.from_url(url))
    settings.save()


class _Hooked:
    """Records what reaches ``sys.excepthook`` (where ui/crash.py's reporter sits)."""

    def __init__(self) -> None:
        self.seen: list[BaseException] = []
        self._old = sys.excepthook

    def __enter__(self) -> "_Hooked":
        sys.excepthook = self._hook
        return self

    def _hook(self, kind: type[BaseException], exc: BaseException, tb: TracebackType | None) -> None:
        self.seen.append(exc)

    def __exit__(self, *_exc: object) -> None:
        sys.excepthook = self._old


@pytest.mark.slow
@pytest.mark.asyncio
async def test_an_unreachable_team_database_stops_the_turn_gives_the_text_back_and_recovers(
        qtbot, home: Path, own_cluster: pgcluster.Cluster) -> None:
    """The server goes away: sending says so in one sentence, the model is never asked, the typed
    text is back in the composer; New session, rename and delete say the sentence (no uncaught
    exception). The server comes back: the next New session works and the feed delivers another
    member's write again."""
    from cks_desktop.graph.pg.store import PgGraphStore
    from tests.fakes.providers import make_fake, provider_for
    from tests.ui.conftest import open_window
    from tests.ui.helpers import wait

    _choose_team(home, own_cluster.dsn("team"))
    with make_fake("ollama") as fake, _Hooked() as hooked:
        def factory(_name: str, _settings: object, _secrets: object) -> object:
            return provider_for(fake, model="llama-test")

        async with open_window(home, factory=factory, provider="ollama") as window:
            assert window.services.store.backend == "postgresql"
            sidebar = window.sidebar
            first = sidebar.create_session()
            assert first
            qtbot.keyClick(sidebar.list, Qt.Key.Key_Escape)  # leave the in-place title editor
            panel = window.chat_panel
            asked_before = len(fake.requests)
            own_cluster.pause()  # the server goes away

            qtbot.keyClicks(panel.composer.input, "Who is Ann?")
            qtbot.mouseClick(panel.composer.send_button, Qt.MouseButton.LeftButton)
            controller = panel.controller
            assert controller is not None and controller.task is not None
            await wait(controller.task)
            qtbot.waitUntil(lambda: panel.composer.input.toPlainText() == "Who is Ann?", timeout=5000)
            hint = panel.composer.model_hint.text()
            assert "cannot be reached" in hint and "\n" not in hint, hint
            assert len(fake.requests) == asked_before  # the model was never asked
            rows = [getattr(i, "text", "") for i in panel.model.items]
            assert "Who is Ann?" not in rows, rows  # not shown as sent: it is back in the composer
            assert not any("Traceback" in r or "internal error" in r for r in rows), rows

            assert sidebar.create_session() == ""
            assert sidebar.last_problem.startswith("The session could not be created: The database server ")
            assert "cannot be reached" in window.statusBar().currentMessage()
            sidebar.last_problem = ""
            item = sidebar.list.currentItem()
            assert item is not None
            item.setText("Renamed while down")  # what the in-place editor does on Enter
            assert sidebar.last_problem.startswith("The session could not be renamed:")
            assert sidebar.list.currentItem().text() != "Renamed while down"  # the old title stays
            sidebar.last_problem = ""
            assert await wait(sidebar.delete_session(first)) is False  # says so before asking
            assert sidebar.last_problem.startswith("The session could not be deleted:")
            assert sidebar.presenter.get(first) is not None

            own_cluster.resume()  # the server comes back
            created: list[str] = []

            def works() -> bool:
                if not created:
                    sid = sidebar.create_session()
                    if sid:
                        created.append(sid)
                return bool(created)

            qtbot.waitUntil(works, timeout=20000)
            qtbot.keyClick(sidebar.list, Qt.Key.Key_Escape)
            other = PgGraphStore.connect(own_cluster.dsn("team"), migrate=False)
            try:
                theirs = other.create_session("From another member")
            finally:
                other.close()
            qtbot.waitUntil(lambda: sidebar.presenter.get(theirs.id) is not None, timeout=15000)
        assert not hooked.seen, hooked.seen


@pytest.mark.asyncio
async def test_the_session_menu_makes_a_session_private_or_shared_on_a_team_database(
        qtbot, home: Path, pg_url: str) -> None:
    from cks_desktop.ui.sessions.sidebar import ID_ROLE
    from tests.ui.conftest import open_window
    from tests.ui.helpers import wait

    _choose_team(home, pg_url)
    async with open_window(home) as window:
        store = window.services.store
        badge = window.status.database_button  # the window says it works on the team database
        assert badge.isVisibleTo(window) and badge.text().startswith("Team database · ")
        assert "postgresql://" in badge.accessibleName() and "password" not in badge.toolTip().lower()
        sidebar = window.sidebar
        sid = sidebar.create_session()
        qtbot.keyClick(sidebar.list, Qt.Key.Key_Escape)
        item = next(sidebar.list.item(r) for r in range(sidebar.list.count())
                    if sidebar.list.item(r).data(ID_ROLE) == sid)

        def actions() -> dict[str, object]:
            menu = sidebar.build_menu(item)
            return {a.objectName(): a for a in menu.actions() if a.objectName().startswith("session")}

        shown = actions()
        assert set(shown) == {"sessionPrivate", "sessionShared"}
        assert shown["sessionShared"].isChecked() and not shown["sessionPrivate"].isChecked()  # type: ignore[attr-defined]
        assert all(a.toolTip() and not a.icon().isNull() for a in shown.values())  # type: ignore[attr-defined]
        assert await wait(sidebar.set_shared(sid, False)) is True
        assert store.session_access(sid)[1] is False
        assert "private to you" in sidebar.last_problem
        assert actions()["sessionPrivate"].isChecked()  # type: ignore[attr-defined]
        actions()["sessionShared"].trigger()  # type: ignore[attr-defined]
        running = [t for t in sidebar.tasks.pending if t.get_name() == "session-access"]
        assert running
        await wait(asyncio.gather(*running))
        assert store.session_access(sid)[1] is True


@pytest.mark.asyncio
async def test_the_embedded_file_has_no_private_or_shared_sessions(qtbot, home: Path) -> None:
    from tests.ui.conftest import open_window

    async with open_window(home) as window:
        assert not window.status.database_button.isVisibleTo(window)  # no team badge on the file
        sidebar = window.sidebar
        sidebar.create_session()
        qtbot.keyClick(sidebar.list, Qt.Key.Key_Escape)
        menu = sidebar.build_menu(sidebar.list.currentItem())
        assert not [a for a in menu.actions() if a.objectName() in ("sessionPrivate", "sessionShared")]
        assert any(a.text() == "Delete…" for a in menu.actions())
