"""Secrets outside env and header names.

Through the real CLI (``cli.main``; the in-memory keyring counts as a keychain)
and a real SDK server subprocess: secrets in arguments (``--api-key sk-…``,
``--token=…``), in a URL (``?api_key=``, ``user:pass@``) and in env variables
whose names the old rule missed (DATABASE_URL, SLACK_WEBHOOK_URL, MY_PASS,
PRIVATE_PEM, DSN) end up in the keychain, never in settings.json, the listings
or the server log; ``--secret-env K`` reads its value from stdin, not argv.
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from cks_desktop import cli
from cks_desktop.secret_shapes import name_looks_secret, redact_text, value_looks_secret
from cks_desktop.secrets import SERVICE

ROGUE = Path(__file__).resolve().parents[1] / "reliability" / "servers" / "rogue_server.py"
SECRETS = {
    "DATABASE_URL": "postgres://app:db-pass-9911@db.example/app",
    "SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T000/B000/XXXXwebhook",
    "MY_PASS": "hunter2-pass-5512",
    "PRIVATE_PEM": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0B\n-----END PRIVATE KEY-----",
    "DSN": "https://public-dsn-2231@o1.ingest.example/5",
}
ARG_KEY = "sk-proj-argkey0000000000000001"
ARG_TOKEN = "arg-token-value-6634"
SHAPED = "ghp_" + "A1b2" * 9


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, memory_keyring) -> Path:
    monkeypatch.delenv("SHELL", raising=False)
    monkeypatch.setenv("CKS_DESKTOP_TEST_KEYRING", "tests.conftest")
    h = tmp_path / "home"
    h.mkdir()
    return h


def mcp(home: Path, *argv: str) -> int:
    return cli.main(["--data-dir", str(home), "mcp", *argv])


def files_text(home: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for p in home.rglob("*") if p.is_file())


def values() -> list[str]:
    return [*SECRETS.values(), ARG_KEY, ARG_TOKEN, SHAPED, "db-pass-9911", "url-key-8812", "url-pw-3321"]


def test_names_and_shapes() -> None:
    for name in ("DATABASE_URL", "SLACK_WEBHOOK_URL", "MY_PASS", "PRIVATE_PEM", "DSN", "--api-key", "token",
                 "REDIS_URL", "dbPassword"):
        assert name_looks_secret(name), name
    for name in ("COMPASS", "LOG_LEVEL", "BASE_URL", "GITHUB_HOST", "PATH", "NODE_ENV"):
        assert not name_looks_secret(name), name
    for value in (ARG_KEY, SHAPED, "xoxb-1234567890-abcdefghij", SECRETS["PRIVATE_PEM"], SECRETS["DATABASE_URL"],
                  "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n",
                  "https://h.example/mcp?api_key=abc", "Q8f3kLm2Zp9XrT4vBn7YwC1sDe6HgJ0u"):
        assert value_looks_secret(value), value
    for value in ("@modelcontextprotocol/server-filesystem", "/home/me/notes", "debug", "https://h.example/mcp?x=1",
                  "12345678-1234-1234-1234-123456789abc"):
        assert not value_looks_secret(value), value
    assert redact_text(f"x --api-key {ARG_KEY} https://u:pw-123@h/?token=abc&b=1") == \
        "x --api-key [redacted] https://u:[redacted]@h/?token=[redacted]&b=1"


def test_secrets_in_args_urls_and_odd_env_names_stay_in_the_keychain(home, memory_keyring, capsys,
                                                                            tmp_path) -> None:
    env_args = [f"--env={k}={v}" for k, v in SECRETS.items()]
    assert mcp(home, "add", "rogue", *env_args, "--env", "MODE=plain",
               "--env", f"WHATEVER={SHAPED}", "--approval", "auto",
               "--", sys.executable, str(ROGUE), "--api-key", ARG_KEY, f"--token={ARG_TOKEN}", "--verbose") == 0
    assert mcp(home, "add", "web", "--url", "https://me:url-pw-3321@h.example/mcp?api_key=url-key-8812&team=7",
               "--disabled") == 0
    out = capsys.readouterr().out
    assert "kept in the keychain" in out and not [v for v in values() if v in out]
    saved = json.loads((home / "settings.json").read_text())["mcpServers"]
    assert saved["rogue"]["env"]["MODE"] == "plain"
    assert saved["rogue"]["args"][-4:] == ["--api-key", "keychain:mcp/rogue/args/2",
                                          "--token=keychain:mcp/rogue/args/3", "--verbose"]
    assert saved["web"]["url"] == "https://h.example/mcp?api_key=keychain:mcp/web/url/api_key&team=7"
    assert saved["web"]["headers"]["Authorization"] == "keychain:mcp/web/headers/Authorization"
    assert memory_keyring.store[(SERVICE, "mcp/rogue/args/2")] == ARG_KEY
    assert memory_keyring.store[(SERVICE, "mcp/rogue/env/DSN")] == SECRETS["DSN"]
    from cks_desktop.mcp.config import parse_server, resolve_args, resolve_url
    from cks_desktop.secrets import SecretStore

    store = SecretStore(secure=True)
    assert resolve_args(parse_server("rogue", saved["rogue"]), store)[-4:] == [
        "--api-key", ARG_KEY, f"--token={ARG_TOKEN}", "--verbose"]  # what the spawned server is given
    assert resolve_url(parse_server("web", saved["web"]), store) == "https://h.example/mcp?api_key=url-key-8812&team=7"

    for argv in (["list", "--json", "--no-probe"], ["list", "--no-probe"], ["show", "rogue", "--json"],
                 ["show", "web"]):
        assert mcp(home, *argv) == 0
        shown = capsys.readouterr().out
        assert "[secret]" in shown and not [v for v in values() if v in shown], (argv, shown)

    # The server receives the real values (env and arguments), and its log holds none of them.
    assert mcp(home, "call", "rogue", "env", "--json") == 0
    server_env = json.loads(json.loads(capsys.readouterr().out)["content"])
    assert all(server_env[k] == v for k, v in SECRETS.items())
    log = "\n".join(p.read_text() for p in home.rglob("rogue*.log*"))
    assert "--api-key [secret] --token=[secret] --verbose" in log  # what was started, as the log shows it
    leaked = [v for v in values() if v in files_text(home)]
    assert not leaked, leaked


def test_secret_env_reads_the_value_from_stdin_not_argv(home, memory_keyring, monkeypatch, capsys) -> None:
    monkeypatch.setattr(sys, "stdin", io.StringIO("typed-secret-1\ntyped-secret-2\n"))
    argv = ["add", "s", "--secret-env", "ONE", "--secret-env", "TWO", "--", "npx", "pkg"]
    assert mcp(home, *argv) == 0
    assert memory_keyring.store[(SERVICE, "mcp/s/env/ONE")] == "typed-secret-1"
    assert memory_keyring.store[(SERVICE, "mcp/s/env/TWO")] == "typed-secret-2"
    assert "typed-secret" not in (home / "settings.json").read_text()
    captured = capsys.readouterr()
    assert "warning" not in captured.err

    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    assert mcp(home, "add", "t", "--secret-env", "ONE", "--", "npx", "pkg") == 2
    assert "No value was given for --secret-env ONE" in capsys.readouterr().err
    assert "t" not in json.loads((home / "settings.json").read_text())["mcpServers"]

    assert mcp(home, "add", "u", "--secret-env", "ONE=on-the-command-line", "--", "npx", "pkg") == 0
    assert "puts the value on the command line" in capsys.readouterr().err
    assert memory_keyring.store[(SERVICE, "mcp/u/env/ONE")] == "on-the-command-line"


def test_secrets_an_older_version_kept_in_clear_move_to_the_keychain(home, memory_keyring, capsys) -> None:
    """A settings file from before this rule (or a hand edit) holds secrets in clear: the next
    command that loads the servers moves them to the keychain, and the server's grant survives."""
    from cks_desktop.tools.scopes import server_identity

    old = {"command": sys.executable, "args": [str(ROGUE), "--api-key", ARG_KEY],
           "env": {"DATABASE_URL": SECRETS["DATABASE_URL"], "MODE": "plain"}}
    (home / "settings.json").write_text(json.dumps({
        "mcpServers": {"rogue": old},
        "agent": {"server_scopes": {"rogue": {"scopes": ["code.execute"], "identity": server_identity(old)}}}}))
    assert mcp(home, "list", "--no-probe") == 0
    captured = capsys.readouterr()
    assert "moved to the keychain" in captured.err and ARG_KEY not in captured.err + captured.out
    saved = json.loads((home / "settings.json").read_text())
    assert ARG_KEY not in json.dumps(saved) and SECRETS["DATABASE_URL"] not in json.dumps(saved)
    assert saved["mcpServers"]["rogue"]["env"]["MODE"] == "plain"
    assert memory_keyring.store[(SERVICE, "mcp/rogue/args/2")] == ARG_KEY
    assert memory_keyring.store[(SERVICE, "mcp/rogue/env/DATABASE_URL")] == SECRETS["DATABASE_URL"]
    grant = saved["agent"]["server_scopes"]["rogue"]
    assert grant["identity"] == server_identity(saved["mcpServers"]["rogue"]) and grant["scopes"] == ["code.execute"]
    assert mcp(home, "call", "rogue", "env", "--json") == 0  # the server still receives the real value
    server_env = json.loads(json.loads(capsys.readouterr().out)["content"])
    assert server_env["DATABASE_URL"] == SECRETS["DATABASE_URL"]


