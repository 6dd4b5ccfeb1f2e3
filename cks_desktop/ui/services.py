"""The app's core objects in one place (Qt-free): the composition root.

``AppServices.open`` builds what the window needs and nothing slow: the
settings, the keychain door, the store, the tool registry and the transcript
store. The MCP manager (which imports the MCP SDK, ~0.7 s) is created by
``start_mcp`` after the window is painted, and provider SDKs are imported on
the first chat turn (``ProviderHolder``).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cks_desktop.paths import AppPaths
from cks_desktop.secrets import SecretStore
from cks_desktop.settings import Settings
from cks_desktop.agent.providers import Factory, ProviderHolder

if TYPE_CHECKING:
    from cks_desktop.agent.transcript import TranscriptStore
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.mcp.manager import McpManager
    from cks_desktop.tools.registry import ToolRegistry

log = logging.getLogger(__name__)


@dataclass
class AppServices:
    paths: AppPaths
    settings: Settings
    secrets: SecretStore
    store: "GraphStore"
    registry: "ToolRegistry"
    transcripts: "TranscriptStore"
    providers: ProviderHolder
    mcp: "McpManager | None" = None
    mcp_start: "asyncio.Task[None] | None" = None

    @classmethod
    def open(cls, paths: AppPaths, *, secrets: SecretStore | None = None,
             provider_factory: Factory | None = None) -> "AppServices":
        """Raises ``StoreError`` (one sentence) when the database cannot be used."""
        from cks_desktop.agent.toolset import build_chat_registry
        from cks_desktop.agent.transcript import TranscriptStore
        from cks_desktop.graph.store import GraphStore

        paths.ensure()
        settings = Settings.load(paths.settings_file)
        secrets = secrets if secrets is not None else SecretStore()
        store = GraphStore.open(paths.database)
        registry = build_chat_registry(store, settings)
        return cls(paths=paths, settings=settings, secrets=secrets, store=store, registry=registry,
                   transcripts=TranscriptStore.for_store(store),
                   providers=ProviderHolder(settings, secrets, provider_factory))

    def apply_tool_policies(self) -> None:
        """Push the settings' per-tool policies into the registry (after Settings → Save)."""
        self.registry.set_policy_overrides(self.settings.tool_policies)

    def start_mcp(self, **kwargs: Any) -> "McpManager":
        """Create the MCP manager (imports the SDK) and start enabled servers in the background."""
        from cks_desktop.mcp.manager import McpManager

        if self.mcp is None:
            self.mcp = McpManager(self.settings, self.secrets, self.registry, self.paths.mcp_log_dir, **kwargs)
            self.mcp_start = self.mcp.start_all_in_background()
        return self.mcp

    async def aclose(self) -> None:
        """Close MCP servers and provider clients concurrently, then the store."""
        jobs = [self.providers.aclose()]
        if self.mcp is not None:
            jobs.append(self.mcp.aclose())
        results = await asyncio.gather(*jobs, return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
                log.warning("closing failed: %s", result)
        self.store.close()
