"""The non-chat use cases load without the agent or a provider SDK: `documents add` and an import
do not pay for the chat's start-up."""

from __future__ import annotations

import subprocess
import sys


def test_the_use_cases_load_without_the_agent_or_an_sdk() -> None:
    code = ("import sys, cks_desktop.runtime.cases as c, cks_desktop.runtime.documents, cks_desktop.runtime.extraction,"
            " cks_desktop.runtime.graph_io, cks_desktop.runtime.sharing, cks_desktop.runtime.storage;"
            "bad=[m for m in ('cks_desktop.agent.assistant','PySide6','anthropic','openai','google.genai','mcp')"
            " if m in sys.modules]; print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == ""
