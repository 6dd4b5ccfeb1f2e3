"""A server's sampling request run with the session's provider: a real subprocess server
(tests/mcp/servers/callbacks_server.py) asks, the real Anthropic adapter answers from the fake
Anthropic server (tests/fakes), and the answer travels back to the server."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from cks_desktop.agent.mcp_sampling import ProviderSampler
from cks_desktop.agent.providers import ProviderHolder
from cks_desktop.mcp.connection import Status
from cks_desktop.mcp.host import HeadlessHost, SampleTurn, SamplingRequest
from cks_desktop.mcp.manager import McpManager
from cks_desktop.settings import Settings
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller, ToolCall
from tests.fakes.providers import make_fake, provider_for
from tests.fakes.script import call_turn, text_turn
from tests.mcp.conftest import SERVERS, no_login_shell

SERVER = SERVERS / "callbacks_server.py"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.load(tmp_path / "config" / "settings.json")


def holder_for(settings, fake) -> ProviderHolder:
    return ProviderHolder(settings, None, lambda name, s, secrets: provider_for(fake), pinned="anthropic")


@pytest.mark.asyncio
@pytest.mark.parametrize("with_tools", [False, True])
async def test_sampling_runs_with_the_sessions_provider(with_tools, settings, tmp_path: Path):
    registry = ToolRegistry(None)  # type: ignore[arg-type]
    with make_fake("anthropic") as fake:
        fake.queue(call_turn("lookup", {"q": "x"}) if with_tools else text_turn("Hello ", "there."))
        holder = holder_for(settings, fake)
        settings.mcp_servers["cb"] = {"command": sys.executable, "args": [str(SERVER)], "approval": "auto",
                                      "protocol": "legacy", "sampling": "allow",
                                      "env": {"CB_MARKER_DIR": str(tmp_path)}}
        manager = McpManager(settings, None, registry, tmp_path / "logs", login_path=no_login_shell,
                             startup_timeout=30.0, host=HeadlessHost(yes=True, sampler=ProviderSampler(holder)))
        await manager.start_all()
        try:
            assert manager.connections["cb"].status is Status.READY
            run = Run("s1", Caller.MODEL, approver=StaticApprover(Decision.ALLOW))
            args = {"prompt": "Say hi", "system": "Be brief.", "max_tokens": 50, "with_tools": with_tools}
            result = await registry.invoke(ToolCall("c1", "mcp:cb:sample", args), run)
            answer = json.loads(result.content)
            if with_tools:
                assert answer["stop"] == "toolUse" and answer["text"] == "[tool_use:lookup]"
            else:
                assert answer == {"model": fake.default_model, "text": "Hello there.", "stop": "endTurn"}
            body = fake.requests[-1].body
            assert body["max_tokens"] == 50
            assert "Be brief." in json.dumps(body["system"])
            assert body["messages"][0]["content"][0]["text"] == "Say hi" if isinstance(
                body["messages"][0]["content"], list) else body["messages"][0]["content"] == "Say hi"
            assert ("tools" in body) is with_tools
        finally:
            await manager.aclose()
            await holder.aclose()


@pytest.mark.asyncio
async def test_a_provider_failure_is_one_sentence_for_the_server(settings):
    from tests.fakes.script import Turn

    with make_fake("anthropic") as fake:
        fake.queue(Turn(status=400, error_body={"type": "error", "error": {
            "type": "invalid_request_error", "message": "prompt is too long: 250000 tokens > 200000 maximum"}}))
        holder = holder_for(settings, fake)
        try:
            answer = await ProviderSampler(holder)(SamplingRequest("cb", (SampleTurn("user", "hi"),)))
        finally:
            await holder.aclose()
    assert answer.reply is None
    assert answer.refusal.startswith("The model could not answer MCP server 'cb':")


# -- images in a sampling request (images-2) ---------------------------------------
IMAGE_SERVER = SERVERS / "image_sampling_server.py"


async def _look(settings, tmp_path: Path, fake, model: str, args: dict) -> dict:
    """The image server's ``look`` tool, run through a real manager whose sampler uses ``model``."""
    registry = ToolRegistry(None)  # type: ignore[arg-type]
    holder = ProviderHolder(settings, None, lambda name, s, secrets: provider_for(fake, model=model), pinned="anthropic")
    settings.mcp_servers["eyes"] = {"command": sys.executable, "args": [str(IMAGE_SERVER)], "approval": "auto",
                                    "protocol": "legacy", "sampling": "allow"}
    manager = McpManager(settings, None, registry, tmp_path / "logs", login_path=no_login_shell,
                         startup_timeout=30.0, host=HeadlessHost(yes=True, sampler=ProviderSampler(holder)))
    await manager.start_all()
    try:
        assert manager.connections["eyes"].status is Status.READY
        run = Run("s1", Caller.MODEL, approver=StaticApprover(Decision.ALLOW))
        result = await registry.invoke(ToolCall("c1", "mcp:eyes:look", args), run)
        return json.loads(result.content)
    finally:
        await manager.aclose()
        await holder.aclose()


@pytest.mark.asyncio
async def test_a_sampling_image_reaches_a_model_that_takes_images(settings, tmp_path: Path):
    import base64

    from tests.png import make_png

    png = base64.b64encode(make_png(5, 4)).decode()
    with make_fake("anthropic") as fake:
        fake.queue(text_turn("A red square."))
        fake.queue(text_turn("Still red."))
        answer = await _look(settings, tmp_path, fake, "claude-test", {"image": png})
        assert answer["text"] == "A red square."
        [user] = fake.generation_requests[-1].body["messages"]
        assert user["content"] == [{"type": "text", "text": "What is in this picture?"},
                                   {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                                "data": png}}]
        # an image inside a tool result goes inside the tool_result block
        answer = await _look(settings, tmp_path, fake, "claude-test", {"image": png, "with_result": True})
        assert answer["text"] == "Still red."
        result = fake.generation_requests[-1].body["messages"][-1]["content"][0]
        assert result["type"] == "tool_result" and {"type": "image", "source": {
            "type": "base64", "media_type": "image/png", "data": png}} in result["content"]


@pytest.mark.asyncio
async def test_a_sampling_image_for_a_model_without_images_is_refused_in_one_sentence(settings, tmp_path: Path):
    import base64

    from tests.png import make_png

    with make_fake("anthropic") as fake:
        answer = await _look(settings, tmp_path, fake, "claude-2.1", {"image": base64.b64encode(make_png(5, 4)).decode()})
        assert "claude-2.1 (Anthropic) does not take images" in answer["error"]
        assert "MCP server 'eyes'" in answer["error"]
        # bytes that are not an image, labelled image/png: the bytes decide, one sentence
        script = base64.b64encode(b"<html><script>alert(1)</script></html>").decode()
        answer = await _look(settings, tmp_path, fake, "claude-test", {"image": script, "mime": "image/png"})
        assert "This is not a PNG, JPEG, GIF or WebP image (it says image/png)" in answer["error"]
        assert fake.generation_requests == []  # nothing went to the model
