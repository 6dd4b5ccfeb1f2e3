"""an image an MCP tool returns — real servers as subprocesses (one written
here with the official SDK that draws its PNG, and server-everything from npm) — is validated,
stored once per session, kept in the transcript as a reference, and sent to a model that takes
images in its vendor's format (the fake servers speak the real wire protocol); a model without
images gets the note. A URL a server names (a resource link, a Markdown image) is never fetched.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.agent import events as ev
from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.images import ImageStore
from cks_desktop.agent.loop import ai_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.mcp.config import parse_server
from cks_desktop.mcp.connection import McpConnection
from cks_desktop.mcp.stderr_log import ServerLog
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.registry import ToolRegistry

from tests.agent.helpers import Recorder, turn_options
from tests.fakes.providers import make_fake, provider_for
from tests.fakes.script import call_turn, text_turn
from tests.watched_http import watched_server

from tests.agent.conftest import asyncgen_hooks  # noqa: F401 - a fixture, shared with the agent tests

EVERYTHING = "@modelcontextprotocol/server-everything"


@pytest.fixture
def graph(tmp_path: Path) -> Iterator[Any]:
    """The real store on a temporary file, with one session."""
    from cks_desktop.graph.store import GraphStore

    store = GraphStore.open(tmp_path / "graph.sqlite3")
    store.session = store.create_session("Images")  # type: ignore[attr-defined]
    try:
        yield store
    finally:
        store.close()

# A server written with the official SDK (low-level API): ``draw`` returns a PNG it makes itself,
# a resource link and a Markdown image pointing at LINK_URL; ``fake_png`` returns HTML that says
# it is image/png.
SERVER = '''
import base64, os, struct, zlib
import anyio
import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.server.stdio import stdio_server


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def png(width, height):
    raw = (b"\\x00" + b"\\x10\\x80\\xf0" * width) * height
    return (b"\\x89PNG\\r\\n\\x1a\\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


URL = os.environ["LINK_URL"]
TOOLS = [types.Tool(name="draw", description="Draw a chart.", input_schema={"type": "object", "properties": {}}),
         types.Tool(name="fake_png", description="Not a PNG.", input_schema={"type": "object", "properties": {}}),
         types.Tool(name="shot", description="A screenshot as an embedded resource.",
                    input_schema={"type": "object", "properties": {}})]


async def list_tools(ctx, params):
    return types.ListToolsResult(tools=TOOLS)


async def call_tool(ctx, params):
    if params.name == "draw":
        return types.CallToolResult(content=[
            types.TextContent(text=f"Here is the chart. ![remote]({URL}/pixel.png)"),
            types.ImageContent(data=base64.b64encode(png(8, 5)).decode(), mime_type="image/png"),
            types.ResourceLink(name="full size", uri=f"{URL}/full.png", mime_type="image/png"),
        ])
    if params.name == "shot":
        return types.CallToolResult(content=[types.EmbeddedResource(resource=types.BlobResourceContents(
            uri="screen://1", mime_type="image/png", blob=base64.b64encode(png(3, 2)).decode()))])
    return types.CallToolResult(content=[types.ImageContent(
        data=base64.b64encode(b"<html><script>alert(1)</script></html>").decode(), mime_type="image/png")])


async def main():
    server = Server("painter", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


anyio.run(main)
'''


@pytest.fixture
def watched_url() -> Iterator[tuple[str, list[str]]]:
    """A real HTTP server on 127.0.0.1 that records every request: nothing may ever reach it."""
    with watched_server() as watched:
        yield watched


async def _painter(tmp_path: Path, registry: ToolRegistry, url: str) -> McpConnection:
    script = tmp_path / "painter_server.py"
    script.write_text(SERVER, encoding="utf-8")
    config = parse_server("painter", {"command": sys.executable, "args": [str(script)], "env": {"LINK_URL": url},
                                      "approval": "auto"})
    conn = McpConnection(config, log=ServerLog(tmp_path / "painter.log"), registry=registry)
    assert await conn.start(), conn.reason
    return conn


def _raw_parts(graph: Any, session_id: str) -> str:
    with graph.connection_lock() as conn:
        rows = conn.execute("SELECT parts FROM chat_messages WHERE session_id = ? ORDER BY seq", (session_id,)).fetchall()
    return "\n".join(r[0] for r in rows)


@pytest.mark.asyncio
@pytest.mark.parametrize("name", ["anthropic", "openai"])
async def test_a_tool_image_is_stored_once_and_sent_to_a_vision_model(name: str, graph: Any, tmp_path: Path,
                                                                     watched_url: tuple[str, list[str]],
                                                                     asyncgen_hooks: None) -> None:
    url, hits = watched_url
    registry = ToolRegistry(graph)
    conn = await _painter(tmp_path, registry, url)
    transcript = TranscriptStore.for_store(graph)
    sid = graph.session.id
    recorder = Recorder()
    try:
        with make_fake(name) as fake:
            fake.queue(call_turn("mcp__painter__draw", {}), call_turn("mcp__painter__draw", {}), text_turn("A chart."))
            provider = provider_for(fake, model="claude-test" if name == "anthropic" else "gpt-4o")
            try:
                await ai_chat(sid, [], "Draw it twice.", ChatDeps(provider, registry, graph, transcript),
                              turn_options(), approver=StaticApprover(Decision.ALLOW), on_event=recorder)
            finally:
                await provider.aclose()
            last = fake.generation_requests[-1].body
    finally:
        await conn.stop()
    assert recorder.finished().reason == "stop", recorder.types()
    # stored once although the tool returned it twice; the bytes are the server's PNG
    store = ImageStore(graph)
    [image_id] = store.ids(sid)
    stored = store.get(sid, image_id)
    assert stored is not None and stored.media_type == "image/png" and (stored.width, stored.height) == (8, 5)
    b64 = base64.b64encode(stored.data).decode()
    # the transcript holds the reference, never the bytes
    raw = _raw_parts(graph, sid)
    assert image_id in raw and b64 not in raw
    # the model got the image in its vendor's format, beside the note
    wire = json.dumps(last, ensure_ascii=False)
    if name == "anthropic":
        result = last["messages"][2]["content"][0]
        assert result["type"] == "tool_result"
        assert result["content"][1] == {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                    "data": b64}}
        assert "[image: image/png, 8×5" in result["content"][0]["text"]
    else:
        carried = [m for m in last["messages"] if m["role"] == "user" and isinstance(m["content"], list)]
        assert carried and carried[0]["content"][1] == {"type": "image_url",
                                                        "image_url": {"url": f"data:image/png;base64,{b64}"}}
    assert wire.count(b64) == 2  # both calls' results carry it
    # a link and a Markdown image a server chose are text, never fetched
    assert f"{url}/full.png" in wire and f"{url}/pixel.png" in wire
    assert hits == []
    # the finished event carries the bytes for the tool row's thumbnail
    finished = recorder.of(ev.ToolCallFinished)
    assert finished[0].result.images[0].data == stored.data


@pytest.mark.asyncio
async def test_a_model_without_images_gets_the_note_and_a_later_turn_names_the_image_without_resending_it(
        graph: Any, tmp_path: Path, watched_url: tuple[str, list[str]], asyncgen_hooks: None) -> None:
    url, hits = watched_url
    registry = ToolRegistry(graph)
    conn = await _painter(tmp_path, registry, url)
    transcript = TranscriptStore.for_store(graph)
    sid = graph.session.id
    try:
        with make_fake("openai") as fake:
            fake.queue(call_turn("mcp__painter__draw", {}), text_turn("I cannot see it."), text_turn("Red."))
            plain = provider_for(fake, model="gpt-test")  # not a vision model
            try:
                await ai_chat(sid, [], "Draw.", ChatDeps(plain, registry, graph, transcript), turn_options(),
                              approver=StaticApprover(Decision.ALLOW))
            finally:
                await plain.aclose()
            body = json.dumps(fake.generation_requests[-1].body, ensure_ascii=False)
            assert "data:image/png;base64" not in body, body[body.find("data:image") - 300:][:600]
            assert "[image: image/png, 8×5" in body
            # the same saved chat, continued with a vision model: the image went with the turn that
            # brought it; a later turn names it (type, size, where it came from) and sends no bytes
            vision = provider_for(fake, options={"images": "yes"})
            try:
                await ai_chat(sid, transcript.load(sid), "And now?", ChatDeps(vision, registry, graph, transcript),
                              turn_options(), approver=StaticApprover(Decision.ALLOW))
            finally:
                await vision.aclose()
            body = json.dumps(fake.generation_requests[-1].body, ensure_ascii=False)
    finally:
        await conn.stop()
    assert "data:image/png;base64," not in body
    assert "[image not sent again: image/png, 8×5" in body and "returned by mcp__painter__draw in turn 1" in body
    assert hits == []


@pytest.mark.asyncio
async def test_bytes_that_are_not_an_image_are_refused_in_one_sentence(graph: Any, tmp_path: Path,
                                                                       watched_url: tuple[str, list[str]]) -> None:
    from cks_desktop.tools.context import Run
    from cks_desktop.tools.types import Caller, ToolCall

    registry = ToolRegistry(graph)
    conn = await _painter(tmp_path, registry, watched_url[0])
    run = Run(graph.session.id, Caller.MODEL, approver=StaticApprover(Decision.ALLOW))
    try:
        result = await registry.invoke(ToolCall("c1", "mcp:painter:fake_png", {}), run)
        shot = await registry.invoke(ToolCall("c2", "mcp:painter:shot", {}), run)
    finally:
        await conn.stop()
    # an embedded image resource is an image too
    assert [(i.media_type, i.width, i.height) for i in shot.images] == [("image/png", 3, 2)]
    assert shot.content.startswith("[image: screen://1, image/png, 3×2, ")
    assert result.images == ()
    assert result.content == ("[image refused: This is not a PNG, JPEG, GIF or WebP image (it says image/png); "
                              "the chat takes only those.]")


# -- the reference server ------------------------------------------------------------------
@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed, so server-everything cannot be fetched")
    folder = tmp_path_factory.mktemp("server-everything")
    try:
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder), EVERYTHING],
                              capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired:
        pytest.skip("npm took more than 240 s to fetch server-everything")
    entry = folder / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    if done.returncode != 0 or not entry.exists():
        pytest.skip(f"npm could not fetch server-everything: {(done.stderr or done.stdout).strip()[-300:]}")
    return entry


@pytest.mark.slow
@pytest.mark.asyncio
async def test_server_everything_tiny_image_reaches_a_vision_model(everything: Path, graph: Any, tmp_path: Path,
                                                                   asyncgen_hooks: None) -> None:
    node = shutil.which("node")
    assert node is not None
    registry = ToolRegistry(graph)
    config = parse_server("everything", {"command": node, "args": [str(everything), "stdio"], "approval": "auto"})
    conn = McpConnection(config, log=ServerLog(tmp_path / "everything.log"), registry=registry)
    assert await conn.start(), conn.reason
    names = [s.name for s in registry.specs()]
    tiny = next((n for n in names if n.endswith("tiny-image") or n.endswith("tiny_image")
                 or n.endswith("getTinyImage")), None)
    assert tiny is not None, names
    from cks_desktop.tools.wire_names import to_wire

    transcript = TranscriptStore.for_store(graph)
    sid = graph.session.id
    try:
        with make_fake("gemini") as fake:
            fake.queue(call_turn(to_wire(tiny), {}), text_turn("A tiny image."))
            provider = provider_for(fake)
            try:
                await ai_chat(sid, [], "Show me the tiny image.", ChatDeps(provider, registry, graph, transcript),
                              turn_options(), approver=StaticApprover(Decision.ALLOW))
            finally:
                await provider.aclose()
            body = fake.generation_requests[-1].body
    finally:
        await conn.stop()
    [image_id] = ImageStore(graph).ids(sid)
    stored = ImageStore(graph).get(sid, image_id)
    assert stored is not None and stored.media_type == "image/png"
    parts = body["contents"][-1]["parts"]
    blobs = [p["inlineData"] for p in parts if "inlineData" in p]
    assert blobs and base64.urlsafe_b64decode(blobs[0]["data"]) == stored.data
