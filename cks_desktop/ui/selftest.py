"""``cks-desktop --self-test``: the real window, one scripted chat turn, a verdict.

Runs in a throwaway data folder, offscreen unless a display platform was
chosen. A tiny in-process provider (no network, no SDK) answers with a tool
call to ``add_object`` and then a closing sentence; the test checks that the
chat shows the tool row as done and that the graph has the new object. The
result is the exit code: 0 with one line on stdout naming what was checked
(``passed_line``; a bare 0 told a person nothing), or 1 with the reason on
stderr.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any

from cks_desktop.llm.events import Finish, StreamEvent, TextDelta, ToolCallDelta, ToolCallDone, ToolCallStart, Usage
from cks_desktop.llm.messages import Message, ToolDef
from cks_desktop.llm.provider import GenerationParams, ProviderConfig, ProviderProfile
from cks_desktop.llm.profiles import PROFILES

if TYPE_CHECKING:
    from cks_desktop.llm.provider import Provider
    from cks_desktop.secrets import SecretStore
    from cks_desktop.settings import Settings

HEAVY_MODULES = (*dict.fromkeys(profile.sdk for profile in PROFILES.values() if profile.sdk), "mcp")
OBJECT_NAME = "Self-test object"
CLOSING = "The self-test object is in the graph."
TIMEOUT = 20.0


class SelfTestProvider:
    """Two turns: call ``add_object``, then say so."""

    def __init__(self) -> None:
        self.profile = ProviderProfile(name="selftest", display_name="Self-test", can_list_models=False)
        self.config = ProviderConfig(name="selftest", model="scripted")
        self.turns = 0

    async def list_models(self) -> list[str]:
        return ["scripted"]

    async def aclose(self) -> None:
        return None

    def stream(self, messages: list[Message], tools: list[ToolDef], *, system: str | None = None,
               response_schema: dict[str, Any] | None = None,
               params: GenerationParams | None = None) -> AsyncGenerator[StreamEvent, None]:
        self.turns += 1
        return self._first(tools) if self.turns == 1 else self._second()

    async def _first(self, tools: list[ToolDef]) -> AsyncGenerator[StreamEvent, None]:
        name = next((t.name for t in tools if t.name == "add_object"), "add_object")
        arguments = json.dumps({"type": "Check", "name": OBJECT_NAME, "properties": {"source": "self-test"}})
        for chunk in ("Adding ", "a test object."):
            await asyncio.sleep(0)
            yield TextDelta(chunk)
        yield ToolCallStart(0, "selftest_1", name)
        yield ToolCallDelta(0, arguments)
        yield ToolCallDone(0, "selftest_1", name, json.loads(arguments), arguments)
        yield Usage(1, 1)
        yield Finish("tool_calls")

    async def _second(self) -> AsyncGenerator[StreamEvent, None]:
        await asyncio.sleep(0)
        yield TextDelta(CLOSING)
        yield Usage(1, 1)
        yield Finish("stop")


CHECKED = ("the window opened without loading the slow SDKs",
           "a scripted chat turn called add_object and its tool row ended done",
           "the new object appeared in the graph view",
           "the closing answer arrived in the chat")


def passed_line(app_id: str, platform: str) -> str:
    """The one line a passing self-test prints: what it checked, and where it ran."""
    where = f"on the {platform} display" if platform else "on this display"
    return f"{app_id}: self-test passed ({where}, in a throwaway data folder): {'; '.join(CHECKED)}."


def heavy_modules_loaded() -> list[str]:
    """The slow SDKs already imported (start-up must not need any of them)."""
    return [name for name in HEAVY_MODULES if name in sys.modules]


def provider_factory(_name: str, _settings: "Settings", _secrets: "SecretStore | None") -> "Provider":
    return SelfTestProvider()


async def run_self_test(window: Any) -> tuple[bool, str]:
    """Drive the window through one chat turn; (ok, reason)."""
    from cks_desktop.ui.chat.model import MessageItem, RowState

    services = window.services
    services.settings.default_provider = "ollama"  # any configured name: the factory ignores it
    services.providers.invalidate()
    window.sidebar.create_session()
    session_id = window.current_session
    if not session_id:
        return False, "no session could be created"
    controller = window.controllers[session_id]
    task = controller.send("Add a test object, please.")
    if task is None:
        return False, "the chat did not start"
    try:
        await asyncio.wait_for(task, TIMEOUT)
    except TimeoutError:
        return False, f"the chat turn did not finish within {TIMEOUT:.0f} s"
    window.chat_panel.view.flush()
    rows = window.chat_panel.view.rows()
    if not rows:
        return False, "no tool-call row appeared in the chat"
    row = rows[-1]
    if row.objectName() != "toolCallRow" or row.item.state is not RowState.DONE:
        return False, f"the tool-call row ended as {row.item.state.value}: {row.item.result}"
    if OBJECT_NAME not in window.graph_view.object_names():
        return False, "the new object did not appear in the graph view"
    last = controller.model.items[-1]
    if not isinstance(last, MessageItem) or last.text != CLOSING:
        return False, "the assistant's closing message is missing"
    return True, "ok"
