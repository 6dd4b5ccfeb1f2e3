"""The official MCP conformance suite's client scenarios: the app must pass every one the SDK passes.

``scripts/mcp-conformance.sh`` installs Node 22 and ``@modelcontextprotocol/conformance``
with npm into a cache folder outside the repository, runs every client scenario against
``scripts/conformance/sdk_client.py`` (the official SDK used directly) and
``scripts/conformance/app_client.py`` (the app's ``McpConnection``), and prints
``| scenario | SDK | app |``. Slow (about two minutes, plus the first install), so it runs
only with ``CKS_SLOW=1 ... -m slow``; skipped with the reason when npm cannot fetch.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "scripts" / "mcp-conformance.sh"
OFFLINE = 3  # the script's exit status when npm could not install node or the suite

pytestmark = pytest.mark.slow


def parse_table(stdout: str) -> dict[str, dict[str, str]]:
    """``{scenario: {"SDK": "pass", "app": "FAIL (...)", "cli": …}}`` from the script's Markdown table."""
    rows = [line for line in stdout.splitlines() if line.startswith("| ")]
    assert rows, f"no table in the script's output:\n{stdout}"
    header = [cell.strip() for cell in rows[0].strip("|").split("|")]
    table: dict[str, dict[str, str]] = {}
    for line in rows[1:]:
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if cells[0].startswith("**"):  # the totals row
            continue
        table[cells[0]] = dict(zip(header[1:], cells[1:], strict=True))
    return table


@pytest.mark.timeout(1800)
def test_app_passes_every_client_scenario_the_sdk_passes() -> None:
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: the conformance suite cannot be fetched")
    # One table: the release. The script runs the prerelease (0.2.0-alpha.12) too when no version is set.
    env = {"CKS_CONFORMANCE_VERSION": "0.1.16", **os.environ, "PYTHON": sys.executable}
    done = subprocess.run(["bash", str(SCRIPT)], cwd=REPO, env=env, capture_output=True, text=True,
                          timeout=1700, check=False)
    if done.returncode == OFFLINE:
        pytest.skip(f"npm could not fetch the conformance suite: {done.stderr.strip().splitlines()[-1:]}")
    assert done.returncode in (0, 1), f"the script failed ({done.returncode}):\n{done.stderr[-3000:]}"
    table = parse_table(done.stdout)
    assert len(table) >= 20, f"fewer client scenarios than expected:\n{done.stdout}"
    sdk_passes = {name for name, row in table.items() if row["SDK"] == "pass"}
    assert sdk_passes, f"the SDK passed nothing; the harness itself is broken:\n{done.stdout}"
    behind = {name: table[name]["app"] for name in sorted(sdk_passes) if table[name]["app"] != "pass"}
    assert not behind, ("the app fails scenarios the SDK passes (results under the cache's results/app/):\n"
                        + "\n".join(f"  {name}: {why}" for name, why in behind.items()))
    # The grants without a browser (client credentials with a secret or a private-key JWT, and
    # SEP-990's identity assertion) go through the app's own settings keys, not only the SDK's.
    for name in ("auth/client-credentials-basic", "auth/client-credentials-jwt",
                 "auth/cross-app-access-complete-flow"):
        if name in table:
            assert {who: table[name][who] for who in ("SDK", "app")} == {"SDK": "pass", "app": "pass"}, \
                (name, table[name])  # and the command line's column, where the script ran it, says its own
    assert done.returncode == 0
