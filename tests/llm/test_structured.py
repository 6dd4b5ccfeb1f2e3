"""respond_json through all four adapters: native structured output, validation, one repair turn."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cks_desktop.llm.messages import Message
from cks_desktop.llm.providers.openai_compat import strict_compatible
from cks_desktop.llm.structured import StructuredOutputError, check, respond_json

from tests.fakes.anthropic_fake import FakeAnthropic
from tests.fakes.server import FakeServer, RecordedRequest, split_text
from tests.fakes.providers import PROVIDER_NAMES
from tests.fakes.script import Turn
from tests.llm.support import opened

providers = pytest.mark.parametrize("provider_name", PROVIDER_NAMES)

ITEM = {"type": "object", "properties": {"name": {"type": "string"}, "type": {"type": "string"}},
        "required": ["name", "type"], "additionalProperties": False}
SCHEMA = {"type": "object",
          "properties": {"objects": {"type": "array", "items": ITEM},
                         "relations": {"type": "array", "items": {"type": "string"}}},
          "required": ["objects", "relations"], "additionalProperties": False}
ANSWER = {"objects": [{"name": "Ada Lovelace", "type": "Person"}, {"name": "Analytical Engine", "type": "Machine"}],
          "relations": ["Ada Lovelace wrote about Analytical Engine"]}
PROMPT = [Message.user("Ada Lovelace wrote notes on the Analytical Engine.")]


def json_turn(value: Any, pieces: int = 4) -> Turn:
    return Turn(text=split_text(json.dumps(value), pieces))


def last_user_text(provider_name: str, request: RecordedRequest) -> str:
    body = request.body
    if provider_name == "anthropic":
        return "".join(b.get("text", "") for b in body["messages"][-1]["content"])
    if provider_name == "gemini":
        return "".join(p.get("text", "") for p in body["contents"][-1]["parts"])
    return body["messages"][-1]["content"]


def assert_native_request(provider_name: str, body: dict[str, Any]) -> None:
    if provider_name == "anthropic":
        assert body["tool_choice"] == {"type": "tool", "name": "respond"}
        assert [t["input_schema"] for t in body["tools"]] == [SCHEMA]
    elif provider_name == "openai":
        assert body["response_format"] == {"type": "json_schema", "json_schema": {
            "name": "response", "schema": SCHEMA, "strict": True}}
        assert "tools" not in body
    elif provider_name == "ollama":
        assert body["format"] == SCHEMA and not body.get("tools")  # the SDK always sends a list
    else:
        config = body["generationConfig"]
        assert config["responseMimeType"] == "application/json"
        assert config.get("responseJsonSchema", config.get("response_json_schema")) == SCHEMA
        assert "tools" not in body


@providers
@pytest.mark.asyncio
async def test_same_schema_same_answer_on_every_provider(fake: FakeServer, provider_name: str) -> None:
    fake.queue(json_turn(ANSWER))
    async with opened(fake) as provider:
        result = await respond_json(provider, PROMPT, SCHEMA, system="Extract objects.")
    assert result == ANSWER
    [request] = fake.generation_requests
    assert_native_request(provider_name, request.body)


@providers
@pytest.mark.asyncio
async def test_one_repair_turn_shows_the_validation_errors(fake: FakeServer, provider_name: str) -> None:
    wrong = {"objects": [{"name": "Ada Lovelace"}], "relations": []}
    fake.queue(json_turn(wrong), json_turn(ANSWER))
    async with opened(fake) as provider:
        result = await respond_json(provider, PROMPT, SCHEMA)
    assert result == ANSWER
    first, second = fake.generation_requests
    repair = last_user_text(provider_name, second)
    assert "$.objects[0]: 'type' is a required property" in repair
    assert "only the corrected JSON" in repair
    assert_native_request(provider_name, second.body)


@providers
@pytest.mark.asyncio
async def test_twice_invalid_raises_with_the_errors(fake: FakeServer, provider_name: str) -> None:
    fake.queue(Turn(text=["not json at all"]), json_turn({"objects": "none", "relations": []}))
    async with opened(fake) as provider:
        with pytest.raises(StructuredOutputError) as caught:
            await respond_json(provider, PROMPT, SCHEMA)
    assert len(fake.generation_requests) == 2  # exactly one repair turn
    error = caught.value
    assert error.errors == ["$.objects: 'none' is not of type 'array'"]
    assert json.loads(error.raw) == {"objects": "none", "relations": []}
    assert error.message.endswith(").") and "required format" in error.message
    assert "not valid JSON" in last_user_text(provider_name, fake.generation_requests[1])


@pytest.mark.asyncio
async def test_anthropic_wraps_a_non_object_schema_and_unwraps_the_answer() -> None:
    schema = {"type": "array", "items": {"type": "string"}}
    with FakeAnthropic() as fake:
        fake.queue(json_turn({"value": ["a", "b"]}))  # the model fills the wrapper tool's input
        async with opened(fake) as provider:
            assert await respond_json(provider, PROMPT, schema) == ["a", "b"]
    tool = fake.generation_requests[0].body["tools"][0]
    assert tool["input_schema"] == {"type": "object", "properties": {"value": schema}, "required": ["value"]}


def test_check_accepts_fenced_json_and_reports_paths() -> None:
    value, errors = check('```json\n{"objects": [], "relations": []}\n```', SCHEMA)
    assert value == {"objects": [], "relations": []} and errors == []
    _, errors = check('{"objects": [{"name": 1, "type": "x"}], "relations": [], "extra": 1}', SCHEMA)
    assert errors == ["$: Additional properties are not allowed ('extra' was unexpected)",
                      "$.objects[0].name: 1 is not of type 'string'"]
    assert check("", SCHEMA)[1] == ["the answer was empty"]


@pytest.mark.parametrize("schema, strict", [
    (SCHEMA, True),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": []}, False),
    ({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}, False),
    ({"type": "array", "items": {"type": "string"}}, False),
    ({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}},
                                             "required": ["b"]}},
      "required": ["a"], "additionalProperties": False}, False),
    ({"type": "object", "properties": {}, "required": [], "additionalProperties": False}, True),
])
def test_openai_strict_mode_only_for_schemas_it_accepts(schema: dict[str, Any], strict: bool) -> None:
    assert strict_compatible(schema) is strict
