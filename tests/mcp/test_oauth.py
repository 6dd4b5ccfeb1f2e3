"""OAuth sign-in against a real OAuth-protected streamable-HTTP server with its own authorization server.

The server (``servers/oauth_server.py``, the SDK's server-side auth pieces) runs as a
subprocess on 127.0.0.1. The browser is a tiny one: it GETs the authorization URL and
follows the redirects, which the test authorization server answers by approving at once
and sending the browser to our loopback callback. The keychain is the tests' memory keyring.
"""

from __future__ import annotations

import asyncio
import io
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import httpx2
import pytest

from cks_desktop import cli
from cks_desktop.mcp.connection import Status
from cks_desktop.mcp.manager import McpManager
from cks_desktop.secrets import SERVICE, SecretStore
from cks_desktop.tools.types import ToolCall
from tests.mcp.conftest import SERVERS
from tests.mcp.test_http_server import free_port, wait_for_port

OAUTH_SERVER = SERVERS / "oauth_server.py"


@asynccontextmanager
async def oauth_server(tmp_path: Path, **env: str) -> AsyncIterator[str]:
    """Run the OAuth-protected server; yield its MCP URL."""
    port = free_port()
    issued = tmp_path / "issued.txt"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, str(OAUTH_SERVER),
        env={"OAUTH_PORT": str(port), "OAUTH_ISSUED": str(issued), "PATH": "/usr/bin:/bin", **env},
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL)
    try:
        await wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        if proc.returncode is None:
            proc.terminate()
        await proc.wait()


def issued_tokens(tmp_path: Path) -> list[str]:
    path = tmp_path / "issued.txt"
    return [line.split(" ", 1)[1] for line in path.read_text().splitlines()] if path.exists() else []


class Browser:
    """Follows the authorization URL like a browser whose person approves at once."""

    def __init__(self) -> None:
        self.visits: list[str] = []
        self.final_status: int | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def __call__(self, url: str) -> None:
        self.visits.append(url)
        task = asyncio.get_running_loop().create_task(self._follow(url))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _follow(self, url: str) -> None:
        async with httpx2.AsyncClient(follow_redirects=True, timeout=10) as client:
            response = await client.get(url)
            self.final_status = response.status_code


def data_files_text(*roots: Path) -> str:
    return "\n".join(p.read_text(errors="replace") for root in roots if root.exists()
                     for p in root.rglob("*") if p.is_file())


def make_manager(settings, registry, tmp_path: Path) -> McpManager:
    manager = McpManager(settings, SecretStore(secure=True), registry, tmp_path / "logs")
    manager.sign_in_timeout = 20.0
    return manager


@pytest.mark.asyncio
async def test_sign_in_then_tools_work_and_a_restart_needs_no_new_sign_in(settings, registry, run, memory_keyring,
                                                                          tmp_path) -> None:
    async with oauth_server(tmp_path) as url:
        settings.mcp_servers["remote"] = {"url": url, "approval": "auto"}
        settings.save()
        manager = make_manager(settings, registry, tmp_path)
        await manager.start_all()
        conn = manager.connections["remote"]
        assert conn.status is Status.NEEDS_AUTH, conn.reason
        assert conn.reason.startswith("Sign in to 'remote'")
        out = await registry.invoke(ToolCall("c0", "mcp:remote:echo", {"text": "x"}), run)
        assert out.is_error  # the tool is not registered while the server needs a sign-in

        browser = Browser()
        assert await manager.sign_in("remote", browser), conn.reason
        assert len(browser.visits) == 1 and "code_challenge_method=S256" in browser.visits[0]
        assert "resource=" in browser.visits[0]
        out = await registry.invoke(ToolCall("c1", "mcp:remote:echo", {"text": "signed in"}), run)
        assert (out.content, out.is_error) == ("signed in", False)
        await manager.aclose()
        assert (SERVICE, "mcp/remote/oauth/tokens") in memory_keyring.store
        assert (SERVICE, "mcp/remote/oauth/client") in memory_keyring.store

        # A restart: a new store, a new manager, no browser. The keychain's tokens are used.
        manager = make_manager(settings, registry, tmp_path)
        await manager.start_all()
        assert manager.connections["remote"].status is Status.READY, manager.connections["remote"].reason
        out = await registry.invoke(ToolCall("c2", "mcp:remote:scopes", {}), run)
        assert "mcp" in out.content.split()
        await manager.aclose()

        tokens = issued_tokens(tmp_path)
        assert tokens
        leaked = [t for t in tokens if t in data_files_text(tmp_path / "config", tmp_path / "logs")]
        assert not leaked, leaked


