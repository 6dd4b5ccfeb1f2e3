"""Client-credentials OAuth (machine to machine, no browser) against a real OAuth-protected server.

The server is ``servers/oauth_server.py`` (the SDK's server-side auth pieces, plus a
``client_credentials`` token endpoint that checks HTTP Basic, a form secret, or a
``private_key_jwt`` assertion with PyJWT against a public key the test generates). The
app's side is the SDK's ``ClientCredentialsOAuthProvider`` / ``PrivateKeyJWTOAuthProvider``
configured from the server's ``oauth`` settings, the secret or key read from the keychain
(the tests' memory keyring).
"""

from __future__ import annotations

import asyncio
import io
import sys
from pathlib import Path

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from cks_desktop import cli
from cks_desktop.mcp.connection import Status
from cks_desktop.secrets import SERVICE, SecretStore
from cks_desktop.tools.types import ToolCall
from tests.mcp.test_oauth import data_files_text, issued_tokens, make_manager, oauth_server

SECRET = "cc-secret-5521"


def cc_log(tmp_path: Path) -> list[str]:
    path = tmp_path / "cc.txt"
    return path.read_text().splitlines() if path.exists() else []


def key_pair(tmp_path: Path, kind: str) -> tuple[str, Path]:
    """A fresh private key (PEM text) and the path of its public key, for the test AS."""
    key = ec.generate_private_key(ec.SECP256R1()) if kind == "ec" else rsa.generate_private_key(65537, 2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption()).decode()
    public = tmp_path / f"{kind}.pub.pem"
    public.write_bytes(key.public_key().public_bytes(serialization.Encoding.PEM,
                                                     serialization.PublicFormat.SubjectPublicKeyInfo))
    return private, public


def cc_entry(url: str, **oauth: str) -> dict:
    return {"url": url, "approval": "auto", "oauth": {"grant": "client_credentials", "clientId": "svc", **oauth}}


@pytest.mark.asyncio
@pytest.mark.parametrize("auth", ["client_secret_basic", "client_secret_post"])
async def test_client_secret_signs_in_without_a_browser_and_a_restart_reuses_the_token(
        auth, settings, registry, run, memory_keyring, tmp_path) -> None:
    async with oauth_server(tmp_path, OAUTH_CC_CLIENT=f"svc:{SECRET}", OAUTH_CC_LOG=str(tmp_path / "cc.txt")) as url:
        SecretStore(secure=True).set("mcp/m2m/oauth/clientSecret", SECRET)
        settings.mcp_servers["m2m"] = cc_entry(url, auth=auth, clientSecret="keychain:mcp/m2m/oauth/clientSecret",
                                               scope="mcp")
        settings.save()
        manager = make_manager(settings, registry, tmp_path)
        await manager.start_all()  # a background start: no person, no browser, and yet ready
        conn = manager.connections["m2m"]
        assert conn.status is Status.READY, conn.reason
        out = await registry.invoke(ToolCall("c1", "mcp:m2m:echo", {"text": "machine"}), run)
        assert (out.content, out.is_error) == ("machine", False)
        await manager.aclose()
        assert cc_log(tmp_path) == [f"{auth} svc scope=mcp resource={url}"]
        assert (SERVICE, "mcp/m2m/oauth/tokens") in memory_keyring.store

        manager = make_manager(settings, registry, tmp_path)  # a restart: the kept token, no new request
        await manager.start_all()
        assert manager.connections["m2m"].status is Status.READY, manager.connections["m2m"].reason
        await manager.aclose()
        assert len(cc_log(tmp_path)) == 1
        files = data_files_text(tmp_path / "config", tmp_path / "logs")
        assert SECRET not in files
        assert not [t for t in issued_tokens(tmp_path) if t in files]


