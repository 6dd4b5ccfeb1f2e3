"""The four provider families, one ``ProviderProfile`` each: the only table of provider facts.

Callers (the factory, the adapters, ``respond_json``, the settings page, the
composer, ``cks-desktop chat``) read these, never a table of their own keyed by
name. ``api_key_envs`` lists every environment variable that may hold the key, in
order of preference; the first is the one we name in messages. Gemini also accepts
``GOOGLE_API_KEY`` because Google's own tools use it, and people often have only
that one set.

Two lists must stay outside this package and are tied to it by tests:
``settings.PROVIDERS``/``settings.DEFAULTS`` (the settings file's shape; ``graph``
and ``mcp`` read settings and may not import ``llm``) and ``secrets``' list of
provider key variables (``mcp`` uses it to keep keys out of servers' environments).
"""

from __future__ import annotations

from cks_desktop.llm.provider import Price, ProviderProfile

ANTHROPIC = ProviderProfile(
    name="anthropic",
    display_name="Anthropic",
    adapter="cks_desktop.llm.providers.anthropic:AnthropicProvider",
    sdk="anthropic",
    default_model="claude-sonnet-5",
    default_base_url="https://api.anthropic.com",
    api_key_envs=("ANTHROPIC_API_KEY",),
    max_tokens_always_sent=True,
    tool_calling=True,
    native_structured_output=False,  # respond_json's schema becomes one forced tool instead
    parallel_tool_calls=True,
    # Anthropic's models take 200k tokens (the 1M window of some needs a beta header we do not send).
    context_windows=(("claude-", 200_000),),
    default_context_window=200_000,
    # Every Claude model since Claude 3 reads images; the older ones did not.
    image_models=(("claude-", True), ("claude-2", False), ("claude-instant", False)),
    default_images=False,
    # cache reads at a tenth of the input rate, writes at 1.25×
    prices=(("claude-sonnet-4-5", Price(3.0, 15.0, 0.30, 3.75)), ("claude-sonnet-4-0", Price(3.0, 15.0, 0.30, 3.75)),
            ("claude-opus-4-1", Price(15.0, 75.0, 1.50, 18.75)), ("claude-haiku-4-5", Price(1.0, 5.0, 0.10, 1.25))),
    output_limits=(("claude-opus-4", 32000), ("claude-sonnet-4", 64000), ("claude-haiku-4", 64000),
                   ("claude-3-7-sonnet", 64000), ("claude-3-5-sonnet", 8192), ("claude-3-5-haiku", 8192),
                   ("claude-3-haiku", 4096), ("claude-3-opus", 4096)),
)

OLLAMA = ProviderProfile(
    name="ollama",
    display_name="Ollama",
    adapter="cks_desktop.llm.providers.ollama:OllamaProvider",
    sdk="ollama",
    default_model="llama3.1",
    default_base_url="http://127.0.0.1:11434",
    api_key_envs=(),  # a local server: no key
    setting_options=("num_ctx", "think_level"),  # think_level: a level for ``think``
    tool_calling=True,  # per model: a model without tools answers 400, reported as no_tool_support
    native_structured_output=True,  # ``format=<JSON Schema>``
    parallel_tool_calls=True,
    # The window is the ``num_ctx`` the adapter sends (see llm/windows.py), not a table.
    default_context_window=16_384,
    images_from_server=True,  # /api/show lists "vision" among a model's capabilities
)

