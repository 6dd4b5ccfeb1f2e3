"""The app's core objects in one place (Qt-free): the composition root.

``AppServices`` holds the window's ``UseCases`` (``runtime/cases.py``: documents, extraction,
graph import/export on its store and settings); a headless command builds its own on the store it
opened (``UseCases(store, settings)``).

``AppServices.open`` builds what the window needs and nothing slow: the
settings, the keychain door, the store, the tool registry, the transcript
store and the ``Assistant`` that answers chat turns. The MCP manager (which
imports the MCP SDK, ~0.7 s) is created by ``start_mcp`` after the window is
painted, and provider SDKs are imported on the first chat turn
(``agent.providers.ProviderHolder``).

Every front end composes the core here, so "the app's tools, the app's
assistant" mean the same thing in each: the window (``AppServices.open``),
``cks-desktop chat`` and ``cks-desktop mcp serve`` (``AppServices.build`` on
the store and settings the command opened itself, so its warnings and exit
codes stay its own). ``toolset="host"`` is for ``mcp serve``: an MCP host
brings its own model, so it gets the built-in graph tools without the agent's
own (``construct_knowledge`` needs our model), and runs them as
``Caller.MCP_CLIENT`` (``host_run``).

It sits between ``ui`` and ``agent`` in the import-linter layers (pyproject.toml)
and is in the contract that keeps the core free of Qt.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from cks_desktop.agent.assistant import Assistant
from cks_desktop.agent.providers import Factory, ProviderHolder
from cks_desktop.paths import AppPaths
from cks_desktop.runtime.cases import UseCases
from cks_desktop.secrets import SecretStore
from cks_desktop.settings import Settings

if TYPE_CHECKING:
    import asyncio

    from cks_desktop.agent.transcript import TranscriptStore
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.mcp.manager import McpManager
    from cks_desktop.serve.server import Serving
    from cks_desktop.serve.service import ShareService
    from cks_desktop.runtime.documents import DocumentsUseCase
    from cks_desktop.runtime.extraction import ExtractionUseCase
    from cks_desktop.runtime.graph_io import GraphIOUseCase
    from cks_desktop.tools.approval import Approver
    from cks_desktop.tools.context import Run
    from cks_desktop.tools.registry import ToolRegistry

log = logging.getLogger(__name__)

Toolset = Literal["chat", "host"]


@dataclass
class AppServices:
    paths: AppPaths
    settings: Settings
    secrets: SecretStore
    store: "GraphStore"
    assistant: Assistant
    mcp: "McpManager | None" = None
    mcp_start: "asyncio.Task[None] | None" = None

    @cached_property
    def cases(self) -> UseCases:
        """The non-chat use cases on this store and settings."""
        return UseCases(self.store, self.settings, self.secrets)

    @property
    def documents(self) -> "DocumentsUseCase":
        return self.cases.documents

    @property
    def graph_io(self) -> "GraphIOUseCase":
        return self.cases.graph_io

    @property
    def extraction(self) -> "ExtractionUseCase":
        return self.cases.extraction

    # The assistant's parts, named here too: the window and the settings pages use them directly.
    @property
    def registry(self) -> "ToolRegistry":
        return self.assistant.registry

    @property
    def transcripts(self) -> "TranscriptStore":
        return self.assistant.transcripts

    @property
    def providers(self) -> ProviderHolder:
        return self.assistant.providers

    @classmethod
    def open(cls, paths: AppPaths, *, secrets: SecretStore | None = None,
             provider_factory: Factory | None = None) -> "AppServices":
        """Settings and store from ``paths`` (for the window). Raises ``StoreError`` (one sentence)
        when the database cannot be used."""
        from cks_desktop.storage_choice import open_store

        paths.ensure()
        settings = Settings.load(paths.settings_file)
        secrets = secrets if secrets is not None else SecretStore()
        # the data folder's file, or the team database Settings → Storage chose (storage_choice.py)
        store = open_store(None, paths.database, secrets, settings)
        return cls.build(paths, settings, store, secrets=secrets, provider_factory=provider_factory)

    @classmethod
    def build(cls, paths: AppPaths, settings: Settings, store: "GraphStore", *, secrets: SecretStore | None = None,
              provider_factory: Factory | None = None, pinned_provider: str | None = None,
              scope_setting: str = "", toolset: Toolset = "chat") -> "AppServices":
        """Compose the core on a store and settings the caller opened (the headless commands)."""
        secrets = secrets if secrets is not None else SecretStore()
        registry = None
        if toolset == "host":
            from cks_desktop.agent.toolset import build_host_registry

            registry = build_host_registry(store, settings)
        assistant = Assistant.build(settings, store, secrets, registry=registry, provider_factory=provider_factory,
                                    pinned_provider=pinned_provider, scope_setting=scope_setting)
        return cls(paths=paths, settings=settings, secrets=secrets, store=store, assistant=assistant)

    def apply_tool_policies(self) -> None:
        """Push the settings' per-tool policies into the registry (after Settings → Save)."""
        self.registry.set_policy_overrides(self.settings.tool_policies)

    def start_mcp(self, **kwargs: Any) -> "McpManager":
        """Create the MCP manager (imports the SDK) and start enabled servers in the background
        (``mcp_start`` is that task); their tools join the assistant's registry as they come up."""
        from cks_desktop.sdk_import import import_sdk

        McpManager = import_sdk("cks_desktop.mcp.manager").McpManager  # noqa: N806 - the SDK import lock

        if self.mcp is None:
            self.mcp = McpManager(self.settings, self.secrets, self.registry, self.paths.mcp_log_dir, **kwargs)
            self.assistant.attach_mcp(self.mcp)
            self.mcp_start = self.mcp.start_all_in_background()
        return self.mcp

    def host_run(self, session_id: str, approver: "Approver | None" = None) -> "Run":
        """The run an MCP host's calls go through (``mcp serve``): the host asked its own user
        (``approver``: ``ServeApprover`` when serving, which may make this app ask too).
        The session's own scope choice holds for a host as for a chat (a read-only session stays so)."""
        from cks_desktop.serve.server import serving_run
        from cks_desktop.tools.scopes import chat_grant
        from cks_desktop.tools.types import Scope

        granted = chat_grant(self.settings, session_id).scopes | {Scope.GRAPH_READ}
        return serving_run(session_id, tuple(self.settings.allowed_folders), granted, approver)

    def host_serving(self, pinned: str | None = None, *, app_approver: "Approver | None" = None,
                     yes: bool = False, transport: str = "stdio") -> "Serving":
        """What ``mcp serve`` and the window's sharing serve: ``pinned`` one session, or the shared
        ones (``serve.prefs``), each through its own ``host_run``."""
        from cks_desktop.serve.server import Serving
        from cks_desktop.serve import prefs
        from cks_desktop.serve.approver import ServeApprover
        from cks_desktop.serve.scope import SessionScope

        approver = ServeApprover(lambda: prefs.approval_mode(self.settings), app_approver=app_approver, yes=yes)
        scope = SessionScope(self.store, lambda sid: self.host_run(sid, approver), pinned=pinned,
                             settings=self.settings)
        return Serving.create(self.registry, scope, transport)

    def share_service(self, *, app_approver: "Approver | None" = None) -> "ShareService":
        """The window's "Share with other apps": the HTTP server on this loop (``serve.service``)."""
        from cks_desktop.serve.server import serve_command
        from cks_desktop.serve.service import ShareService

        # --data-dir only when the folders were overridden (then data and config are one folder)
        data_dir = str(self.paths.data_dir) if self.paths.data_dir == self.paths.config_dir else None
        return ShareService(self.registry, lambda: self.host_serving(app_approver=app_approver, transport="http"),
                            self.secrets, self.settings, command=lambda sid: serve_command(sid, data_dir),
                            presence_dir=self.paths.data_dir / "serving")

    async def aclose(self) -> None:
        """Close MCP servers and provider clients concurrently, then the store."""
        await self.assistant.aclose()
        self.store.close()