@pytest.mark.asyncio
@pytest.mark.parametrize("kind,alg", [("ec", "ES256"), ("rsa", "RS256")])
async def test_private_key_jwt_signs_in_with_a_keychain_key(kind, alg, settings, registry, run, memory_keyring,
                                                            tmp_path) -> None:
    private, public = key_pair(tmp_path, kind)
    async with oauth_server(tmp_path, OAUTH_CC_JWT=f"svc:{public}", OAUTH_CC_LOG=str(tmp_path / "cc.txt")) as url:
        SecretStore(secure=True).set("mcp/m2m/oauth/privateKey", private)
        settings.mcp_servers["m2m"] = cc_entry(url, privateKey="keychain:mcp/m2m/oauth/privateKey")
        settings.save()
        manager = make_manager(settings, registry, tmp_path)
        await manager.start_all()
        assert manager.connections["m2m"].status is Status.READY, manager.connections["m2m"].reason
        out = await registry.invoke(ToolCall("c1", "mcp:m2m:scopes", {}), run)
        assert out.content == "mcp"
        await manager.aclose()
        assert cc_log(tmp_path) == [f"private_key_jwt {alg} svc scope=mcp resource={url}"]
        assert private not in data_files_text(tmp_path / "config", tmp_path / "logs")


@pytest.mark.asyncio
async def test_an_expired_client_credentials_token_is_replaced_silently(settings, registry, memory_keyring,
                                                                        tmp_path) -> None:
    """No refresh token in this grant (RFC 6749 4.4.3): a dead token means asking for a new one, unasked."""
    forget = tmp_path / "forget"  # the server forgets its tokens when this file appears: no clock involved
    async with oauth_server(tmp_path, OAUTH_CC_CLIENT=f"svc:{SECRET}", OAUTH_CC_LOG=str(tmp_path / "cc.txt"),
                            OAUTH_FORGET=str(forget)) as url:
        SecretStore(secure=True).set("mcp/m2m/oauth/clientSecret", SECRET)
        settings.mcp_servers["m2m"] = cc_entry(url, clientSecret="keychain:mcp/m2m/oauth/clientSecret")
        for run in range(2):
            if run:
                forget.touch()  # the kept token is dead now
            manager = make_manager(settings, registry, tmp_path)
            await manager.start_all()
            assert manager.connections["m2m"].status is Status.READY, manager.connections["m2m"].reason
            await manager.aclose()
        assert len(cc_log(tmp_path)) == 2


@pytest.mark.asyncio
async def test_refused_client_credentials_end_in_one_sentence(settings, registry, memory_keyring, tmp_path) -> None:
    private, _ = key_pair(tmp_path, "ec")
    _, other_public = key_pair(tmp_path, "rsa")
    async with oauth_server(tmp_path, OAUTH_CC_CLIENT=f"svc:{SECRET}", OAUTH_CC_JWT=f"jwt:{other_public}",
                            OAUTH_CC_LOG=str(tmp_path / "cc.txt")) as url:
        store = SecretStore(secure=True)
        store.set("mcp/bad/oauth/clientSecret", "wrong-secret-0000")
        store.set("mcp/jwt/oauth/privateKey", private)  # not the key the server knows
        settings.mcp_servers["bad"] = cc_entry(url, clientSecret="keychain:mcp/bad/oauth/clientSecret")
        settings.mcp_servers["jwt"] = {**cc_entry(url, privateKey="keychain:mcp/jwt/oauth/privateKey"),
                                       "oauth": {"grant": "client_credentials", "clientId": "jwt",
                                                 "privateKey": "keychain:mcp/jwt/oauth/privateKey"}}
        settings.mcp_servers["gone"] = cc_entry(url, clientSecret="keychain:mcp/gone/oauth/clientSecret")
        manager = make_manager(settings, registry, tmp_path)
        await asyncio.wait_for(manager.start_all(), 30)
        reasons = {name: manager.connections[name].reason for name in ("bad", "jwt", "gone")}
        statuses = {name: manager.connections[name].status for name in reasons}
        await manager.aclose()
        for name, reason in reasons.items():
            assert statuses[name] is Status.FAILED, name  # not "sign in needed": Settings fixes it
            assert reason.startswith(f"Sign-in to '{name}' failed:"), reason
            assert "\n" not in reason and "wrong-secret" not in reason and "BEGIN" not in reason
        assert "the client's secret is not the one the server knows (invalid_client, POST" in reasons["bad"]
        assert "/token, HTTP 401); check its client secret in Settings → MCP servers." in reasons["bad"]
        assert reasons["jwt"].endswith("; check its private key in Settings → MCP servers."), reasons["jwt"]
        assert reasons["gone"].endswith(": its OAuth client secret is not in the keychain; enter it again in "
                                        "Settings → MCP servers."), reasons["gone"]
        assert [line for line in cc_log(tmp_path) if not line.startswith("refused")] == []


