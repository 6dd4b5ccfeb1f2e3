"""The whole Linux release build, then the built app used the ways people will use it.

Runs ``packaging/build.sh`` once (a clean venv, PyInstaller, the offscreen ``--self-test``, the
.tar.gz and the .deb: minutes on two cores), then checks the frozen binary as a GUI, as a CLI, as an
MCP server started by a real MCP client, and the packages' contents. Marked ``packaging``: run only
with ``CKS_PACKAGING=1 .ci/run`` or ``pytest -m packaging tests/packaging``.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest

pytestmark = [pytest.mark.packaging, pytest.mark.timeout(3600)]

ROOT = Path(__file__).resolve().parents[2]
APP = "cks-desktop"
BUNDLE = ROOT / "dist" / APP
EXE = BUNDLE / APP
ICON_SIZES = (16, 22, 24, 32, 48, 64, 128, 256, 512)


@dataclass(frozen=True)
class Build:
    info: dict[str, str]

    @property
    def version(self) -> str:
        return self.info["version"]

    @property
    def tarball(self) -> Path:
        return Path(self.info["tarball"])

    @property
    def deb(self) -> Path:
        return Path(self.info["deb"])


@pytest.fixture(scope="module")
def build() -> Build:
    if shutil.which("dpkg-deb") is None:
        pytest.skip("the Linux packages need dpkg-deb (Debian/Ubuntu)")
    (ROOT / "build").mkdir(exist_ok=True)
    log = ROOT / "build" / "build.log"
    env = dict(os.environ, PYTHON=sys.executable)
    with open(log, "w") as out:
        proc = subprocess.run(["bash", str(ROOT / "packaging" / "build.sh")], cwd=ROOT, env=env,
                              stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, timeout=3000)
    if proc.returncode != 0:
        tail = "\n".join(log.read_text(errors="replace").splitlines()[-40:])
        pytest.fail(f"packaging/build.sh exited with {proc.returncode}; the end of {log}:\n{tail}")
    info = dict(line.split("=", 1) for line in (ROOT / "build" / "build-info.txt").read_text().splitlines())
    return Build(info)


def run_app(*args: str, home: Path, timeout: float = 180, env: dict[str, str] | None = None,
            exe: Path = EXE) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ, QT_QPA_PLATFORM="offscreen", CKS_DESKTOP_HOME=str(home), **(env or {}))
    return subprocess.run([str(exe), *args], capture_output=True, text=True, timeout=timeout, env=full_env,
                          stdin=subprocess.DEVNULL)


def test_version_comes_from_the_package_metadata(build: Build, tmp_path: Path) -> None:
    import importlib.metadata

    assert build.version == importlib.metadata.version(APP)
    assert build.tarball.name == f"{APP}-{build.version}-linux-x86_64.tar.gz" and build.tarball.is_file()
    assert build.deb.is_file() and build.deb.name.startswith(f"{APP}_")
    proc = run_app("--version", home=tmp_path)
    assert (proc.returncode, proc.stdout.strip()) == (0, f"{APP} {build.version}")


def test_self_test_passes_offscreen(build: Build, tmp_path: Path) -> None:
    proc = run_app("--self-test", home=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]


def test_every_module_and_lazy_sdk_imports_in_the_bundle(build: Build, tmp_path: Path) -> None:
    proc = run_app("--bundle-info", home=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    info = json.loads(proc.stdout)
    assert info["frozen"] is True and info["version"] == info["metadata_version"] == build.version
    failed = {name: err for name, err in info["imports"].items() if err != "ok"}
    assert not failed
    assert any(name.startswith("cks_desktop.ui.") for name in info["imports"])
    assert {"libqxcb.so", "libqwayland.so", "libqoffscreen.so"} <= set(info["qt_platform_plugins"])
    assert (BUNDLE / "_internal" / "cks_desktop" / "resources" / f"{APP}.svg").is_file()  # the window icon app.py loads
    keyring_info = info["keyring"]
    assert "SecretService" in keyring_info["entry_points"]
    assert "keyring.backends.SecretService.Keyring" in keyring_info["registered"]


@pytest.mark.skipif(not (shutil.which("dbus-run-session") and shutil.which("gnome-keyring-daemon")),
                    reason="needs dbus-run-session and gnome-keyring-daemon")
def test_keyring_uses_secret_service_in_the_bundle(build: Build, tmp_path: Path) -> None:
    script = f"printf pw | gnome-keyring-daemon --unlock --components=secrets >/dev/null; exec '{EXE}' --bundle-info"
    proc = subprocess.run(["dbus-run-session", "--", "sh", "-c", script], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, HOME=str(tmp_path)), stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout)["keyring"]["chosen"] == "keyring.backends.SecretService.Keyring"


def test_cli_subcommands_run_from_the_bundle(build: Build, tmp_path: Path) -> None:
    created = run_app("sessions", "create", "Bundle smoke test", "--json", home=tmp_path)
    assert created.returncode == 0, created.stderr
    session_id = json.loads(created.stdout)["id"]
    listed = run_app("sessions", "list", "--json", home=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert session_id in {row["id"] for row in json.loads(listed.stdout)["sessions"]}
    tools = run_app("tools", "list", "--json", home=tmp_path)
    assert tools.returncode == 0, tools.stderr
    assert json.loads(tools.stdout)["tools"], "the bundle offers no tools"
    bad = run_app("sessions", "rename", "no-such-session", "x", home=tmp_path)
    assert bad.returncode != 0 and "Traceback" not in bad.stderr


@pytest.mark.asyncio
async def test_mcp_serve_answers_an_mcp_client(build: Build, tmp_path: Path) -> None:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=str(EXE), args=["--data-dir", str(tmp_path / "home"), "mcp", "serve"])
    with open(tmp_path / "server-stderr.txt", "w") as errlog:

        async def round_trip() -> tuple[str, list[str]]:
            async with stdio_client(params, errlog=errlog) as (read, write):
                async with ClientSession(read, write) as session:
                    init = await session.initialize()
                    tools = await session.list_tools()
                    return init.server_info.name, [t.name for t in tools.tools]

        try:
            name, tool_names = await asyncio.wait_for(round_trip(), timeout=90)
        except Exception:
            errlog.flush()
            pytest.fail("no MCP round trip with the bundle's `mcp serve`; its stderr:\n"
                        + (tmp_path / "server-stderr.txt").read_text()[-3000:])
    assert name and tool_names


def test_deb_layout_and_metadata(build: Build, tmp_path: Path) -> None:
    listing = subprocess.run(["dpkg-deb", "-c", str(build.deb)], capture_output=True, text=True, check=True).stdout
    paths = {line.split()[5].removeprefix(".") for line in listing.splitlines()}
    assert f"/opt/{APP}/{APP}" in paths
    assert re.search(rf"\./usr/bin/{APP} -> /opt/{APP}/{APP}$", listing, re.M)
    assert f"/usr/share/applications/{APP}.desktop" in paths
    assert "/usr/share/metainfo/io.github.cks_desktop.CksDesktop.metainfo.xml" in paths
    assert f"/usr/share/icons/hicolor/scalable/apps/{APP}.svg" in paths
    for size in ICON_SIZES:
        assert f"/usr/share/icons/hicolor/{size}x{size}/apps/{APP}.png" in paths
    assert all(line.split()[1] == "root/root" for line in listing.splitlines())

    fields = subprocess.run(["dpkg-deb", "-f", str(build.deb)], capture_output=True, text=True, check=True).stdout
    assert re.search(rf"^Package: {APP}$", fields, re.M)
    depends = _depends(build.deb)
    for lib in ("libgl1", "libegl1", "libfontconfig1", "libxkbcommon0", "libxkbcommon-x11-0", "libglib2.0-0",
                "libdbus-1-3", "libxcb-cursor0", "libxcb-icccm4", "libxcb-keysyms1", "libc6"):
        assert lib in depends

    root = tmp_path / "root"
    subprocess.run(["dpkg-deb", "-x", str(build.deb), str(root)], check=True)
    proc = run_app("--version", home=tmp_path / "home", exe=root / "opt" / APP / APP)
    assert proc.returncode == 0 and build.version in proc.stdout
    desktop = root / "usr" / "share" / "applications" / f"{APP}.desktop"
    metainfo = root / "usr" / "share" / "metainfo" / "io.github.cks_desktop.CksDesktop.metainfo.xml"
    assert f'<release version="{build.version}"' in metainfo.read_text()
    if shutil.which("desktop-file-validate"):
        subprocess.run(["desktop-file-validate", str(desktop)], check=True)
    if shutil.which("appstreamcli"):
        subprocess.run(["appstreamcli", "validate", "--no-net", str(metainfo)], check=True, capture_output=True)


def test_every_system_library_the_bundle_needs_is_a_declared_dependency(build: Build) -> None:
    """Every library an ELF file of the bundle links to directly resolves (ldd), and each one found
    outside the bundle belongs to a package the .deb depends on (README gives tarball users the same)."""
    if shutil.which("dpkg") is None or shutil.which("readelf") is None:
        pytest.skip("needs dpkg (to map libraries to packages) and readelf")
    libdirs = sorted({str(p.parent) for p in BUNDLE.rglob("*.so*")})
    env = dict(os.environ, LD_LIBRARY_PATH=":".join(libdirs))
    bundle_root = str(BUNDLE.resolve())
    outside: dict[str, str] = {}
    missing: dict[str, str] = {}
    for path in _elf_files(BUNDLE):
        dynamic = subprocess.run(["readelf", "-d", str(path)], capture_output=True, text=True).stdout
        needed = set(re.findall(r"\(NEEDED\)\s+Shared library: \[(.+?)\]", dynamic))
        resolved = dict(re.findall(r"^\s*(\S+) => (not found|\S+)",
                                   subprocess.run(["ldd", str(path)], capture_output=True, text=True,
                                                  env=env).stdout, re.M))
        for name in needed - {"ld-linux-x86-64.so.2"}:  # the loader: ldd prints it without "=>"
            target = resolved.get(name, "not found")
            if target == "not found":
                missing[name] = str(path.relative_to(BUNDLE))
            elif not os.path.realpath(target).startswith(bundle_root):
                outside[os.path.realpath(target)] = str(path.relative_to(BUNDLE))
    assert not missing
    depends = _depends(build.deb)
    undeclared = {lib: (_package_of(lib), user) for lib, user in outside.items() if _package_of(lib) not in depends}
    assert not undeclared


def test_unused_parts_are_excluded(build: Build) -> None:
    files = {p.relative_to(BUNDLE).as_posix() for p in BUNDLE.rglob("*") if p.is_file()}
    for unwanted in ("libqgtk3.so", "libstdc++.so.6", "libgcc_s.so.1", "libgtk-3.so.0", "QtNetwork.abi3.so",
                     "libQt6Qml.so.6", "libQt6Quick.so.6", "libQt6Network.so.6"):
        assert not any(f.rsplit("/", 1)[-1] == unwanted for f in files), unwanted
    assert not any("/translations/" in f or "/qml/" in f for f in files)
    assert not any(re.search(r"(^|/)(tkinter|pytest|_pytest)(/|$)", f) for f in files)
    # A budget, so that an accidental large dependency shows up here first (docs/packaging.md).
    assert int(build.info["bundle_bytes"]) < 240_000_000


def test_tarball_runs_where_it_is_unpacked_and_adds_a_menu_entry(build: Build, tmp_path: Path) -> None:
    top = f"{APP}-{build.version}-linux-x86_64"
    with tarfile.open(build.tarball) as tar:
        names = tar.getnames()
        assert all(n == top or n.startswith(top + "/") for n in names)
        tar.extractall(tmp_path, filter="tar")
    unpacked = tmp_path / top
    proc = run_app("--version", home=tmp_path / "home", exe=unpacked / APP)
    assert proc.returncode == 0 and build.version in proc.stdout

    data_home = tmp_path / "xdg-data"
    subprocess.run([str(unpacked / "install-desktop-entry.sh")], check=True, capture_output=True,
                   env=dict(os.environ, XDG_DATA_HOME=str(data_home)))
    entry = data_home / "applications" / f"{APP}.desktop"
    assert f'Exec="{unpacked / APP}"' in entry.read_text()
    assert (data_home / "icons" / "hicolor" / "48x48" / "apps" / f"{APP}.png").is_file()
    if shutil.which("desktop-file-validate"):
        subprocess.run(["desktop-file-validate", str(entry)], check=True)
    subprocess.run([str(unpacked / "install-desktop-entry.sh"), "--remove"], check=True, capture_output=True,
                   env=dict(os.environ, XDG_DATA_HOME=str(data_home)))
    assert not entry.exists()


def _elf_files(root: Path) -> list[Path]:
    found = []
    for path in root.rglob("*"):
        if path.is_file() and not path.is_symlink():
            with open(path, "rb") as f:
                if f.read(4) == b"\x7fELF":
                    found.append(path)
    return found


def _depends(deb: Path) -> set[str]:
    """Package names in Depends (each alternative counts, version constraints dropped)."""
    field = subprocess.run(["dpkg-deb", "-f", str(deb), "Depends"], capture_output=True, text=True,
                           check=True).stdout
    return {re.sub(r"\s*\(.*\)", "", alt).strip() for dep in field.split(",") for alt in dep.split("|")}


def _package_of(lib: str) -> str:
    """The installed package owning ``lib`` (tries the /usr-merged twin path too)."""
    candidates = [lib]
    if lib.startswith("/usr/lib/"):
        candidates.append(lib.removeprefix("/usr"))
    elif lib.startswith("/lib/"):
        candidates.append("/usr" + lib)
    for candidate in candidates:
        proc = subprocess.run(["dpkg", "-S", candidate], capture_output=True, text=True)
        if proc.returncode == 0:
            return proc.stdout.split(":", 1)[0]
    return "?"
