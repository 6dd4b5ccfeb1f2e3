"""What a plain start imports: the window's start path, the store, the keychain door and the tool
registry load none of the slow libraries; each is imported where it is first used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from cks_desktop.agent.toolset import build_chat_registry

ROOT = Path(__file__).resolve().parents[2]

# Libraries a start must not pay for (each costs 0.05-0.7 s to import on a busy machine).
HEAVY = ("anthropic", "openai", "google.genai", "ollama", "mcp", "igraph", "pygments", "pypdf", "docx",
         "psycopg", "wordllama", "jsonschema", "keyring", "multiprocessing", "importlib.metadata")

START = r"""
import json, sys, tempfile
from pathlib import Path
import cks_desktop.app
import cks_desktop.cli
import cks_desktop.ui.main_window
cks_desktop.cli.build_parser()
from cks_desktop.agent.toolset import build_chat_registry
from cks_desktop.graph.store import GraphStore
from cks_desktop.secrets import SecretStore
from cks_desktop.settings import Settings

with tempfile.TemporaryDirectory() as folder:
    SecretStore()
    store = GraphStore.open(Path(folder) / "graph.db")
    build_chat_registry(store, Settings.load(Path(folder) / "settings.json"))
    store.close()
print(json.dumps(sorted(sys.modules)))
"""


def test_a_plain_start_imports_none_of_the_slow_libraries(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), CKS_DESKTOP_HOME=str(tmp_path))
    out = subprocess.run([sys.executable, "-c", START], cwd=ROOT, env=env, capture_output=True, text=True,
                         timeout=60, check=True)
    loaded = set(json.loads(out.stdout.splitlines()[-1]))
    assert [name for name in HEAVY if name in loaded or any(m.startswith(name + ".") for m in loaded)] == []


def test_every_built_in_tool_schema_is_a_valid_schema() -> None:
    """Built-in schemas are compiled on a tool's first call, not at start-up: each must be valid."""
    import jsonschema

    registry = build_chat_registry(None)
    assert registry.get("construct_knowledge") is not None and registry.get("read_mcp_resource") is not None
    for spec in registry.specs():
        schema = registry._schemas[spec.name]
        jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator).check_schema(schema)


def test_the_version_is_read_when_asked_for(tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT), CKS_DESKTOP_HOME=str(tmp_path))
    out = subprocess.run([sys.executable, "-m", "cks_desktop", "--version"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    import cks_desktop

    assert out.returncode == 0 and out.stdout == f"cks-desktop {cks_desktop.__version__}\n"
