"""Fixtures for the tool-layer tests: a real store in a temp file, a registry
with every built-in, scripted approvers, and a one-line way to call a tool."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.tools.approval import ApprovalRequest, Decision
from cks_desktop.tools.context import Run
from cks_desktop.tools.registry import ToolRegistry
from cks_desktop.tools.types import Caller, ToolCall, ToolResult

_ids = count(1)


class ScriptedApprover:
    """Answers from a list (then ``default``) and remembers every request it saw."""

    def __init__(self, *answers: Decision, default: Decision = Decision.DENY, denial_hint: str = "") -> None:
        self.answers = list(answers)
        self.default = default
        self.denial_hint = denial_hint
        self.requests: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        return self.answers.pop(0) if self.answers else self.default


async def call(registry: ToolRegistry, run: Run, tool: str, /, **arguments: Any) -> ToolResult:
    return await registry.invoke(ToolCall(f"call_{next(_ids)}", tool, arguments), run)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Any]:
    from cks_desktop.graph.store import GraphStore

    st = GraphStore.open(tmp_path / "graph.sqlite3")
    try:
        yield st
    finally:
        st.close()


@pytest.fixture
def session_id(store: Any) -> str:
    return store.create_session("Tool tests").id


@pytest.fixture
def registry(store: Any) -> ToolRegistry:
    from cks_desktop.tools.builtin import build_registry

    return build_registry(store)


@pytest.fixture
def approver() -> ScriptedApprover:
    return ScriptedApprover(default=Decision.ALLOW)


@pytest.fixture
def run(session_id: str, approver: ScriptedApprover) -> Run:
    return Run(session_id=session_id, caller=Caller.USER, approver=approver)
