"""The active model provider for chats (Qt-free).

Which provider and model the chat uses comes from the settings
(``providers.default`` and that provider's ``model``). The provider object is
made on first use — that is when its SDK is imported, long after the window
is up — and reused until the settings change. A provider still streaming for
a running chat is closed only when that chat lets go of it.

It lives in the core (not in ``ui/``) because every front end uses it: the
window's chat, ``cks-desktop chat`` (which pins the provider named by
``--provider`` instead of the saved default) and tests. Listeners use the
core's ``Callbacks``, so a broken one is logged and never blocks the change.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING

from cks_desktop.callbacks import Callbacks
from cks_desktop.llm.profiles import PROFILES, display_name
from cks_desktop.settings import Settings

if TYPE_CHECKING:
    from cks_desktop.llm.provider import Provider
    from cks_desktop.secrets import SecretStore

log = logging.getLogger(__name__)

Factory = Callable[[str, Settings, "SecretStore | None"], "Provider"]


def _default_factory(name: str, settings: Settings, secrets: "SecretStore | None") -> "Provider":
    from cks_desktop.llm.factory import create_provider  # imports the vendor SDK: only on first use

    return create_provider(name, settings, secrets)


class ProviderHolder:
    """The chat's provider: made on first use, shared by every chat, replaced when the settings change.

    ``pinned`` names the provider to use instead of the settings' default (the CLI's
    ``--provider``); ``choose`` still saves a new default but the pinned name wins.
    """

    def __init__(self, settings: Settings, secrets: "SecretStore | None", factory: Factory | None = None,
                 *, pinned: str | None = None) -> None:
        self.settings = settings
        self.secrets = secrets
        self._factory = factory or _default_factory
        self._pinned = pinned or None
        self._current: Provider | None = None
        self._users: dict[int, int] = {}  # id(provider) → chats using it
        self._retired: list[Provider] = []
        self._changed: Callbacks[[]] = Callbacks("provider holder")

    # -- what is active ----------------------------------------------------------
    @property
    def name(self) -> str:
        return self._pinned or self.settings.default_provider

    @property
    def model(self) -> str:
        return self.settings.provider_entry(self.name).model if self.name else ""

    @property
    def configured(self) -> bool:
        return bool(self.name)

    def label(self) -> str:
        if not self.configured:
            return "No provider"
        return f"{display_name(self.name)} · {self.model or 'no model'}"

    def choose(self, name: str, model: str | None = None) -> None:
        """Make ``name`` (and ``model``) the chat's provider, and save it."""
        if name not in PROFILES:
            raise ValueError(f"unknown provider {name!r}")
        self.settings.default_provider = name
        if model is not None and model.strip():
            self.settings.set_provider_entry(name, replace(self.settings.provider_entry(name), model=model.strip()))
        self.settings.save()
        self.invalidate()

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` whenever the active provider changes; returns the unsubscribe function."""
        return self._changed.subscribe(listener)

    def invalidate(self) -> None:
        """The settings changed: the next chat gets a fresh provider."""
        old, self._current = self._current, None
        if old is not None:
            self._retired.append(old)
            if not self._users.get(id(old)):
                self._close_later(old)
        self._changed.emit()

    # -- use -------------------------------------------------------------------------
    async def prepare(self) -> "Provider":
        """Make the provider now (a missing key or a bad setting raises ``ProviderError`` before any
        request); the next ``use`` reuses it. The CLI calls this to fail early with exit code 2."""
        async with self.use() as provider:
            return provider

    @asynccontextmanager
    async def use(self) -> AsyncIterator["Provider"]:
        """The provider for one chat turn. Raises ``ProviderError`` when it cannot be made."""
        if self._current is None:
            if not self.configured:
                from cks_desktop.llm.provider import ProviderError

                raise ProviderError("No model provider is set up yet. Choose one in Settings → Providers.",
                                    "missing_key")
            # In a worker thread: the first use imports the vendor SDK (about a second for anthropic).
            created = await asyncio.to_thread(self._factory, self.name, self.settings, self.secrets)
            if self._current is None:
                self._current = created
            else:  # another chat made one meanwhile
                self._retired.append(created)
                self._close_later(created)
        provider = self._current
        self._users[id(provider)] = self._users.get(id(provider), 0) + 1
        try:
            yield provider
        finally:
            self._users[id(provider)] -= 1
            if not self._users[id(provider)]:
                del self._users[id(provider)]
                if provider in self._retired:
                    self._close_later(provider)

    def _close_later(self, provider: "Provider") -> None:
        if provider in self._retired:
            self._retired.remove(provider)
        try:
            asyncio.get_running_loop().create_task(_close(provider))
        except RuntimeError:  # no loop (tests tearing down): nothing is streaming anyway
            log.debug("no running loop to close a provider")

    async def aclose(self) -> None:
        providers = [p for p in [self._current, *self._retired] if p is not None]
        self._current, self._retired = None, []
        await asyncio.gather(*(_close(p) for p in providers))


async def _close(provider: "Provider") -> None:
    try:
        await provider.aclose()
    except Exception as exc:  # closing is best effort; say so in the log
        log.warning("closing the %s provider failed: %s", getattr(provider.profile, "name", "?"), exc)