@pytest.mark.asyncio
async def test_an_expired_token_is_refreshed_silently(settings, registry, run, memory_keyring, tmp_path) -> None:
    # 20 s tokens: inside the 30 s margin, so a restart finds the stored token expired at once.
    async with oauth_server(tmp_path, OAUTH_TTL="20") as url:
        settings.mcp_servers["remote"] = {"url": url, "approval": "auto"}
        manager = make_manager(settings, registry, tmp_path)
        assert await manager.sign_in("remote", Browser())
        await manager.aclose()
        first = memory_keyring.store[(SERVICE, "mcp/remote/oauth/tokens")]

        manager = make_manager(settings, registry, tmp_path)
        await manager.start_all()  # no browser: a refresh, or this would say "Sign in"
        assert manager.connections["remote"].status is Status.READY, manager.connections["remote"].reason
        out = await registry.invoke(ToolCall("c1", "mcp:remote:echo", {"text": "fresh"}), run)
        assert out.content == "fresh"
        await manager.aclose()
        assert any(line.startswith("refreshed ") for line in (tmp_path / "issued.txt").read_text().splitlines())
        assert memory_keyring.store[(SERVICE, "mcp/remote/oauth/tokens")] != first


@pytest.mark.asyncio
async def test_sign_out_removes_the_tokens_and_the_next_start_says_sign_in(settings, registry, memory_keyring,
                                                                            tmp_path) -> None:
    async with oauth_server(tmp_path) as url:
        settings.mcp_servers["remote"] = {"url": url, "approval": "auto"}
        manager = make_manager(settings, registry, tmp_path)
        assert await manager.sign_in("remote", Browser())
        assert await manager.sign_out("remote")
        assert not [k for k in memory_keyring.store if k[1].startswith("mcp/remote/oauth/")]
        assert not await manager.start("remote")
        assert manager.connections["remote"].status is Status.NEEDS_AUTH
        await manager.aclose()


@pytest.mark.asyncio
async def test_a_sign_in_nobody_completes_ends_in_one_sentence(settings, registry, memory_keyring,
                                                               tmp_path) -> None:
    async with oauth_server(tmp_path) as url:
        settings.mcp_servers["remote"] = {"url": url}
        manager = make_manager(settings, registry, tmp_path)
        manager.sign_in_timeout = 1.0
        seen: list[str] = []
        assert not await manager.sign_in("remote", seen.append)  # the browser opens; nobody approves
        conn = manager.connections["remote"]
        assert seen and conn.status is Status.NEEDS_AUTH
        assert conn.reason == "The sign-in to 'remote' was not completed in the browser within 1 s; try again."
        await manager.aclose()


@pytest.mark.asyncio
@pytest.mark.parametrize("mode, expected", [
    ("garbage", "Signing in to 'remote' failed: the browser's answer names another authorization server"),
    ("elsewhere", "Signing in to 'remote' failed: the browser's answer names another authorization server"),
    ("bad_token", "Signing in to 'remote' failed: the authorization server's token answer could not be read"),
])
async def test_a_broken_authorization_server_ends_in_one_sentence(settings, registry, memory_keyring, tmp_path,
                                                                  mode, expected) -> None:
    async with oauth_server(tmp_path, OAUTH_MODE=mode) as url:
        settings.mcp_servers["remote"] = {"url": url}
        manager = make_manager(settings, registry, tmp_path)
        ok = await asyncio.wait_for(manager.sign_in("remote", Browser()), 30)
        conn = manager.connections["remote"]
        assert not ok
        assert conn.status is Status.NEEDS_AUTH, conn.reason
        assert conn.reason.startswith(expected), conn.reason
        assert "\n" not in conn.reason and "Traceback" not in conn.reason and "last request:" in conn.reason
        assert not [t for t in issued_tokens(tmp_path) if t in conn.reason]
        await manager.aclose()


