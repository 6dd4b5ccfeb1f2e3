"""A failed sign-in without a browser is a failure to fix in the settings, not "sign in needed".

Client credentials with a wrong secret, or an enterprise-managed server whose ID token expired:
clicking "Sign in" only runs the same refused request again, so the server's status is ``failed``
with the authorization server's (or identity provider's) own reason and where to fix it. A browser
sign-in keeps ``needs_auth`` ("Sign in to …"). Against the real OAuth server subprocess
(``servers/oauth_server.py``).
"""

from __future__ import annotations

import asyncio
import io
import sys

import pytest

from cks_desktop import cli
from cks_desktop.mcp.connection import Status
from cks_desktop.secrets import SecretStore
from tests.mcp.test_oauth import make_manager, oauth_server
from tests.mcp.test_oauth_grants import SECRET, cc_entry, id_token, idjag_entry, key_pair


@pytest.mark.asyncio
async def test_a_refused_client_secret_is_failed_with_the_servers_reason(qtbot, settings, registry, memory_keyring,
                                                                         tmp_path) -> None:
    from cks_desktop.ui.status import StatusWidgets

    async with oauth_server(tmp_path, OAUTH_CC_CLIENT=f"svc:{SECRET}", OAUTH_CC_LOG=str(tmp_path / "cc.txt")) as url:
        store = SecretStore(secure=True)
        store.set("mcp/bad/oauth/clientSecret", "wrong-secret-0000")
        settings.mcp_servers["bad"] = cc_entry(url, clientSecret="keychain:mcp/bad/oauth/clientSecret")
        settings.mcp_servers["web"] = {"url": url, "approval": "auto"}  # a browser sign-in: unchanged
        manager = make_manager(settings, registry, tmp_path)
        await asyncio.wait_for(manager.start_all(), 30)
        bad, web = manager.connections["bad"], manager.connections["web"]
        rows = manager.statuses()
        assert bad.status is Status.FAILED, (bad.status, bad.reason)
        assert bad.reason.startswith("Sign-in to 'bad' failed: the client's secret is not the one the server "
                                     "knows (invalid_client"), bad.reason
        assert bad.reason.endswith("; check its client secret in Settings → MCP servers."), bad.reason
        assert "wrong-secret" not in bad.reason and "\n" not in bad.reason
        assert web.status is Status.NEEDS_AUTH and web.reason.startswith("Sign in to 'web'"), web.reason

        # "Sign in" on it runs the refused request once more and ends the same way, no browser asked for
        opened: list[str] = []

        async def open_url(address: str) -> None:
            opened.append(address)

        assert await manager.sign_in("bad", open_url) is False
        assert (bad.status, opened) == (Status.FAILED, [])
        await manager.aclose()

    lights = StatusWidgets()
    qtbot.addWidget(lights)
    lights.set_servers(rows)
    light = lights.lights["bad"]
    assert light.status == "failed"
    assert "failed" in light.toolTip() and "check its client secret in Settings" in light.toolTip()
    assert lights.lights["web"].status == "needs_auth"


@pytest.mark.asyncio
async def test_an_expired_id_token_is_failed_and_says_how_to_replace_it(settings, registry, memory_keyring,
                                                                        tmp_path) -> None:
    idp_private, idp_public = key_pair(tmp_path, "ec")
    env = {"OAUTH_IDJAG": f"mcp-client:corp-secret-1:desk-at-idp:{idp_public}",
           "OAUTH_CC_LOG": str(tmp_path / "cc.txt")}
    async with oauth_server(tmp_path, **env) as url:
        issuer = url.removesuffix("/mcp")
        store = SecretStore(secure=True)
        store.set("mcp/corp/oauth/clientSecret", "corp-secret-1")
        expired = id_token(idp_private, "desk-at-idp", minutes=-5)
        store.set("mcp/corp/oauth/idToken", expired)
        settings.mcp_servers["corp"] = idjag_entry(url, issuer)
        manager = make_manager(settings, registry, tmp_path)
        await asyncio.wait_for(manager.start_all(), 30)
        conn = manager.connections["corp"]
        await manager.aclose()
    assert conn.status is Status.FAILED, (conn.status, conn.reason)
    assert conn.reason.startswith("Sign-in to 'corp' failed: the identity provider refused the ID token: "
                                  "bad ID token (invalid_grant"), conn.reason
    assert conn.reason.endswith("; the ID token may have expired: enter a new one in Settings → MCP servers "
                                "(or run: cks-desktop mcp login corp --id-token)."), conn.reason
    assert expired not in conn.reason and "eyJ" not in conn.reason


