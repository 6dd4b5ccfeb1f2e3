"""`mcp serve --http` against hostile clients, by raw HTTP to a real subprocess: Host and Origin
headers made to slip past a prefix match, and one client holding hundreds of idle sessions while
another host (another peer address on the loopback network) tries to connect."""

from __future__ import annotations

import asyncio

import httpx2
import pytest

from tests.mcp.serve_helpers import make_home, serve_http

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
SUMMARY = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "graph_summary", "arguments": {}}}


def port_of(url: str) -> str:
    return url.split(":")[2].split("/")[0]


@pytest.mark.asyncio
async def test_host_and_origin_are_parsed_strictly(tmp_path):
    home, _ = make_home(tmp_path, "S", shared=(0,))
    with serve_http(home) as srv:
        port = port_of(srv.url)
        good = {**ACCEPT, **srv.headers()}
        async with httpx2.AsyncClient(timeout=20) as http:
            for host in (f"127.0.0.1:{port}", f"localhost:{port}", "127.0.0.1", f"[::1]:{port}"):
                r = await http.post(srv.url, json=INIT, headers={**good, "Host": host})
                assert r.status_code == 200, (host, r.status_code, r.text)
            for host in ("127.0.0.1:evil.example", "127.0.0.1.evil.example", f"127.0.0.1.evil.example:{port}",
                         "localhost@evil", f"localhost@evil:{port}", "127.0.0.1:99999", "127.0.0.1:0",
                         "127.0.0.1:", f"127.0.0.1:{port}:1", f"127.0.0.1:{port}/x", f"evil.example:{port}",
                         "[::1]evil", "[::1%eth0]:80", f"localhost:-{port}"):
                r = await http.post(srv.url, json=INIT, headers={**good, "Host": host})
                assert r.status_code == 421, (host, r.status_code, r.text)
                message = r.json()["error"]["message"]
                assert "answers only to the host names" in message and "\n" not in message
            for origin in (f"http://127.0.0.1:{port}", "http://localhost", f"https://localhost:{port}"):
                r = await http.post(srv.url, json=INIT, headers={**good, "Origin": origin})
                assert r.status_code == 200, (origin, r.status_code, r.text)
            for origin in ("http://127.0.0.1:evil.example", "http://127.0.0.1.evil.example", "http://localhost@evil",
                           f"http://localhost@evil:{port}", "http://127.0.0.1:99999", f"http://evil.example:{port}",
                           "null", f"ftp://127.0.0.1:{port}", f"http://127.0.0.1:{port}/path", "127.0.0.1"):
                r = await http.post(srv.url, json=INIT, headers={**good, "Origin": origin})
                assert r.status_code == 403, (origin, r.status_code, r.text)
                assert "are refused" in r.json()["error"]["message"]


async def _open(http: httpx2.AsyncClient, url: str, headers: dict[str, str]) -> httpx2.Response:
    return await http.post(url, json=INIT, headers=headers)


@pytest.mark.asyncio
async def test_one_client_with_hundreds_of_idle_sessions_does_not_lock_out_another_host(tmp_path):
    home, _ = make_home(tmp_path, "S", shared=(0,))
    with serve_http(home) as srv:
        good = {**ACCEPT, **srv.headers()}
        hog_transport = httpx2.AsyncHTTPTransport(local_address="127.0.0.1")
        other_transport = httpx2.AsyncHTTPTransport(local_address="127.0.0.2")
        async with httpx2.AsyncClient(timeout=30, transport=hog_transport) as hog, \
                httpx2.AsyncClient(timeout=30, transport=other_transport) as other:
            ids: list[str] = []
            for _ in range(12):  # 300 sessions, 25 at a time, never closed: more than the server's cap of 256
                answers = await asyncio.gather(*(_open(hog, srv.url, good) for _ in range(25)))
                assert all(a.status_code == 200 for a in answers), {a.status_code for a in answers}
                ids += [a.headers["mcp-session-id"] for a in answers]
            r = await other.post(srv.url, json=INIT, headers=good)
            assert r.status_code == 200, (r.status_code, r.text)
            session = {**good, "mcp-session-id": r.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
            await other.post(srv.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
            r = await other.post(srv.url, json=SUMMARY, headers=session)
            assert r.status_code == 200 and '"isError":false' in r.text.replace(" ", ""), r.text
            # the hog kept at most its share: its oldest idle sessions were closed for its newer ones
            hog_session = {**good, "mcp-protocol-version": "2025-11-25"}
            r = await hog.post(srv.url, json=SUMMARY, headers={**hog_session, "mcp-session-id": ids[0]})
            assert r.status_code == 404
            r = await hog.post(srv.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                               headers={**hog_session, "mcp-session-id": ids[-1]})
            assert r.status_code == 202
