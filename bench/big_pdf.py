"""A PDF of very many pages through the document reader, each in a fresh process.

``python bench/big_pdf.py [--pages 100000 10000 1500]`` — makes a PDF of N pages (one short text
line each, ~300 bytes a page), reads it with ``read_path`` (as ``documents add`` does) in a fresh
process, and prints a table: seconds until the document or the sentence, peak memory (VmHWM),
progress steps reported, outcome. Past ``pdf.MAX_PAGES`` the read is refused at once.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CHILD = """
import json, sys, time
from pathlib import Path
from cks_desktop.documents.errors import UnreadableDocument
from cks_desktop.documents.progress import ReadProgress
from cks_desktop.documents.readers import read_path
steps = [0]
def step(name, done, total): steps[0] += 1
started = time.monotonic()
try:
    outcome = "added: %d characters" % len(read_path(Path(sys.argv[1]), 10**9, ReadProgress(step)).text)
except UnreadableDocument as exc:
    outcome = str(exc)
peak = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:")) // 1024
print(json.dumps({"seconds": time.monotonic() - started, "peak_mb": peak, "steps": steps[0], "outcome": outcome}))
"""


def main() -> None:
    from tests.documents.files import pdf_bytes

    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, nargs="+", default=[100_000, 10_000, 1_500])
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.1f}")
    print("| pages | file MB | seconds | peak MB | progress steps | outcome |")
    print("|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.pages:
            path = Path(tmp) / f"p{n}.pdf"
            path.write_bytes(pdf_bytes([f"Page {i} says hello." for i in range(n)]))
            out = subprocess.run([sys.executable, "-c", CHILD, str(path)], capture_output=True, text=True,
                                 cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            print(f"| {n:,} | {path.stat().st_size / 1e6:.1f} | {r['seconds']:.1f} | {r['peak_mb']} | "
                  f"{r['steps']:,} | {r['outcome'][:90]} |")


if __name__ == "__main__":
    main()