def test_client_credentials_settings_are_checked_and_a_clear_key_moves_to_the_keychain(secret_store) -> None:
    from cks_desktop.mcp.config import ConfigError, parse_server, protect_entry

    def parse(**oauth: object) -> object:
        return parse_server("s", {"url": "https://h/mcp", "oauth": oauth}).oauth

    for oauth, words in (({"grant": "password"}, "oauth.grant"),
                         ({"grant": "client_credentials"}, "client ID"),
                         ({"grant": "client_credentials", "clientId": "a"}, "needs the client secret"),
                         ({"grant": "client_credentials", "clientId": "a", "auth": "private_key_jwt"},
                          "needs the client's private key"),
                         ({"grant": "client_credentials", "clientId": "a", "auth": "tls"}, "oauth.auth"),
                         ({"grant": "client_credentials", "clientId": "a", "privateKey": "-----BEGIN"}, "keychain"),
                         ({"clientId": "a", "privateKey": "keychain:mcp/s/oauth/privateKey"}, "client_credentials"),
                         ({"grant": "client_credentials", "clientId": "a", "clientSecret": "keychain:mcp/s/oauth/x",
                           "issuer": "ftp://as"}, "oauth.issuer"),
                         ({"grant": "client_credentials", "clientId": "a", "clientSecret": "keychain:mcp/s/oauth/x",
                           "signingAlgorithm": "none"}, "signingAlgorithm")):
        with pytest.raises(ConfigError, match=words):
            parse(**oauth)
    settings = parse(grant="client_credentials", clientId="a", privateKey="keychain:mcp/s/oauth/privateKey")
    assert (settings.client_auth, settings.private_key_ref, settings.machine) == \
        ("private_key_jwt", "mcp/s/oauth/privateKey", True)
    assert parse(grant="client_credentials", clientId="a", clientSecret="keychain:mcp/s/oauth/clientSecret") \
        .client_auth == "client_secret_basic"
    entry, moved = protect_entry({"url": "https://h/mcp", "oauth": {"grant": "client_credentials", "clientId": "a",
                                                                    "privateKey": "-----BEGIN PRIVATE KEY-----x"}},
                                 server="s", secrets=secret_store)
    assert moved == ["OAuth private key"] and entry["oauth"]["privateKey"] == "keychain:mcp/s/oauth/privateKey"
    assert secret_store.get("mcp/s/oauth/privateKey") == "-----BEGIN PRIVATE KEY-----x"


def test_the_signing_algorithm_follows_the_key(tmp_path) -> None:
    from cks_desktop.mcp.oauth_grants import signing_algorithm

    assert signing_algorithm(key_pair(tmp_path, "ec")[0]) == "ES256"
    assert signing_algorithm(key_pair(tmp_path, "rsa")[0]) == "RS256"
    with pytest.raises(ValueError, match="not a PEM private key"):
        signing_algorithm("hello")
    with pytest.raises(ValueError, match="not a PEM private key"):
        signing_algorithm(key_pair(tmp_path, "ec")[1].read_text())  # a public key


