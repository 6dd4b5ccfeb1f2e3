"""Fixtures for the window tests: a real MainWindow on a throwaway data folder.

Providers are the real adapters pointed at the protocol-faithful fake servers
(``tests/fakes``); MCP servers are real SDK servers, in process.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.paths import resolve
from cks_desktop.secrets import SecretStore
from cks_desktop.ui.main_window import MainWindow
from cks_desktop.runtime import AppServices

from tests.fakes.providers import make_fake, provider_for


async def no_login_shell() -> str | None:
    return None


@asynccontextmanager
async def open_window(home: Path, *, fake: Any = None, provider: str = "anthropic",
                      policies: dict[str, str] | None = None, mcp_targets: dict[str, Any] | None = None,
                      mcp_servers: dict[str, Any] | None = None,
                      factory: Callable[..., Any] | None = None) -> AsyncIterator[MainWindow]:
    """A shown window on ``home``; shut down (servers, clients, store) on exit."""
    if factory is None and fake is not None:
        def factory(_name: str, _settings: Any, _secrets: Any) -> Any:
            return provider_for(fake)

    services = AppServices.open(resolve(home), secrets=SecretStore(secure=False), provider_factory=factory)
    if fake is not None or factory is not None:
        services.settings.default_provider = provider
    if policies:
        services.settings.data["agent"]["tool_policies"].update(policies)
        services.apply_tool_policies()
    if mcp_servers:
        services.settings.mcp_servers.update(mcp_servers)
    if mcp_targets is not None:
        services.start_mcp(targets=mcp_targets, login_path=no_login_shell)
    window = MainWindow(services)
    window.show()
    try:
        yield window
    finally:
        await window.shutdown()
        window.deleteLater()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def anthropic_fake() -> Any:
    # The SDK's first import costs seconds on a busy machine; pay it here, not inside a timed wait.
    import anthropic  # noqa: F401

    with make_fake("anthropic") as fake:
        yield fake
