"""reasoning on every provider, through the real adapters and SDKs against
the fakes' real wire protocols, in a real tool loop (``ai_chat``) with a real transcript.

Each provider's model thinks before a tool call and again before its answer. The test asserts
(a) the thinking arrives as its own event kind, (b) never in the answer's text, (c) the second
request of the tool loop carries what that vendor wants back (Anthropic: the thinking block
with its signature first in the assistant message; Gemini: the thought signatures; Ollama:
``thinking`` of the exchange in progress; DeepSeek-style servers: ``reasoning_content`` on the
turn with tool calls, never on an answer), (d) the transcript keeps it, signature included,
and the usage row has the reasoning tokens where the vendor reports them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.agent import events as ev
from cks_desktop.agent import usage
from cks_desktop.agent.chat_inputs import ChatDeps
from cks_desktop.agent.loop import ai_chat
from cks_desktop.agent.transcript import TranscriptStore
from cks_desktop.graph.store import GraphStore
from cks_desktop.llm.messages import Reasoning
from cks_desktop.llm.provider import GenerationParams
from cks_desktop.tools.approval import Decision, StaticApprover
from cks_desktop.tools.builtin import build_registry

from tests.agent.helpers import turn_options
from tests.fakes.anthropic_fake import FakeAnthropic
from tests.fakes.gemini_fake import SIGNATURE
from tests.fakes.openai_fake import FakeOpenAI
from tests.fakes.providers import PROVIDER_NAMES, make_fake, provider_for
from tests.fakes.script import ScriptedCall, Turn
from tests.fakes.server import FakeServer

pytestmark = pytest.mark.asyncio

FIRST = ["Let me look ", "at the types first."]
SECOND = ["Two types; ", "answer briefly."]
THINK = GenerationParams(reasoning=True)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[GraphStore]:
    s = GraphStore.open(tmp_path / "cks.sqlite3")
    try:
        yield s
    finally:
        s.close()


async def chat(store: GraphStore, fake: FakeServer, session_id: str, prompt: str = "Go.",
               params: GenerationParams | None = THINK, **options: Any) -> list[ev.AgentEvent]:
    seen: list[ev.AgentEvent] = []
    provider = await asyncio.to_thread(provider_for, fake, options=options)
    try:
        transcript = TranscriptStore.for_store(store)
        await ai_chat(session_id, transcript.load(session_id), prompt,
                      ChatDeps(provider, build_registry(store), store, transcript),
                      turn_options(system_prompt="t", params=params),
                      approver=StaticApprover(Decision.ALLOW), on_event=seen.append)
    finally:
        await provider.aclose()
    return seen


def _camel(config: dict[str, Any]) -> dict[str, Any]:
    """google-genai sends ``thinkingConfig``'s fields in snake case (the API's JSON reads both)."""
    return {k.split("_")[0] + "".join(w.title() for w in k.split("_")[1:]): v for k, v in config.items()}


def loop_turns() -> list[Turn]:
    return [Turn(thinking=list(FIRST), tool_calls=[ScriptedCall("list_types", {})], reasoning_tokens=9),
            Turn(thinking=list(SECOND), text=["There are ", "two types."], reasoning_tokens=5)]


def _make(provider_name: str) -> FakeServer:
    if provider_name == "openai":  # a DeepSeek-style server: its documented rule is enforced
        return FakeOpenAI(reasoning_rule="deepseek").start()
    return make_fake(provider_name)


def _second_request_carries_the_thinking(provider_name: str, fake: FakeServer) -> None:
    body = fake.generation_requests[1].body
    if provider_name == "anthropic":
        assert isinstance(fake, FakeAnthropic)
        assistant = body["messages"][1]
        assert assistant["role"] == "assistant"
        first = assistant["content"][0]  # the assistant message with tool_use begins with its thinking
        assert first["type"] == "thinking" and first["thinking"] == "".join(FIRST)
        assert fake.signatures[first["signature"]] == "".join(FIRST)
        assert assistant["content"][1]["type"] == "tool_use"
        assert body["thinking"]["type"] == "enabled"
    elif provider_name == "ollama":
        assistant = next(m for m in body["messages"] if m["role"] == "assistant")
        assert assistant["thinking"] == "".join(FIRST) and not assistant.get("content")
        assert body["think"] is True
    elif provider_name == "openai":
        assistant = next(m for m in body["messages"] if m["role"] == "assistant")
        assert assistant["reasoning_content"] == "".join(FIRST) and assistant["tool_calls"]
        assert body["reasoning_effort"] == "medium"
    else:
        model = next(c for c in body["contents"] if c["role"] == "model")
        thought, call = model["parts"]
        assert thought == {"text": "".join(FIRST), "thought": True}
        import base64

        assert base64.b64decode(call["thoughtSignature"]) == SIGNATURE and "functionCall" in call
        assert _camel(body["generationConfig"]["thinkingConfig"]) == {"includeThoughts": True}


@pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
async def test_thinking_in_a_tool_loop(store: GraphStore, provider_name: str) -> None:
    with _make(provider_name) as fake:
        fake.queue(*loop_turns())
        session_id = store.create_session("s").id
        seen = await chat(store, fake, session_id)
        assert not fake.problems, fake.problems

        # (a) a separate event kind, in stream order
        thoughts = "".join(e.text for e in seen if isinstance(e, ev.ReasoningDelta))
        assert thoughts == "".join(FIRST) + "".join(SECOND)
        # (b) never in the answer text
        answer = "".join(e.text for e in seen if isinstance(e, ev.TextDelta))
        assert answer == "There are two types."
        finals = [e.message for e in seen if isinstance(e, ev.AssistantMessage)]
        assert finals[-1].text == "There are two types."
        assert [r.text for r in finals[-1].reasoning] == ["".join(SECOND)]
        assert all("types first" not in m.text for m in finals)
        # (c) what the vendor wants back
        assert seen[-1] == ev.Finished("stop", 2), [e.type for e in seen]
        _second_request_carries_the_thinking(provider_name, fake)

        # (d) the transcript keeps it (signatures too) and loads it back
        transcript = TranscriptStore.for_store(store)
        saved = [m for m in transcript.load(session_id) if m.role == "assistant"]
        assert [[r.text for r in m.reasoning] for m in saved] == [["".join(FIRST)], ["".join(SECOND)]]
        assert all(r.seconds is not None and r.seconds >= 0 for m in saved for r in m.reasoning)
        if provider_name == "anthropic":
            assert all(r.signature for m in saved for r in m.reasoning)
        answers = usage.answers(transcript, session_id)
        if provider_name in ("openai", "gemini"):  # the vendors that count thinking apart
            assert answers[-1].tokens.reasoning_tokens == 14

        # the next exchange continues from the saved chat: each vendor's rule still holds
        fake.queue(Turn(thinking=["Again."], text=["Still two."]))
        seen = await chat(store, fake, session_id, prompt="And now?")
        assert seen[-1] == ev.Finished("stop", 1), [getattr(e, "message", e) for e in seen]
        body = fake.generation_requests[-1].body
        if provider_name == "openai":  # reasoning of an answer without calls is never sent back
            answers_sent = [m for m in body["messages"] if m["role"] == "assistant" and not m.get("tool_calls")]
            assert answers_sent and all("reasoning_content" not in m for m in answers_sent)
        if provider_name == "ollama":  # earlier exchanges' thinking stays out (the templates drop it)
            assert all("thinking" not in m for m in body["messages"] if m["role"] == "assistant")


async def test_thinking_off_sends_nothing_but_still_keeps_thinking_apart(store: GraphStore) -> None:
    """Off: no think/reasoning request; a model that thinks anyway still never leaks it into the answer."""
    with FakeOpenAI() as fake:
        fake.queue(Turn(thinking=["hmm"], text=["Answer."]))
        session_id = store.create_session("s").id
        seen = await chat(store, fake, session_id, params=None)
        body = fake.generation_requests[0].body
        assert "reasoning_effort" not in body
        assert "".join(e.text for e in seen if isinstance(e, ev.TextDelta)) == "Answer."
        assert [e.text for e in seen if isinstance(e, ev.ReasoningDelta)] == ["hmm"]


async def test_openrouter_style_reasoning_field_goes_back_under_its_own_name(store: GraphStore) -> None:
    with FakeOpenAI(reasoning_field="reasoning") as fake:
        fake.queue(*loop_turns())
        session_id = store.create_session("s").id
        await chat(store, fake, session_id)
        assistant = next(m for m in fake.generation_requests[1].body["messages"] if m["role"] == "assistant")
        assert assistant["reasoning"] == "".join(FIRST) and "reasoning_content" not in assistant


async def test_a_server_that_refuses_reasoning_input_is_never_sent_it(store: GraphStore) -> None:
    """deepseek-reasoner's rule: any reasoning_content in the input is a 400 (it makes no tool calls)."""
    with FakeOpenAI(reasoning_rule="refuse") as fake:
        session_id = store.create_session("s").id
        fake.queue(Turn(thinking=["a"], text=["One."]))
        await chat(store, fake, session_id)
        fake.queue(Turn(thinking=["b"], text=["Two."]))
        seen = await chat(store, fake, session_id, prompt="Again?")
        assert seen[-1] == ev.Finished("stop", 1)
        assert all("reasoning_content" not in m for m in fake.generation_requests[-1].body["messages"])


