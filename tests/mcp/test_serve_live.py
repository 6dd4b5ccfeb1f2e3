"""Live updates: a write by another process (a terminal's `tools call`, another host) reaches a
subscribed host as notifications/resources/updated, and objects appearing or a session being
shared as list_changed — over stdio and HTTP, in both protocol eras."""

from __future__ import annotations

import asyncio
import contextlib
import json
import warnings

import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPDeprecationWarning

from tests.mcp.serve_helpers import cli, make_home, serve_http, stdio, wait_for


def terminal_adds(home, session_id: str, name: str) -> None:
    r = cli(home, "tools", "call", "add_object", "--session", session_id, "--args",
            json.dumps({"type": "Person", "name": name}))
    assert r.returncode == 0, r.stderr


class Inbox:
    def __init__(self) -> None:
        self.updated: list[str] = []
        self.list_changed = 0

    async def __call__(self, message) -> None:
        root = getattr(message, "root", message)
        if isinstance(root, types.ResourceUpdatedNotification):
            self.updated.append(str(root.params.uri))
        elif isinstance(root, types.ResourceListChangedNotification):
            self.list_changed += 1


@pytest.mark.asyncio
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")
async def test_stdio_and_http_hosts_see_each_others_and_a_terminals_writes(tmp_path):
    home, (sid, other) = make_home(tmp_path, "Shared", "Later", shared=(0,))
    graph = f"cks://sessions/{sid}/graph.json"
    by_name = f"cks://sessions/{sid}/objects/Grace"
    stdio_inbox, http_inbox = Inbox(), Inbox()
    with serve_http(home) as srv:
        async with stdio(home, tmp_path / "stdio.err", mode="legacy", message_handler=stdio_inbox) as desktop, \
                srv.client("legacy", message_handler=http_inbox) as vscode:
            await desktop.subscribe_resource(graph)
            await vscode.subscribe_resource(graph)
            await vscode.subscribe_resource(by_name)  # not there yet: told when it appears
            # the stdio host writes: the HTTP host (another process) is told, through the change feed
            r = await desktop.call_tool("add_object", {"type": "Person", "name": "Ada"})
            assert not r.is_error, r.content[0].text
            await wait_for(lambda: graph in http_inbox.updated, what="the HTTP host's update")
            await wait_for(lambda: graph in stdio_inbox.updated, what="the stdio host's own update")
            # a terminal writes: both are told; the one subscribed by name too
            terminal_adds(home, sid, "Grace")
            await wait_for(lambda: by_name in http_inbox.updated, what="the update of the object named")
            await wait_for(lambda: stdio_inbox.updated.count(graph) >= 2, what="the terminal's write over stdio")
            text = (await vscode.read_resource(by_name)).contents[0].text
            assert json.loads(text)["object"]["name"] == "Grace"
            assert http_inbox.list_changed >= 1  # objects appeared
            # sharing another session: list_changed, and its resources are listed
            before = stdio_inbox.list_changed
            assert cli(home, "sessions", "share", other).returncode == 0
            await wait_for(lambda: stdio_inbox.list_changed > before, what="list_changed after sharing")
            uris = [str(x.uri) for x in (await desktop.list_resources()).resources]
            assert f"cks://sessions/{other}/summary.md" in uris
            # unsharing: at once unreachable
            assert cli(home, "sessions", "unshare", other).returncode == 0
            await wait_for(lambda: stdio_inbox.list_changed > before + 1, what="list_changed after unsharing")
            r = await desktop.call_tool("graph_summary", {"session": other})
            assert r.is_error and "No shared session" in r.content[0].text


@pytest.mark.asyncio
async def test_a_2026_host_listens_and_is_told(tmp_path):
    home, (sid,) = make_home(tmp_path, "Shared", shared=(0,))
    graph = f"cks://sessions/{sid}/graph.json"
    with serve_http(home) as srv:
        async with srv.client("auto") as c:
            assert c.protocol_version == "2026-07-28"
            async with c.listen(resources_list_changed=True, resource_subscriptions=[graph]) as sub:
                terminal_adds(home, sid, "Ada")
                seen: list[object] = []
                async with asyncio.timeout(15):
                    async for event in sub:
                        seen.append(event)
                        if any(getattr(e, "uri", None) == graph for e in seen):
                            break
            assert any(type(e).__name__ == "ResourceUpdated" for e in seen)


@pytest.mark.asyncio
async def test_stdio_serve_of_one_pinned_session_takes_no_session_argument(tmp_path):
    home, (sid, other) = make_home(tmp_path, "One", "Two", shared=(1,))
    async with stdio(home, tmp_path / "err", "--session", sid) as c:
        tools = {t.name: t for t in (await c.list_tools()).tools}
        assert "session" not in tools["add_object"].input_schema["properties"]
        assert "list_shared_sessions" not in tools
        uris = [str(x.uri) for x in (await c.list_resources()).resources]
        assert uris and all(sid in u for u in uris)  # pinned: the shared "Two" is not offered here


@pytest.mark.asyncio
@pytest.mark.filterwarnings("ignore::mcp.shared.exceptions.MCPDeprecationWarning")  # logging/setLevel (2025 era)
@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_log_messages_reach_a_host_between_requests(tmp_path, transport):
    """A graph change by another process is a log message (info) to a 2025-era host that set its
    level to info, sent on its standalone channel while it makes no request."""
    home, (sid,) = make_home(tmp_path, "Shared", shared=(0,))
    got: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params) -> None:
        got.append(params)

    with contextlib.ExitStack() as stack:
        if transport == "stdio":
            host = stdio(home, tmp_path / "stdio.err", mode="legacy", logging_callback=on_log)
        else:
            host = stack.enter_context(serve_http(home)).client("legacy", logging_callback=on_log)
        async with host as c:
            await c.list_tools()  # the connection is known to the server (its first request)
            terminal_adds(home, sid, "Quiet")  # below the default floor (warning): not sent
            await c.set_logging_level("info")
            terminal_adds(home, sid, "Ada")
            await wait_for(lambda: any("another process" in str(p.data.get("message", "")) for p in got), 20,
                           "a log message sent outside a request")
    message = next(p for p in got if "another process" in str(p.data.get("message", "")))
    assert message.level == "info" and message.logger == "cks-desktop" and message.data["session"] == sid
    assert "1 object added" in message.data["message"]
