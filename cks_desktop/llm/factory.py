"""Build a provider from settings, the keychain and the environment.

Precedence, most specific first: arguments (CLI flags, a test), then the
environment variable for the key (``ANTHROPIC_API_KEY`` etc. — an override a
person sets on purpose), then the keychain entry ``provider:<name>``; for the
model and base URL, arguments then settings. A missing key fails here, before
any request, with a sentence that names the variable and the settings page.

An OpenAI-compatible server other than api.openai.com (llama.cpp, LM Studio,
vLLM on a LAN box) usually needs no key, so none is required once a base URL
pointing elsewhere is set; a server that does want one answers 401, which is
reported as a rejected key.

The vendor SDKs are imported here only when their adapter is built, so
importing this module (and ``cks_desktop.llm``) stays fast.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from cks_desktop.llm.errors import SETTINGS_PAGE
from cks_desktop.sdk_import import import_sdk
from cks_desktop.llm.profiles import OLLAMA, PROFILES, profile_for
from cks_desktop.llm.provider import Provider, ProviderConfig, ProviderError
from cks_desktop.settings.sections import ProviderEntry

if TYPE_CHECKING:
    from cks_desktop.secrets import SecretStore
    from cks_desktop.settings import Settings

DEFAULT_TIMEOUT = 120.0
DEFAULT_MAX_RETRIES = 2


def secret_ref(name: str) -> str:
    """The keychain entry that holds a provider's key."""
    return f"provider:{name}"


def resolve_api_key(name: str, secrets: SecretStore | None, *, explicit: str | None = None) -> str | None:
    if explicit:
        return explicit
    profile = PROFILES.get(name)
    for env in profile.api_key_envs if profile else ():
        value = os.environ.get(env, "").strip()
        if value:
            return value
    if secrets is not None:
        stored = secrets.get(secret_ref(name))
        if stored:
            return stored
    return None


def key_required(name: str, base_url: str) -> bool:
    profile = profile_for(name)
    if not profile.needs_api_key:
        return False
    if profile.compatible_servers and base_url:  # another server speaking the same API
        own = urlsplit(profile.default_base_url).hostname or ""
        vendor = ".".join(own.split(".")[-2:])  # api.openai.com → openai.com
        host = urlsplit(base_url).hostname or ""
        return host == vendor or host.endswith("." + vendor)
    return True


def missing_key_error(name: str) -> ProviderError:
    profile = profile_for(name)
    env = profile.api_key_env or "the API key variable"
    error = ProviderError(
        f"No {profile.display_name} API key is set: add one in {SETTINGS_PAGE} or set {env}.",
        "missing_key", detail={"env": env, "provider": name})
    error.local_message = f"No {profile.display_name} API key is set: type one in the API key field or set {env}."
    return error


def _number(value: Any, default: float) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 \
        else default


def provider_config(name: str, settings: Settings | None, secrets: SecretStore | None, *, model: str | None = None,
                    base_url: str | None = None, api_key: str | None = None, timeout: float | None = None,
                    max_retries: int | None = None, options: dict[str, Any] | None = None) -> ProviderConfig:
    """The resolved configuration (raises ``ProviderError(kind="missing_key")``)."""
    profile = profile_for(name)  # unknown names fail here, with the list of known ones
    entry = settings.provider_entry(name) if settings is not None else ProviderEntry()
    url = (base_url or entry.base_url or "").strip()
    key = resolve_api_key(name, secrets, explicit=api_key)
    if not key and key_required(name, url):
        raise missing_key_error(name)
    merged: dict[str, Any] = {}
    # Ollama's num_ctx, say; ``context_window`` (the window the person knows best) and
    # ``images`` (whether the model takes images: llm/vision.py) for all.
    merged.update(entry.options((*profile.setting_options, "context_window", "images")))
    merged.update(options or {})
    retries = max_retries if max_retries is not None else entry.max_retries
    if retries is None:
        retries = DEFAULT_MAX_RETRIES
    return ProviderConfig(
        name=name,
        model=(model or entry.model or profile.default_model).strip(),
        base_url=url,
        api_key=key,
        timeout=timeout if timeout is not None else _number(entry.timeout, DEFAULT_TIMEOUT),
        max_retries=int(retries) if isinstance(retries, int) and retries >= 0 else DEFAULT_MAX_RETRIES,
        options=merged or None,
    )


def create_provider(name: str, settings: Settings | None, secrets: SecretStore | None, *, model: str | None = None,
                    base_url: str | None = None, api_key: str | None = None, timeout: float | None = None,
                    max_retries: int | None = None, options: dict[str, Any] | None = None) -> Provider:
    """A ready adapter for ``name``; no request is made until it streams."""
    config = provider_config(name, settings, secrets, model=model, base_url=base_url, api_key=api_key,
                             timeout=timeout, max_retries=max_retries, options=options)
    return adapter_for(config)


def adapter_for(config: ProviderConfig) -> Provider:
    """The profile's adapter, or that of the API the provider's ``api`` setting chose (OpenAI's
    Responses API: ``ProviderProfile.alternate_apis``); an unknown ``api`` keeps the profile's."""
    profile = profile_for(config.name)
    chosen = (config.options or {}).get("api")
    target = next((adapter for value, _label, adapter in profile.alternate_apis if value == chosen), profile.adapter)
    module_name, class_name = target.split(":")
    cls = getattr(import_sdk(module_name), class_name)  # serialised with every other SDK import
    return cls(config)  # type: ignore[no-any-return]


async def detect_ollama(base_url: str = OLLAMA.default_base_url, timeout: float = 0.5) -> bool:
    """Is an Ollama server answering at ``base_url``? A short probe; never raises."""
    try:
        import httpx

        from cks_desktop.llm.providers.base import shared_tls

        async with httpx.AsyncClient(timeout=timeout, verify=shared_tls("httpx")) as client:
            response = await client.get(base_url.rstrip("/") + "/api/version")
            return response.status_code == 200 and "version" in response.json()
    except Exception:  # noqa: BLE001 - anything at all means "not here"
        return False
