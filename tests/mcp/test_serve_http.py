"""`mcp serve --http`: a real subprocess on a free port, driven by the official SDK client in both
protocol eras, and by raw HTTP for what a client library would not send (no token, a wrong one,
a foreign Host or Origin, garbage, a hundred sessions)."""

from __future__ import annotations

import asyncio
import json
import warnings

import httpx2
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from tests.mcp.serve_helpers import cli, graph_of, make_home, serve_http

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_both_eras_tools_resources_prompts_completions(tmp_path, mode):
    home, (research, private) = make_home(tmp_path, "Research", "Private diary", shared=(0,))
    with serve_http(home) as srv:
        assert srv.token, srv.stderr  # a token by default, shown once at start
        async with srv.client(mode) as c:
            assert c.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert "list_shared_sessions" in tools and "delete_session" not in tools
            assert "session" in tools["add_object"].input_schema["properties"]
            r = await c.call_tool("list_shared_sessions", {})
            assert [s["title"] for s in r.structured_content["sessions"]] == ["Research"]  # never the diary
            r = await c.call_tool("add_object", {"type": "Person", "name": "Ada", "session": "research"})
            assert not r.is_error, r.content[0].text
            assert r.structured_content["status"] == "created"  # validated by the client against the output schema
            uris = [str(x.uri) for x in (await c.list_resources()).resources]
            assert f"cks://sessions/{research}/graph.json" in uris and not any(private in u for u in uris)
            graph = json.loads((await c.read_resource(f"cks://sessions/{research}/graph.json")).contents[0].text)
            assert {o["name"] for o in graph["objects"]} == {"Seed 0", "Ada"}
            obj = json.loads((await c.read_resource("cks://sessions/Research/objects/Ada")).contents[0].text)
            assert obj["object"]["name"] == "Ada"
            assert "Research" in (await c.read_resource(f"cks://sessions/{research}/summary.md")).contents[0].text
            prompt = await c.get_prompt("explain_object", {"ref": "Ada", "session": "Research"})
            assert any(getattr(m.content, "type", "") == "resource" for m in prompt.messages)
            done = await c.complete(types.PromptReference(type="ref/prompt", name="explain_object"),
                                    {"name": "ref", "value": "a"}, context_arguments={"session": "Research"})
            assert done.completion.values == ["Ada"]
            done = await c.complete(types.ResourceTemplateReference(type="ref/resource", uri=
                                    "cks://sessions/{session}/objects/{ref}"), {"name": "session", "value": "re"})
            assert done.completion.values == ["Research"]
    assert graph_of(home, private) == ([("Person", "Seed 1")], 0)


@pytest.mark.asyncio
async def test_a_session_it_may_not_see_is_unreachable_by_every_door(tmp_path):
    home, (shared, private) = make_home(tmp_path, "Shared", "Private", shared=(0,))
    with serve_http(home) as srv:
        async with srv.client("legacy") as c:
            for session in (private, "Private", "private"):
                r = await c.call_tool("remove_object", {"ref": "Seed 1", "session": session})
                assert r.is_error and "No shared session has the title or id" in r.content[0].text
                assert private not in r.content[0].text or session == private  # names only what is shared
            # an id in session_id is pinned to the named (shared) session's run: structural
            r = await c.call_tool("add_object", {"type": "Person", "name": "Pinned", "session_id": private})
            assert not r.is_error
            for uri in (f"cks://sessions/{private}/graph.json", "cks://sessions/Private/objects/Seed%201"):
                with pytest.raises(MCPError) as err:
                    await c.read_resource(uri)
                assert err.value.code == -32002 and "not found" in err.value.message
                assert err.value.data == {"uri": uri}
            for uri in ("file:///etc/passwd", f"cks://sessions/{shared}/nothing"):  # not one of ours: -32602
                with pytest.raises(MCPError) as err:
                    await c.read_resource(uri)
                assert err.value.code == types.INVALID_PARAMS and err.value.data == {"uri": uri}
                with pytest.raises(MCPError), warnings.catch_warnings():
                    warnings.simplefilter("ignore", MCPDeprecationWarning)
                    await c.subscribe_resource(uri)
            prompt_error = None
            try:
                await c.get_prompt("summarize_graph", {"session": "Private"})
            except MCPError as exc:
                prompt_error = exc
            assert prompt_error is not None and prompt_error.code == types.INVALID_PARAMS
            done = await c.complete(types.PromptReference(type="ref/prompt", name="explain_object"),
                                    {"name": "ref", "value": "seed"}, context_arguments={"session": "Private"})
            assert done.completion.values == []
    assert graph_of(home, private) == ([("Person", "Seed 1")], 0)
    assert ("Person", "Pinned") in graph_of(home, shared)[0]


