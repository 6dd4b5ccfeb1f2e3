"""`mcp add` for a pre-registered OAuth client and a client ID metadata document, and `--keyring-file`
on a machine without an OS keychain (this test machine has none): real CLI runs, the real
OAuth-protected server of ``servers/oauth_server.py``, secrets typed on stdin."""

from __future__ import annotations

import asyncio
import io
import json
import os
import stat
import sys

import pytest

from cks_desktop import cli
from cks_desktop.secrets import secure_keyring_available
from tests.mcp.test_http_server import free_port
from tests.mcp.test_oauth import _TerminalBrowser, data_files_text, oauth_server

pytestmark = pytest.mark.skipif(secure_keyring_available(), reason="needs a machine without an OS keychain")


@pytest.mark.asyncio
async def test_a_pre_registered_client_from_the_cli_signs_in_with_a_keyring_file(tmp_path, monkeypatch,
                                                                                capsys) -> None:
    home, keys = tmp_path / "home", tmp_path / "ci" / "keys.json"
    port = free_port()
    redirect = f"http://127.0.0.1:{port}/callback"

    def mcp(*argv: str, stdin: str = "") -> int:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        return cli.main(["--data-dir", str(home), "mcp", *argv])

    async with oauth_server(tmp_path, OAUTH_PRE_CLIENT=f"desk-1:pre-secret-7731:{redirect}") as url:
        add = ("add", "pre", "--url", url, "--approval", "auto", "--oauth-client-id", "desk-1",
               "--oauth-client-secret", "--oauth-callback-port", str(port))
        # No keychain and no file named: refused in one sentence that names the way out; nothing written.
        assert await asyncio.to_thread(mcp, *add, stdin="pre-secret-7731\n") == 2
        err = capsys.readouterr().err
        assert "--keyring-file PATH" in err and "Traceback" not in err
        assert "pre-secret-7731" not in data_files_text(home)
        assert await asyncio.to_thread(mcp, *add, "--keyring-file", str(keys), stdin="pre-secret-7731\n") == 0
        err = capsys.readouterr().err
        assert err.count("warning:") == 1 and str(keys) in err
        entry = json.loads((home / "config" / "settings.json").read_text())["mcp_servers"]["pre"] \
            if (home / "config" / "settings.json").exists() else None
        settings_text = data_files_text(home)
        assert "pre-secret-7731" not in settings_text and "desk-1" in settings_text, entry
        assert stat.S_IMODE(keys.stat().st_mode) == 0o600

        assert await asyncio.to_thread(mcp, "login", "pre", "--no-browser", "--timeout", "20") == 1
        assert "--keyring-file" in capsys.readouterr().err  # headless without the file: says how
        terminal = _TerminalBrowser()
        monkeypatch.setattr(sys, "stdout", terminal)
        assert await asyncio.to_thread(mcp, "login", "pre", "--keyring-file", str(keys), "--no-browser",
                                       "--timeout", "20") == 0
        for t in terminal.threads:
            t.join(10)
        assert "client_id=desk-1" in terminal.getvalue() and "Signed in to 'pre'" in terminal.getvalue()
        assert await asyncio.to_thread(mcp, "call", "pre", "echo", "--args", '{"text": "from ci"}',
                                       "--keyring-file", str(keys)) == 0
        assert "from ci" in terminal.getvalue().splitlines()
        stored = json.loads(keys.read_text())["cks-desktop"]
        assert {"mcp/pre/oauth/clientSecret", "mcp/pre/oauth/tokens"} <= set(stored)
        assert "mcp/pre/oauth/client" not in stored  # a pre-registered client is never re-registered


def test_a_client_metadata_url_from_the_cli_lands_in_the_settings(tmp_path, capsys) -> None:
    home = tmp_path / "home"
    argv = ["--data-dir", str(home), "mcp", "add", "cimd", "--url", "https://mcp.example/mcp",
            "--oauth-client-metadata-url", "https://app.example/client.json", "--disabled"]
    assert cli.main(argv) == 0
    text = data_files_text(home)
    assert '"clientMetadataUrl": "https://app.example/client.json"' in text
    bad = ["--data-dir", str(home), "mcp", "add", "cimd2", "--url", "https://mcp.example/mcp",
           "--oauth-client-metadata-url", "http://app.example/client.json"]
    assert cli.main(bad) == 2
    assert "clientMetadataUrl" in capsys.readouterr().err and "cimd2" not in data_files_text(home)


def test_a_keyring_file_others_may_read_is_refused(tmp_path, capsys) -> None:
    keys = tmp_path / "keys.json"
    keys.write_text("{}")
    os.chmod(keys, 0o644)
    argv = ["--data-dir", str(tmp_path / "home"), "mcp", "logout", "x", "--keyring-file", str(keys)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "chmod 600" in err and "Traceback" not in err