@pytest.mark.asyncio
async def test_cli_adds_a_client_credentials_server(memory_keyring, tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.setenv("CKS_DESKTOP_TEST_KEYRING", "tests.conftest")
    home = tmp_path / "home"
    private, public = key_pair(tmp_path, "ec")
    pem_file = tmp_path / "client.pem"
    pem_file.write_text(private)

    def mcp(*argv: str, stdin: str = "") -> int:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        return cli.main(["--data-dir", str(home), "mcp", *argv])

    async with oauth_server(tmp_path, OAUTH_CC_CLIENT=f"svc:{SECRET}", OAUTH_CC_JWT=f"svc:{public}",
                            OAUTH_CC_LOG=str(tmp_path / "cc.txt")) as url:
        assert await asyncio.to_thread(mcp, "add", "basic", "--url", url, "--approval", "auto",
                                       "--oauth-client-credentials", "svc", stdin=SECRET + "\n") == 0
        assert "kept in the keychain: OAuth client secret" in capsys.readouterr().out
        assert await asyncio.to_thread(mcp, "add", "keyed", "--url", url, "--approval", "auto",
                                       "--oauth-client-credentials", "svc", "--oauth-private-key", str(pem_file),
                                       "--oauth-scope", "mcp") == 0
        for name in ("basic", "keyed"):
            assert await asyncio.to_thread(mcp, "call", name, "echo", "--args", '{"text": "cli"}') == 0
            assert "cli" in capsys.readouterr().out.splitlines()
        assert [line.split()[0] for line in cc_log(tmp_path)] == ["client_secret_basic", "private_key_jwt"]
        assert memory_keyring.store[(SERVICE, "mcp/keyed/oauth/privateKey")] == private
        text = data_files_text(home)
        assert SECRET not in text and "BEGIN PRIVATE KEY" not in text

        not_a_key = tmp_path / "nokey.pem"
        not_a_key.write_text("just text")
        assert await asyncio.to_thread(mcp, "add", "broken", "--url", url, "--oauth-client-credentials", "svc",
                                       "--oauth-private-key", str(not_a_key)) == 2
        err = capsys.readouterr().err
        assert "not a PEM private key" in err and "nothing was changed" in err
        assert await asyncio.to_thread(mcp, "add", "lost", "--url", url, "--oauth-scope", "mcp") == 2
        assert "--oauth-client-credentials" in capsys.readouterr().err
        assert not [k for k in memory_keyring.store if k[1].startswith(("mcp/broken/", "mcp/lost/"))]


def id_token(private_pem: str, audience: str, *, minutes: int = 60) -> str:
    """What the company's identity provider gave the person at their SSO sign-in (an OIDC ID token)."""
    import time

    import jwt

    now = int(time.time())
    return jwt.encode({"iss": "https://idp.example.com", "sub": "ada@example.com", "aud": audience, "iat": now,
                       "exp": now + minutes * 60}, private_pem, algorithm="ES256")


def idjag_entry(url: str, issuer: str) -> dict:
    return {"url": url, "approval": "auto",
            "oauth": {"grant": "identity_assertion", "issuer": issuer, "clientId": "mcp-client",
                      "clientSecret": "keychain:mcp/corp/oauth/clientSecret",
                      "idpTokenEndpoint": issuer + "/idp/token", "idpClientId": "desk-at-idp",
                      "idToken": "keychain:mcp/corp/oauth/idToken"}}


@pytest.mark.asyncio
async def test_enterprise_managed_authorization_exchanges_the_id_token_for_an_id_jag(
        settings, registry, run, memory_keyring, tmp_path) -> None:
    """SEP-990: ID token -> ID-JAG at the identity provider (RFC 8693), ID-JAG -> access token at the MCP
    server's authorization server (RFC 7523, the SDK's IdentityAssertionOAuthProvider). No browser."""
    idp_private, idp_public = key_pair(tmp_path, "ec")
    env = {"OAUTH_IDJAG": f"mcp-client:corp-secret-1:desk-at-idp:{idp_public}",
           "OAUTH_CC_LOG": str(tmp_path / "cc.txt")}
    async with oauth_server(tmp_path, **env) as url:
        issuer = url.removesuffix("/mcp")
        store = SecretStore(secure=True)
        store.set("mcp/corp/oauth/clientSecret", "corp-secret-1")
        token = id_token(idp_private, "desk-at-idp")
        store.set("mcp/corp/oauth/idToken", token)
        settings.mcp_servers["corp"] = idjag_entry(url, issuer)
        settings.save()
        manager = make_manager(settings, registry, tmp_path)
        await manager.start_all()
        assert manager.connections["corp"].status is Status.READY, manager.connections["corp"].reason
        out = await registry.invoke(ToolCall("c1", "mcp:corp:echo", {"text": "enterprise"}), run)
        assert (out.content, out.is_error) == ("enterprise", False)
        await manager.aclose()
        log = cc_log(tmp_path)
        assert log[0].startswith("idp exchanged ada@example.com audience=http://127.0.0.1:"), log
        assert log[1] == f"id-jag mcp-client sub=ada@example.com resource={url}", log
        files = data_files_text(tmp_path / "config", tmp_path / "logs")
        assert token not in files and "corp-secret-1" not in files

        # An expired ID token: one sentence that says what to do, nothing leaked.
        store.set("mcp/corp/oauth/idToken", id_token(idp_private, "desk-at-idp", minutes=-5))
        store.delete("mcp/corp/oauth/tokens")
        manager = make_manager(settings, registry, tmp_path)
        await manager.start_all()
        conn = manager.connections["corp"]
        reason = conn.reason
        await manager.aclose()
        assert conn.status is Status.FAILED
        assert reason.startswith("Sign-in to 'corp' failed: the identity provider refused the ID token: bad ID "
                                 "token (invalid_grant, POST"), reason
        assert "enter a new one" in reason and "eyJ" not in reason


def test_identity_assertion_settings_are_checked() -> None:
    from cks_desktop.mcp.config import ConfigError, parse_server

    full = idjag_entry("https://h/mcp", "https://as.example.com")["oauth"]
    full = {k: v.replace("corp", "s") for k, v in full.items()}
    assert parse_server("s", {"url": "https://h/mcp", "oauth": full}).oauth.machine
    for drop in ("issuer", "idToken", "idpTokenEndpoint", "clientSecret"):
        with pytest.raises(ConfigError, match=f"oauth.{drop}"):
            parse_server("s", {"url": "https://h/mcp", "oauth": {k: v for k, v in full.items() if k != drop}})
    with pytest.raises(ConfigError, match="keychain"):
        parse_server("s", {"url": "https://h/mcp", "oauth": {**full, "idToken": "eyJhbGciOi"}})
    with pytest.raises(ConfigError, match="identity_assertion"):
        parse_server("s", {"url": "https://h/mcp", "oauth": {"idpClientId": "x"}})


@pytest.mark.asyncio
async def test_cli_adds_an_enterprise_server_and_login_replaces_its_id_token(memory_keyring, tmp_path, monkeypatch,
                                                                             capsys) -> None:
    monkeypatch.setenv("CKS_DESKTOP_TEST_KEYRING", "tests.conftest")
    home = tmp_path / "home"
    idp_private, idp_public = key_pair(tmp_path, "ec")

    def mcp(*argv: str, stdin: str = "") -> int:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        return cli.main(["--data-dir", str(home), "mcp", *argv])

    env = {"OAUTH_IDJAG": f"mcp-client:corp-secret-1:desk-at-idp:{idp_public}",
           "OAUTH_CC_LOG": str(tmp_path / "cc.txt")}
    async with oauth_server(tmp_path, **env) as url:
        issuer = url.removesuffix("/mcp")
        expired = id_token(idp_private, "desk-at-idp", minutes=-5)
        assert await asyncio.to_thread(
            mcp, "add", "corp", "--url", url, "--approval", "auto", "--oauth-identity-assertion", "mcp-client",
            "--oauth-issuer", issuer, "--oauth-idp-token-endpoint", issuer + "/idp/token",
            "--oauth-idp-client-id", "desk-at-idp", stdin=f"corp-secret-1\n{expired}\n") == 0
        assert "kept in the keychain: OAuth client secret, ID token" in capsys.readouterr().out
        assert await asyncio.to_thread(mcp, "call", "corp", "echo", "--args", '{"text": "x"}') == 1
        assert "the ID token may have expired" in capsys.readouterr().err
        fresh = id_token(idp_private, "desk-at-idp")
        assert await asyncio.to_thread(mcp, "login", "corp", "--id-token", stdin=fresh + "\n") == 0
        assert "Signed in to 'corp'" in capsys.readouterr().out
        assert await asyncio.to_thread(mcp, "call", "corp", "echo", "--args", '{"text": "corp"}') == 0
        assert "corp" in capsys.readouterr().out.splitlines()
        assert memory_keyring.store[(SERVICE, "mcp/corp/oauth/idToken")] == fresh
        text = data_files_text(home)
        assert fresh not in text and expired not in text and "corp-secret-1" not in text
