"""A base URL with a wrong path: the sentence says what was requested and what came back.

Found by a new user: the provider Test with a wrong path said "check the base URL in
Settings → Providers" while they were on that page, and named neither the status nor the
address the request went to. Against each real SDK and its fake server (a wrong path
answers 404 there, as on the real services).
"""

from __future__ import annotations

import dataclasses

import pytest

from cks_desktop.llm.errors import SETTINGS_PAGE
from cks_desktop.llm.factory import adapter_for

from tests.fakes.providers import PROVIDER_NAMES, make_fake, provider_config_for
from tests.llm.support import run_until_error

pytestmark = pytest.mark.asyncio
REQUESTED = {"anthropic": "POST {o}/wrong/v1/messages", "ollama": "POST {o}/wrong/api/chat",
             "openai": "POST {o}/wrong/chat/completions",
             "gemini": "POST {o}/wrong/v1/models/gemini-test:streamGenerateContent"}


@pytest.mark.parametrize("provider_name", PROVIDER_NAMES)
async def test_wrong_base_path_names_the_request_and_the_status(provider_name: str) -> None:
    with make_fake(provider_name) as fake:
        origin = fake.origin
        config = dataclasses.replace(provider_config_for(fake), base_url=fake.origin + "/wrong")
        provider = adapter_for(config)
        try:
            _, error = await run_until_error(provider)
        finally:
            await provider.aclose()
    assert error.kind == "not_found"
    requested = REQUESTED[provider_name].format(o=origin)
    assert requested in error.message and "404" in error.message
    assert "?" not in error.message.split(requested)[1][:1]  # no query string (Gemini's may carry a key)
    assert error.message.endswith(f"check it in {SETTINGS_PAGE}.")
    # Where the person already is (the provider's settings page) the sentence does not send them there.
    assert SETTINGS_PAGE not in error.local_message
    assert requested in error.local_message and "404" in error.local_message
    assert error.detail["url"] == requested.split(" ", 1)[1]
