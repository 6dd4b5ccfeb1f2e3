"""Settings → Storage against a real PostgreSQL server: validation as you type, Test connection
on a worker thread, the password to the keychain only, Save choosing the team database for
the next start, and Copy of a session from the file to the team database."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from PySide6.QtCore import Qt

from cks_desktop.graph.pg.store import PgGraphStore
from cks_desktop.paths import resolve
from cks_desktop.runtime import AppServices
from cks_desktop.secrets import SecretStore
from cks_desktop.settings import Settings
from cks_desktop.storage_choice import PgSettings, chosen, secret_ref
from cks_desktop.ui.settings.dialog import SettingsDialog
from cks_desktop.ui.tasks import TaskTracker
from tests import pgcluster
from tests.pgfixtures import pg_cluster, pg_url  # noqa: F401
from tests.ui.helpers import signal_future


@pytest.fixture
def services(home: Path):
    services = AppServices.open(resolve(home), secrets=SecretStore(secure=False))
    yield services
    services.store.close()


def _fill(page, pg: PgSettings, password: str = "") -> None:  # type: ignore[no-untyped-def]
    page.pg_choice.setChecked(True)
    page.host.setText(pg.host)
    page.port.setValue(pg.port)
    page.database.setText(pg.database)
    page.user.setText(pg.user)
    page.password.setText(password)


@pytest.mark.asyncio
async def test_the_storage_page_tests_saves_and_copies(qtbot, services, pg_url: str) -> None:
    session = services.store.create_session("Local notes")
    services.store.apply(session.id, [{"op": "add_object", "type": "T", "name": "kept"}], "t")
    dialog = SettingsDialog(services, TaskTracker())
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.show_page("storage")
    page = dialog.storage_page
    assert page.file_choice.isChecked() and not page.connection_box.isEnabled()
    page.pg_choice.setChecked(True)
    page.user.clear()
    assert not dialog.save_button.isEnabled() and "user name" in dialog.errors_label.text()
    pg = PgSettings.from_url(pg_url)
    _fill(page, pg, password="team-secret")
    assert dialog.save_button.isEnabled()

    tested = signal_future(page.tested)
    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    (text,) = await asyncio.wait_for(tested, 30)
    assert text.endswith("works.")

    copied = signal_future(page.copied)
    qtbot.mouseClick(page.copy_button, Qt.MouseButton.LeftButton)
    (text,) = await asyncio.wait_for(copied, 60)
    assert text.startswith("Copied “Local notes” to the team database")

    qtbot.mouseClick(dialog.save_button, Qt.MouseButton.LeftButton)
    saved = Settings.load(services.settings.path)
    assert chosen(saved) == pg
    assert "team-secret" not in services.settings.path.read_text()
    assert services.secrets.get(secret_ref(pg.url())) == "team-secret"
    with PgGraphStore.connect(pg.url()) as team:
        (copy,) = team.list_sessions()
        assert [o.name for o in team.all_objects(copy.id)] == ["kept"]
    # the next start opens the team database
    again = AppServices.open(services.paths, secrets=services.secrets)
    try:
        assert again.store.backend == "postgresql" and [s.title for s in again.store.list_sessions()] == ["Local notes"]
    finally:
        again.store.close()


@pytest.mark.asyncio
async def test_an_unreachable_server_is_one_sentence_and_the_window_stays_responsive(qtbot, services) -> None:
    dialog = SettingsDialog(services, TaskTracker())
    qtbot.addWidget(dialog)
    page = dialog.storage_page
    _fill(page, PgSettings(host="127.0.0.1", port=pgcluster.free_port(), database="team", user="ann"))
    tested = signal_future(page.tested)
    qtbot.mouseClick(page.test_button, Qt.MouseButton.LeftButton)
    ticks = 0
    while not tested.done():  # the loop keeps turning while the worker thread connects
        ticks += 1
        await asyncio.sleep(0.01)
    (text,) = tested.result()
    assert "cannot be reached" in text and ticks > 0
    assert page.host.text() == "127.0.0.1" and page.user.text() == "ann"  # what was typed is kept


@pytest.mark.slow
@pytest.mark.asyncio
async def test_the_window_says_the_team_database_is_unreachable_and_keeps_the_typed_text(qtbot, home) -> None:
    """The window runs on a team database (Settings → Storage chose it); the server goes away;
    sending a message then says so in one sentence in the chat, and the typed text stays there."""
    import psycopg

    from cks_desktop.storage_choice import choose
    from tests.fakes.providers import make_fake, provider_for
    from tests.ui.conftest import open_window
    from tests.ui.helpers import wait

    cluster = pgcluster.start_cluster()  # its own server: this test stops it
    try:
        with psycopg.connect(cluster.dsn(), autocommit=True) as conn:
            conn.execute("CREATE DATABASE team")
        settings = Settings.load(resolve(home).ensure().settings_file)
        choose(settings, PgSettings.from_url(cluster.dsn("team")))
        settings.save()
        with make_fake("ollama") as fake:
            def factory(_name: str, _settings: object, _secrets: object) -> object:
                return provider_for(fake, model="llama-test")

            async with open_window(home, factory=factory, provider="ollama") as window:
                assert window.services.store.backend == "postgresql"
                window.sidebar.create_session()
                panel = window.chat_panel
                cluster.stop()  # the server goes away
                qtbot.keyClicks(panel.composer.input, "Who is Ann?")
                qtbot.mouseClick(panel.composer.send_button, Qt.MouseButton.LeftButton)
                controller = panel.controller
                assert controller is not None and controller.task is not None
                await wait(controller.task)
                rows = [getattr(i, "text", "") for i in panel.model.items]
                # what was typed goes back to the composer with the sentence (the turn stops
                # before the model: tests/ui/test_team_window.py has the whole story)
                qtbot.waitUntil(lambda: panel.composer.input.toPlainText() == "Who is Ann?", timeout=5000)
                assert panel.composer.model_hint.text().startswith("The database server ")
                assert "cannot be reached" in panel.composer.model_hint.text()
                assert not any("Traceback" in r or "internal error" in r for r in rows)
    finally:
        cluster.stop()
