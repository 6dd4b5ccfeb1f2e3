from __future__ import annotations

import json
from pathlib import Path

import pytest

from cks_desktop import ids, paths
from cks_desktop.secrets import NO_KEYCHAIN_NOTICE, SecretStore
from cks_desktop.settings import Settings


def test_ids_sort_by_creation_and_are_unique() -> None:
    made = [ids.new_id("o_") for _ in range(2000)]
    assert made == sorted(made)
    assert len(set(made)) == len(made)
    assert all(len(i) == 28 for i in made)


def test_data_dir_overrides_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CKS_DESKTOP_HOME", str(tmp_path / "env"))
    assert paths.resolve().data_dir == tmp_path / "env"
    explicit = paths.resolve(tmp_path / "flag")
    assert explicit.data_dir == explicit.config_dir == tmp_path / "flag"
    assert explicit.log_dir == tmp_path / "flag" / "logs"
    monkeypatch.delenv("CKS_DESKTOP_HOME")
    assert "cks-desktop" in str(paths.resolve().data_dir)


def test_settings_keep_unknown_keys_and_write_atomically(tmp_path: Path) -> None:
    f = tmp_path / "settings.json"
    f.write_text(json.dumps({"future": {"x": 1}, "agent": {"max_iterations": 5, "newer": True}}))
    s = Settings.load(f)
    assert s.problem is None and s.max_iterations == 5
    s.max_iterations = 12
    s.save()
    data = json.loads(f.read_text())
    assert data["future"] == {"x": 1} and data["agent"]["newer"] is True and data["agent"]["max_iterations"] == 12
    # no temp files left (the lock file stays: deleting it would let two writers lock different files)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json", "settings.json.lock"]


@pytest.mark.parametrize("raw", [b'{"agent": {"max_it', b"\xff\xfe\x00garbage", b"[1, 2]"])
def test_unreadable_settings_are_reported_and_kept_aside(tmp_path: Path, raw: bytes) -> None:
    f = tmp_path / "settings.json"
    f.write_bytes(raw)
    s = Settings.load(f)
    assert s.problem and "could not be read" in s.problem
    assert s.max_iterations == 8
    s.save()
    aside = [p for p in tmp_path.iterdir() if p.name.startswith("settings.json.broken-")]
    assert len(aside) == 1 and aside[0].read_bytes() == raw


def test_wrong_types_are_reset_with_a_message(tmp_path: Path) -> None:
    f = tmp_path / "settings.json"
    f.write_text(json.dumps({"agent": {"max_iterations": "lots", "tool_policies": []}, "providers": 3}))
    s = Settings.load(f)
    assert s.max_iterations == 8 and s.tool_policies == {}
    assert "max_iterations" in (s.problem or "") and "providers" in (s.problem or "")


def test_secrets_go_to_the_keychain(memory_keyring) -> None:
    store = SecretStore(secure=True)
    store.set("provider:anthropic", "sk-test-123")
    assert memory_keyring.store[("cks-desktop", "provider:anthropic")] == "sk-test-123"
    assert store.get("provider:anthropic") == "sk-test-123"
    store.delete("provider:anthropic")
    store.delete("provider:anthropic")  # deleting twice is fine
    assert store.get("provider:anthropic") is None
    assert store.notice is None


def test_without_a_keychain_secrets_live_in_memory_only(memory_keyring) -> None:
    store = SecretStore(secure=False)
    store.set("provider:openai", "sk-mem")
    assert store.get("provider:openai") == "sk-mem"
    assert memory_keyring.store == {}
    assert store.notice == NO_KEYCHAIN_NOTICE


def test_headless_default_keyring_is_not_secure() -> None:
    from cks_desktop.secrets import secure_keyring_available

    # No D-Bus session in the test environment: the fail backend must not count as secure.
    import os

    if os.environ.get("DBUS_SESSION_BUS_ADDRESS"):
        pytest.skip("a D-Bus session is present")
    assert secure_keyring_available() is False
