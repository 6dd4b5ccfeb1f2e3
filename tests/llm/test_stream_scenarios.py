"""Streaming scenarios run unchanged on all four adapters against their protocol-faithful fakes.

Each stream goes through a strict assembler, so every test also checks the
event grammar (start → fragments → done per call, Usage, Finish last).
"""

from __future__ import annotations

import pytest

from cks_desktop.llm.events import Finish, TextDelta, ToolCallDelta, ToolCallDone, ToolCallStart, Usage
from cks_desktop.llm.messages import Text, ToolCallPart
from cks_desktop.tools.wire_names import WireNames

from tests.fakes.server import FakeServer
from tests.fakes.openai_fake import FakeOpenAI
from tests.fakes.providers import PROVIDER_NAMES
from tests.fakes.script import ScriptedCall, Turn, call_turn, text_turn
from tests.llm.support import opened, run_turn, run_until_error

pytestmark = pytest.mark.asyncio
providers = pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
FRAGMENTING = {"anthropic", "openai"}  # protocols that stream argument fragments


@providers
async def test_text_only(fake: FakeServer) -> None:
    fake.queue(text_turn("Hello", ", wor", "ld!"))
    async with opened(fake) as provider:
        turn = await run_turn(provider, system="Be brief.")
    assert turn.text == "Hello, world!"
    assert [type(e) for e in turn.events[-2:]] == [Usage, Finish]
    assert turn.finish_reason == "stop"
    assert turn.usage == Usage(11, 7)
    assert turn.calls == []
    assert [e.text for e in turn.events if isinstance(e, TextDelta)] == ["Hello", ", wor", "ld!"]
    assert turn.message().parts == [Text("Hello, world!")]


@providers
async def test_one_tool_call(fake: FakeServer, provider_name: str) -> None:
    fake.queue(call_turn("add_object", {"name": "Alice", "type": "Person"}, text="Adding Alice."))
    async with opened(fake) as provider:
        turn = await run_turn(provider)
    assert turn.text == "Adding Alice."
    assert turn.finish_reason == "tool_calls"
    [call] = turn.calls
    assert (call.index, call.name, call.arguments, call.error) == (0, "add_object", {"name": "Alice", "type": "Person"},
                                                                   None)
    assert call.id
    kinds = [type(e) for e in turn.events]
    assert kinds.index(TextDelta) < kinds.index(ToolCallStart) < kinds.index(ToolCallDone) < kinds.index(Finish)
    message = turn.message()
    assert message.role == "assistant"
    assert message.parts == [Text("Adding Alice."), ToolCallPart(call.id, "add_object", call.arguments,
                                                                 metadata=call.metadata)]


@providers
async def test_two_tool_calls_in_one_turn(fake: FakeServer) -> None:
    fake.queue(Turn(text=["Two at once."], tool_calls=[ScriptedCall("add_object", {"name": "Alice"}),
                                                       ScriptedCall("add_object", {"name": "Bob"})]))
    async with opened(fake) as provider:
        turn = await run_turn(provider)
    assert [(c.index, c.name, c.arguments) for c in turn.calls] == [
        (0, "add_object", {"name": "Alice"}), (1, "add_object", {"name": "Bob"})]
    assert turn.calls[0].id != turn.calls[1].id
    assert [p.arguments["name"] for p in turn.message().tool_calls] == ["Alice", "Bob"]


@providers
async def test_empty_arguments(fake: FakeServer) -> None:
    fake.queue(call_turn("list_objects", {}))
    async with opened(fake) as provider:
        turn = await run_turn(provider)
    [call] = turn.calls
    assert call.arguments == {} and call.error is None


@providers
async def test_arguments_split_mid_token(fake: FakeServer, provider_name: str) -> None:
    arguments = {"name": "Zoë “Z” Ångström", "properties": {"born": 1907, "tags": ["a", "b"], "ok": True}}
    fake.queue(Turn(tool_calls=[ScriptedCall("add_object", arguments)], split_arguments=7))
    async with opened(fake) as provider:
        turn = await run_turn(provider)
    [call] = turn.calls
    assert call.arguments == arguments
    fragments = [e.arguments_fragment for e in turn.events if isinstance(e, ToolCallDelta)]
    assert "".join(fragments) == call.raw_arguments
    if provider_name in FRAGMENTING:
        assert len(fragments) == 7
        # at least one cut falls inside a string or a number, not between tokens
        assert any(f[-1:].isalnum() for f in fragments[:-1])


