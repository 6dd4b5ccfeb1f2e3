"""`cks-desktop documents extract` in real subprocesses against a real fake provider:
estimate, review file, apply, apply-review, never waiting without a terminal, and a run killed
mid-way (SIGKILL) that resumes without asking the finished chunks again."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from cks_desktop.graph.store import GraphStore
from tests.fakes.extraction_reader import Noise, ReaderModel
from tests.extraction.harness import Setup, make_setup
from tests.fakes.providers import make_fake
from tests.fakes.script import Turn

MAIN = Path(__file__).resolve().parents[2]
ENV = {k: v for k, v in os.environ.items()
       if k not in ("CKS_DESKTOP_HOME", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "SHELL")}
ENV.update({"PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring", "PYTHONPATH": str(MAIN),
            "OPENAI_API_KEY": "test"})


def _argv(home: Path, fake: Any, *args: str) -> list[str]:
    return [sys.executable, "-m", "cks_desktop", "--data-dir", str(home), "documents", "extract",
            "--provider", "openai", "--base-url", fake.base_url, "--model", fake.default_model, *args]


def _run(home: Path, fake: Any, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(_argv(home, fake, *args), capture_output=True, text=True, encoding="utf-8", env=ENV,
                          cwd=MAIN, timeout=120, stdin=subprocess.DEVNULL)


@pytest.fixture
def setup(tmp_path: Path) -> Setup:
    s = make_setup(tmp_path, extras_per_doc=90)
    s.store.close()
    return s


def _counts(setup: Setup) -> dict[str, int]:
    with GraphStore.open(setup.store.path) as store:
        return store.counts(setup.session_id)


@pytest.mark.slow
def test_estimate_review_file_apply_review_and_no_waiting_without_a_terminal(setup: Setup, tmp_path: Path) -> None:
    home, sid = setup.store.path.parent, setup.session_id
    model = ReaderModel(Noise(level=0.05, seed=2))
    with make_fake("openai") as fake:
        fake.side_turn = model
        est = _run(home, fake, "--session", sid, "founding.md", "--estimate", "--json")
        assert est.returncode == 0, est.stderr
        estimate = json.loads(est.stdout)["estimate"]
        assert estimate["chunks"] >= 2 and estimate["cached"] == 0 and model.calls == 0
        review = tmp_path / "review.json"
        out = _run(home, fake, "--session", sid, "founding.md", "--review-file", str(review))
        assert out.returncode == 0, out.stderr
        assert "apply-review" in out.stdout and _counts(setup)["objects"] == 2  # nothing written yet
        plan = json.loads(review.read_text())
        assert plan["objects"] and plan["objects"][0]["evidence"][0]["quote"]
        calls = model.calls
        refused = _run(home, fake, "--session", sid, "founding.md", "--apply")  # no terminal, no --yes
        assert refused.returncode == 2 and "--yes" in refused.stderr and "Traceback" not in refused.stderr
        assert model.calls == calls and _counts(setup)["objects"] == 2  # answered from the cache, not written
        addable = [o for o in plan["objects"] if o["action"] == "add" and o["include"]]
        first, renamed = addable[0], addable[1]
        first["include"] = False
        renamed["name"] = "Renamed In Review"
        review.write_text(json.dumps(plan))
        applied = _run(home, fake, "--session", sid, "founding.md", "--apply-review", str(review), "--yes", "--json")
        assert applied.returncode == 0, applied.stderr
        assert len(json.loads(applied.stdout)["changes"]) == 1 and model.calls == calls
        with GraphStore.open(setup.store.path) as store:
            names = {o.name for o in store.all_objects(sid)}
        assert "Renamed In Review" in names and first["name"] not in names
        chunk_calls = model.chunk_calls
        again = _run(home, fake, "--session", sid, "founding.md", "--apply", "--yes")
        assert again.returncode == 0 and model.chunk_calls == chunk_calls  # every part from the cache
        bad = tmp_path / "bad.json"
        bad.write_text("{not json")
        broken = _run(home, fake, "--session", sid, "founding.md", "--apply-review", str(bad), "--yes")
        assert broken.returncode == 2 and broken.stderr.count("\n") == 1 and "not valid JSON" in broken.stderr
        plan["objects"][0]["evidence"] = [{"quote": 5}]  # valid JSON, not a review file's shape
        bad.write_text(json.dumps(plan))
        shaped = _run(home, fake, "--session", sid, "founding.md", "--apply-review", str(bad), "--yes")
        assert shaped.returncode == 2 and shaped.stderr.count("\n") == 1 and "not valid" in shaped.stderr
        assert "Traceback" not in shaped.stderr
    assert not fake.problems


def test_a_killed_run_resumes_without_asking_finished_chunks_again(setup: Setup) -> None:
    home, sid = setup.store.path.parent, setup.session_id
    model = ReaderModel(Noise(level=0.0))
    answered = threading.Event()

    def stall_on_the_second(body: Any) -> Turn | None:
        if model.chunk_calls >= 1:
            answered.set()
            return Turn(stall_after_text=True)
        return model(body)

    with make_fake("openai") as fake:
        fake.side_turn = stall_on_the_second
        proc = subprocess.Popen(_argv(home, fake, "--session", sid, "founding.md", "--apply", "--yes"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                                env=ENV, cwd=MAIN)
        try:
            assert fake.stalled.wait(60), "the second chunk was never asked"
        finally:
            proc.kill()  # SIGKILL mid-run: no cleanup of any kind
            proc.communicate(timeout=30)
        assert model.chunk_calls == 1 and _counts(setup)["objects"] == 2
        fake.side_turn = model
        done = _run(home, fake, "--session", sid, "founding.md", "--apply", "--yes", "--json")
        assert done.returncode == 0, done.stderr
        result = json.loads(done.stdout)
        total = result["progress"]["chunks_total"]
        assert total >= 3 and result["progress"]["cached"] == 1
        assert model.chunk_calls == total  # the first chunk was not asked again
        assert len(result["changes"]) == 1 and _counts(setup)["objects"] > 50