@pytest.mark.asyncio
async def test_step_up_asks_again_for_the_wider_scope(settings, registry, run, memory_keyring, tmp_path) -> None:
    async with oauth_server(tmp_path, OAUTH_STEP_UP="1") as url:
        settings.mcp_servers["remote"] = {"url": url, "approval": "auto"}
        manager = make_manager(settings, registry, tmp_path)
        assert await manager.sign_in("remote", Browser())
        # Headless (no browser for a call): the call says what is needed, the server stays usable.
        out = await registry.invoke(ToolCall("c1", "mcp:remote:admin", {}), run)
        assert out.is_error and "Sign in to 'remote' again" in out.content and "admin" in out.content, out.content
        assert manager.connections["remote"].status is Status.READY
        assert (await registry.invoke(ToolCall("c2", "mcp:remote:echo", {"text": "still"}), run)).content == "still"
        await manager.aclose()

        # A host that can show a browser: the step-up runs during the call, for the union of the scopes.
        browser = Browser()
        manager = make_manager(settings, registry, tmp_path)
        manager.step_up_opener = browser
        await manager.start_all()
        out = await registry.invoke(ToolCall("c3", "mcp:remote:admin", {}), run)
        assert (out.content, out.is_error) == ("admin ok", False), out.content
        assert len(browser.visits) == 1 and "admin" in browser.visits[0]
        out = await registry.invoke(ToolCall("c4", "mcp:remote:scopes", {}), run)
        assert {"mcp", "admin"} <= set(out.content.split())
        await manager.aclose()


class _TerminalBrowser(io.StringIO):
    """A terminal whose reader opens the printed authorization URL (the `--no-browser` path)."""

    def __init__(self) -> None:
        super().__init__()
        self.threads: list[threading.Thread] = []

    def write(self, text: str) -> int:
        for word in text.split():
            if word.startswith("http://127.0.0.1") and "/authorize?" in word:
                t = threading.Thread(target=lambda u=word: httpx2.get(u, follow_redirects=True, timeout=10))
                t.start()
                self.threads.append(t)
        return super().write(text)