@providers
async def test_pure_tool_call_turn_is_a_normal_finish(fake: FakeServer) -> None:
    fake.queue(Turn(tool_calls=[ScriptedCall("list_objects", {})]))
    async with opened(fake) as provider:
        turn = await run_turn(provider)
    assert turn.text == ""
    assert not any(isinstance(e, TextDelta) and e.text for e in turn.events)
    assert turn.finish_reason == "tool_calls"
    assert [p.kind for p in turn.message().parts] == ["tool_call"]


@providers
async def test_finish_reason_length(fake: FakeServer) -> None:
    fake.queue(Turn(text=["cut sh"], finish_reason="length"))
    async with opened(fake) as provider:
        turn = await run_turn(provider)
    assert turn.finish_reason == "length"


@providers
async def test_invalid_argument_json(fake: FakeServer, provider_name: str) -> None:
    """A call whose argument text the model botched.

    Anthropic and OpenAI stream the text as sent: the call finishes with
    ``arguments=None``, the reason and the raw text, and the turn ends normally
    so the loop can tell the model. Ollama and Gemini parse calls server-side and
    report a botched one as an error (an ``error parsing tool call`` line, a
    ``MALFORMED_FUNCTION_CALL`` finish): there is no call to answer, so it is a
    ``bad_response`` ProviderError.
    """
    raw = '{"name": "Alice", oops}'
    fake.queue(Turn(text=["Trying."], tool_calls=[ScriptedCall("add_object", raw_arguments=raw)]))
    async with opened(fake) as provider:
        if provider_name in FRAGMENTING:
            turn = await run_turn(provider)
            [call] = turn.calls
            assert call.arguments is None
            assert call.raw_arguments == raw
            assert call.error and "not valid JSON" in call.error
            assert turn.finish_reason == "tool_calls"
            assert turn.message().tool_calls[0].arguments == {}
        else:
            _, error = await run_until_error(provider)
            assert error.kind == "bad_response"
            assert error.message.endswith(".") and "\n" not in error.message


@pytest.mark.parametrize("provider_name", ["anthropic", "openai"])
async def test_arguments_that_are_not_an_object(fake: FakeServer) -> None:
    fake.queue(Turn(tool_calls=[ScriptedCall("add_object", raw_arguments='["Alice"]')]))
    async with opened(fake) as provider:
        turn = await run_turn(provider)
    [call] = turn.calls
    assert call.arguments is None and call.error is not None and "not an object" in call.error


@pytest.mark.parametrize("provider_name", ["openai"])
async def test_openai_interleaved_parallel_calls(provider_name: str) -> None:
    with FakeOpenAI(interleave_calls=True) as fake:
        fake.queue(Turn(tool_calls=[ScriptedCall("add_object", {"name": "Alice"}),
                                    ScriptedCall("add_object", {"name": "Bob"}),
                                    ScriptedCall("list_objects", {})], split_arguments=4))
        async with opened(fake) as provider:
            turn = await run_turn(provider)
    deltas = [e.index for e in turn.events if isinstance(e, ToolCallDelta)]
    assert deltas[:3] == [0, 1, 2]  # really interleaved on the wire
    assert [(c.name, c.arguments) for c in turn.calls] == [
        ("add_object", {"name": "Alice"}), ("add_object", {"name": "Bob"}), ("list_objects", {})]


@providers
async def test_wire_names_map_back_through_the_assembler(fake: FakeServer) -> None:
    names = WireNames(["add_object", "mcp:files:read_file"])
    fake.queue(call_turn("mcp__files__read_file", {"path": "a.txt"}))
    async with opened(fake) as provider:
        turn = await run_turn(provider)
    assert turn.calls[0].name == "mcp__files__read_file"  # events carry the wire name
    assert turn.message(names.internal).tool_calls[0].name == "mcp:files:read_file"


@providers
async def test_one_provider_streams_several_turns(fake: FakeServer) -> None:
    fake.queue(text_turn("one"), call_turn("list_objects"), text_turn("three"))
    async with opened(fake) as provider:
        texts = [(await run_turn(provider)).text for _ in range(3)]
    assert texts == ["one", "", "three"]
    assert len(fake.generation_requests) == 3


@providers
async def test_list_models(fake: FakeServer) -> None:
    async with opened(fake) as provider:
        models = await provider.list_models()
    assert any(m.startswith(fake.default_model) for m in models) and len(models) == 2



@providers
async def test_fake_provider_helper(provider_name: str) -> None:
    from tests.fakes.providers import fake_provider

    async with fake_provider(provider_name, text_turn("one"), call_turn("list_objects")) as (fake, provider):
        assert (await run_turn(provider)).text == "one"
        assert (await run_turn(provider)).calls[0].name == "list_objects"
    assert not fake.turns and len(fake.generation_requests) == 2
