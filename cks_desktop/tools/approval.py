"""Approval requests and the one interface every asker answers through.

The GUI answers with a modal dialog, the CLI with ``--yes`` or a refusal, tests
with a scripted approver; the registry does not know which.
"""

from __future__ import annotations

import enum
import hashlib
import json
from dataclasses import dataclass
from typing import Any, Protocol

from cks_desktop.tools.types import Policy, Scope, ToolCall, ToolSpec


class Decision(str, enum.Enum):
    ALLOW = "allow"
    ALLOW_FOR_RUN = "allow_for_run"  # upgrades the tool to `auto` for the rest of this run
    DENY = "deny"


@dataclass(frozen=True)
class ApprovalRequest:
    call: ToolCall
    tool: ToolSpec
    scopes: frozenset[Scope]
    policy: Policy
    reason: str
    preview: str | None = None
    session_id: str = ""


class Approver(Protocol):
    async def request_approval(self, request: ApprovalRequest) -> Decision: ...


class StaticApprover:
    """Answers every request the same way (CLI ``--yes``, headless runs, tests)."""

    def __init__(self, decision: Decision, *, denial_hint: str = "") -> None:
        self.decision = decision
        self.denial_hint = denial_hint
        self.requests: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        return self.decision


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def fingerprint(name: str, arguments: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of name + arguments: what `always` compares."""
    return hashlib.sha256(canonical_json({"name": name, "arguments": arguments}).encode()).hexdigest()


def reason_for(policy: Policy, tool: ToolSpec) -> str:
    if policy is Policy.ONCE:
        return f"{tool.display_name} asks once per chat turn before it first runs."
    if tool.source.startswith("mcp:"):
        return "Tools of MCP servers run code outside this app, so each distinct call is confirmed."
    return f"{tool.display_name} asks before every distinct call."
