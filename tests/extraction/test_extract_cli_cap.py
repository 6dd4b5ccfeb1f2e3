"""`cks-desktop documents extract` in real subprocesses: the cap set in Settings →
Chat & agent → "Extracting documents" is the CLI's default --max-calls/--max-cost, and --estimate
works without a usable provider (the parts and calls are printed, the cost said to be unknown)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.extraction_reader import Noise, ReaderModel
from tests.extraction.harness import Setup, make_setup
from tests.extraction.test_extract_cli import ENV, MAIN, _run
from tests.fakes.providers import make_fake


def _setup(tmp_path: Path) -> Setup:
    s = make_setup(tmp_path, extras_per_doc=40)
    s.store.close()
    return s


def test_the_settings_cap_is_the_clis_default_cap(tmp_path: Path) -> None:
    setup = _setup(tmp_path)
    home, sid = setup.store.path.parent, setup.session_id
    (home / "settings.json").write_text(json.dumps({"extraction": {"max_calls": 1}}), encoding="utf-8")
    model = ReaderModel(Noise(level=0.0))
    with make_fake("openai") as fake:
        fake.side_turn = model
        refused = _run(home, fake, "--session", sid, "founding.md", "--review-file", str(tmp_path / "plan.json"))
        assert refused.returncode != 0 and "over the cap of 1" in refused.stderr and model.calls == 0
        allowed = _run(home, fake, "--session", sid, "founding.md", "--review-file", str(tmp_path / "plan.json"),
                       "--max-calls", "1000")  # the flag beats the setting
        assert allowed.returncode == 0, allowed.stderr
        assert model.calls >= 1 and (tmp_path / "plan.json").exists()


def test_estimate_without_a_usable_provider_prints_parts_and_calls_and_an_unknown_cost(tmp_path: Path) -> None:
    import subprocess
    import sys

    setup = _setup(tmp_path)
    home, sid = setup.store.path.parent, setup.session_id
    env = {k: v for k, v in ENV.items() if k != "OPENAI_API_KEY"}
    for extra in ([], ["--provider", "openai"]):  # none chosen; chosen but without its API key
        for fmt in ([], ["--json"]):
            out = subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), "documents", "extract",
                                  "--session", sid, "founding.md", "--estimate", *extra, *fmt],
                                 capture_output=True, text=True, encoding="utf-8", env=env, cwd=MAIN, timeout=120,
                                 stdin=subprocess.DEVNULL)
            assert out.returncode == 0, out.stderr
            if fmt:
                data = json.loads(out.stdout)
                assert data["estimate"]["calls"] >= 2 and data["estimate"]["cost_usd"] is None
                assert data["cost_unknown_because"]
            else:
                assert "part" in out.stdout and "model call" in out.stdout and "cost unknown" in out.stdout
                assert ("API key" if extra else "no AI provider") in out.stdout, out.stdout
