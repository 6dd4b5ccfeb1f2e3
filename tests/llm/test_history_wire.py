"""Neutral history → each vendor's wire shape, asserted on what the SDK really sent the fake."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from cks_desktop.llm.messages import Message, Text, ToolCallPart, ToolResultPart

from tests.fakes.gemini_fake import SIGNATURE
from tests.fakes.server import FakeServer
from tests.fakes.providers import PROVIDER_NAMES
from tests.fakes.script import call_turn, text_turn
from tests.llm.support import opened, run_turn

pytestmark = pytest.mark.asyncio

HISTORY = [
    Message.system("Extra instructions."),
    Message.user("Read a.txt and add Alice."),
    Message("assistant", [Text("On it."),
                          ToolCallPart("toolu_01", "mcp:files:read", {"path": "a.txt"}),
                          ToolCallPart("call_01M8MVPTCB54HFH3CV0ST4XZ5A", "add_object", {"name": "Alice"})]),
    Message("tool", [ToolResultPart("toolu_01", "mcp:files:read", "hello"),
                     ToolResultPart("call_01M8MVPTCB54HFH3CV0ST4XZ5A", "add_object", "name taken", is_error=True)]),
    Message.user("And then?"),
]


def _check_anthropic(body: dict[str, Any]) -> None:
    assert body["system"] == "Be brief.\n\nExtra instructions."
    user, assistant, results = body["messages"]
    assert user == {"role": "user", "content": [{"type": "text", "text": "Read a.txt and add Alice."}]}
    assert assistant["role"] == "assistant"
    assert assistant["content"] == [
        {"type": "text", "text": "On it."},
        {"type": "tool_use", "id": "toolu_01", "name": "mcp__files__read", "input": {"path": "a.txt"}},
        {"type": "tool_use", "id": "call_01M8MVPTCB54HFH3CV0ST4XZ5A", "name": "add_object",
         "input": {"name": "Alice"}}]
    # tool results and the next prompt share one user message, results first
    assert results["role"] == "user"
    assert results["content"] == [
        {"type": "tool_result", "tool_use_id": "toolu_01", "content": "hello"},
        {"type": "tool_result", "tool_use_id": "call_01M8MVPTCB54HFH3CV0ST4XZ5A", "content": "name taken",
         "is_error": True},
        {"type": "text", "text": "And then?"}]


def _check_openai(body: dict[str, Any]) -> None:
    system, user, assistant, first, second, last = body["messages"]
    assert system == {"role": "system", "content": "Be brief.\n\nExtra instructions."}
    assert user == {"role": "user", "content": "Read a.txt and add Alice."}
    assert assistant["role"] == "assistant" and assistant["content"] == "On it."
    calls = assistant["tool_calls"]
    assert [c["id"] for c in calls] == ["toolu_01", "call_01M8MVPTCB54HFH3CV0ST4XZ5A"]
    assert [c["function"]["name"] for c in calls] == ["mcp__files__read", "add_object"]
    assert [json.loads(c["function"]["arguments"]) for c in calls] == [{"path": "a.txt"}, {"name": "Alice"}]
    assert all(c["type"] == "function" for c in calls)
    assert first == {"role": "tool", "tool_call_id": "toolu_01", "content": "hello"}
    assert second == {"role": "tool", "tool_call_id": "call_01M8MVPTCB54HFH3CV0ST4XZ5A",
                      "content": "Error: name taken"}
    assert last == {"role": "user", "content": "And then?"}


def _check_ollama(body: dict[str, Any]) -> None:
    assert body["options"]["num_ctx"] == 16384
    system, user, assistant, first, second, last = body["messages"]
    assert system == {"role": "system", "content": "Be brief.\n\nExtra instructions."}
    assert user == {"role": "user", "content": "Read a.txt and add Alice."}
    assert assistant["content"] == "On it."
    assert assistant["tool_calls"] == [
        {"function": {"name": "mcp__files__read", "arguments": {"path": "a.txt"}}},
        {"function": {"name": "add_object", "arguments": {"name": "Alice"}}}]
    assert first == {"role": "tool", "content": "hello", "tool_name": "mcp__files__read"}
    assert second == {"role": "tool", "content": "Error: name taken", "tool_name": "add_object"}
    assert last == {"role": "user", "content": "And then?"}


def _check_gemini(body: dict[str, Any]) -> None:
    assert body["systemInstruction"]["parts"] == [{"text": "Be brief.\n\nExtra instructions."}]
    user, model, results = body["contents"]
    assert user == {"role": "user", "parts": [{"text": "Read a.txt and add Alice."}]}
    assert model["role"] == "model"
    text, first, second = model["parts"]
    assert text == {"text": "On it."}
    # a vendor-issued id goes back; a made-up one does not
    assert first["functionCall"] == {"name": "mcp__files__read", "args": {"path": "a.txt"}, "id": "toolu_01"}
    assert second["functionCall"] == {"name": "add_object", "args": {"name": "Alice"}}
    # no signature was recorded: the first call carries Google's documented placeholder
    assert base64.b64decode(first["thoughtSignature"]) == b"skip_thought_signature_validator"
    assert "thoughtSignature" not in second
    assert results["role"] == "user"
    ok, failed, prompt = results["parts"]
    assert ok["functionResponse"] == {"name": "mcp__files__read", "response": {"output": "hello"}, "id": "toolu_01"}
    assert failed["functionResponse"] == {"name": "add_object", "response": {"error": "name taken"}}
    assert prompt == {"text": "And then?"}


CHECKS = {"anthropic": _check_anthropic, "openai": _check_openai, "ollama": _check_ollama, "gemini": _check_gemini}


@pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
async def test_tool_calls_and_results_go_back_in_the_vendor_shape(fake: FakeServer, provider_name: str) -> None:
    fake.queue(text_turn("Done."))
    async with opened(fake) as provider:
        turn = await run_turn(provider, HISTORY, system="Be brief.")
    assert turn.text == "Done."
    [request] = fake.generation_requests
    CHECKS[provider_name](request.body)


@pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
async def test_a_streamed_call_round_trips(fake: FakeServer, provider_name: str) -> None:
    """What the assembler builds from a streamed call is accepted back by the same provider."""
    fake.queue(call_turn("add_object", {"name": "Alice"}, text="Adding."), text_turn("Added."))
    async with opened(fake) as provider:
        first = await run_turn(provider)
        [call] = first.calls
        history = [*[Message.user("hello")], first.message(),
                   Message("tool", [ToolResultPart(call.id, call.name, "ok")])]
        second = await run_turn(provider, history)
    assert second.text == "Added."
    body = fake.generation_requests[1].body
    if provider_name == "gemini":
        parts = body["contents"][1]["parts"]
        assert base64.b64decode(parts[1]["thoughtSignature"]) == SIGNATURE  # the real one, carried back
        assert body["contents"][2]["parts"][0]["functionResponse"]["response"] == {"output": "ok"}
    elif provider_name == "anthropic":
        assert body["messages"][1]["content"][1]["id"] == call.id
        assert body["messages"][2]["content"][0]["tool_use_id"] == call.id

