"""One profile per provider, and every fact in it has a reader.

The profile is the only table of provider facts (display name, default model,
key variables, base URL, capabilities). A fact nobody reads only pretends to
configure something, so the first test walks the package's source and fails on
a ``ProviderProfile`` field or property that no module outside ``llm/profiles.py``
and ``llm/provider.py`` reads.
"""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path
from typing import Any

import pytest

import cks_desktop
from cks_desktop.llm import factory
from cks_desktop.llm.factory import adapter_for, key_required, provider_config
from cks_desktop.llm.messages import Message
from cks_desktop.llm.profiles import OPENAI, PROFILES, PROVIDER_NAMES, profile_for
from cks_desktop.llm.provider import ProviderProfile
from cks_desktop.llm.structured import respond_json
from cks_desktop.settings import DEFAULTS, PROVIDERS

from tests.fakes.providers import make_fake, provider_config_for
from tests.fakes.script import Turn, call_turn
from tests.fakes.scripted import ScriptedProvider
from tests.llm.support import TOOLS, run_turn

PACKAGE = Path(cks_desktop.__file__).parent
DEFINED_IN = {PACKAGE / "llm" / "profiles.py", PACKAGE / "llm" / "provider.py"}


def profile_facts() -> set[str]:
    fields = {f.name for f in dataclasses.fields(ProviderProfile)}
    properties = {n for n, v in vars(ProviderProfile).items() if isinstance(v, property)}
    return fields | properties


def attributes_read(root: Path, skip: set[Path]) -> set[str]:
    """Every ``x.attr`` read in the Python files under ``root`` (keyword arguments are not reads)."""
    names: set[str] = set()
    for path in root.rglob("*.py"):
        if path in skip:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                names.add(node.attr)
    return names


def unread_facts(root: Path, skip: set[Path]) -> set[str]:
    return profile_facts() - attributes_read(root, skip)


def test_every_profile_fact_has_a_reader() -> None:
    assert unread_facts(PACKAGE, DEFINED_IN) == set(), \
        "a ProviderProfile fact nobody reads: give it a reader or drop it"


def test_the_reader_check_notices_an_unread_flag(tmp_path: Path) -> None:
    (tmp_path / "user.py").write_text("def f(p):\n    return p.display_name, p.name\n", encoding="utf-8")
    unread = unread_facts(tmp_path, set())
    assert "parallel_tool_calls" in unread and "display_name" not in unread


def test_one_profile_per_provider_and_the_settings_agree() -> None:
    # settings may not import llm (graph and mcp read settings), so it keeps the shape; it must agree
    assert PROVIDERS == PROVIDER_NAMES == tuple(PROFILES)
    for name, profile in PROFILES.items():
        assert profile.name == name and profile.display_name and profile.default_model
        section = DEFAULTS["providers"][name]
        assert section["model"] == profile.default_model
        assert section["base_url"] in ("", profile.default_base_url)
        module, _, cls = profile.adapter.partition(":")
        assert module.startswith("cks_desktop.llm.providers.") and cls
    with pytest.raises(ValueError, match="choose one of anthropic, ollama, openai, gemini"):
        profile_for("mistral")


def test_defaults_and_key_variables_come_from_the_profile(monkeypatch: pytest.MonkeyPatch) -> None:
    for env in ("GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(env, raising=False)
    monkeypatch.setenv("GOOGLE_API_KEY", "from-google")
    config = provider_config("gemini", None, None)
    assert config.api_key == "from-google" and config.model == PROFILES["gemini"].default_model
    # OpenAI-compatible: a key only at the vendor's own host
    assert key_required("openai", "") and key_required("openai", "https://api.openai.com/v1")
    assert not key_required("openai", "http://127.0.0.1:1234/v1")
    assert not key_required("openai", "https://notopenai.com/v1")
    assert not key_required("ollama", "")


def test_a_missing_key_names_the_provider_and_its_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    error = factory.missing_key_error("anthropic")
    assert error.message == ("No Anthropic API key is set: add one in Settings → Providers "
                             "or set ANTHROPIC_API_KEY.")


SCHEMA: dict[str, Any] = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}


@pytest.mark.asyncio
async def test_respond_json_uses_the_native_mode_when_the_profile_has_one() -> None:
    provider = ScriptedProvider([Turn(text=['{"n": 1}'])])
    assert await respond_json(provider, [Message.user("one")], SCHEMA, system="Count.") == {"n": 1}
    [request] = provider.requests
    assert request.response_schema == SCHEMA and request.system == "Count."


@pytest.mark.asyncio
async def test_respond_json_asks_in_words_when_the_provider_can_neither() -> None:
    provider = ScriptedProvider([Turn(text=['{"n": 2}'])])
    provider.profile = ProviderProfile(name="plain", display_name="Plain", tool_calling=False,
                                       native_structured_output=False)
    assert await respond_json(provider, [Message.user("two")], SCHEMA, system="Count.") == {"n": 2}
    [request] = provider.requests
    assert request.response_schema is None  # it could only ignore or reject one
    assert request.system is not None and request.system.startswith("Count.")
    assert '"required": ["n"]' in request.system and "JSON Schema" in request.system


@pytest.mark.parametrize("name", ["openai", "anthropic"])
@pytest.mark.asyncio
async def test_no_parallel_calls_reaches_the_wire(name: str) -> None:
    with make_fake(name) as fake:
        fake.queue(call_turn("list_objects", {}), call_turn("list_objects", {}))
        config = provider_config_for(fake)
        serial = adapter_for(config)
        serial.profile = dataclasses.replace(profile_for(name), parallel_tool_calls=False)  # type: ignore[misc]
        default = adapter_for(config)
        try:
            await run_turn(serial, tools=TOOLS)
            await run_turn(default, tools=TOOLS)
        finally:
            await serial.aclose()
            await default.aclose()
        off, on = (r.body for r in fake.generation_requests)
    if name == "openai":
        assert off["parallel_tool_calls"] is False and "parallel_tool_calls" not in on
    else:
        assert off["tool_choice"] == {"type": "auto", "disable_parallel_tool_use": True}
        assert "tool_choice" not in on
    assert OPENAI.parallel_tool_calls  # the shipped profiles allow parallel calls