async def test_reasoning_echo_never_option(store: GraphStore) -> None:
    with FakeOpenAI() as fake:
        fake.queue(*loop_turns())
        session_id = store.create_session("s").id
        await chat(store, fake, session_id, reasoning_echo="never")
        assert all("reasoning_content" not in m for m in fake.generation_requests[1].body["messages"])


async def test_anthropic_redacted_thinking_goes_back_whole(store: GraphStore) -> None:
    with FakeAnthropic() as fake:
        fake.queue(Turn(thinking=["plan"], redacted_thinking="EmwKAhgBEgy3va3pzix/LafPsn4a",
                        tool_calls=[ScriptedCall("list_types", {})]), Turn(text=["Done."]))
        session_id = store.create_session("s").id
        seen = await chat(store, fake, session_id)
        assert seen[-1] == ev.Finished("stop", 2)
        content = fake.generation_requests[1].body["messages"][1]["content"]
        assert [b["type"] for b in content] == ["thinking", "redacted_thinking", "tool_use"]
        assert content[1]["data"] == "EmwKAhgBEgy3va3pzix/LafPsn4a"
        saved = TranscriptStore.for_store(store).load(session_id)
        assert [r.redacted for r in saved[1].reasoning] == [None, "EmwKAhgBEgy3va3pzix/LafPsn4a"]


