"""`cks-desktop documents extract` as a person runs it: the whole CLI process, beside the model's time.

    python bench/extract_cli.py [--runs 3] [--pages 10,100,300]

Each run is a fresh `cks-desktop documents extract --session S DOC --apply --yes` process on a copy of
one data folder, against the OpenAI wire fake on 127.0.0.1 whose model (tests/fakes/extraction_reader.py)
answers from the words of the part it was sent. The fake answers at once, so the process's wall time
is the app's own time plus the model's; the model's share (the time the fake spent composing its
answers) is measured and taken off: "beyond the model" is what the person waits for the app
(start-up, opening the database, reading, planning, resolution, writing). Target: ≤ 1 s for one small
document. The page rows (a PDF of 10/100/300 pages of the archive's letters) show how the app's own
time grows: per page it should stay flat (linear).
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.documents.files import pdf_bytes  # noqa: E402
from tests.extraction.world import make_world, render_world  # noqa: E402
from tests.fakes.extraction_reader import Noise, ReaderModel  # noqa: E402
from tests.fakes.providers import make_fake  # noqa: E402

PYCACHE = str(Path(tempfile.gettempdir()) / "cks-bench-pycache")
ENV = {k: v for k, v in os.environ.items() if k not in ("CKS_DESKTOP_HOME", "PYTHONDONTWRITEBYTECODE")}
ENV.update({"PYTHON_KEYRING_BACKEND": "keyring.backends.null.Keyring", "PYTHONPATH": str(ROOT),
            "OPENAI_API_KEY": "bench", "PYTHONPYCACHEPREFIX": PYCACHE})

PAGE_CHARS = 1800


def world_text(extras: int) -> str:
    """The generated world's founding history (tests/extraction/world.py) with ``extras`` more people."""
    with tempfile.TemporaryDirectory() as folder:
        docs = render_world(make_world(seed=7, extras_per_doc=extras), Path(folder))
        return next(d for d in docs if d.path.suffix == ".md").path.read_text(encoding="utf-8")


def pages_of(text: str, n: int) -> list[str]:
    """``text``'s sentences laid out on ``n`` pages of about PAGE_CHARS characters."""
    sentences = [s.strip() + "." for s in text.replace("\n", " ").split(". ") if s.strip()]
    pages, page = [], ""
    for sentence in sentences:
        if len(page) + len(sentence) > PAGE_CHARS and len(pages) < n - 1:
            pages.append(page)
            page = ""
        page += sentence + " "
    return [*pages, page][:n]


class TimedModel:
    """The reader model, with the time it spends composing answers added up (the model's share)."""

    def __init__(self) -> None:
        self.model = ReaderModel(Noise(level=0.0, seed=1, rate_limit_once=False))
        self.seconds = 0.0
        self.lock = threading.Lock()

    def __call__(self, body: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.model(body)
        finally:
            with self.lock:
                self.seconds += time.perf_counter() - start


def cks(home: Path, *args: str, fake: Any = None) -> subprocess.CompletedProcess[str]:
    extra = ["--provider", "openai", "--base-url", fake.base_url, "--model", fake.default_model] if fake else []
    out = subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), *args, *extra],
                         capture_output=True, text=True, env=ENV, cwd=ROOT, timeout=900, stdin=subprocess.DEVNULL)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(args[:2])} failed: {out.stderr[-1500:]}")
    return out


def prepared(root: Path, name: str, document: Path) -> tuple[Path, str]:
    home = root / name
    session = cks(home, "sessions", "create", name).stdout.strip()
    cks(home, "documents", "add", "--session", session, str(document))
    return home, session


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def one_run(template: Path, session: str, document: str, runs_root: Path) -> tuple[float, float, int, float]:
    """(wall s, model s, parts, the process's CPU s) of one extract process on a copy of ``template``."""
    home = runs_root / f"run-{time.monotonic_ns()}"
    shutil.copytree(template, home)
    timed = TimedModel()
    with make_fake("openai") as fake:
        fake.side_turn = timed
        start, cpu = time.perf_counter(), children_cpu()
        cks(home, "documents", "extract", "--session", session, document, "--apply", "--yes", fake=fake)
        wall, cpu = time.perf_counter() - start, children_cpu() - cpu
    shutil.rmtree(home, ignore_errors=True)
    return wall, timed.seconds, timed.model.chunk_calls, cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--pages", default="10,100,300")
    args = parser.parse_args()
    pages = [int(p) for p in args.pages.split(",") if p]
    with tempfile.TemporaryDirectory(prefix="cks-bench-extract-") as scratch:
        root = Path(scratch)
        small = root / "letter.md"
        small.write_text(world_text(10), encoding="utf-8")
        cases: list[tuple[str, Path, str, str]] = []
        home, session = prepared(root, "small", small)
        cases.append(("one small document (1,400 chars)", home, session, small.name))
        for n in pages:
            pdf = root / f"letters-{n}.pdf"
            pdf.write_bytes(pdf_bytes(pages_of(world_text(14 * n), n)))
            home, session = prepared(root, f"pages{n}", pdf)
            cases.append((f"{n} pages", home, session, pdf.name))
        started = time.perf_counter()
        cks(root / "small", "--version")
        bare = time.perf_counter() - started
        rows = []
        for label, home, session, document in cases:
            one_run(home, session, document, root)  # warms the disk cache and the bytecode; not counted
            measured = [one_run(home, session, document, root) for _ in range(args.runs)]
            wall = statistics.median(m[0] for m in measured)
            model = statistics.median(m[1] for m in measured)
            parts = measured[0][2]
            cpu = statistics.median(m[3] for m in measured)
            rows.append((label, wall, model, wall - model, parts, cpu))
    load = os.getloadavg()[0]
    print(f"load average (1 min): {load:.2f}; median of {args.runs} runs; `cks-desktop --version` alone: {bare:.3f} s")
    print(f"{'document':<32} {'wall s':>7} {'model s':>8} {'beyond s':>9} {'app CPU s':>10} {'parts':>6} "
          f"{'app ms/page':>12}")
    for label, wall, model, beyond, parts, cpu in rows:
        n = 1 if label.startswith("one") else int(label.split()[0])
        print(f"{label:<32} {wall:>7.3f} {model:>8.3f} {beyond:>9.3f} {cpu:>10.3f} {parts:>6} {beyond / n * 1000:>12.1f}")
    print("beyond = wall - model: what the person waits for the app; app CPU = the process's own CPU time "
          "(user + system), which a busy machine does not inflate")


if __name__ == "__main__":
    main()