PATH_KEY = "sk-live-abc123def"
PATH_TOKEN = "Zx81kQ0pLm2Rt7Vb9Nc4Wd6Ye3Ua5Sg"


def test_a_secret_in_a_url_path_goes_to_the_keychain_and_is_never_shown(home, memory_keyring, capsys) -> None:
    from cks_desktop.mcp.config import parse_server, resolve_url, shown
    from cks_desktop.secret_shapes import redact_text
    from cks_desktop.secrets import SecretStore

    assert mcp(home, "add", "hosted", "--url", f"https://h.example/mcp/{PATH_KEY}/sse", "--disabled") == 0
    assert mcp(home, "add", "tokened", "--url", f"https://h.example/t/{PATH_TOKEN}/mcp?team=7", "--disabled") == 0
    assert mcp(home, "add", "plain", "--url", "https://h.example/api/v2/users/2024-01-05/mcp", "--disabled") == 0
    out = capsys.readouterr().out
    assert "kept in the keychain" in out and PATH_KEY not in out and PATH_TOKEN not in out
    saved = json.loads((home / "settings.json").read_text())["mcpServers"]
    assert saved["hosted"]["url"] == "https://h.example/mcp/keychain:mcp/hosted/url/path-2/sse"
    assert saved["tokened"]["url"] == "https://h.example/t/keychain:mcp/tokened/url/path-2/mcp?team=7"
    assert saved["plain"]["url"] == "https://h.example/api/v2/users/2024-01-05/mcp"  # ordinary paths stay
    store = SecretStore(secure=True)
    assert resolve_url(parse_server("hosted", saved["hosted"]), store) == f"https://h.example/mcp/{PATH_KEY}/sse"
    assert resolve_url(parse_server("tokened", saved["tokened"]), store) == \
        f"https://h.example/t/{PATH_TOKEN}/mcp?team=7"
    for argv in (["list", "--json", "--no-probe"], ["list", "--no-probe"], ["show", "hosted", "--json"],
                 ["show", "tokened"]):
        assert mcp(home, *argv) == 0
        listed = capsys.readouterr().out
        assert "[secret]" in listed and PATH_KEY not in listed and PATH_TOKEN not in listed, (argv, listed)
    assert PATH_KEY not in files_text(home) and PATH_TOKEN not in files_text(home)
    # a log line or an error that quotes the resolved URL keeps the path readable, the key out
    line = f"connecting to https://h.example/mcp/{PATH_KEY}/sse failed: 404 at https://h.example/api/v2/users"
    assert redact_text(line) == \
        "connecting to https://h.example/mcp/[redacted]/sse failed: 404 at https://h.example/api/v2/users"
    assert shown(f"https://h.example/t/{PATH_TOKEN}/mcp") == "https://h.example/t/[secret]/mcp"
