"""Images go out in each vendor's real wire format, asserted on what the SDK really sent the fake
(section 3) — and as their notes when the model does not take images."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from cks_desktop.llm import vision
from cks_desktop.llm.messages import ImagePart, Message, Text, ToolCallPart, ToolResultPart
from cks_desktop.llm.profiles import ANTHROPIC, GEMINI, OLLAMA, OPENAI
from cks_desktop.tools.images import sniff

from tests.fakes.providers import PROVIDER_NAMES
from tests.fakes.script import text_turn
from tests.fakes.server import FakeServer
from tests.llm.support import opened, run_turn
from tests.png import make_gif, make_png



TOOL_PNG = make_png(4, 3)
USER_GIF = make_gif(2, 2)


def _part(data: bytes) -> ImagePart:
    blob = sniff(data)
    return ImagePart(blob.digest, blob.media_type, blob.width, blob.height, blob.size, data)


TOOL_IMAGE = _part(TOOL_PNG)
USER_IMAGE = _part(USER_GIF)
HISTORY = [
    Message("user", [Text("What is in this picture?"), USER_IMAGE]),
    Message("assistant", [ToolCallPart("toolu_01", "mcp:shots:screenshot", {})]),
    Message("tool", [ToolResultPart("toolu_01", "mcp:shots:screenshot", "[image: image/png, 4×3, 75 bytes]",
                                    images=(TOOL_IMAGE,))]),
    Message.user("And now?"),
]
VISION_MODEL = {"anthropic": "claude-test", "openai": "gpt-4o", "ollama": "llava-test", "gemini": "gemini-test"}
PLAIN_MODEL = {"anthropic": "claude-2.1", "openai": "gpt-test", "ollama": "llama-test", "gemini": "gemma-test"}
B64_PNG = base64.b64encode(TOOL_PNG).decode()
B64_GIF = base64.b64encode(USER_GIF).decode()


def _check_anthropic(body: dict[str, Any]) -> None:
    user, _assistant, results = body["messages"]
    assert user["content"] == [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/gif", "data": B64_GIF}}]
    result = results["content"][0]
    assert result["type"] == "tool_result" and result["tool_use_id"] == "toolu_01"
    assert result["content"] == [
        {"type": "text", "text": "[image: image/png, 4×3, 75 bytes]"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": B64_PNG}}]


def _check_openai(body: dict[str, Any]) -> None:
    user, assistant, tool, carried, last = body["messages"]
    assert user == {"role": "user", "content": [
        {"type": "text", "text": "What is in this picture?"},
        {"type": "image_url", "image_url": {"url": f"data:image/gif;base64,{B64_GIF}"}}]}
    assert assistant["tool_calls"][0]["id"] == "toolu_01"
    assert tool == {"role": "tool", "tool_call_id": "toolu_01", "content": "[image: image/png, 4×3, 75 bytes]"}
    # a tool message holds text only: the images follow the turn's tool messages as a user message
    assert carried["role"] == "user"
    caption, image = carried["content"]
    assert "toolu_01" in caption["text"] and "mcp:shots:screenshot" in caption["text"]
    assert image == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{B64_PNG}"}}
    assert last == {"role": "user", "content": "And now?"}


def _check_ollama(body: dict[str, Any]) -> None:
    user, _assistant, tool, last = body["messages"]
    assert user == {"role": "user", "content": "What is in this picture?", "images": [B64_GIF]}
    assert tool["role"] == "tool" and tool["images"] == [B64_PNG]
    assert last == {"role": "user", "content": "And now?"}


def _gemini_blob(part: dict[str, Any]) -> tuple[str, bytes]:
    """google-genai sends ``inlineData`` with the Blob as pydantic dumps it (``mime_type``, base64url
    data); the API's JSON parser takes both spellings of each."""
    blob = part["inlineData"]
    return blob.get("mimeType") or blob["mime_type"], base64.urlsafe_b64decode(blob["data"])


def _check_gemini(body: dict[str, Any]) -> None:
    user, _model, results = body["contents"]
    text, image = user["parts"]
    assert text == {"text": "What is in this picture?"}
    assert _gemini_blob(image) == ("image/gif", USER_GIF)
    response, caption, image, prompt = results["parts"]
    assert response["functionResponse"]["response"] == {"output": "[image: image/png, 4×3, 75 bytes]"}
    assert "toolu_01" in caption["text"]
    assert _gemini_blob(image) == ("image/png", TOOL_PNG)
    assert prompt == {"text": "And now?"}


CHECKS = {"anthropic": _check_anthropic, "openai": _check_openai, "ollama": _check_ollama, "gemini": _check_gemini}


def _no_image_anywhere(body: Any) -> None:
    text = str(body)
    for data in (TOOL_PNG, USER_GIF):
        assert base64.b64encode(data).decode() not in text and base64.urlsafe_b64encode(data).decode() not in text
    for marker in ("image_url", "'image'", "inlineData", "'images'"):
        assert marker not in text, marker


@pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
@pytest.mark.asyncio
async def test_images_go_out_in_the_vendor_format_when_the_model_takes_them(fake: FakeServer,
                                                                           provider_name: str) -> None:
    fake.queue(text_turn("A red square."))
    async with opened(fake, model=VISION_MODEL[provider_name]) as provider:
        turn = await run_turn(provider, HISTORY)
    assert turn.text == "A red square."
    CHECKS[provider_name](fake.generation_requests[0].body)


@pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
@pytest.mark.asyncio
async def test_a_model_without_images_gets_the_notes_and_no_bytes(fake: FakeServer, provider_name: str) -> None:
    fake.queue(text_turn("I cannot see it."))
    async with opened(fake, model=PLAIN_MODEL[provider_name]) as provider:
        await run_turn(provider, HISTORY)
    body = fake.generation_requests[0].body
    _no_image_anywhere(body)
    # the tool's note is still there, and the person's image is named in words
    text = str(body)
    assert "[image: image/png, 4×3, 75 bytes]" in text
    assert "image/gif, 2×2" in text and "does not take images" in text


@pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
@pytest.mark.asyncio
async def test_the_setting_overrides_the_table(fake: FakeServer, provider_name: str) -> None:
    fake.queue(text_turn("ok"), text_turn("ok"))
    async with opened(fake, model=VISION_MODEL[provider_name], options={"images": "no"}) as provider:
        await run_turn(provider, HISTORY)
    _no_image_anywhere(fake.generation_requests[0].body)
    async with opened(fake, model=PLAIN_MODEL[provider_name], options={"images": "yes"}) as provider:
        await run_turn(provider, HISTORY)
    CHECKS[provider_name](fake.generation_requests[1].body)


@pytest.mark.parametrize("provider_name", ["ollama"])
@pytest.mark.asyncio
async def test_ollama_asks_the_server_only_when_a_request_has_an_image(fake: FakeServer, provider_name: str) -> None:
    fake.queue(text_turn("hi"), text_turn("seen"))
    async with opened(fake, model="llava-test") as provider:
        await run_turn(provider, [Message.user("hello")])
        assert not [r for r in fake.requests if r.path == "/api/show"]
        await run_turn(provider, HISTORY)
        shows = [r for r in fake.requests if r.path == "/api/show"]
        assert len(shows) == 1 and shows[0].body["model"] == "llava-test"
        assert await vision.accepts_images(provider)
    CHECKS["ollama"](fake.generation_requests[1].body)


@pytest.mark.asyncio
async def test_an_image_whose_bytes_are_gone_goes_as_a_note() -> None:
    from cks_desktop.llm.providers.anthropic import to_anthropic_messages

    gone = ImagePart(TOOL_IMAGE.image_id, "image/png", 4, 3, 75)  # read from JSON, store copy missing
    [wire] = to_anthropic_messages([Message("user", [Text("look"), gone])], images=True)
    assert wire["content"][1] == {"type": "text", "text": "[image: image/png, 4×3, 75 bytes] (not shown: the "
                                                          "stored image is missing)"}


def test_the_profiles_know_their_vision_models() -> None:
    assert vision.known_images(ANTHROPIC, "claude-sonnet-4-5") is True
    assert vision.known_images(ANTHROPIC, "claude-2.1") is False
    assert vision.known_images(OPENAI, "gpt-4o-mini") is True
    assert vision.known_images(OPENAI, "o3-mini") is False
    assert vision.known_images(OPENAI, "my-local-model") is False
    assert vision.known_images(OPENAI, "my-local-model", {"images": "yes"}) is True
    assert vision.known_images(GEMINI, "gemini-2.5-flash") is True
    assert vision.known_images(OLLAMA, "llava") is None  # only the server can say


@pytest.mark.asyncio
@pytest.mark.parametrize("name", ["anthropic", "openai", "openai-responses"])
async def test_images_are_encoded_off_the_loop_before_the_request_is_built(name: str) -> None:
    """images-2: ``images_ready`` (which every adapter awaits before ``request()``) encodes the
    images the way the adapter sends them in a worker thread, so ``request()`` on the event loop
    only looks the strings up — the same string objects every turn, never rebuilt — and ten
    large images do not hold the loop (lag probe)."""
    from cks_desktop.llm.provider import ProviderConfig
    from cks_desktop.llm.providers.anthropic import AnthropicProvider
    from cks_desktop.llm.providers.openai_compat import OpenAICompatProvider
    from cks_desktop.llm.providers.openai_responses import OpenAIResponsesProvider
    from cks_desktop.tools import images as encoded

    from tests.reliability.lag import LagProbe

    provider = {"anthropic": lambda: AnthropicProvider(ProviderConfig("anthropic", "claude-test", api_key="x")),
                "openai": lambda: OpenAICompatProvider(ProviderConfig("openai", "gpt-4o", api_key="x")),
                "openai-responses": lambda: OpenAIResponsesProvider(ProviderConfig("openai", "gpt-4o", api_key="x")),
                }[name]()
    kind = provider.image_encoding
    big = [_part(make_png(4, 3, (i, 0, 0)) + bytes(4 * 1024 * 1024)) for i in range(10)]  # 10 × 4 MB
    messages = [Message("user", [Text("What are these?"), *big])]
    encoded.clear_encoded()
    try:
        async with LagProbe(f"{name}: images_ready + request() with 10 × 4 MB images"):
            await vision.images_ready(provider, messages)
            assert all(encoded.is_encoded(p.image_id, p.media_type, p.size, kind) for p in big)
            first = provider.request(messages, [], None, None)
        assert base64.b64encode(big[3].data).decode() in str(first)
        # the next turn's request holds the very strings the cache holds: nothing re-encoded
        body = provider.request(messages, [], None, None)
        wanted = (encoded.data_url_of if kind == "data_url" else
                  lambda d, _t, data: encoded.base64_of(d, data))(big[0].image_id, big[0].media_type, big[0].data)
        strings: list[str] = []

        def walk(value: Any) -> None:
            if isinstance(value, dict):
                for v in value.values():
                    walk(v)
            elif isinstance(value, list):
                for v in value:
                    walk(v)
            elif isinstance(value, str) and len(value) > 1_000_000:
                strings.append(value)

        walk(body)
        assert len(strings) == 10 and any(s is wanted for s in strings)
    finally:
        encoded.clear_encoded()
        await provider.aclose()