@pytest.mark.asyncio
async def test_cli_login_and_logout(memory_keyring, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CKS_DESKTOP_TEST_KEYRING", "tests.conftest")
    home = tmp_path / "home"

    def mcp(*argv: str) -> int:
        return cli.main(["--data-dir", str(home), "mcp", *argv])

    async with oauth_server(tmp_path) as url:
        assert await asyncio.to_thread(mcp, "add", "remote", "--url", url, "--approval", "auto") == 0
        terminal = _TerminalBrowser()
        monkeypatch.setattr(sys, "stdout", terminal)
        assert await asyncio.to_thread(mcp, "call", "remote", "echo", "--args", '{"text": "hi"}') == 1
        assert "Sign in to 'remote'" in capsys.readouterr().err
        assert await asyncio.to_thread(mcp, "login", "remote", "--no-browser", "--timeout", "20") == 0
        for t in terminal.threads:
            t.join(10)
        assert "Signed in to 'remote'" in terminal.getvalue()
        assert await asyncio.to_thread(mcp, "call", "remote", "echo", "--args", '{"text": "hi"}') == 0
        assert "hi" in terminal.getvalue().splitlines()
        assert await asyncio.to_thread(mcp, "logout", "remote") == 0
        assert not [k for k in memory_keyring.store if k[1].startswith("mcp/remote/oauth/")]
        leaked = [t for t in issued_tokens(tmp_path) if t in data_files_text(home)]
        assert not leaked, leaked


@pytest.mark.asyncio
async def test_cli_step_up_the_next_login_asks_for_the_scope_a_call_was_refused(memory_keyring, tmp_path,
                                                                               monkeypatch, capsys) -> None:
    """``mcp call`` meets a 403 insufficient_scope (no browser); ``mcp login``, another run whose old token
    still satisfies ``tools/list``, must make a new authorization request for that scope; the call then passes."""
    monkeypatch.setenv("CKS_DESKTOP_TEST_KEYRING", "tests.conftest")
    home = tmp_path / "home"

    def mcp(*argv: str) -> int:
        return cli.main(["--data-dir", str(home), "mcp", *argv])

    async with oauth_server(tmp_path, OAUTH_STEP_UP="1") as url:
        assert await asyncio.to_thread(mcp, "add", "remote", "--url", url, "--approval", "auto") == 0
        terminal = _TerminalBrowser()
        monkeypatch.setattr(sys, "stdout", terminal)
        assert await asyncio.to_thread(mcp, "login", "remote", "--no-browser", "--timeout", "20") == 0
        for t in terminal.threads:
            t.join(10)
        assert len(terminal.threads) == 1
        assert await asyncio.to_thread(mcp, "call", "remote", "admin") == 1
        assert "Sign in to 'remote' again" in capsys.readouterr().err
        assert (SERVICE, "mcp/remote/oauth/stepUp") in memory_keyring.store  # kept with the server's tokens

        assert await asyncio.to_thread(mcp, "login", "remote", "--no-browser", "--timeout", "20") == 0
        for t in terminal.threads:
            t.join(10)
        assert len(terminal.threads) == 2, terminal.getvalue()  # a new authorization request ...
        second = [w for w in terminal.getvalue().split() if "/authorize?" in w][-1]
        assert "admin" in second and "mcp" in second  # ... for the union of the scopes
        assert (SERVICE, "mcp/remote/oauth/stepUp") not in memory_keyring.store  # answered
        assert await asyncio.to_thread(mcp, "call", "remote", "admin") == 0
        assert "admin ok" in terminal.getvalue().splitlines()
        # Nothing left to step up: the next login asks for nothing new.
        assert await asyncio.to_thread(mcp, "login", "remote", "--no-browser", "--timeout", "20") == 0
        assert len(terminal.threads) == 2


@pytest.mark.asyncio
async def test_a_pre_registered_client_signs_in_with_its_id_and_keychain_secret(settings, registry, run,
                                                                               memory_keyring, tmp_path) -> None:
    from cks_desktop.ui.settings.mcp_form import ServerForm

    port = free_port()
    redirect = f"http://127.0.0.1:{port}/callback"
    async with oauth_server(tmp_path, OAUTH_PRE_CLIENT=f"desk-1:pre-secret-7731:{redirect}") as url:
        store = SecretStore(secure=True)
        form = ServerForm(name="pre", transport="http", url=url, scopes={"net.fetch"}, approval="auto",
                          oauth_client_id="desk-1", oauth_client_secret="pre-secret-7731")
        entry = form.to_entry({"oauth": {"callbackPort": port}}, store)
        assert entry["oauth"] == {"callbackPort": port, "clientId": "desk-1",
                                  "clientSecret": "keychain:mcp/pre/oauth/clientSecret"}
        assert memory_keyring.store[(SERVICE, "mcp/pre/oauth/clientSecret")] == "pre-secret-7731"
        assert ServerForm.from_entry("pre", entry).oauth_secret_ref == "keychain:mcp/pre/oauth/clientSecret"
        settings.mcp_servers["pre"] = entry
        settings.save()
        manager = make_manager(settings, registry, tmp_path)
        browser = Browser()
        assert await manager.sign_in("pre", browser), manager.connections["pre"].reason
        assert "client_id=desk-1" in browser.visits[0]
        out = await registry.invoke(ToolCall("c1", "mcp:pre:echo", {"text": "pre"}), run)
        assert out.content == "pre"
        await manager.aclose()
        assert (SERVICE, "mcp/pre/oauth/client") not in memory_keyring.store  # built from the settings
        assert "pre-secret-7731" not in data_files_text(tmp_path / "config", tmp_path / "logs")


def test_oauth_settings_are_checked_and_a_clear_secret_moves_to_the_keychain(secret_store) -> None:
    from cks_desktop.mcp.config import ConfigError, parse_server, protect_entry

    with pytest.raises(ConfigError, match="keychain"):
        parse_server("s", {"url": "https://h/mcp", "oauth": {"clientId": "a", "clientSecret": "plain"}})
    with pytest.raises(ConfigError, match="not this server's own"):
        parse_server("s", {"url": "https://h/mcp", "oauth": {"clientId": "a",
                                                            "clientSecret": "keychain:provider:anthropic"}})
    with pytest.raises(ConfigError, match="callbackPort"):
        parse_server("s", {"url": "https://h/mcp", "oauth": {"callbackPort": 80}})
    with pytest.raises(ConfigError, match="clientMetadataUrl"):
        parse_server("s", {"url": "https://h/mcp", "oauth": {"clientMetadataUrl": "http://h/c.json"}})
    assert parse_server("s", {"url": "https://h/mcp", "oauth": False}).oauth is None
    entry, moved = protect_entry({"url": "https://h/mcp", "oauth": {"clientId": "a", "clientSecret": "xyz-9"}},
                                 server="s", secrets=secret_store)
    assert moved == ["OAuth client secret"] and entry["oauth"]["clientSecret"] == "keychain:mcp/s/oauth/clientSecret"
    assert secret_store.get("mcp/s/oauth/clientSecret") == "xyz-9"
    assert parse_server("s", entry).oauth.client_secret_ref == "mcp/s/oauth/clientSecret"


def test_a_pre_registered_secret_uses_what_the_authorization_server_supports() -> None:
    """The conformance suite's pre-registration server takes only client_secret_basic."""
    from cks_desktop.mcp.oauth_storage import pre_registered_auth_method

    assert pre_registered_auth_method(["client_secret_basic"]) == "client_secret_basic"
    assert pre_registered_auth_method(["client_secret_post", "client_secret_basic"]) == "client_secret_post"
    assert pre_registered_auth_method(None) == "client_secret_basic"  # RFC 8414's default
