"""`cks-desktop ask --session S --themes` in real subprocesses against a real fake provider."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.graph.store import GraphStore
from tests.extraction.test_extract_cli import ENV, MAIN
from tests.fakes.providers import make_fake
from tests.fakes.summariser import Summariser
from tests.retrieval.test_themes import _world


def _ask(home: Path, fake: Any, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "cks_desktop", "--data-dir", str(home), "ask", "--themes", "--provider", "openai",
            "--base-url", fake.base_url, "--model", fake.default_model, *args]
    return subprocess.run(argv, capture_output=True, text=True, encoding="utf-8", env=ENV, cwd=MAIN, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.mark.slow
def test_the_budget_is_stated_refused_over_its_limit_then_the_themes_cite_passages(store: GraphStore) -> None:
    sid = _world(store)
    empty = store.create_session("empty").id
    home = store.path.parent
    model = Summariser()
    with make_fake("openai") as fake:
        fake.side_turn = model
        estimate = _ask(home, fake, "--session", sid, "--estimate", "--json")
        assert estimate.returncode == 0, estimate.stderr
        assert json.loads(estimate.stdout) == {"communities": 2, "cached": 0, "summary_calls": 2, "reduce_calls": 1,
                                               "calls": 3}
        refused = _ask(home, fake, "--session", sid, "--max-calls", "2")
        assert refused.returncode == 2 and "Traceback" not in refused.stderr
        assert "over the limit of 2" in refused.stderr and fake.generation_requests == []
        out = _ask(home, fake, "--session", sid, "--max-calls", "3", "--json")
        assert out.returncode == 0, out.stderr
        assert "3 model calls (2 to summarise, 1 to combine)" in out.stderr
        found = json.loads(out.stdout)
        assert found["calls"] == len(fake.generation_requests) == 3
        assert all(t["citations"] and {"document", "page", "start", "end", "quote"} <= set(t["citations"][0])
                   for t in found["themes"])
        nothing = _ask(home, fake, "--session", empty)
        assert nothing.returncode == 2 and nothing.stderr.count("\n") == 1 and "no related objects" in nothing.stderr
    alone = subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), "ask", "--session", sid,
                            "Who sailed?", "--retrieve-only", "--max-calls", "3"], capture_output=True, text=True,
                           encoding="utf-8", env=ENV, cwd=MAIN, timeout=120, stdin=subprocess.DEVNULL)
    assert alone.returncode == 2 and alone.stderr == "cks-desktop: --max-calls goes with --themes.\n"
