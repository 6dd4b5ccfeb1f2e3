"""The window's "Share with other apps" API, without Qt: the HTTP server started on the running
loop (the tests' loop is the app's qasync loop), its URL, token, clients and snippets."""

from __future__ import annotations

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from cks_desktop.paths import resolve
from cks_desktop.runtime import AppServices
from cks_desktop.secrets import SecretStore


@pytest.mark.asyncio
async def test_start_share_connect_list_clients_stop(tmp_path, secret_store):
    services = AppServices.open(resolve(tmp_path / "home"), secrets=secret_store)
    try:
        session = services.store.create_session("Shared here")
        service = services.share_service()
        services.cases.sharing.share(session.id)
        url = await service.start(port=0)
        assert service.running and url.startswith("http://127.0.0.1:") and service.token and service.token_is_new
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {service.token}"}) as http:
            async with Client(streamable_http_client(url, http_client=http), mode="legacy",
                              client_info=None) as c:
                r = await c.call_tool("add_object", {"type": "Person", "name": "Ada", "session": "Shared here"})
                assert not r.is_error, r.content[0].text
                clients = service.clients()
                assert len(clients) == 1 and clients[0].transport == "http" and clients[0].requests >= 1
        snippets = service.snippets()
        assert snippets["vscode"]["url"]["servers"]["cks-desktop"]["url"] == url
        assert snippets["cursor"]["url"]["mcpServers"]["cks-desktop"]["headers"]["Authorization"].endswith(
            service.token)
        assert "--data-dir" in snippets["claude_desktop"]["stdio"]["mcpServers"]["cks-desktop"]["args"]
        await service.stop()
        assert not service.running and service.url is None
        assert [o.name for o in services.store.all_objects(session.id)] == ["Ada"]
        again = services.share_service()
        await again.start(port=0)
        assert not again.token_is_new  # kept in the keychain: shown once only
        await again.stop()
    finally:
        await services.aclose()
    assert isinstance(secret_store, SecretStore)


async def _until(predicate, what: str, timeout: float = 15.0) -> None:
    import asyncio
    import time

    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        await asyncio.sleep(0.02)


@pytest.mark.asyncio
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # resources/subscribe (2025 era)
async def test_http_clients_leave_the_list_when_their_session_ends(tmp_path, secret_store):
    """A DELETE of the session (the SDK client's close) removes it at once; a host that quits
    without one leaves when its standalone stream closed and it did not come back; its
    subscriptions go with it."""
    services = AppServices.open(resolve(tmp_path / "home"), secrets=secret_store)
    try:
        session = services.store.create_session("Shared here")
        service = services.share_service()
        services.cases.sharing.share(session.id)
        url = await service.start(port=0)
        live = service._http.serving.live
        async with httpx2.AsyncClient(headers={"Authorization": f"Bearer {service.token}"}) as http:
            async with Client(streamable_http_client(url, http_client=http), mode="legacy",
                              client_info=None) as c:
                await c.list_tools()
                await c.subscribe_resource(f"cks://sessions/{session.id}/graph.json")
                assert len(service.clients()) == 1 and live.subscription_count() == 1
            await _until(lambda: not service.clients(), "the DELETE to end the session")  # the SDK sends DELETE on close
            assert live.subscription_count() == 0

            # no DELETE (the host quit): the list drops it once its GET stream closed and did not come back
            service._http.serving.clients.stream_grace = 0.3
            async with Client(streamable_http_client(url, http_client=http, terminate_on_close=False),
                              mode="legacy", client_info=None) as c:
                await c.list_tools()
                await c.subscribe_resource(f"cks://sessions/{session.id}/graph.json")
                assert len(service.clients()) == 1
            await _until(lambda: not service.clients() and live.subscription_count() == 0,
                         "the closed stream to end the listing")
        await service.stop()
    finally:
        await services.aclose()
