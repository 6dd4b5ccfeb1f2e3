"""The provider options a command that asks a model takes (``--provider``, ``--model``, ``--base-url``),
and the provider holder they choose: the one chosen in settings unless the flags pin another."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from cks_desktop.commands.common import app_paths
from cks_desktop.llm.profiles import PROVIDER_NAMES

if TYPE_CHECKING:
    from cks_desktop.agent.providers import ProviderHolder
    from cks_desktop.settings import Settings

NO_PROVIDER = ("No provider is chosen: pass --provider (anthropic, ollama, openai or gemini) "
               "or choose one in Settings → Providers.")


def add_provider_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--provider", choices=PROVIDER_NAMES, help="the provider (default: the one chosen in settings)")
    p.add_argument("--model", metavar="M", help="the model name (default: from settings)")
    p.add_argument("--base-url", metavar="URL", help="the provider's address (default: from settings)")


def provider_holder(args: argparse.Namespace) -> "tuple[ProviderHolder, Settings]":
    """The holder of the provider the flags (else the settings) choose, and the settings read."""
    from cks_desktop.agent.providers import ProviderHolder
    from cks_desktop.llm.factory import create_provider
    from cks_desktop.secrets import SecretStore
    from cks_desktop.settings import Settings

    settings = Settings.load(app_paths(args).settings_file)

    def factory(name: str, settings: Settings, secrets: Any) -> Any:
        return create_provider(name, settings, secrets, model=args.model, base_url=args.base_url)

    return ProviderHolder(settings, SecretStore(), factory, pinned=args.provider), settings