async def test_anthropic_thinking_rules_temperature_budget_and_structured(store: GraphStore) -> None:
    """The API refuses temperature != 1, a budget not below max_tokens, and a forced tool with
    thinking on: the adapter drops the temperature, raises max_tokens, and never thinks for JSON."""
    with FakeAnthropic() as fake:
        fake.queue(Turn(thinking=["t"], text=["Hi."]))
        session_id = store.create_session("s").id
        seen = await chat(store, fake, session_id,
                          params=GenerationParams(temperature=0.3, reasoning=True, reasoning_budget=20_000))
        assert seen[-1] == ev.Finished("stop", 1), seen
        body = fake.generation_requests[0].body
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 20_000}
        assert body["max_tokens"] > 20_000 and "temperature" not in body

        provider = await asyncio.to_thread(provider_for, fake)
        try:  # structured output forces a tool, which thinking may not be combined with
            request = provider.request([], [], "s", {"type": "object"}, THINK)  # type: ignore[attr-defined]
        finally:
            await provider.aclose()
        assert "thinking" not in request and request["tool_choice"]["type"] == "tool"


async def test_anthropic_thinking_switched_on_mid_tool_loop(store: GraphStore) -> None:
    """Continuing a loop whose last assistant turn had no thinking: sent without thinking (the API
    would refuse the request), and the next exchange thinks again."""
    with FakeAnthropic() as fake:
        session_id = store.create_session("s").id
        fake.queue(Turn(tool_calls=[ScriptedCall("list_types", {})]), Turn(text=["Done."]))
        provider = await asyncio.to_thread(provider_for, fake)
        transcript = TranscriptStore.for_store(store)
        try:
            seen: list[ev.AgentEvent] = []
            await ai_chat(session_id, [], "Go.", ChatDeps(provider, build_registry(store), store, transcript),
                          turn_options(system_prompt="t", params=None, max_iterations=1),
                          approver=StaticApprover(Decision.ALLOW), on_event=seen.append)
            assert seen[-1] == ev.Finished("limit", 1)
            await ai_chat(session_id, transcript.load(session_id), None,
                          ChatDeps(provider, build_registry(store), store, transcript),
                          turn_options(system_prompt="t", params=THINK),
                          approver=StaticApprover(Decision.ALLOW), on_event=seen.append)
        finally:
            await provider.aclose()
        assert seen[-1] == ev.Finished("stop", 1), seen
        assert "thinking" not in fake.generation_requests[-1].body
        # the same rule on the request itself: the loop's results follow a turn without thinking
        from cks_desktop.llm.messages import Message, ToolCallPart, ToolResultPart

        loop = [Message.user("Go."), Message("assistant", [ToolCallPart("toolu_1", "list_types", {})]),
                Message("tool", [ToolResultPart("toolu_1", "list_types", "[]")])]
        provider = await asyncio.to_thread(provider_for, fake)
        try:
            assert "thinking" not in provider.request(loop, [], "s", None, THINK)  # type: ignore[attr-defined]
            assert "thinking" in provider.request(loop[:1], [], "s", None, THINK)  # type: ignore[attr-defined]
        finally:
            await provider.aclose()


