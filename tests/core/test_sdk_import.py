"""The SDK import race of a first start cannot happen: SDK imports never interleave.

At a first start every MCP server failed with pydantic's "partially initialized module"
ImportError: the MCP SDK was imported on a worker thread while another thread imported a
provider SDK. Python breaks a cross-thread import deadlock by handing out a half-initialised
module, so the fix is that two threads never import SDK modules at the same time.

A real subprocess starts two imports at once from two threads (a barrier releases them
together): the MCP manager and a provider adapter, the pair of the first start. A meta-path
hook records which thread imports which SDK module. Through ``import_sdk`` the record is one
thread's block after the other's; with plain ``importlib`` (the control, as the app did before)
the two threads' imports interleave, which is the window in which the race struck.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = r'''
import importlib, json, sys, threading
SDKS = ("pydantic", "pydantic_core", "mcp", "mcp_types", "anthropic", "openai", "httpx", "httpx2")
record = []

class Recorder:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in SDKS:
            record.append(threading.current_thread().name)
        return None

sys.meta_path.insert(0, Recorder())
from cks_desktop.sdk_import import import_sdk
load = import_sdk if sys.argv[1] == "guarded" else importlib.import_module
if sys.argv[1] == "app":  # the app's own two paths: MainWindow._start_mcp and a provider made off the loop
    import asyncio
    from cks_desktop.llm.factory import adapter_for
    from cks_desktop.llm.provider import ProviderConfig
    from cks_desktop.sdk_import import import_sdk_in_thread

    def load(name):
        if name.startswith("cks_desktop.mcp"):
            asyncio.run(import_sdk_in_thread(name))
        else:
            adapter_for(ProviderConfig("openai", "m", "http://127.0.0.1:9/v1", "key"))
barrier = threading.Barrier(2)
errors = []

def go(name):
    barrier.wait()
    try:
        load(name)
    except BaseException as exc:
        errors.append(f"{type(exc).__name__}: {exc}")

threads = [threading.Thread(target=go, args=(n,), name=n) for n in sys.argv[2:]]
for t in threads: t.start()
for t in threads: t.join()
switches = sum(1 for a, b in zip(record, record[1:]) if a != b)
print(json.dumps({"errors": errors, "switches": switches, "threads": sorted(set(record))}))
'''
PAIR = ("cks_desktop.mcp.manager", "cks_desktop.llm.providers.openai_compat")


def _run(mode: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "CKS_DESKTOP_HOME"}
    proc = subprocess.run([sys.executable, "-c", SCRIPT, mode, *PAIR], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_sdk_imports_from_two_threads_at_once_never_interleave() -> None:
    guarded = _run("guarded")
    assert guarded["errors"] == []
    assert sorted(guarded["threads"]) == sorted(PAIR)  # both threads really imported SDK modules
    assert guarded["switches"] == 1  # one thread's imports, then the other's: never side by side


def test_the_apps_own_import_paths_take_the_lock() -> None:
    """The MCP start (``import_sdk_in_thread``) and the provider factory (``adapter_for``) at once."""
    app = _run("app")
    assert app["errors"] == [] and app["switches"] == 1, app


def test_without_the_lock_the_same_start_interleaves_imports() -> None:
    """The control: the scenario does put two threads inside SDK imports at once when unguarded."""
    plain = _run("plain")
    assert plain["switches"] > 1, plain
