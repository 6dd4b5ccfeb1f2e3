"""`mcp serve` and the database file as use cases: composed and refused the same way the CLI and
the start-up dialog see them (a real HTTP server on loopback, a real SQLite file damaged on disk)."""

from __future__ import annotations

import socket
from pathlib import Path

import httpx
import pytest

from cks_desktop.graph.errors import StoreError
from cks_desktop.graph.store import GraphStore
from cks_desktop.paths import AppPaths
from cks_desktop.runtime.database_file import DatabaseFile
from cks_desktop.runtime.serving import ServeFailed, http_bind, open_serve
from cks_desktop.runtime.sharing import SharingRefused
from cks_desktop.secrets import SecretStore
from cks_desktop.settings import Settings


def home_of(tmp_path: Path) -> tuple[AppPaths, Settings, GraphStore]:
    home = tmp_path / "home"
    home.mkdir()
    paths = AppPaths(home, home, home / "logs")
    return paths, Settings.load(paths.settings_file), GraphStore.open(paths.database)


def test_an_address_without_a_token_must_be_loopback() -> None:
    assert http_bind("127.0.0.1:0", token=False) == ("127.0.0.1", 0)
    assert http_bind("0.0.0.0:8080", token=True) == ("0.0.0.0", 8080)
    with pytest.raises(SharingRefused, match="only on a loopback address"):
        http_bind("0.0.0.0:8080", token=False)
    with pytest.raises(SharingRefused, match="port"):
        http_bind("localhost:http", token=True)


def test_an_unknown_session_is_refused_before_anything_listens(tmp_path: Path) -> None:
    paths, settings, store = home_of(tmp_path)
    try:
        with pytest.raises(SharingRefused) as refused:
            open_serve(paths, settings, store, SecretStore(secure=False), "no-such-session", bind=None)
        assert not isinstance(refused.value, ServeFailed) and "\n" not in str(refused.value)
        assert not (paths.data_dir / "serving").exists()
    finally:
        store.close()


@pytest.mark.asyncio
async def test_a_run_serves_http_with_its_token_and_a_port_in_use_is_one_sentence(tmp_path: Path) -> None:
    paths, settings, store = home_of(tmp_path)
    sid = store.create_session("Served").id
    try:
        run = open_serve(paths, settings, store, SecretStore(secure=False), sid, bind=("127.0.0.1", 0))
        assert run.token is not None and not run.token.kept and sid in run.what
        url = await run.start_http()
        try:
            async with httpx.AsyncClient() as client:
                refused = await client.post(url, json={})
                assert refused.status_code == 401  # no token, no graph
        finally:
            run.request_stop()
            await run.serve_http_until_stopped()
            run.close()
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            busy = open_serve(paths, settings, store, SecretStore(secure=False), sid, bind=("127.0.0.1", port))
            with pytest.raises(ServeFailed) as failed:
                await busy.start_http()
            busy.close()
        assert str(port) in str(failed.value) and "\n" not in str(failed.value)
    finally:
        store.close()


def test_check_backup_restore_and_salvage_a_real_file(tmp_path: Path) -> None:
    paths, _, store = home_of(tmp_path)
    store.create_session("Kept")
    store.close()
    database = DatabaseFile(paths.database)
    checked = database.check()
    assert checked.ok and checked.sentence().endswith("passed its integrity check.")
    made = database.backup()
    assert [b.path for b in database.backups()] == [made.path]
    with GraphStore.open(paths.database) as store:
        store.create_session("After the backup")
    done = database.restore()
    assert "Restored the backup of" in database.restored_sentence(done)
    with GraphStore.open(paths.database) as store:
        assert [s.title for s in store.list_sessions()] == ["Kept"]
        salvaged = database.salvage(store)
    assert salvaged.folder.parent == paths.data_dir and salvaged.sentence().startswith("Exported 1 session to")
    with pytest.raises(StoreError, match="no database"):
        DatabaseFile(tmp_path / "none.sqlite3").check()
