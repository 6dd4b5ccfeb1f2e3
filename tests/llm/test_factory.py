"""create_provider: keys from arguments, environment and keychain; settings; Ollama detection; import cost."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from cks_desktop.llm.factory import create_provider, detect_ollama, provider_config, secret_ref
from cks_desktop.llm.provider import ProviderError
from cks_desktop.secrets import SecretStore
from cks_desktop.settings import DEFAULTS, Settings

from tests.fakes.server import FakeServer
from tests.fakes.ollama_fake import FakeOllama
from tests.fakes.providers import PROVIDER_NAMES
from tests.fakes.script import text_turn
from tests.llm.support import run_turn

ENV = {"anthropic": "ANTHROPIC_API_KEY", "openai": "OPENAI_API_KEY", "gemini": "GEMINI_API_KEY"}


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return Settings.load(tmp_path / "settings.json")


def _key_header(name: str, fake: FakeServer) -> str | None:
    request = fake.generation_requests[-1]
    return request.header("x-goog-api-key") if name == "gemini" else request.header("authorization")


@pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
@pytest.mark.asyncio
async def test_missing_key_fails_before_any_request(fake: FakeServer, provider_name: str, settings: Settings,
                                                    secret_store: SecretStore) -> None:
    # an OpenAI-compatible server elsewhere needs no key, so OpenAI is asked for at its own address
    url = None if provider_name == "openai" else fake.base_url
    if provider_name == "ollama":  # Ollama needs no key at all
        fake.queue(text_turn("no key needed"))
        provider = create_provider("ollama", settings, secret_store, base_url=url)
        try:
            assert (await run_turn(provider)).text == "no key needed"
        finally:
            await provider.aclose()
        return
    with pytest.raises(ProviderError) as caught:
        create_provider(provider_name, settings, secret_store, base_url=url)
    error = caught.value
    assert error.kind == "missing_key"
    assert ENV[provider_name] in error.message and "Settings → Providers" in error.message
    assert fake.requests == []


@pytest.mark.parametrize("provider_name", ["anthropic", "openai", "gemini"])
@pytest.mark.asyncio
async def test_environment_overrides_the_keychain(fake: FakeServer, provider_name: str, settings: Settings,
                                                  secret_store: SecretStore, monkeypatch: pytest.MonkeyPatch) -> None:
    secret_store.set(secret_ref(provider_name), "from-keychain")
    fake.queue(text_turn("a"), text_turn("b"))
    provider = create_provider(provider_name, settings, secret_store, base_url=fake.base_url, max_retries=0,
                               model=fake.default_model)
    try:
        await run_turn(provider)
    finally:
        await provider.aclose()
    assert "from-keychain" in (_key_header(provider_name, fake) or "")

    monkeypatch.setenv(ENV[provider_name], "from-env")
    provider = create_provider(provider_name, settings, secret_store, base_url=fake.base_url, max_retries=0,
                               model=fake.default_model)
    try:
        await run_turn(provider)
    finally:
        await provider.aclose()
    assert "from-env" in (_key_header(provider_name, fake) or "")


def test_explicit_key_wins_and_gemini_accepts_google_api_key(settings: Settings, secret_store: SecretStore,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "env")
    assert provider_config("anthropic", settings, secret_store, api_key="flag").api_key == "flag"
    monkeypatch.setenv("GOOGLE_API_KEY", "google")
    assert provider_config("gemini", settings, secret_store).api_key == "google"
    monkeypatch.setenv("GEMINI_API_KEY", "gemini")
    assert provider_config("gemini", settings, secret_store).api_key == "gemini"


def test_model_and_base_url_come_from_settings_unless_given(settings: Settings, secret_store: SecretStore) -> None:
    settings.provider("ollama").update({"model": "qwen3:8b", "base_url": "http://gpu-box:11434", "num_ctx": 32768})
    config = provider_config("ollama", settings, secret_store)
    assert (config.model, config.base_url, config.options) == ("qwen3:8b", "http://gpu-box:11434", {"num_ctx": 32768})
    config = provider_config("ollama", settings, secret_store, model="llama3.2", base_url="http://other:1")
    assert (config.model, config.base_url) == ("llama3.2", "http://other:1")
    assert provider_config("anthropic", None, None, api_key="k").model == DEFAULTS["providers"]["anthropic"]["model"]
    assert provider_config("anthropic", settings, None, api_key="k", max_retries=5).max_retries == 5


def test_unknown_provider(settings: Settings) -> None:
    with pytest.raises(ValueError, match="anthropic, ollama, openai, gemini"):
        provider_config("mistral", settings, None)


@pytest.mark.asyncio
async def test_ollama_num_ctx_from_settings_reaches_the_request(settings: Settings) -> None:
    settings.provider("ollama")["num_ctx"] = 8192
    with FakeOllama() as fake:
        fake.queue(text_turn("ok"))
        provider = create_provider("ollama", settings, None, base_url=fake.base_url)
        try:
            await run_turn(provider)
        finally:
            await provider.aclose()
    assert fake.generation_requests[0].body["options"] == {"num_ctx": 8192}


@pytest.mark.asyncio
async def test_local_openai_compatible_server_needs_no_key(settings: Settings) -> None:
    from tests.fakes.openai_fake import FakeOpenAI

    with FakeOpenAI() as fake:
        fake.queue(text_turn("local"))
        provider = create_provider("openai", settings, None, base_url=fake.base_url, model="qwen")
        try:
            assert (await run_turn(provider)).text == "local"
        finally:
            await provider.aclose()
    assert fake.generation_requests[0].body["model"] == "qwen"


@pytest.mark.asyncio
async def test_detect_ollama() -> None:
    with FakeOllama() as fake:
        assert await detect_ollama(fake.base_url, timeout=2) is True
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    assert await detect_ollama(f"http://127.0.0.1:{port}", timeout=0.5) is False
    assert await detect_ollama("http://[::bad", timeout=0.5) is False


def test_importing_the_llm_package_loads_no_vendor_sdk() -> None:
    code = ("import sys, cks_desktop.llm.factory, cks_desktop.llm.structured, cks_desktop.llm.assembler, "
            "cks_desktop.llm.errors, cks_desktop.llm.profiles, cks_desktop.llm.providers.base\n"
            "print(json.dumps(sorted(m for m in ('anthropic', 'openai', 'ollama', 'google.genai', 'httpx', "
            "'httpx2', 'jsonschema') if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", "import json\n" + code], capture_output=True, text=True,
                         check=True, timeout=60)
    assert json.loads(out.stdout) == []
