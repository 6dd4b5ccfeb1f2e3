"""Capability facts for the four provider families.

Callers (the agent, ``respond_json``, the settings page) branch on these facts,
never on a provider's name. ``api_key_envs`` lists every environment variable
that may hold the key, in order of preference; the first is the one we name in
messages. Gemini also accepts ``GOOGLE_API_KEY`` because Google's own tools use
it, and people often have only that one set.
"""

from __future__ import annotations

from cks_desktop.llm.provider import ProviderProfile

ANTHROPIC = ProviderProfile(
    name="anthropic",
    display_name="Anthropic",
    tool_calling=True,
    native_structured_output=False,  # respond_json forces a single tool instead
    parallel_tool_calls=True,
    needs_api_key=True,
    api_key_env="ANTHROPIC_API_KEY",
)

OLLAMA = ProviderProfile(
    name="ollama",
    display_name="Ollama",
    tool_calling=True,  # per model: a model without tools answers 400, reported as no_tool_support
    native_structured_output=True,  # ``format=<JSON Schema>``
    parallel_tool_calls=True,
    needs_api_key=False,
    api_key_env=None,
)

OPENAI = ProviderProfile(
    name="openai",
    display_name="OpenAI",
    tool_calling=True,
    native_structured_output=True,  # ``response_format`` json_schema
    parallel_tool_calls=True,
    needs_api_key=True,  # not for a local OpenAI-compatible server (see factory)
    api_key_env="OPENAI_API_KEY",
)

GEMINI = ProviderProfile(
    name="gemini",
    display_name="Gemini",
    tool_calling=True,
    native_structured_output=True,  # ``response_json_schema``
    parallel_tool_calls=True,
    needs_api_key=True,
    api_key_env="GEMINI_API_KEY",
)

PROFILES: dict[str, ProviderProfile] = {p.name: p for p in (ANTHROPIC, OLLAMA, OPENAI, GEMINI)}

API_KEY_ENVS: dict[str, tuple[str, ...]] = {
    "anthropic": ("ANTHROPIC_API_KEY",),
    "ollama": (),
    "openai": ("OPENAI_API_KEY",),
    "gemini": ("GEMINI_API_KEY", "GOOGLE_API_KEY"),
}

DEFAULT_BASE_URLS: dict[str, str] = {
    "anthropic": "https://api.anthropic.com",
    "ollama": "http://127.0.0.1:11434",
    "openai": "https://api.openai.com/v1",
    "gemini": "https://generativelanguage.googleapis.com",
}


def profile_for(name: str) -> ProviderProfile:
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(PROFILES)
        raise ValueError(f"Unknown provider {name!r}; choose one of {known}.") from None