OPENAI = ProviderProfile(
    name="openai",
    display_name="OpenAI-compatible",
    adapter="cks_desktop.llm.providers.openai_compat:OpenAICompatProvider",
    sdk="openai",
    default_model="gpt-4.1-mini",
    default_base_url="https://api.openai.com/v1",
    api_key_envs=("OPENAI_API_KEY",),
    compatible_servers=True,  # a key only for api.openai.com (see factory.key_required)
    # how a server wants reasoning asked for (an object merged into the body) and sent back.
    # ``api``: "responses" picks the Responses API adapter (the only API with OpenAI's reasoning
    # summaries); anything else, Chat Completions.
    setting_options=("reasoning_request", "reasoning_echo", "api"),
    alternate_apis=(("responses", "Responses API (OpenAI: shows reasoning summaries)",
                     "cks_desktop.llm.providers.openai_responses:OpenAIResponsesProvider"),),
    tool_calling=True,
    native_structured_output=True,  # ``response_format`` json_schema (Responses: ``text.format``)
    parallel_tool_calls=True,
    context_windows=(("gpt-4.1", 1_047_576), ("gpt-4o", 128_000), ("gpt-4-turbo", 128_000), ("gpt-4", 8_192),
                     ("gpt-5", 400_000), ("gpt-3.5-turbo", 16_385), ("o1", 200_000), ("o3", 200_000),
                     ("o4-mini", 200_000)),
    default_context_window=32_768,  # a compatible server that does not say (a setting overrides it)
    # OpenAI's own vision models; a compatible server's model is unknown: the setting ``images`` says.
    image_models=(("gpt-4o", True), ("gpt-4.1", True), ("gpt-4-turbo", True), ("gpt-4.5", True), ("gpt-5", True),
                  ("o1", True), ("o1-mini", False), ("o1-preview", False), ("o3", True), ("o3-mini", False),
                  ("o4-mini", True), ("chatgpt-4o", True), ("gpt-4o-audio", False), ("gpt-3.5", False)),
    default_images=False,
    prices=(("gpt-4o", Price(2.50, 10.0, 1.25)), ("gpt-4o-mini", Price(0.15, 0.60, 0.075)),
            ("gpt-4.1", Price(2.0, 8.0, 0.50)), ("gpt-4.1-mini", Price(0.40, 1.60, 0.10)),
            ("gpt-5", Price(1.25, 10.0, 0.125)), ("gpt-5-mini", Price(0.25, 2.0, 0.025))),
    output_limits=(("gpt-4o", 16384), ("gpt-4.1", 32768), ("gpt-5", 128000), ("o1", 100000), ("o3", 100000),
                   ("o4-mini", 100000)),
)

GEMINI = ProviderProfile(
    name="gemini",
    display_name="Gemini",
    adapter="cks_desktop.llm.providers.gemini:GeminiProvider",
    sdk="google.genai",
    default_model="gemini-2.5-flash",
    default_base_url="https://generativelanguage.googleapis.com",
    api_key_envs=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
    tool_calling=True,
    native_structured_output=True,  # ``response_json_schema``
    parallel_tool_calls=True,
    context_windows=(("gemini-1.5-pro", 2_097_152), ("gemini-", 1_048_576)),
    default_context_window=1_048_576,
    image_models=(("gemini-", True), ("gemma-", False)),  # every Gemini model reads images
    default_images=False,
    prices=(("gemini-2.5-flash", Price(0.30, 2.50, 0.075)), ("gemini-2.5-pro", Price(1.25, 10.0, 0.31)),
            ("gemini-2.0-flash", Price(0.10, 0.40, 0.025))),
    output_limits=(("gemini-1.5", 8192), ("gemini-2.0", 8192), ("gemini-2.5", 65536)),
)

PROFILES: dict[str, ProviderProfile] = {p.name: p for p in (ANTHROPIC, OLLAMA, OPENAI, GEMINI)}
PROVIDER_NAMES: tuple[str, ...] = tuple(PROFILES)

# A view of the profiles for ``secrets``' tie-in test (secrets keeps its own copy; see above).
API_KEY_ENVS: dict[str, tuple[str, ...]] = {p.name: p.api_key_envs for p in PROFILES.values()}


def profile_for(name: str) -> ProviderProfile:
    try:
        return PROFILES[name]
    except KeyError:
        known = ", ".join(PROFILES)
        raise ValueError(f"Unknown provider {name!r}; choose one of {known}.") from None


def display_name(name: str) -> str:
    """The provider's display name, or ``name`` itself for one we do not know (an old setting)."""
    profile = PROFILES.get(name)
    return profile.display_name if profile else name
