"""The only door to the OS keychain. No plaintext fallback, ever.

With a secure keychain (macOS Keychain, Windows Credential Locker, Secret
Service on Linux) secrets persist there. Without one (a headless Linux box),
secrets are kept in memory for this run only, and ``notice`` says so for the UI.
Settings hold references (keys into this store), never values.
"""

from __future__ import annotations

import logging
import os

log = logging.getLogger(__name__)

SERVICE = "cks-desktop"

# Environment variables that hold an LLM provider's key. They are never passed to an MCP server,
# not even one set to inherit the app's environment: servers are often someone else's package.
# The list holds this app's own providers' names (``llm.profiles.API_KEY_ENVS``; a test checks that
# each is here, since ``mcp`` may not import ``llm``) and other providers' conventional names, which a
# person's shell commonly exports too.
_OTHER_PROVIDER_KEY_ENVS = (
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_API_KEY", "OPENAI_API_KEY", "OPENAI_ADMIN_KEY",
    "AZURE_OPENAI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GENERATIVE_AI_API_KEY",
    "VERTEX_API_KEY", "MISTRAL_API_KEY", "GROQ_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY",
    "XAI_API_KEY", "COHERE_API_KEY", "CO_API_KEY", "TOGETHER_API_KEY", "FIREWORKS_API_KEY",
    "PERPLEXITY_API_KEY", "HF_TOKEN", "HUGGINGFACE_API_KEY", "HUGGING_FACE_HUB_TOKEN", "REPLICATE_API_TOKEN",
    "OLLAMA_API_KEY", "CEREBRAS_API_KEY", "AI21_API_KEY", "VOYAGE_API_KEY",
)
NO_KEYCHAIN_NOTICE = (
    "No secure keychain is available, so keys are kept in memory for this run only "
    "and must be entered again after a restart."
)


def provider_key_env_vars() -> frozenset[str]:
    """Every environment variable name that may hold a provider's key (upper case)."""
    return frozenset(n.upper() for n in _OTHER_PROVIDER_KEY_ENVS)


def is_provider_key_env(name: str) -> bool:
    """Whether ``name`` (any case: Windows variables are case-insensitive) holds a provider key."""
    return name.upper() in provider_key_env_vars()


def secure_keyring_available() -> bool:
    import keyring
    from keyring.backends import chainer, fail

    try:
        kr = keyring.get_keyring()
    except Exception:  # keyring's discovery itself can fail on broken D-Bus setups
        return False
    backends = kr.backends if isinstance(kr, chainer.ChainerBackend) else [kr]
    for b in backends:
        module = type(b).__module__
        if isinstance(b, fail.Keyring) or module.startswith(("keyrings.", "keyring.backends.null")):
            continue
        try:
            priority = float(b.priority)
        except Exception:
            continue
        if priority >= 1 or os.environ.get("CKS_DESKTOP_TEST_KEYRING") == module:
            return True
    return False


class SecretStore:
    """Get/set/delete secrets by reference name (e.g. ``provider:anthropic``)."""

    def __init__(self, service: str = SERVICE, *, secure: bool | None = None) -> None:
        self.service = service
        self._secure = secure
        self._memory: dict[str, str] = {}
        # Values read or written this run, kept only so logs and crash reports can redact them
        # (with a keychain, ``_memory`` is empty, yet the values pass through this process).
        self._seen: set[str] = set()
        self.last_error: str | None = None

    @property
    def secure(self) -> bool:
        """Whether a secure keychain holds the secrets. Asked of the OS on first use, not when the
        store is made: finding the keychain (keyring's backends, D-Bus) costs about 0.25 s, which a
        start that reads no secret before its window shows need not pay."""
        if self._secure is None:
            self._secure = secure_keyring_available()
        return self._secure

    @secure.setter
    def secure(self, value: bool) -> None:
        self._secure = value

    @property
    def notice(self) -> str | None:
        return None if self.secure else NO_KEYCHAIN_NOTICE

    def get(self, ref: str) -> str | None:
        if ref in self._memory:
            return self._memory[ref]
        if not self.secure:
            return None
        import keyring
        from keyring.errors import KeyringError

        try:
            value = keyring.get_password(self.service, ref)
        except KeyringError as exc:
            self.last_error = f"The keychain could not be read: {exc}"
            log.warning("keychain read failed for %s: %s", ref, type(exc).__name__)
            return None
        if value:
            self._seen.add(value)
        return value

    def set(self, ref: str, value: str) -> None:
        if value:
            self._seen.add(value)
        if not self.secure:
            self._memory[ref] = value
            return
        import keyring
        from keyring.errors import KeyringError

        try:
            keyring.set_password(self.service, ref, value)
            self._memory.pop(ref, None)
        except KeyringError as exc:
            # Keep it for this run rather than lose what the person typed; say so.
            self._memory[ref] = value
            self.last_error = f"The keychain refused the secret ({exc}); it is kept for this run only."
            log.warning("keychain write failed for %s: %s", ref, type(exc).__name__)

    def delete(self, ref: str) -> None:
        self._memory.pop(ref, None)
        if not self.secure:
            return
        import keyring
        from keyring.errors import KeyringError, PasswordDeleteError

        try:
            keyring.delete_password(self.service, ref)
        except PasswordDeleteError:
            pass  # nothing stored under that name: already the state we want
        except KeyringError as exc:
            self.last_error = f"The keychain could not delete the secret: {exc}"
            log.warning("keychain delete failed for %s: %s", ref, type(exc).__name__)

    def known_values(self) -> list[str]:
        """Secrets this run holds or has used (for redaction of logs and crash reports)."""
        return sorted({v for v in self._memory.values() if v} | self._seen)
