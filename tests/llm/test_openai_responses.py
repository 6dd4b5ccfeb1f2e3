"""OpenAI's Responses API adapter (section 2: reasoning summaries), through the real
``openai`` SDK against tests/fakes/openai_responses_fake.py (the API's real SSE events and its
400s for reasoning items sent back wrongly)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from cks_desktop.llm.assembler import StreamAssembler, collect
from cks_desktop.llm.events import ReasoningDelta, TextDelta, Usage
from cks_desktop.llm.factory import adapter_for, provider_config
from cks_desktop.llm.messages import Message, Reasoning, Text, ToolCallPart, ToolResultPart
from cks_desktop.llm.provider import GenerationParams, Provider, ProviderError
from cks_desktop.llm.providers.openai_responses import OpenAIResponsesProvider
from cks_desktop.llm.structured import respond_json
from cks_desktop.settings import Settings

from tests.fakes.openai_responses_fake import ENCRYPTED_PREFIX, FakeOpenAIResponses
from tests.fakes.providers import provider_for
from tests.fakes.script import ScriptedCall, Turn, call_turn, text_turn
from tests.llm.support import TOOLS, run_until_error

pytestmark = pytest.mark.asyncio

THINK = GenerationParams(reasoning=True)
RESPONSES = {"api": "responses"}


@pytest.fixture
def fake() -> Iterator[FakeOpenAIResponses]:
    with FakeOpenAIResponses() as server:
        yield server


def responses_provider(fake: FakeOpenAIResponses, **kwargs: Any) -> Provider:
    options = {**RESPONSES, **kwargs.pop("options", {})}
    return provider_for(fake, options=options, **kwargs)


async def turn(provider: Provider, messages: list[Message], params: GenerationParams | None = None,
               tools: Any = TOOLS) -> StreamAssembler:
    stream = provider.stream(messages, list(tools), system="Be brief.", params=params)
    return await asyncio.wait_for(collect(stream, strict=True), 10)


async def test_the_setting_chooses_the_responses_adapter(tmp_path: Any) -> None:
    settings = Settings.load(tmp_path / "settings.json")
    settings.provider("openai")["api"] = "responses"
    config = provider_config("openai", settings, None, api_key="k")
    assert config.options == {"api": "responses"}
    assert isinstance(adapter_for(config), OpenAIResponsesProvider)
    other = provider_config("openai", None, None, api_key="k", options={"api": "chat"})
    assert type(adapter_for(other)).__name__ == "OpenAICompatProvider"


async def test_text_streams_through_the_sdk(fake: FakeOpenAIResponses) -> None:
    fake.queue(text_turn("Hel", "lo ", "there."))
    provider = responses_provider(fake)
    try:
        result = await turn(provider, [Message.user("hi")])
    finally:
        await provider.aclose()
    assert result.text == "Hello there." and result.finish_reason == "stop"
    assert [e.text for e in result.events if isinstance(e, TextDelta)] == ["Hel", "lo ", "there."]
    [request] = fake.generation_requests
    body = request.body
    assert request.path == "/v1/responses" and body["stream"] is True and body["store"] is False
    assert body["instructions"] == "Be brief." and body["input"] == [{"role": "user", "content": "hi"}]
    assert "reasoning" not in body and "include" not in body
    assert body["tools"][0] == {"type": "function", "name": "add_object", "description": TOOLS[0].description,
                                "parameters": TOOLS[0].parameters, "strict": False}


async def test_reasoning_summary_is_its_own_event_and_never_in_the_answer(fake: FakeOpenAIResponses) -> None:
    fake.queue(Turn(thinking=["**Weighing** ", "the question."], text=["Forty-two."], reasoning_tokens=64,
                    output_tokens=80))
    provider = responses_provider(fake)
    try:
        result = await turn(provider, [Message.user("meaning?")], THINK)
    finally:
        await provider.aclose()
    thoughts = [e for e in result.events if isinstance(e, ReasoningDelta)]
    assert "".join(e.text for e in thoughts) == "**Weighing** the question."
    assert result.text == "Forty-two." and "Weighing" not in result.text
    [part] = result.reasoning
    assert part.text == "**Weighing** the question." and part.origin.startswith("openai-responses@")
    assert ENCRYPTED_PREFIX in (part.signature or "")
    body = fake.generation_requests[0].body
    assert body["reasoning"] == {"effort": "medium", "summary": "auto"}
    assert body["include"] == ["reasoning.encrypted_content"] and "temperature" not in body
    assert result.usage == Usage(11, 80, reasoning_tokens=64)


async def test_tool_loop_sends_the_reasoning_items_back_before_their_calls(fake: FakeOpenAIResponses) -> None:
    fake.queue(Turn(thinking=["Need the types."], tool_calls=[ScriptedCall("list_objects", {}, id="call_a"),
                                                               ScriptedCall("add_object", {"name": "Ada"},
                                                                            id="call_b")]),
               Turn(thinking=["Now answer."], text=["Two calls done."]))
    provider = responses_provider(fake)
    try:
        history = [Message.user("Go.")]
        first = await turn(provider, history, THINK)
        assert first.finish_reason == "tool_calls"
        assert [(c.id, c.name, c.arguments) for c in first.calls] == [("call_a", "list_objects", {}),
                                                                   ("call_b", "add_object", {"name": "Ada"})]
        history += [first.message(), Message("tool", [ToolResultPart("call_a", "list_objects", "[]"),
                                                      ToolResultPart("call_b", "add_object", "boom", True)])]
        second = await turn(provider, history, THINK)
    finally:
        await provider.aclose()
    assert second.text == "Two calls done." and fake.refusals == []
    sent = fake.generation_requests[1].body["input"]
    kinds = [item.get("type") or item["role"] for item in sent]
    assert kinds == ["user", "reasoning", "function_call", "function_call", "function_call_output",
                     "function_call_output"]
    reasoning = sent[1]
    assert reasoning["id"].startswith("rs_") and reasoning["encrypted_content"].startswith(ENCRYPTED_PREFIX)
    assert reasoning["summary"] == [{"type": "summary_text", "text": "Need the types."}]
    assert sent[2]["id"].startswith("fc_") and sent[2]["call_id"] == "call_a" and sent[2]["arguments"] == "{}"
    assert sent[5] == {"type": "function_call_output", "call_id": "call_b", "output": "Error: boom"}


async def test_the_fake_refuses_a_call_without_its_reasoning_item(fake: FakeOpenAIResponses) -> None:
    fake.queue(Turn(thinking=["Hm."], tool_calls=[ScriptedCall("list_objects", {}, id="call_a")]))
    provider = responses_provider(fake)
    try:
        first = await turn(provider, [Message.user("Go.")], THINK)
        stripped = Message("assistant", [p for p in first.message().parts if not isinstance(p, Reasoning)])
        # what a careless client sends: the call with its item id but no reasoning item
        history = [Message.user("Go."), stripped, Message("tool", [ToolResultPart("call_a", "list_objects", "[]")])]
        request = provider.request(history, TOOLS, None, None, THINK)  # type: ignore[attr-defined]
        assert [i.get("type") for i in request["input"]][1] == "function_call"
        assert "id" not in request["input"][1]  # the adapter never sends the id without its reasoning
    finally:
        await provider.aclose()
    fc_id = first.calls[0].metadata["responses_item"]  # type: ignore[index]
    assert fake.refusal({"store": False, "input": [{"role": "user", "content": "Go."}, {
        "type": "function_call", "id": fc_id, "call_id": "call_a", "name": "list_objects", "arguments": "{}"}]}) \
        .startswith(f"Item '{fc_id}' of type 'function_call' was provided without its required 'reasoning' item")


async def test_reasoning_of_earlier_exchanges_and_other_servers_is_not_sent(fake: FakeOpenAIResponses) -> None:
    other = Reasoning("elsewhere", '{"id": "rs_x", "encrypted_content": "gAAAAABz"}', origin="openai-responses@h:1")
    call = ToolCallPart("call_z", "list_objects", {}, metadata={"responses_item": "fc_z",
                                                               "responses_origin": "openai-responses@h:1"})
    history = [Message.user("Before."), Message("assistant", [other, call]),
               Message("tool", [ToolResultPart("call_z", "list_objects", "[]")]),
               Message("assistant", [Text("Done before.")]), Message.user("Now.")]
    fake.queue(text_turn("Fine."))
    provider = responses_provider(fake)
    try:
        assert (await turn(provider, history, THINK)).text == "Fine."
    finally:
        await provider.aclose()
    sent = fake.generation_requests[0].body["input"]
    assert all(item.get("type") != "reasoning" for item in sent)
    assert {"type": "function_call", "call_id": "call_z", "name": "list_objects", "arguments": "{}"} in sent
    assert {"role": "assistant", "content": "Done before."} in sent


async def test_usage_has_cached_and_reasoning_tokens() -> None:
    with FakeOpenAIResponses(cached_tokens=5) as fake:
        fake.queue(Turn(text=["ok"], input_tokens=30, output_tokens=9, reasoning_tokens=4))
        provider = responses_provider(fake)
        try:
            result = await turn(provider, [Message.user("hi")])
        finally:
            await provider.aclose()
    assert result.usage == Usage(30, 9, cached_tokens=5, reasoning_tokens=4)


async def test_max_output_tokens_ends_as_length(fake: FakeOpenAIResponses) -> None:
    fake.queue(Turn(text=["Cut"], finish_reason="length"))
    provider = responses_provider(fake)
    try:
        result = await turn(provider, [Message.user("hi")], GenerationParams(max_output_tokens=5, temperature=0.2))
    finally:
        await provider.aclose()
    assert result.finish_reason == "length"
    body = fake.generation_requests[0].body
    assert body["max_output_tokens"] == 5 and body["temperature"] == 0.2


async def test_429_says_when_and_the_sdk_retries(fake: FakeOpenAIResponses) -> None:
    fake.queue(Turn(status=429, retry_after=30))
    provider = responses_provider(fake)
    try:
        _, error = await run_until_error(provider)
    finally:
        await provider.aclose()
    assert error.kind == "rate_limited" and error.retryable
    assert error.message == "The Responses API server is rate limiting requests (429); try again in 30 seconds."
    fake.queue(Turn(status=429, retry_after=0.01), text_turn("Finally."))
    provider = responses_provider(fake, max_retries=2)
    try:
        assert (await turn(provider, [Message.user("hi")])).text == "Finally."
    finally:
        await provider.aclose()


async def test_auth_and_prompt_too_long_map_to_the_apps_kinds() -> None:
    with FakeOpenAIResponses() as fake:
        fake.queue(Turn(status=401))
        provider = responses_provider(fake)
        try:
            _, error = await run_until_error(provider)
            assert error.kind == "auth"
            fake.context_window = 20
            _, error = await run_until_error(provider, [Message.user("x" * 400)])
        finally:
            await provider.aclose()
    assert error.kind == "prompt_too_long"  # the context manager compacts and retries once on this kind


async def test_an_error_inside_the_stream_is_one_sentence(fake: FakeOpenAIResponses) -> None:
    fake.queue(Turn(text=["par"], error_mid_stream="overloaded"))
    provider = responses_provider(fake)
    try:
        received, error = await run_until_error(provider)
    finally:
        await provider.aclose()
    assert received.text == "par" and error.kind == "overloaded" and isinstance(error, ProviderError)


async def test_a_cut_stream_is_reported(fake: FakeOpenAIResponses) -> None:
    fake.queue(Turn(text=["half"], cut_after_text=True))
    provider = responses_provider(fake)
    try:
        _, error = await run_until_error(provider)
    finally:
        await provider.aclose()
    assert error.kind == "stream_cut"


async def test_stop_cancels_the_stream_and_the_provider_stays_usable(fake: FakeOpenAIResponses) -> None:
    fake.queue(Turn(text=["Still going"], stall_after_text=True), text_turn("next"))
    provider = responses_provider(fake, timeout=30)
    try:
        task = asyncio.ensure_future(turn(provider, [Message.user("hi")]))
        loop = asyncio.get_running_loop()
        assert await asyncio.wait_for(loop.run_in_executor(None, fake.stalled.wait, 10), 15)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert (await turn(provider, [Message.user("again")])).text == "next"
    finally:
        await provider.aclose()


async def test_respond_json_uses_text_format_json_schema(fake: FakeOpenAIResponses) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"],
              "additionalProperties": False}
    fake.queue(text_turn('{"n": ', "3}"))
    provider = responses_provider(fake)
    try:
        assert await respond_json(provider, [Message.user("three")], schema) == {"n": 3}
    finally:
        await provider.aclose()
    body = fake.generation_requests[0].body
    assert body["text"] == {"format": {"type": "json_schema", "name": "response", "schema": schema, "strict": True}}
    assert "tools" not in body


async def test_a_call_in_the_model_answer_without_reasoning_goes_back_without_id(fake: FakeOpenAIResponses) -> None:
    fake.queue(call_turn("list_objects", {}), text_turn("ok"))
    provider = responses_provider(fake)
    try:
        first = await turn(provider, [Message.user("Go.")])
        call = first.calls[0]
        history = [Message.user("Go."), first.message(),
                   Message("tool", [ToolResultPart(call.id, "list_objects", "[]")])]
        assert (await turn(provider, history)).text == "ok"
    finally:
        await provider.aclose()
    sent = fake.generation_requests[1].body["input"]
    assert sent[1] == {"type": "function_call", "call_id": call.id, "name": "list_objects", "arguments": "{}"}


async def test_the_agent_loop_keeps_the_reasoning_items_through_the_transcript(tmp_path: Any) -> None:
    """The real loop (``ai_chat``) with a real transcript: the second request of the tool loop
    carries the reasoning item, the transcript keeps its encrypted copy and the call's item id,
    and the next exchange, loaded from the transcript, sends neither (earlier exchange)."""
    from cks_desktop.agent import events as ev
    from cks_desktop.agent import usage
    from cks_desktop.agent.chat_inputs import ChatDeps
    from cks_desktop.agent.loop import ai_chat
    from cks_desktop.agent.transcript import TranscriptStore
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.tools.approval import Decision, StaticApprover
    from cks_desktop.tools.builtin import build_registry

    from tests.agent.helpers import turn_options

    store = GraphStore.open(tmp_path / "cks.sqlite3")
    try:
        with FakeOpenAIResponses() as fake:
            fake.queue(Turn(thinking=["Look first."], tool_calls=[ScriptedCall("list_types", {})], reasoning_tokens=9),
                       Turn(thinking=["And objects."], tool_calls=[ScriptedCall("list_types", {})], reasoning_tokens=1),
                       Turn(thinking=["Answer now."], text=["None ", "yet."], reasoning_tokens=5),
                       Turn(thinking=["Again."], text=["Still none."]))
            session_id = store.create_session("s").id
            transcript = TranscriptStore.for_store(store)

            async def chat(prompt: str) -> list[ev.AgentEvent]:
                seen: list[ev.AgentEvent] = []
                provider = await asyncio.to_thread(responses_provider, fake)
                try:
                    await ai_chat(session_id, transcript.load(session_id), prompt,
                                  ChatDeps(provider, build_registry(store), store, transcript),
                                  turn_options(system_prompt="t", params=THINK),
                                  approver=StaticApprover(Decision.ALLOW), on_event=seen.append)
                finally:
                    await provider.aclose()
                return seen

            seen = await chat("Go.")
            assert seen[-1] == ev.Finished("stop", 3), [getattr(e, "message", e) for e in seen]
            assert "".join(e.text for e in seen if isinstance(e, ev.TextDelta)) == "None yet."
            assert "".join(e.text for e in seen if isinstance(e, ev.ReasoningDelta)) == \
                "Look first.And objects.Answer now."
            third = fake.generation_requests[2].body["input"]  # both rounds of the loop, each with its item
            assert [i.get("type") for i in third[1:]] == ["reasoning", "function_call", "function_call_output",
                                                          "reasoning", "function_call", "function_call_output"]
            saved = [m for m in transcript.load(session_id) if m.role == "assistant"]
            assert all(ENCRYPTED_PREFIX in (r.signature or "") for m in saved for r in m.reasoning)
            assert saved[0].tool_calls[0].metadata["responses_item"].startswith("fc_")  # type: ignore[index]
            assert usage.answers(transcript, session_id)[-1].tokens.reasoning_tokens == 15

            seen = await chat("And now?")
            assert seen[-1] == ev.Finished("stop", 1) and fake.refusals == []
            last = fake.generation_requests[-1].body["input"]
            assert all(i.get("type") != "reasoning" and "id" not in i for i in last)
    finally:
        store.close()


async def test_a_model_that_cannot_reason_gets_one_sentence(fake: FakeOpenAIResponses) -> None:
    fake.queue(text_turn("Plain."))
    provider = responses_provider(fake, model="gpt-4.1-mini")
    try:
        with pytest.raises(ProviderError) as caught:
            await turn(provider, [Message.user("hi")], THINK)
        assert (await turn(provider, [Message.user("hi")])).text == "Plain."  # without the switch it answers
    finally:
        await provider.aclose()
    assert caught.value.kind == "no_thinking_support"
    assert "turn Think before answering off" in caught.value.message


async def test_images_go_as_input_image_items(fake: FakeOpenAIResponses) -> None:
    """The person's image is an ``input_image`` part of their message; a tool's image follows the
    call outputs as a user message naming the call (``function_call_output`` is text here)."""
    import base64

    from cks_desktop.llm.messages import ImagePart

    png = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")
    image = ImagePart("a" * 64, "image/png", 1, 1, len(png), data=png)
    history = [Message("user", [Text("What is this?"), image]),
               Message("assistant", [ToolCallPart("call_s", "list_objects", {})]),
               Message("tool", [ToolResultPart("call_s", "list_objects", "a picture", images=(image,))])]
    fake.queue(text_turn("A dot."))
    provider = responses_provider(fake, model="gpt-4o")
    try:
        assert (await turn(provider, history)).text == "A dot."
    finally:
        await provider.aclose()
    sent = fake.generation_requests[0].body["input"]
    url = "data:image/png;base64," + base64.b64encode(png).decode()
    assert sent[0] == {"role": "user", "content": [{"type": "input_text", "text": "What is this?"},
                                                   {"type": "input_image", "image_url": url}]}
    assert sent[2] == {"type": "function_call_output", "call_id": "call_s", "output": "a picture"}
    assert sent[3]["role"] == "user" and sent[3]["content"][1] == {"type": "input_image", "image_url": url}
    assert "call_s" in sent[3]["content"][0]["text"]


async def test_summary_parts_are_joined_by_a_blank_line() -> None:
    with FakeOpenAIResponses(summary_parts=True) as fake:
        fake.queue(Turn(thinking=["**Plan**", "**Check**"], text=["Done."]))
        provider = responses_provider(fake)
        try:
            result = await turn(provider, [Message.user("hi")], THINK)
        finally:
            await provider.aclose()
    assert [r.text for r in result.reasoning] == ["**Plan**\n\n**Check**"] and result.text == "Done."


async def test_a_server_that_never_finishes_the_call_item_still_gives_the_call() -> None:
    with FakeOpenAIResponses(call_item_done=False) as fake:
        fake.queue(Turn(tool_calls=[ScriptedCall("add_object", {"name": "Ada"}, id="call_q")]))
        provider = responses_provider(fake)
        try:
            result = await turn(provider, [Message.user("hi")])
        finally:
            await provider.aclose()
    assert [(c.id, c.arguments) for c in result.calls] == [("call_q", {"name": "Ada"})]
    assert result.finish_reason == "tool_calls"


async def test_interleaved_reasoning_keeps_each_item_right_before_its_call() -> None:
    """A turn the model wrote as rs1, text, fc1, rs2, fc2, rs3 goes back as text, rs1, fc1, rs2, fc2:
    the text (no item id) never stands between a reasoning item and its call, and a trailing
    reasoning item with nothing after it is left out."""
    from cks_desktop.llm.providers.openai_responses import to_responses_input

    origin = "openai-responses@h:1"

    def thought(n: int) -> Reasoning:
        return Reasoning(f"t{n}", f'{{"id": "rs_{n}", "encrypted_content": "gAAAAAB{n}"}}', origin=origin)

    def call(n: int) -> ToolCallPart:
        return ToolCallPart(f"call_{n}", "list_objects", {}, metadata={"responses_item": f"fc_{n}",
                                                                       "responses_origin": origin})

    turn_message = Message("assistant", [thought(1), Text("Looking."), call(1), thought(2), call(2), thought(3)])
    items = to_responses_input([Message.user("Go."), turn_message], origin=origin)
    assert [(i.get("type") or i["role"], i.get("id")) for i in items] == [
        ("user", None), ("assistant", None), ("reasoning", "rs_1"), ("function_call", "fc_1"),
        ("reasoning", "rs_2"), ("function_call", "fc_2")]


async def test_a_wrong_base_path_names_the_responses_request(fake: FakeOpenAIResponses) -> None:
    import dataclasses

    from tests.fakes.providers import provider_config_for

    config = provider_config_for(fake, options=RESPONSES)
    provider = adapter_for(dataclasses.replace(config, base_url=fake.origin + "/wrong"))
    try:
        _, error = await run_until_error(provider)
    finally:
        await provider.aclose()
    assert error.kind == "not_found"
    assert f"POST {fake.origin}/wrong/responses" in error.message and "adds /responses" in error.message
