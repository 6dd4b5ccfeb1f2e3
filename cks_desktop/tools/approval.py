"""Approval requests and the one interface every asker answers through.

The GUI answers with a modal dialog, the CLI with ``--yes`` or a refusal, tests
with a scripted approver; the registry does not know which.
"""

from __future__ import annotations

import enum
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
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
    # The parts of the call that made it ask (single-purpose tool name → count), e.g.
    # {"remove_object": 3} for a batch with three removals; empty when the tool's own policy did.
    operations: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class CallPolicy:
    """How one call is asked about: the strictest policy among the tool's own and those of
    the tools whose effects it has (``ToolSpec.effects``).

    ``key`` names what an answer is remembered under for ``once`` and ``allow_for_run``:
    the tool's name alone when its own policy decided, else the name plus the operations
    that made it ask, so allowing a batch's additions never covers a later batch's removals.
    """

    policy: Policy
    key: str
    operations: Mapping[str, int] = field(default_factory=dict)
    reason: str = ""


class Approver(Protocol):
    """Who answers approval requests (the GUI's dialog, the CLI's ``--yes``, an MCP host, a test).

    ``denial_hint`` is a sentence the registry appends to a refusal the model reads, e.g. the
    CLI's "run again with --yes"; empty for none. A plain attribute satisfies it.
    """

    @property
    def denial_hint(self) -> str: ...

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


# Effects that are a rule, not a tool: the registry asks about them with this policy (a person's
# override under the same name wins). ``change_existing``: the call renames or retypes an object,
# changes or removes a property, or defines a type, where what it changes was written by a person,
# a document or an import, not added by the model itself earlier in the same run (effects.py).
CHANGE_EXISTING = "change_existing"
RULE_POLICIES: dict[str, Policy] = {CHANGE_EXISTING: Policy.ALWAYS}
RULE_TITLES: dict[str, str] = {CHANGE_EXISTING: "Change what a person or a document wrote"}


def _policy_words(policy: Policy) -> str:
    return {Policy.ONCE: "once per chat turn", Policy.ALWAYS: "before every distinct call"}.get(policy, "never")


def effect_reason(tool: ToolSpec, own: Policy, asking: Mapping[str, tuple[int, str, Policy]]) -> str:
    """Says which operations made a call ask, e.g. "Evolve knowledge asks because of what this
    call does: 3 remove_object operations (asks like Remove object, once per chat turn)."."""
    parts = []
    for name, (count, title, policy) in sorted(asking.items()):
        if name == CHANGE_EXISTING:
            noun = "change" if count == 1 else "changes"
            parts.append(f"{count} {noun} to what a person or a document wrote (a rename, a new type, a "
                         f"changed or removed property, or a type schema existing objects fail; asks "
                         f"{_policy_words(policy)})")
            continue
        noun = "operation" if count == 1 else "operations"
        parts.append(f"{count} {name} {noun} (asks like {title}, {_policy_words(policy)})")
    text = f"{tool.display_name} asks because of what this call does: {'; '.join(parts)}."
    if own is not Policy.AUTO:
        text += f" It also asks on its own: {reason_for(own, tool)}"
    return text


@dataclass(frozen=True)
class AnswerWords:
    """What each answer to an approval says it decides, for every front end: how far an Allow or a
    Deny reaches is on the button, not only in the reason text. ``allow_for_run`` is None when it
    would decide nothing more than ``allow`` (a ``once`` policy: one answer already covers the
    rest of the reply)."""

    allow: str
    allow_tip: str
    allow_for_run: str | None
    allow_for_run_tip: str
    deny: str
    deny_tip: str


def answer_words(request: ApprovalRequest) -> AnswerWords:
    """The buttons' words for ``request`` ("&" marks the keyboard mnemonic)."""
    name = request.tool.display_name
    match request.policy:
        case Policy.ONCE:
            return AnswerWords(
                "&Allow for the rest of this reply",
                f"Run this call, and {name} calls like it without asking again until this reply ends.",
                None, "",
                "&Deny for the rest of this reply",
                f"Do not run it, nor {name} calls like it until this reply ends; the assistant is told you "
                "declined.")
        case Policy.ALWAYS | Policy.AUTO:
            return AnswerWords(
                "&Allow this call", "Run this call once (the same call again in this reply is not asked again).",
                "Allow this tool for this &reply", f"Run {name} without asking again until this reply ends.",
                "&Deny this call", "Do not run it; the assistant is told you declined.")


def reason_for(policy: Policy, tool: ToolSpec) -> str:
    if policy is Policy.ONCE:
        return f"{tool.display_name} asks once per chat turn before it first runs."
    if tool.source.startswith("mcp:"):
        return "Tools of MCP servers run code outside this app, so each distinct call is confirmed."
    return f"{tool.display_name} asks before every distinct call."
