"""How a stdio MCP server is started: which program, which environment, which PATH.

Why the login shell. An app started from the desktop (Finder, the dock, a
``.desktop`` launcher) inherits a bare PATH, not the one the person's shell
builds, so ``npx``/``uvx`` installed through Homebrew, nvm or pipx are "not
found" although they work in a terminal — the most common complaint with MCP
hosts. On macOS and Linux the login shell is asked for its PATH once
(``$SHELL -ilc``, bounded by a short timeout, run as a subprocess so the loop
never waits on it) and the answer is cached for the life of the process. The
login PATH comes first (it is what works in the person's terminal), followed by
any directory of the current PATH it lacks.

On Windows, ``.cmd``/``.bat`` shims (``npx.cmd``) cannot be started directly,
so they run through ``cmd /c``.

Why a minimal environment. Servers are often ``npx -y <someone's package>``;
handing them the app's environment handed them ``ANTHROPIC_API_KEY`` and every
other secret the person's shell exports. A server gets what the MCP SDK's
``get_default_environment`` passes (user, home, PATH, shell, terminal; on
Windows the system folders and profile), the locale and the temp folder, plus
the ``env`` configured for it. ``inheritEnv: true`` (per server, off by default)
passes the rest of the environment for the rare server that needs it, and even
then provider keys (``secrets.provider_key_env_vars``) are left out.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

LOGIN_SHELL_TIMEOUT = 3.0
_START = "__CKS_PATH_START__"
_END = "__CKS_PATH_END__"

# The SDK's mcp.client.stdio.DEFAULT_INHERITED_ENV_VARS, plus the locale, the temp folder and, on
# Windows, what cmd.exe and node need to run at all. Nothing here is a credential.
POSIX_INHERITED = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LANGUAGE", "TMPDIR", "TZ")
POSIX_INHERITED_PREFIXES = ("LC_",)
WINDOWS_INHERITED = ("APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT",
                     "PROCESSOR_ARCHITECTURE", "SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME",
                     "USERPROFILE", "COMSPEC", "WINDIR", "PROGRAMFILES", "PROGRAMFILES(X86)", "PROGRAMDATA",
                     "NUMBER_OF_PROCESSORS", "OS")

_cached_login_path: str | None = None
_resolved = False
_lock: asyncio.Lock | None = None


class CommandNotFound(Exception):
    """The program of a stdio server does not exist (one sentence for the person)."""


@dataclass(frozen=True)
class SpawnPlan:
    command: str  # absolute path (or the shell for cmd /c)
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    path: str = ""  # the PATH searched and given to the server


def reset_cache() -> None:
    """Forget the login shell's PATH (tests, or after the person edits their shell profile)."""
    global _cached_login_path, _resolved
    _cached_login_path = None
    _resolved = False


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """Kill the shell and whatever its profile started (they share its new session)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    await proc.wait()


async def _ask_login_shell(shell: str, timeout: float) -> str | None:
    script = f"printf '%s%s%s' '{_START}' \"$PATH\" '{_END}'"
    try:
        proc = await asyncio.create_subprocess_exec(
            shell, "-ilc", script,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL, start_new_session=True,
        )
    except OSError:
        return None
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        await _kill_group(proc)
        return None
    except asyncio.CancelledError:
        await _kill_group(proc)
        raise
    text = out.decode("utf-8", "replace")
    # Interactive shells may print banners around our marker; take what is between.
    start, end = text.rfind(_START), text.rfind(_END)
    if start < 0 or end < start:
        return None
    return text[start + len(_START):end] or None


async def login_shell_path(environ: Mapping[str, str] | None = None, *, platform: str | None = None,
                           timeout: float = LOGIN_SHELL_TIMEOUT) -> str | None:
    """The login shell's PATH, asked once per process (None on Windows or on failure)."""
    global _cached_login_path, _resolved, _lock
    if (platform or sys.platform) == "win32":
        return None
    if _resolved:
        return _cached_login_path
    if _lock is None:
        _lock = asyncio.Lock()
    async with _lock:
        if not _resolved:
            env = os.environ if environ is None else environ
            shell = env.get("SHELL") or ("/bin/zsh" if sys.platform == "darwin" else "")
            _cached_login_path = await _ask_login_shell(shell, timeout) if shell else None
            _resolved = True
    return _cached_login_path


