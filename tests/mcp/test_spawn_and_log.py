"""Spawning (login-shell PATH, command resolution, Windows shims), the server log, result conversion."""

from __future__ import annotations

import stat
from pathlib import Path

import mcp_types as types
import pytest

from cks_desktop.mcp import spawn
from cks_desktop.mcp.convert import result_to_output, schema_problem
from cks_desktop.mcp.stderr_log import ServerLog, log_file_name
from cks_desktop.mcp.spawn import CommandNotFound, login_shell_path, merge_paths, plan_spawn


def executable(path: Path, text: str = "#!/bin/sh\nexit 0\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


@pytest.fixture(autouse=True)
def fresh_cache():
    spawn.reset_cache()
    yield
    spawn.reset_cache()


@pytest.mark.asyncio
async def test_login_shell_path_is_asked_once_and_banners_are_ignored(tmp_path):
    calls = tmp_path / "calls"
    shell = executable(tmp_path / "fakeshell", f"""#!/bin/sh
echo called >> {calls}
echo "Welcome banner"
PATH=/opt/homebrew/bin:/usr/bin
eval "$2"
echo " trailing noise"
""")
    env = {"SHELL": str(shell)}
    assert await login_shell_path(env, platform="linux") == "/opt/homebrew/bin:/usr/bin"
    assert await login_shell_path(env, platform="linux") == "/opt/homebrew/bin:/usr/bin"
    assert calls.read_text().count("called") == 1


@pytest.mark.asyncio
async def test_a_hanging_or_broken_shell_gives_none(tmp_path):
    shell = executable(tmp_path / "slowshell", "#!/bin/sh\nsleep 30\n")
    assert await login_shell_path({"SHELL": str(shell)}, platform="linux", timeout=0.3) is None
    spawn.reset_cache()
    assert await login_shell_path({"SHELL": str(tmp_path / "missing")}, platform="linux") is None
    spawn.reset_cache()
    assert await login_shell_path({"SHELL": "/bin/sh"}, platform="win32") is None


def test_merge_paths():
    assert merge_paths("/a:/b", "/b:/c::/a") == "/a:/b:/c"
    assert merge_paths(None, "/x") == "/x"


def test_plan_spawn_resolves_against_the_merged_path(tmp_path):
    tool = executable(tmp_path / "login-bin" / "npx")
    plan = plan_spawn("npx", ["-y", "pkg"], {"TOKEN": "t"}, login_path=str(tmp_path / "login-bin"),
                      environ={"PATH": "/usr/bin", "HOME": "/home/me"}, platform="linux")
    assert plan.command == str(tool) and plan.args == ["-y", "pkg"]
    assert plan.env == {"PATH": f"{tmp_path / 'login-bin'}:/usr/bin", "HOME": "/home/me", "TOKEN": "t"}
    with pytest.raises(CommandNotFound) as err:
        plan_spawn("uvx", [], {}, login_path=None, environ={"PATH": "/nowhere:/also-not"}, platform="linux")
    assert str(err.value) == "The command 'uvx' was not found on the PATH searched: /nowhere:/also-not."
    with pytest.raises(CommandNotFound, match="working folder"):
        plan_spawn("npx", [], {}, cwd=str(tmp_path / "gone"), login_path=str(tmp_path / "login-bin"),
                   environ={}, platform="linux")
    # an explicit path, relative to cwd
    plan = plan_spawn("./login-bin/npx", [], {}, cwd=str(tmp_path), environ={"PATH": ""}, platform="linux")
    assert plan.command == str(tool) and plan.cwd == str(tmp_path)
    # a PATH the person configured wins
    plan = plan_spawn("npx", [], {"PATH": str(tmp_path / "login-bin")}, login_path="/x", environ={"PATH": "/y"},
                      platform="linux")
    assert plan.env["PATH"] == str(tmp_path / "login-bin") and plan.path == str(tmp_path / "login-bin")


def test_windows_shims_run_through_cmd(tmp_path):
    shim = executable(tmp_path / "bin" / "npx.cmd")
    plan = plan_spawn("npx.cmd", ["-y", "pkg"], {}, environ={"Path": str(tmp_path / "bin"),
                                                             "ComSpec": r"C:\Windows\system32\cmd.exe"},
                      platform="win32")
    assert plan.command == r"C:\Windows\system32\cmd.exe"
    assert plan.args == ["/c", str(shim), "-y", "pkg"]
    assert "PATH" not in plan.env and plan.env["Path"] == str(tmp_path / "bin")


def test_log_file_names_are_safe_and_distinct():
    assert log_file_name("github") == "github.log"
    assert log_file_name("my server") != log_file_name("my/server")
    assert "/" not in log_file_name("../../etc/passwd")


@pytest.mark.asyncio
async def test_server_log_rotates_and_keeps_a_bounded_tail(tmp_path):
    log = ServerLog(tmp_path / "s.log", max_bytes=2_000, backups=2, tail_lines=10)
    seen: list[int] = []
    log.subscribe(lambda: seen.append(1))
    pipe = log.open_pipe()
    for i in range(300):
        pipe.writer.write(f"line {i}\n")
    pipe.writer.write("x" * 50_000)  # one endless line is cut, not kept whole
    pipe.close_writer()
    assert await pipe.drained(5)
    assert len(log.tail()) == 10
    assert log.tail()[-1].endswith(" […]") and len(log.tail()[-1]) < 4_100
    assert log.tail()[-2] == "line 299"
    assert seen
    for batch in range(10):  # each batch is one write; a file past max_bytes is rotated
        log.write_lines([f"batch {batch} line {i} " + "z" * 40 for i in range(20)])
    log.note("our own note")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["s.log", "s.log.1", "s.log.2"]
    assert all(p.stat().st_size < 2_000 + 20 * 60 for p in tmp_path.iterdir())
    assert log.tail()[-1].startswith("[cks-desktop ") and log.server_tail(1) == [log.tail()[-2]]


def test_schema_problems():
    assert schema_problem({"type": "object", "properties": {"a": {"type": "string"}}}) is None
    assert schema_problem({"properties": {}}) is None  # "type" left out: an object is assumed
    assert schema_problem([]) == "its input schema is not a JSON object"
    assert schema_problem({"type": "array"}) == "its input schema describes 'array', not an object of arguments"
    assert "external document" in schema_problem({"type": "object", "properties": {"a": {"$ref": "http://x/s"}}})
    assert "does not define" in schema_problem({"type": "object", "properties": {"a": {"$ref": "#/$defs/no"}}})
    assert schema_problem({"type": "object", "$defs": {"n": {"type": "integer"}},
                           "properties": {"a": {"$ref": "#/$defs/n"}}}) is None
    assert "invalid" in schema_problem({"type": "object", "properties": {"a": {"type": 3}}})


def test_result_conversion_edge_cases():
    out = result_to_output(types.CallToolResult(content=[], structured_content={"rows": [1, 2]}))
    assert out.content == '{\n  "rows": [\n    1,\n    2\n  ]\n}' and out.structured == {"rows": [1, 2]}
    assert result_to_output(types.CallToolResult(content=[])).content == "(the tool returned nothing)"
    err = result_to_output(types.CallToolResult(content=[], is_error=True))
    assert err.is_error and err.content == "(the tool reported an error without a message)"
    blob = types.EmbeddedResource(resource=types.BlobResourceContents(uri="file:///a.bin", blob="AAAA",
                                                                      mime_type="application/octet-stream"))
    audio = types.AudioContent(data="AAAAAA==", mime_type="audio/wav")
    out = result_to_output(types.CallToolResult(content=[blob, audio]))
    assert out.content == "[resource: file:///a.bin, application/octet-stream, 3 bytes]\n[audio: audio/wav, 4 bytes]"

