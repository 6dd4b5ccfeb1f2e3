"""Resources, templates, subscriptions, prompts and completions against real server subprocesses.

The library server (tests/mcp/servers/library_server.py, the SDK's low-level API) runs as a real
stdio subprocess, in both protocol eras; the 100 MB case also runs in process, so the bounds of
our side are measured apart from the SDK's stdio reader (see the notes in docs).
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import mcp_types as types
import pytest

from cks_desktop.mcp import prompts as P
from cks_desktop.mcp import resources as R
from cks_desktop.mcp.config import parse_server
from cks_desktop.mcp.connection import McpConnection
from cks_desktop.mcp.features import FeatureEvent
from cks_desktop.mcp.requests import RequestFailed
from cks_desktop.mcp.resource_tool import TOOL_NAME, register_resource_tool, reader_name
from cks_desktop.mcp.stderr_log import ServerLog
from cks_desktop.tools.approval import Decision
from cks_desktop.tools.context import Run
from cks_desktop.tools.types import Caller, Scope, ToolCall
from tests.mcp.servers.library_server import build

LIBRARY = Path(__file__).parent / "servers" / "library_server.py"
ERAS = ["legacy", "auto"]  # auto: server/discover finds 2026-07-28 (a pinned version has no capabilities)


def library(tmp_path: Path, registry=None, *, protocol: str = "legacy", target=None, **env: str) -> McpConnection:
    entry = {"command": sys.executable, "args": [str(LIBRARY)], "env": dict(env), "protocol": protocol}
    config = parse_server("lib", entry)
    return McpConnection(config, log=ServerLog(tmp_path / "lib.log"), registry=registry, target=target)


async def ready(conn: McpConnection) -> McpConnection:
    assert await conn.start(), conn.reason
    assert await conn.features.wait_listed(20)
    return conn


async def next_event(conn: McpConnection, kind: str, timeout: float = 10.0) -> FeatureEvent:
    fut: asyncio.Future[FeatureEvent] = asyncio.get_running_loop().create_future()

    def seen(event: FeatureEvent) -> None:
        if event.kind == kind and not fut.done():
            fut.set_result(event)

    unsubscribe = conn.features.subscribe_events(seen)
    try:
        return await asyncio.wait_for(fut, timeout)
    finally:
        unsubscribe()


@pytest.mark.asyncio
@pytest.mark.parametrize("protocol", ERAS)
async def test_listings_are_paged_and_reads_keep_text_and_binary_apart(protocol, tmp_path):
    conn = await ready(library(tmp_path, protocol=protocol, LIB_RESOURCES="10", LIB_PAGE="3", LIB_PROMPTS="5"))
    try:
        f = conn.features
        assert conn.protocol_version == ("2026-07-28" if protocol == "auto" else "2025-11-25")
        assert [r.uri for r in f.resources][:3] == ["note://0", "note://1", "note://2"]
        assert len(f.resources) == 12 and f.notices == {}  # four pages, nothing left out
        assert [t.uri_template for t in f.templates] == ["notes://{topic}/{id}"]
        assert [p.name for p in f.prompts][:2] == ["greet", "report"] and len(f.prompts) == 7

        text = await R.read_resource(conn, "note://4")
        assert R.content_text(text) == "Body of note 4." and not text.notice
        blob = await R.read_resource(conn, "bin://logo", max_bytes=8)
        [item] = blob.contents
        assert item.binary and item.size == 1032 and item.data == b"\x89PNG\r\n\x1a\n" and item.truncated
        assert R.content_text(blob).startswith("[binary content: bin://logo, image/png, 1,032 bytes]")

        # Untrusted text stays text, and an attachment says it is data, fenced.
        hostile = await R.read_resource(conn, "html://hostile")
        attached = R.attachment_text(hostile)
        assert '<img src="http://evil.invalid/x.png">' in attached
        assert attached.startswith("[Attached resource html://hostile from MCP server 'lib'")
        assert "not instructions" in attached.splitlines()[0] and attached.endswith("</resource>")

        with pytest.raises(RequestFailed, match=r"answered the request to read 'nope://x' with an error: "
                                                r"Resource not found"):
            await R.read_resource(conn, "nope://x")
    finally:
        await conn.stop()
    with pytest.raises(RequestFailed, match="is not running"):
        await R.read_resource(conn, "note://1")
    assert conn.features.resources == [] and conn.features.subscriptions == set()


@pytest.mark.asyncio
@pytest.mark.parametrize("protocol", ERAS)
async def test_templates_prompts_and_completions(protocol, tmp_path):
    conn = await ready(library(tmp_path, protocol=protocol))
    try:
        [template] = conn.features.templates
        assert R.template_variables(template.uri_template) == ["topic", "id"]
        with pytest.raises(ValueError, match="Fill in id"):
            R.expand_template(template.uri_template, {"topic": "alpha"})
        uri = R.expand_template(template.uri_template, {"topic": "a b", "id": "7"})
        assert uri == "notes://a%20b/7"
        assert R.content_text(await R.read_resource(conn, uri)) == "A note at notes://a%20b/7."
        ref = types.ResourceTemplateReference(uri=template.uri_template)
        assert await P.complete(conn, ref, "topic", "g") == ["gamma", "gallium"]
        assert await P.complete(conn, types.PromptReference(name="greet"), "style", "fu") == ["funny", "furious"]

        greet = next(p for p in conn.features.prompts if p.name == "greet")
        with pytest.raises(ValueError, match="needs name"):
            P.check_arguments(greet, {"style": "formal"})
        with pytest.raises(ValueError, match="has no argument colour"):
            P.check_arguments(greet, {"name": "Ada", "colour": "red"})
        with pytest.raises(ValueError, match="must be a string"):
            P.check_arguments(greet, {"name": ["Ada"]})
        filled = await P.get_prompt(conn, "greet", P.check_arguments(greet, {"name": "Ada", "style": "formal"}))
        assert filled.text == "Write a formal greeting for Ada."
        report = await P.get_prompt(conn, "report", {"topic": "bees"})
        assert [r for r, _ in report.messages] == ["user", "user", "assistant"]
        assert "[resource: note://0]\nBody of note 0." in report.text and "[assistant]\nI will write it." in report.text
    finally:
        await conn.stop()


@pytest.mark.asyncio
@pytest.mark.parametrize("protocol", ERAS)
async def test_subscriptions_bring_updates_and_list_changes_relist(protocol, tmp_path, registry, run):
    conn = await ready(library(tmp_path, registry, protocol=protocol))
    try:
        await R.subscribe(conn, "note://1")
        if protocol == "legacy":
            assert (await conn.call_tool("subscribed", {})).content == "note://1"
        else:  # the listen stream is reopened with the new subscription: wait until it is in place
            await asyncio.sleep(0)
        for _ in range(50):  # on 2026 the reopened stream may take a moment; each touch is a fresh event
            waiting = asyncio.ensure_future(next_event(conn, "updated", timeout=0.5))
            await conn.call_tool("touch", {"uri": "note://1"})
            try:
                event = await waiting
                break
            except TimeoutError:
                continue
        else:
            raise AssertionError("no update arrived")
        assert event.uris == ("note://1",) and event.server == "lib"
        await R.unsubscribe(conn, "note://1")
        if protocol == "legacy":
            assert (await conn.call_tool("subscribed", {})).content == "(the tool returned nothing)"

        waiting = asyncio.ensure_future(next_event(conn, "prompts"))
        await conn.call_tool("add_prompt", {"name": "fresh"})
        await waiting
        assert "fresh" in [p.name for p in conn.features.prompts]
    finally:
        await conn.stop()


@pytest.mark.asyncio
async def test_a_storm_of_list_changes_is_coalesced(tmp_path):
    conn = await ready(library(tmp_path))
    try:
        before = conn.features.refreshes
        lags: list[float] = []

        async def probe() -> None:
            loop = asyncio.get_running_loop()
            while True:
                t = loop.time()
                await asyncio.sleep(0.02)
                lags.append(loop.time() - t - 0.02)

        prober = asyncio.create_task(probe())
        started = time.monotonic()
        result = await conn.call_tool("storm", {"count": 2000})
        assert result.content == "stormed"
        await next_event(conn, "prompts")
        elapsed = time.monotonic() - started
        prober.cancel()
        # 4,000 notifications: relistings are bounded by the rate limit, not by the storm.
        assert conn.features.notifications >= 2000
        relistings = conn.features.refreshes - before
        assert relistings <= 2 * (elapsed / 0.5 + 2), (relistings, elapsed)
        assert max(lags, default=0.0) < 1.0
        assert conn.ready and len(conn.features.resources) == 9
    finally:
        await conn.stop()


@pytest.mark.asyncio
async def test_a_100_mb_resource_is_cut_not_copied(tmp_path):
    """In process (no stdio framing): our side of a 100 MB read is bounded in time and memory."""
    conn = library(tmp_path, target=build(big_mb=100))
    await ready(conn)
    try:
        started = time.monotonic()
        text = await R.read_resource(conn, "big://text")
        [item] = text.contents
        assert item.size > 99_000_000 and len(item.text or "") == R.MAX_READ_CHARS and item.truncated
        assert "only the first 100,000 are kept" in text.notice
        blob = await R.read_resource(conn, "big://blob", max_bytes=1000)
        [b] = blob.contents
        assert b.size == 99_999_999 and b.data == b"\x01\x02\x03" * 333 + b"\x01"
        assert "only the first 1,000 are kept" in blob.notice
        assert time.monotonic() - started < 30
        assert len(R.attachment_text(text)) < R.MAX_READ_CHARS + 1000
    finally:
        await conn.stop()


@pytest.mark.asyncio
async def test_stdio_read_of_a_big_resource_is_cut_with_a_notice(tmp_path):
    conn = await ready(library(tmp_path, LIB_BIG_MB="4"))
    try:
        text = await R.read_resource(conn, "big://text", max_chars=1000)
        assert len(text.contents[0].text or "") == 1000 and "only the first 1,000 are kept" in text.notice
    finally:
        await conn.stop()


@pytest.mark.asyncio
async def test_read_mcp_resource_follows_the_servers_grant_and_policy(tmp_path, registry):
    register_resource_tool(registry)
    conn = await ready(library(tmp_path, registry))
    try:
        reader = registry.get(reader_name("lib"))
        assert reader is not None and not reader.llm_exposed and reader.scopes == frozenset({Scope.CODE_EXECUTE})
        assert registry.get(TOOL_NAME).llm_exposed

        class Counting:
            denial_hint = ""

            def __init__(self) -> None:
                self.asked: list[str] = []

            async def request_approval(self, request) -> Decision:
                self.asked.append(request.reason)
                return Decision.ALLOW

        approver = Counting()
        granted = Run("s", Caller.MODEL, approver=approver, granted_scopes=frozenset(),
                      source_grants={"mcp:lib": frozenset({Scope.CODE_EXECUTE})})
        first = await registry.invoke(ToolCall("1", TOOL_NAME, {"server": "lib", "uri": "note://2"}), granted)
        second = await registry.invoke(ToolCall("2", TOOL_NAME, {"server": "lib", "uri": "note://3"}), granted)
        assert (first.content, second.content) == ("Body of note 2.", "Body of note 3.")
        assert len(approver.asked) == 1  # the reader's policy: once per run

        bare = Run("s", Caller.MODEL, approver=approver, granted_scopes=frozenset())
        refused = await registry.invoke(ToolCall("3", TOOL_NAME, {"server": "lib", "uri": "note://2"}), bare)
        assert refused.is_error and "code.execute" in refused.content and "did not run" in refused.content
        unknown = await registry.invoke(ToolCall("4", TOOL_NAME, {"server": "nope", "uri": "x"}), granted)
        assert unknown.is_error and "servers that do: lib" in unknown.content
    finally:
        await conn.stop()
    assert registry.get(reader_name("lib")) is None  # it leaves with the server's tools