def merge_paths(first: str | None, second: str | None, sep: str = os.pathsep) -> str:
    """``first``'s entries, then ``second``'s entries that ``first`` lacks (order kept, no repeats)."""
    seen: set[str] = set()
    out: list[str] = []
    for part in [*(first or "").split(sep), *(second or "").split(sep)]:
        if part and part not in seen:
            seen.add(part)
            out.append(part)
    return sep.join(out)


def _env_key(env: Mapping[str, str], name: str, platform: str) -> str:
    """The key ``name`` is stored under (Windows keys are case-insensitive: ``Path``)."""
    if platform == "win32":
        for key in env:
            if key.upper() == name.upper():
                return key
    return name


def minimal_environment(environ: Mapping[str, str], *, platform: str | None = None) -> dict[str, str]:
    """The part of ``environ`` every server gets: no credentials, only what programs need to run.

    Values that start with ``()`` are shell functions (Shellshock-style), skipped like the SDK does.
    """
    platform = platform or sys.platform
    out: dict[str, str] = {}
    for key, value in environ.items():
        upper = key.upper() if platform == "win32" else key
        if platform == "win32":
            keep = upper in WINDOWS_INHERITED
        else:
            keep = key in POSIX_INHERITED or key.startswith(POSIX_INHERITED_PREFIXES)
        if keep and not value.startswith("()"):
            out[key] = value
    return out


def server_base_environment(environ: Mapping[str, str], *, inherit: bool,
                            platform: str | None = None) -> dict[str, str]:
    """What a server inherits before its configured ``env``: minimal, or everything but provider keys."""
    from cks_desktop.secrets import is_provider_key_env

    base = dict(environ) if inherit else minimal_environment(environ, platform=platform)
    return {k: v for k, v in base.items() if not is_provider_key_env(k)}


def plan_spawn(command: str, args: list[str] | tuple[str, ...], configured_env: Mapping[str, str], *,
               cwd: str | None = None, login_path: str | None = None,
               environ: Mapping[str, str] | None = None, platform: str | None = None,
               inherit_env: bool = False) -> SpawnPlan:
    """Resolve the program against the merged PATH and build the server's environment.

    The environment is ``server_base_environment`` (minimal unless ``inherit_env``)
    plus ``configured_env``. Raises ``CommandNotFound`` naming the command and the
    PATH searched. Nothing is started here, so this is cheap and safe to call from the loop.
    """
    platform = platform or sys.platform
    base = server_base_environment(os.environ if environ is None else environ, inherit=inherit_env,
                                   platform=platform)
    path_key = _env_key(base, "PATH", platform)
    sep = ";" if platform == "win32" else ":"
    configured_path = next((v for k, v in configured_env.items() if k.upper() == "PATH"), None) \
        if platform == "win32" else configured_env.get("PATH")
    search = configured_path or merge_paths(login_path, base.get(path_key), sep)
    env = {**base, **configured_env}
    if configured_path is None:
        env[path_key] = search
    if cwd is not None:
        folder = Path(cwd).expanduser()
        if not folder.is_dir():
            raise CommandNotFound(f"The working folder {folder} does not exist.")
        cwd = str(folder)

    program = os.path.expanduser(command)
    has_dir = os.sep in program or (os.altsep is not None and os.altsep in program) or "/" in program
    if has_dir:
        candidate = Path(program) if os.path.isabs(program) else Path(cwd or os.getcwd()) / program
        resolved = shutil.which(str(candidate))
        if resolved is None:
            raise CommandNotFound(f"The command '{command}' was not found or is not executable.")
    else:
        resolved = shutil.which(program, path=search)
        if resolved is None:
            raise CommandNotFound(f"The command '{command}' was not found on the PATH searched: {search or '(empty)'}.")

    full_args = list(args)
    if platform == "win32" and resolved.lower().endswith((".cmd", ".bat")):
        shell = env.get(_env_key(env, "COMSPEC", platform)) or "cmd.exe"
        return SpawnPlan(command=shell, args=["/c", resolved, *full_args], env=env, cwd=cwd, path=search)
    return SpawnPlan(command=resolved, args=full_args, env=env, cwd=cwd, path=search)
