"""event dispatch is exhaustive, so a forgotten event fails the type check.

Every consumer of the agent's events (the GUI presenter, the CLI renderer) and of the stream
events (the assembler) ends its ``match`` in ``assert_never``. This runs the real type checker
on them and on a consumer that forgets one event of each union: the consumers pass, the
forgetful one is reported where it forgot.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CONSUMERS = ["cks_desktop/ui/chat/presenter.py", "cks_desktop/commands/chat_cmd.py", "cks_desktop/llm/assembler.py",
             "cks_desktop/agent/events.py"]

FORGETFUL = textwrap.dedent("""
    from typing import assert_never

    from cks_desktop.agent import events as ev
    from cks_desktop.llm import events as llm


    def listener(event: ev.AgentEvent) -> None:
        match event:
            case ev.TurnStarted() | ev.TextDelta() | ev.ReasoningDelta() | ev.ToolCallPreparing() | ev.ToolCallStarted():
                pass
            case ev.ToolCallProgress() | ev.ApprovalRequested():
                pass
            case ev.ApprovalResolved() | ev.ToolCallFinished() | ev.AssistantMessage() | ev.ErrorEvent():
                pass
            case ev.Finished() | ev.ContextUsage() | ev.Waiting():  # IterationLimit forgotten
                pass
            case _:
                assert_never(event)


    def feed(event: llm.StreamEvent) -> None:
        match event:
            case llm.TextDelta() | llm.ReasoningDelta() | llm.ToolCallStart() | llm.ToolCallDelta() | llm.ToolCallDone() \
                    | llm.Usage() | llm.RetryWait():
                pass
            case _:  # Finish forgotten
                assert_never(event)
""")


@pytest.mark.slow
def test_consumers_are_exhaustive_and_a_forgotten_event_fails_the_check(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    probe = tmp_path / "forgetful.py"
    probe.write_text(FORGETFUL, encoding="utf-8")
    # The project's own configuration and cache: the suite's full type check (tests/core/test_types.py)
    # and this one then pay for one cold check between them, not two.
    proc = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary", *CONSUMERS, str(probe)],
        cwd=ROOT, capture_output=True, text=True, timeout=600)
    never = [line for line in proc.stdout.splitlines() if "assert_never" in line]
    assert [line.split(":")[0] for line in never] == [str(probe)] * 2, proc.stdout
    assert '"IterationLimit"' in never[0] and '"Finish"' in never[1], proc.stdout
