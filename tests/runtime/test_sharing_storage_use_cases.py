"""Sharing and storage as use cases: which sessions are served, the token, what `mcp serve` offers,
the storage choice; a refusal is one sentence and the same from the CLI."""

from __future__ import annotations

import json

import pytest

from cks_desktop.graph.store import GraphStore
from cks_desktop.runtime.cases import UseCases
from cks_desktop.runtime.sharing import NO_KEYCHAIN, NoKeychain, SharingRefused
from cks_desktop.runtime.storage import PgSettings, StorageRefused, checked_address
from cks_desktop.secrets import SecretStore
from cks_desktop.settings import Settings
from tests.mcp.serve_helpers import cli


def cases_on(home, secrets=None) -> UseCases:
    home.mkdir(exist_ok=True)
    return UseCases(GraphStore.open(home / "cks.sqlite3"), Settings.load(home / "settings.json"), secrets)


def test_share_unshare_list_and_the_plan_of_mcp_serve(tmp_path) -> None:
    cases = cases_on(tmp_path / "home")
    try:
        sharing = cases.sharing
        a = cases.store.create_session("Alpha").id
        b = cases.store.create_session("Beta").id
        made = sharing.plan(None)  # nothing shared: a session of its own for this launch
        assert made.pinned not in (a, b) and "no session is shared" in made.what
        assert sharing.share(a).changed and not sharing.share(a).changed
        assert sharing.share(b).title == "Beta"
        assert [s.title for s in sharing.shared()] == ["Alpha", "Beta"]
        assert sharing.plan(None).pinned is None and sharing.plan(None).what == "2 shared sessions"
        assert sharing.plan(a).pinned == a
        cases.store.delete_session(b)
        assert [s.id for s in sharing.shared()] == [a]  # a deleted session is not listed
        assert sharing.unshare(b).changed  # and can still be taken back
        # saved: another process reads the same choice
        assert json.loads((tmp_path / "home" / "settings.json").read_text())["mcp_serve"]["shared_sessions"] == [a]
        sharing.set_approval("app")
        assert cases_on(tmp_path / "home").sharing.approval() == "app"
    finally:
        cases.store.close()


def test_an_unknown_session_is_the_same_sentence_from_the_use_case_and_the_cli(tmp_path) -> None:
    home = tmp_path / "home"
    cases = cases_on(home)
    try:
        with pytest.raises(SharingRefused) as refused:
            cases.sharing.share("no-such-session")
        with pytest.raises(SharingRefused) as pinned:
            cases.sharing.plan("no-such-session")
    finally:
        cases.store.close()
    sentence = str(refused.value)
    assert sentence and "\n" not in sentence and str(pinned.value) == sentence
    assert not (home / "settings.json").exists()  # nothing written
    run = cli(home, "sessions", "share", "no-such-session")
    assert run.returncode != 0 and sentence in run.stderr and "Traceback" not in run.stderr
    run = cli(home, "mcp", "serve", "--session", "no-such-session")
    assert run.returncode != 0 and sentence in run.stderr and "Traceback" not in run.stderr


def test_a_settings_file_that_cannot_be_written_is_one_sentence_and_the_choice_stays(tmp_path) -> None:
    home = tmp_path / "home"
    cases = cases_on(home)
    try:
        sid = cases.store.create_session("Alpha").id
        cases.settings.lock_path.mkdir()  # the settings file's lock cannot be taken: no save can happen
        with pytest.raises(SharingRefused) as refused:
            cases.sharing.share(sid)
        assert str(refused.value) and "\n" not in str(refused.value)
        assert cases.sharing.shared_ids() == []  # what the file says, not what failed to be written
        with pytest.raises(SharingRefused):
            cases.sharing.set_approval("app")
        assert cases.sharing.approval() == "host"
    finally:
        cases.store.close()


def test_a_token_is_kept_in_the_keychain_and_refused_without_one(tmp_path, secret_store) -> None:
    cases = cases_on(tmp_path / "home", secret_store)
    try:
        first = cases.sharing.kept_token()
        assert first.new and first.kept
        again = cases.sharing.token()
        assert again.value == first.value and not again.new
        assert cases.sharing.kept_token(rotate=True).value != first.value
    finally:
        cases.store.close()
    none = cases_on(tmp_path / "other", SecretStore(secure=False))
    try:
        with pytest.raises(NoKeychain, match="No secure keychain"):
            none.sharing.kept_token()
        assert not none.sharing.token().kept  # `mcp serve --http` still gets one, for this run
    finally:
        none.store.close()
    assert str(NoKeychain(NO_KEYCHAIN)) == NO_KEYCHAIN


def test_the_storage_choice_is_checked_kept_and_its_password_goes_to_the_keychain(tmp_path, secret_store) -> None:
    cases = cases_on(tmp_path / "home", secret_store)
    try:
        storage = cases.storage
        assert storage.chosen() is None
        with pytest.raises(StorageRefused, match="host name"):
            storage.choose(PgSettings(host=""))
        assert storage.chosen() is None  # nothing recorded
        pg = PgSettings(host="db.example", user="ann")
        storage.choose(pg, "team-secret")
        assert storage.chosen() == pg and storage.password(pg.url()) == "team-secret"
        assert storage.password(pg.url(), "typed") == "typed"
        storage.forget_password(pg.url())
        assert storage.password(pg.url()) is None
        storage.choose(None)
        assert storage.chosen() is None
        with pytest.raises(StorageRefused, match="nothing was saved"):
            storage.save_password(pg.url(), "")
    finally:
        cases.store.close()


def test_copying_a_session_between_files_through_the_use_case(tmp_path) -> None:
    cases = cases_on(tmp_path / "home")
    try:
        sid = cases.store.create_session("Alpha").id
        cases.store.apply(sid, [{"op": "add_object", "type": "Person", "name": "Ada"}], "test")
        target = cases.storage.open_file(tmp_path / "other.sqlite3")
        try:
            copy = cases.storage.copy(cases.store, sid, target)
            assert copy.title == "Alpha" and target.counts(copy.id)["objects"] == 1
            with pytest.raises(StorageRefused):
                cases.storage.copy(cases.store, "no-such-session", target)
        finally:
            target.close()
    finally:
        cases.store.close()


def test_a_password_in_the_address_is_the_same_sentence_from_the_use_case_and_the_cli(tmp_path) -> None:
    address = "postgresql://ann:pw@localhost/cks"
    with pytest.raises(StorageRefused) as refused:
        checked_address(address)
    sentence = str(refused.value)
    assert "password" in sentence and "pw@" not in sentence
    home = tmp_path / "home"
    home.mkdir()
    for argv in (("team", "check", address), ("--database", address, "sessions", "list")):
        run = cli(home, *argv)
        assert run.returncode != 0 and sentence in run.stderr and "pw@" not in run.stderr + run.stdout, argv
