"""Conformance adapter over the command line alone: ``cks-desktop mcp add / login / tools / call``.

``scripts/mcp-conformance.sh`` runs it beside ``sdk_client.py`` and ``app_client.py``
(``CKS_CONFORMANCE_ADAPTERS="sdk app cli"``). It shows what a person can do with the
CLI's flags only, never editing settings.json: the server is added with ``mcp add``
(a pre-registered client's ID with ``--oauth-client-id`` and its secret on stdin, the
client metadata URL with ``--oauth-client-metadata-url``, client credentials with
``--oauth-client-credentials``), signed in with ``mcp login --no-browser`` (the printed
address is "opened" by a headless browser that follows the authorization server's
redirect to the loopback listener), and used with ``mcp call --yes``. A call refused for
want of scope is followed, as a person would, by ``mcp login`` and the call again.
Secrets go to ``--keyring-file`` in a temporary folder (this machine has no keychain).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import httpx2

REPO = Path(__file__).resolve().parents[2]
NAME = "conformance"
CLIENT_METADATA_URL = "https://conformance-test.local/client-metadata.json"  # the other adapters offer the same


def context() -> dict[str, Any]:
    value = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    return value if isinstance(value, dict) else {}


class Cli:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.keys = home / "keys.json"

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "cks_desktop", "--data-dir", str(self.home), "mcp", *args,
                "--keyring-file", str(self.keys)]

    def run(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        done = subprocess.run(self.argv(*args), input=stdin, capture_output=True, text=True, timeout=120,
                              cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, check=False)
        print(f"$ mcp {' '.join(args)} -> {done.returncode}\n{done.stdout[-1500:]}{done.stderr[-1500:]}",
              file=sys.stderr)
        return done

    def login(self) -> int:
        """``mcp login --no-browser``; a headless browser opens each printed authorization address."""
        proc = subprocess.Popen(self.argv("login", NAME, "--no-browser", "--timeout", "30"), stdout=subprocess.PIPE,
                                text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
        assert proc.stdout is not None
        threads = []
        for line in proc.stdout:
            print(f"login: {line.rstrip()}", file=sys.stderr)
            word = line.strip()
            if word.startswith("http") and "?" in word:
                t = threading.Thread(target=follow, args=(word,), daemon=True)
                t.start()
                threads.append(t)
        for t in threads:
            t.join(30)
        return proc.wait(60)


def follow(url: str) -> None:
    """The person's browser: load the authorization page, follow its redirect to the loopback listener."""
    with httpx2.Client(timeout=30.0) as http:
        approval = http.get(url, follow_redirects=False)
        location = approval.headers.get("location")
        if location:
            http.get(location, follow_redirects=False)


def add_args(url: str, scenario: str, keys_dir: Path) -> tuple[list[str], str]:
    """The ``mcp add`` flags a person would give for this server, and what they type at the prompts."""
    args = ["add", NAME, "--url", url, "--timeout", "30", "--approval", "auto"]
    if not scenario.startswith("auth/"):
        return args, ""
    ctx = context()
    if scenario == "auth/cross-app-access-complete-flow":
        from scripts.conformance.app_client import authorization_server_of  # the admin gives the issuer

        import asyncio

        issuer = asyncio.run(authorization_server_of(url))
        return args + ["--oauth-identity-assertion", ctx["client_id"], "--oauth-issuer", issuer,
                       "--oauth-idp-token-endpoint", ctx["idp_token_endpoint"],
                       "--oauth-idp-client-id", ctx["idp_client_id"]], \
            f"{ctx['client_secret']}\n{ctx['idp_id_token']}\n"
    if scenario.startswith("auth/client-credentials-"):
        args += ["--oauth-client-credentials", ctx["client_id"]]
        if ctx.get("private_key_pem"):
            key = keys_dir / "client.pem"
            key.write_text(ctx["private_key_pem"])
            return args + ["--oauth-private-key", str(key)], ""
        return args, f"{ctx['client_secret']}\n"
    args += ["--oauth-client-metadata-url", CLIENT_METADATA_URL]
    if ctx.get("client_id"):
        args += ["--oauth-client-id", ctx["client_id"]]
        if ctx.get("client_secret"):
            return args + ["--oauth-client-secret"], f"{ctx['client_secret']}\n"
    return args, ""


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: cli_client.py SERVER_URL", file=sys.stderr)
        return 2
    url, scenario = sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    sys.path.insert(0, str(REPO))
    with tempfile.TemporaryDirectory(prefix="cks-conformance-cli-") as tmp:
        cli = Cli(Path(tmp))
        args, typed = add_args(url, scenario, Path(tmp))
        if cli.run(*args, stdin=typed).returncode != 0:
            return 1
        machine = scenario.startswith(("auth/client-credentials-", "auth/cross-app-access"))
        if scenario.startswith("auth/") and not machine and cli.login() != 0:
            return 1
        wanted = {"tools_call": ("add_numbers", {"a": 5, "b": 3}), "sse-retry": ("test_reconnection", {}),
                  "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {})}
        if scenario in wanted:
            tool, tool_args = wanted[scenario]
        else:
            listed = cli.run("tools", NAME, "--json")
            if listed.returncode != 0:
                return 1
            names = [t["name"] for t in json.loads(listed.stdout)["tools"]] if listed.stdout.strip() else []
            if not (scenario.startswith("auth/") and names):
                return 0
            tool, tool_args = names[0], {}
        called = cli.run("call", NAME, tool, "--args", json.dumps(tool_args), "--yes")
        if called.returncode != 0 and "again" in called.stderr and not machine:  # a step-up: sign in, call again
            if cli.login() != 0:
                return 1
            called = cli.run("call", NAME, tool, "--args", json.dumps(tool_args), "--yes")
        return 0 if called.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
