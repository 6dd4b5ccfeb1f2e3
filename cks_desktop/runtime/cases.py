"""The use cases other than a chat turn (which runs through the Assistant), on one store and one settings file, each built on first use.

The window holds one (``AppServices.cases``); a headless command builds one on the store it opened
(``UseCases(store, settings)``). Importing this module loads neither the agent nor a provider SDK,
so ``documents add`` or an import does not pay for the chat's start-up.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

from cks_desktop.settings import Documents, Settings

if TYPE_CHECKING:
    from cks_desktop.graph.store import GraphStore
    from cks_desktop.runtime.ask import AskUseCase
    from cks_desktop.runtime.chat import ChatUseCase
    from cks_desktop.runtime.documents import DocumentsUseCase
    from cks_desktop.runtime.extraction import ExtractionUseCase
    from cks_desktop.runtime.graph_io import GraphIOUseCase
    from cks_desktop.runtime.sharing import SharingUseCase
    from cks_desktop.runtime.storage import StorageUseCase
    from cks_desktop.runtime.themes import ThemesUseCase
    from cks_desktop.secrets import SecretStore


@dataclass
class UseCases:
    """The use cases on one store and settings, each built once, on first use."""

    store: "GraphStore"
    settings: Settings
    secrets: "SecretStore | None" = None  # the keychain; None: the OS keychain, opened when a use case needs it

    @cached_property
    def documents(self) -> "DocumentsUseCase":
        from cks_desktop.runtime.documents import DocumentsUseCase

        return DocumentsUseCase(self.store, lambda: self.settings.section(Documents).max_file_bytes)

    @cached_property
    def extraction(self) -> "ExtractionUseCase":
        from cks_desktop.runtime.extraction import ExtractionUseCase

        return ExtractionUseCase(self.store, self.settings)

    @cached_property
    def graph_io(self) -> "GraphIOUseCase":
        from cks_desktop.runtime.graph_io import GraphIOUseCase

        return GraphIOUseCase(self.store)

    @cached_property
    def ask(self) -> "AskUseCase":
        from cks_desktop.runtime.ask import AskUseCase

        return AskUseCase(self.store)

    @cached_property
    def themes(self) -> "ThemesUseCase":
        from cks_desktop.runtime.themes import ThemesUseCase

        return ThemesUseCase(self.store)

    @cached_property
    def chat(self) -> "ChatUseCase":
        from cks_desktop.agent.transcript import TranscriptStore
        from cks_desktop.runtime.chat import ChatUseCase

        return ChatUseCase(TranscriptStore.for_store(self.store))

    @cached_property
    def sharing(self) -> "SharingUseCase":
        from cks_desktop.runtime.sharing import SharingUseCase

        return SharingUseCase(self.store, self.settings, self.secrets)

    @cached_property
    def storage(self) -> "StorageUseCase":
        from cks_desktop.runtime.storage import StorageUseCase

        return StorageUseCase(self.settings, self.secrets)