@pytest.mark.asyncio
async def test_tokens_hosts_origins_and_garbage_get_clear_refusals(tmp_path):
    home, (sid,) = make_home(tmp_path, "S", shared=(0,))
    with serve_http(home) as srv:
        async with httpx2.AsyncClient(timeout=20) as http:
            r = await http.post(srv.url, json=INIT, headers=ACCEPT)
            assert r.status_code == 401 and "needs a bearer token" in r.json()["error"]["message"]
            assert r.headers["www-authenticate"].startswith("Bearer")
            r = await http.post(srv.url, json=INIT, headers={**ACCEPT, "Authorization": "Bearer nope"})
            assert r.status_code == 401 and "token is wrong" in r.json()["error"]["message"]
            good = {**ACCEPT, **srv.headers()}
            port = srv.url.split(":")[2].split("/")[0]
            r = await http.post(srv.url, json=INIT, headers={**good, "Host": f"evil.example:{port}"})
            assert r.status_code == 421
            r = await http.post(srv.url, json=INIT, headers={**good, "Origin": "http://evil.example"})
            assert r.status_code == 403
            r = await http.post(srv.url, content=b"{not json", headers=good)
            assert r.status_code == 400 and r.json()["error"]["code"] == types.PARSE_ERROR
            r = await http.post(srv.url, content=b'{"jsonrpc": "2.0", "id": 1, "method": 5}', headers=good)
            assert r.status_code == 400 and "error" in r.json()
            # a hundred sessions at once, then a real client still works
            answers = await asyncio.gather(*(http.post(srv.url, json=INIT, headers=good) for _ in range(100)))
            assert all(a.status_code == 200 for a in answers), {a.status_code for a in answers}
            assert len({a.headers.get("mcp-session-id") for a in answers}) == 100
        with pytest.raises(BaseException):  # the SDK client gives up on a 401 (the line above says why)
            async with srv.client("legacy", token="wrong") as c:
                await c.list_tools()
        async with srv.client("legacy") as c:
            assert not (await c.call_tool("graph_summary", {})).is_error
    assert graph_of(home, sid) == ([("Person", "Seed 0")], 0)


@pytest.mark.slow
@pytest.mark.asyncio
async def test_ten_thousand_subscriptions_are_refused_past_the_limit(tmp_path):
    home, (sid,) = make_home(tmp_path, "S", shared=(0,))
    uri = f"cks://sessions/{sid}/objects/"
    with serve_http(home) as srv:
        async with srv.client("auto") as c:  # 2026-07-28: one listen request with 10,000 URIs
            with pytest.raises(MCPError) as err:
                async with c.listen(resource_subscriptions=[f"{uri}o{i}" for i in range(10_000)]):
                    pass
            assert err.value.code == types.INVALID_PARAMS and "at most 1000" in err.value.message
        async with srv.client("legacy") as c, asyncio.timeout(60):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MCPDeprecationWarning)
                for i in range(1000):
                    await c.subscribe_resource(f"{uri}Thing%20{i}")
                with pytest.raises(MCPError) as err:
                    await c.subscribe_resource(f"{uri}one-too-many")
            assert "Too many subscriptions" in err.value.message
            assert not (await c.call_tool("graph_summary", {})).is_error  # still answering
    assert graph_of(home, sid) == ([("Person", "Seed 0")], 0)


def test_no_auth_only_on_loopback_and_bad_addresses_are_one_line(tmp_path):
    home, _ = make_home(tmp_path, "S", shared=(0,))
    r = cli(home, "mcp", "serve", "--http", "0.0.0.0:0", "--no-auth")
    assert r.returncode == 2 and "without a token is allowed only on a loopback address" in r.stderr
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = cli(home, "mcp", "serve", "--http", "localhost:http")
    assert r.returncode == 2 and "does not end in a port number" in r.stderr
    r = cli(home, "mcp", "serve", "--no-auth")
    assert r.returncode == 2 and "are for --http" in r.stderr


@pytest.mark.asyncio
async def test_no_auth_on_loopback_serves_without_a_token(tmp_path):
    home, (sid,) = make_home(tmp_path, "S", shared=(0,))
    with serve_http(home, "--no-auth") as srv:
        assert srv.token is None
        async with srv.client("auto", token=None) as c:
            assert not (await c.call_tool("graph_summary", {"session": sid})).is_error
