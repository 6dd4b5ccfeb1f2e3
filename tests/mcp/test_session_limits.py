"""The session rules of `mcp serve --http` (serve/admission.py) one by one, in process: our
``SessionLimits`` in front of the SDK's real session manager and a real SDK server, clients at
different peer addresses, small numbers and a clock the test moves (idle times of a minute)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import httpx2
import pytest
from mcp.server.lowlevel.server import Server
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager

from cks_desktop.serve.admission import SessionLimits
from tests.mcp.serve_helpers import wait_for

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
POST = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@contextlib.asynccontextmanager
async def served(clock: Clock) -> AsyncIterator[SessionLimits]:
    manager = StreamableHTTPSessionManager(app=Server("limits"), max_sessions=8)
    limits = SessionLimits(StreamableHTTPASGIApp(manager), path="/mcp", clock=clock, max_sessions=8,
                           per_client=3, reserve=2, near=6, short_idle=60.0)
    async with manager.run():
        yield limits


def client(limits: SessionLimits, peer: str) -> httpx2.AsyncClient:
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=limits, client=(peer, 40000)),
                              base_url="http://127.0.0.1", timeout=10)


async def open_session(http: httpx2.AsyncClient) -> httpx2.Response:
    return await http.post("/mcp", json=INIT, headers=POST)


def stream(http: httpx2.AsyncClient, sid: str) -> "asyncio.Task[httpx2.Response]":
    """The session's standalone GET stream, held open: the session is in use while it runs."""
    return asyncio.create_task(http.get("/mcp", headers={
        "Accept": "text/event-stream", "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"}))


async def alive(http: httpx2.AsyncClient, sid: str) -> bool:
    r = await http.post("/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                        headers={**POST, "mcp-session-id": sid, "mcp-protocol-version": "2025-11-25"})
    assert r.status_code in (202, 404), r.text
    return r.status_code == 202


@pytest.mark.asyncio
async def test_a_client_past_its_share_loses_its_idlest_session_or_is_refused_when_all_are_in_use():
    clock = Clock()
    async with served(clock) as limits, client(limits, "10.0.0.1") as a:
        sids = []
        for _ in range(3):
            clock.now += 1
            r = await open_session(a)
            assert r.status_code == 200
            sids.append(r.headers["mcp-session-id"])
        streams = [stream(a, sid) for sid in sids]
        try:
            await wait_for(lambda: all(limits.sessions[s].in_flight for s in sids), what="three open streams")
            r = await open_session(a)
            assert r.status_code == 429
            message = r.json()["error"]["message"]
            assert message.startswith("This client already has 3 sessions open, all of them in use") and \
                "\n" not in message
            streams[1].cancel()  # the second session's stream ends: it is idle now
            await wait_for(lambda: limits.sessions[sids[1]].in_flight == 0, what="the stream to end")
            r = await open_session(a)
            assert r.status_code == 200
            assert sorted(limits.held("-@10.0.0.1")) == sorted([sids[0], sids[2], r.headers["mcp-session-id"]])
            assert not await alive(a, sids[1])  # closed through the manager: the SDK forgot it too
        finally:
            for task in streams:
                task.cancel()
            await asyncio.gather(*streams, return_exceptions=True)


@pytest.mark.asyncio
async def test_the_reserve_is_for_new_clients_and_idle_sessions_go_sooner_near_the_cap():
    clock = Clock()
    async with served(clock) as limits, client(limits, "10.0.0.1") as a, client(limits, "10.0.0.2") as b, \
            client(limits, "10.0.0.3") as c, client(limits, "10.0.0.4") as d:
        for http in (a, a, a, b, b, b):  # six of eight: the last two are the reserve
            clock.now += 1
            assert (await open_session(http)).status_code == 200
        first_of_b = min(limits.held("-@10.0.0.2"), key=lambda s: limits.sessions[s].idle_since)
        clock.now += 1
        assert (await open_session(b)).status_code == 200  # b holds sessions: one of its own makes room
        assert len(limits.sessions) == 6 and first_of_b not in limits.sessions
        clock.now += 1
        assert (await open_session(c)).status_code == 200  # a new client may use the reserve
        assert len(limits.sessions) == 7
        clock.now += 61  # everything is idle for a minute now, and the server is near its cap
        assert (await open_session(d)).status_code == 200
        assert list(limits.sessions) == limits.held("-@10.0.0.4")  # the idle ones were closed first


@pytest.mark.asyncio
async def test_a_holder_is_refused_the_reserve_and_at_the_cap_the_biggest_holder_makes_room():
    clock = Clock()
    async with served(clock) as limits, client(limits, "10.0.0.1") as a, client(limits, "10.0.0.2") as b, \
            client(limits, "10.0.0.3") as c, client(limits, "10.0.0.4") as d, client(limits, "10.0.0.5") as e, \
            client(limits, "10.0.0.6") as f:
        opened: dict[httpx2.AsyncClient, list[str]] = {a: [], b: [], c: []}
        for http in (a, a, a, b, b, c):
            clock.now += 1
            opened[http].append((await open_session(http)).headers["mcp-session-id"])
        streams = [stream(b, sid) for sid in opened[b]] + [stream(c, opened[c][0])]
        try:
            busy = opened[b] + opened[c]
            await wait_for(lambda: all(limits.sessions[s].in_flight for s in busy), what="the streams")
            r = await open_session(c)  # c holds one (in use) and six of eight are open
            assert r.status_code == 503 and r.headers["retry-after"] == "60"
            assert "keeps the last 2 for hosts that have none" in r.json()["error"]["message"]
            for http in (d, e):  # new clients: the reserve is theirs
                clock.now += 1
                assert (await open_session(http)).status_code == 200
            assert len(limits.sessions) == 8
            clock.now += 1
            r = await open_session(f)  # at the cap: the biggest holder (a) loses its idlest session
            assert r.status_code == 200
            assert sorted(limits.held("-@10.0.0.1")) == sorted(opened[a][1:])
            assert all(s in limits.sessions for s in busy)
        finally:
            for task in streams:
                task.cancel()
            await asyncio.gather(*streams, return_exceptions=True)