async def test_another_vendors_thinking_is_not_sent(store: GraphStore) -> None:
    """A chat that switched providers: Gemini's thoughts never reach Anthropic (its signature check
    would refuse them) and Anthropic's never reach Gemini."""
    from cks_desktop.llm.messages import Message, Text
    from cks_desktop.llm.providers.anthropic import to_anthropic_messages
    from cks_desktop.llm.providers.gemini import to_gemini_contents

    history = [Message.user("q"), Message("assistant", [Reasoning("g", "c2ln", origin="gemini"), Text("a")]),
               Message.user("q2"), Message("assistant", [Reasoning("c", "sig", origin="anthropic"), Text("b")])]
    wire = to_anthropic_messages(history)
    assert [b["type"] for b in wire[1]["content"]] == ["text"]
    assert [b["type"] for b in wire[3]["content"]] == ["thinking", "text"]
    contents = to_gemini_contents(history)
    assert contents[1]["parts"][0] == {"text": "g", "thought": True, "thought_signature": b"sig"}
    assert contents[3]["parts"] == [{"text": "b"}]


@pytest.mark.parametrize("model,budget,think", [("llama-test", None, True), ("gpt-oss:20b", 20_000, "high"),
                                                 ("gpt-oss:20b", 1_000, "low")])
async def test_ollama_think_true_or_a_level(store: GraphStore, model: str, budget: int | None,
                                             think: Any) -> None:
    with make_fake("ollama") as fake:
        fake.queue(Turn(thinking=["x"], text=["y"]))
        provider = await asyncio.to_thread(provider_for, fake, model=model)
        try:
            transcript = TranscriptStore.for_store(store)
            session_id = store.create_session("s").id
            await ai_chat(session_id, [], "Go.", ChatDeps(provider, build_registry(store), store, transcript),
                          turn_options(system_prompt="t", params=GenerationParams(reasoning=True,
                                                                                  reasoning_budget=budget)),
                          approver=StaticApprover(Decision.ALLOW))
        finally:
            await provider.aclose()
        assert fake.generation_requests[0].body["think"] == think


async def test_gemini_answer_signature_goes_back_on_its_part(store: GraphStore) -> None:
    """Gemini signs the last part of an answer without calls: it goes back on that same part."""
    import base64

    with make_fake("gemini") as fake:
        fake.queue(Turn(thinking=["ponder"], text=["Hi."], thinking_signature=base64.b64encode(b"sig-1").decode()))
        session_id = store.create_session("s").id
        await chat(store, fake, session_id, params=GenerationParams(reasoning=True, reasoning_budget=2048))
        assert _camel(fake.generation_requests[0].body["generationConfig"]["thinkingConfig"]) == {
            "includeThoughts": True, "thinkingBudget": 2048}
        fake.queue(Turn(text=["Again."]))
        await chat(store, fake, session_id, prompt="More?")
        model = next(c for c in fake.generation_requests[-1].body["contents"] if c["role"] == "model")
        assert model["parts"][0]["thought"] is True
        assert base64.b64decode(model["parts"][0]["thoughtSignature"]) == b"sig-1"
        assert model["parts"][1] == {"text": "Hi."}


async def test_a_model_that_cannot_think_gets_one_sentence(store: GraphStore) -> None:
    """Ollama answers 400 "does not support thinking": the person reads what to switch off."""
    with make_fake("ollama") as fake:
        fake.queue(Turn(text=["never sent"]))
        session_id = store.create_session("s").id
        provider = await asyncio.to_thread(provider_for, fake, model="llama-nothink")
        seen: list[ev.AgentEvent] = []
        try:
            await ai_chat(session_id, [], "Go.", ChatDeps(provider, build_registry(store), store,
                                                          TranscriptStore.for_store(store)),
                          turn_options(system_prompt="t", params=THINK),
                          approver=StaticApprover(Decision.ALLOW), on_event=seen.append)
        finally:
            await provider.aclose()
        error = next(e for e in seen if isinstance(e, ev.ErrorEvent))
        assert error.kind == "no_thinking_support"
        assert error.message.startswith("llama-nothink cannot think before answering; turn Think before answering off")
        assert "\n" not in error.message and "Traceback" not in error.message


async def test_vendor_refusals_read_as_no_thinking_support() -> None:
    from cks_desktop.llm.errors import says_no_thinking

    assert says_no_thinking("Unsupported parameter: 'reasoning_effort' is not supported with this model.")
    assert says_no_thinking('"llama3.2" does not support thinking')
    assert not says_no_thinking("messages: at least one message is required")