@pytest.mark.asyncio
async def test_cli_login_and_list_say_the_sign_in_failed(memory_keyring, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CKS_DESKTOP_TEST_KEYRING", "tests.conftest")
    home = tmp_path / "home"

    def mcp(*argv: str, stdin: str = "") -> int:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        return cli.main(["--data-dir", str(home), "mcp", *argv])

    async with oauth_server(tmp_path, OAUTH_CC_CLIENT=f"svc:{SECRET}", OAUTH_CC_LOG=str(tmp_path / "cc.txt")) as url:
        assert await asyncio.to_thread(mcp, "add", "m2m", "--url", url, "--oauth-client-credentials", "svc",
                                       stdin="not-the-secret\n") == 0
        assert await asyncio.to_thread(mcp, "add", "web", "--url", url) == 0
        capsys.readouterr()
        assert await asyncio.to_thread(mcp, "login", "m2m", "--no-browser") == 1
        out, err = capsys.readouterr()
        assert "open this address" not in out
        assert err.strip().splitlines()[-1].startswith("cks-desktop: Sign-in to 'm2m' failed: the client's secret "
                                                       "is not the one"), err
        assert "check its client secret in Settings → MCP servers" in err and "Could not sign in" not in err

        assert await asyncio.to_thread(mcp, "list") == 0
        out = capsys.readouterr().out
        lines = out.splitlines()
        m2m = next(i for i, line in enumerate(lines) if line.startswith("m2m"))
        web = next(i for i, line in enumerate(lines) if line.startswith("web"))
        assert lines[m2m].split()[1] == "failed", out
        assert "Sign-in to 'm2m' failed" in lines[m2m + 1], out
        assert lines[web].split()[1] == "sign-in", out  # a browser sign-in: needed, not failed
        assert "mcp login web" in lines[web + 1], out
        assert "not-the-secret" not in out


@pytest.mark.asyncio
async def test_a_refused_renewal_during_a_chat_fails_the_server_without_a_sign_in_notice(
        settings, registry, run, memory_keyring, tmp_path) -> None:
    """The access token runs out while the server is in use, and the identity provider now refuses the
    (replaced, expired) ID token: the call says why, with no "Sign in" notice, and the server is failed."""
    from cks_desktop.tools.types import ToolCall

    idp_private, idp_public = key_pair(tmp_path, "ec")
    env = {"OAUTH_IDJAG": f"mcp-client:corp-secret-1:desk-at-idp:{idp_public}",
           "OAUTH_CC_LOG": str(tmp_path / "cc.txt"), "OAUTH_FORGET": str(tmp_path / "forget")}
    async with oauth_server(tmp_path, **env) as url:
        store = SecretStore(secure=True)
        store.set("mcp/corp/oauth/clientSecret", "corp-secret-1")
        store.set("mcp/corp/oauth/idToken", id_token(idp_private, "desk-at-idp"))
        settings.mcp_servers["corp"] = idjag_entry(url, url.removesuffix("/mcp"))
        manager = make_manager(settings, registry, tmp_path)
        try:
            await asyncio.wait_for(manager.start_all(), 30)
            conn = manager.connections["corp"]
            assert conn.status is Status.READY, conn.reason
            store.set("mcp/corp/oauth/idToken", id_token(idp_private, "desk-at-idp", minutes=-5))
            (tmp_path / "forget").touch()  # the server forgets the access token: its life ends now
            out = await registry.invoke(ToolCall("c1", "mcp:corp:echo", {"text": "late"}), run)
            assert out.is_error, out.content
            assert "Sign-in to 'corp' failed: the identity provider refused the ID token" in out.content, out.content
            assert not (out.structured or {}).get("needs_sign_in"), out.structured
            assert conn.status is Status.FAILED, (conn.status, conn.reason)
        finally:
            await manager.aclose()
