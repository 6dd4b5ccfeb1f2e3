"""`cks-desktop mcp resources|read|prompts|prompt` against real servers, and the reference
server-everything from npm (installed once per test session into a temporary folder; skipped
with the reason when npm cannot fetch it)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import mcp_types as types
import pytest

from cks_desktop import cli
from cks_desktop.mcp import prompts as P
from cks_desktop.mcp import resources as R
from cks_desktop.mcp.config import parse_server
from cks_desktop.mcp.connection import McpConnection
from cks_desktop.mcp.stderr_log import ServerLog

LIBRARY = Path(__file__).parent / "servers" / "library_server.py"
EVERYTHING = "@modelcontextprotocol/server-everything"


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("SHELL", raising=False)
    h = tmp_path / "home"
    h.mkdir()
    assert cli.main(["--data-dir", str(h), "mcp", "add", "lib", "--approval", "auto", "--protocol", "legacy", "--",
                     sys.executable, str(LIBRARY)]) == 0
    return h


def mcp(home: Path, *argv: str) -> int:
    return cli.main(["--data-dir", str(home), "mcp", *argv])


@pytest.mark.slow
def test_resources_and_read_print_text_json_and_files(home, tmp_path, capsys):
    capsys.readouterr()
    assert mcp(home, "resources", "lib", "--json") == 0
    listing = json.loads(capsys.readouterr().out)
    assert listing["supported"] and len(listing["resources"]) == 9
    assert listing["templates"][0] == {"uri_template": "notes://{topic}/{id}", "name": "topic-note", "title": "",
                                       "description": "A note about a topic.", "mime_type": "text/plain",
                                       "variables": ["topic", "id"]}
    assert mcp(home, "resources", "lib") == 0
    out = capsys.readouterr().out
    assert "lib: 9 resources, 1 template" in out and "notes://{topic}/{id}  topic-note [template: topic, id]" in out

    assert mcp(home, "read", "lib", "note://3") == 0
    assert capsys.readouterr().out == "Body of note 3.\n"
    assert mcp(home, "read", "lib", "html://hostile", "--max-chars", "10") == 0
    captured = capsys.readouterr()
    assert captured.out == "<img src=\"\n" and "only the first 10 are kept" in captured.err
    assert mcp(home, "read", "lib", "bin://logo") == 0
    assert "[binary content: bin://logo, image/png, 1,032 bytes; save it with --out FILE]" in capsys.readouterr().out
    target = tmp_path / "logo.png"
    assert mcp(home, "read", "lib", "bin://logo", "--out", str(target), "--json") == 0
    assert json.loads(capsys.readouterr().out)["written"] == {"path": str(target), "bytes": 1032}
    assert target.read_bytes().startswith(b"\x89PNG") and not (tmp_path / "logo.png.part").exists()

    assert mcp(home, "read", "lib", "nope://x") == 1
    err = capsys.readouterr().err
    assert "answered the request to read 'nope://x' with an error: Resource not found" in err
    assert "Traceback" not in err
    assert mcp(home, "read", "ghost", "x://y") == 2
    assert "There is no MCP server named 'ghost'" in capsys.readouterr().err


@pytest.mark.slow
def test_prompts_and_prompt_with_arguments(home, capsys):
    capsys.readouterr()
    assert mcp(home, "prompts", "lib") == 0
    out = capsys.readouterr().out
    assert "/lib:greet(name, style?) — Writes a greeting." in out
    assert mcp(home, "prompt", "lib", "greet", "--args", '{"name": "Ada", "style": "formal"}') == 0
    assert capsys.readouterr().out == "Write a formal greeting for Ada.\n"
    assert mcp(home, "prompt", "lib", "report", "--args", '{"topic": "bees"}', "--json") == 0
    value = json.loads(capsys.readouterr().out)
    assert [m["role"] for m in value["messages"]] == ["user", "user", "assistant"]

    for args, message in (('{}', "The prompt 'greet' needs name."),
                          ('[1]', "must be a JSON object of strings"),
                          ('{"name": {"a": 1}}', "The argument 'name' must be a string"),
                          ('{"nom": "x", "name": "y"}', "has no argument nom"),
                          ('{oops', "--args is not valid JSON")):
        assert mcp(home, "prompt", "lib", "greet", "--args", args) == 2, args
        assert message in capsys.readouterr().err
    assert mcp(home, "prompt", "lib", "missing") == 2
    assert "has no prompt named 'missing' (its prompts: greet, report)" in capsys.readouterr().err


def test_the_commands_as_a_real_subprocess(home):
    run = subprocess.run([sys.executable, "-m", "cks_desktop", "--data-dir", str(home), "mcp", "prompts", "lib",
                          "--json"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert [p["name"] for p in json.loads(run.stdout)["prompts"]] == ["greet", "report"]


# -- the reference server ------------------------------------------------------------------
@pytest.fixture(scope="session")
def everything(tmp_path_factory) -> Path:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed, so server-everything cannot be fetched")
    folder = tmp_path_factory.mktemp("server-everything")
    try:
        done = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", str(folder), EVERYTHING],
                              capture_output=True, text=True, timeout=240)
    except subprocess.TimeoutExpired:
        pytest.skip("npm took more than 240 s to fetch server-everything")
    entry = folder / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
    if done.returncode != 0 or not entry.exists():
        pytest.skip(f"npm could not fetch server-everything: {(done.stderr or done.stdout).strip()[-300:]}")
    return entry


@pytest.mark.slow
@pytest.mark.asyncio
async def test_server_everything_resources_prompts_and_completions(everything, tmp_path):
    node = shutil.which("node")
    assert node is not None
    config = parse_server("everything", {"command": node, "args": [str(everything), "stdio"]})
    conn = McpConnection(config, log=ServerLog(tmp_path / "everything.log"))
    assert await conn.start(), conn.reason
    try:
        assert await conn.features.wait_listed(30)
        f = conn.features
        assert f.resources and f.templates and f.prompts, (len(f.resources), len(f.templates), len(f.prompts))
        first_text = next(r for r in f.resources if (r.mime_type or "").startswith("text"))
        read = await R.read_resource(conn, first_text.uri)
        assert read.contents and not read.contents[0].binary and read.contents[0].text
        blob = next((r for r in f.resources if r.mime_type and not r.mime_type.startswith("text")), None)
        if blob is not None:
            got = await R.read_resource(conn, blob.uri)
            assert got.contents and got.contents[0].binary and got.contents[0].size > 0

        template = f.templates[0]
        names = R.template_variables(template.uri_template)
        assert names
        uri = R.expand_template(template.uri_template, {n: "1" for n in names})
        assert (await R.read_resource(conn, uri)).contents

        with_args = next(p for p in f.prompts if any(a.required for a in p.arguments or []))
        values = {a.name: "1" for a in with_args.arguments or [] if a.required}
        completions: list[str] = []
        for arg in with_args.arguments or []:
            completions += await P.complete(conn, types.PromptReference(name=with_args.name), arg.name, "")
        filled = await P.get_prompt(conn, with_args.name, values)
        assert filled.messages and filled.text
        if P.supports_completions(conn):
            assert isinstance(completions, list)
        if R.supports_subscribe(conn):
            await R.subscribe(conn, first_text.uri)
            await R.unsubscribe(conn, first_text.uri)
    finally:
        await conn.stop()
